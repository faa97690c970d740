import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Change, Store } from './store.js';

/**
 * Durable state for `--data DIR`: `DIR/emulator.jsonl`, an append-only log read whole at start (no dependency, no
 * native module). Line 1 names the format and its version; every further line is one commit, a JSON array of changes
 * (`put` a row, `delete` an id, `seq` a table's next id, `seeded`), written with one write and fdatasync'd before the
 * answer is sent. A line counts only once its newline is on disk, so a crash mid-write loses at most that commit:
 * the torn last line is skipped on load, with a note. The log is rewritten as a snapshot (a temporary file, fsynced,
 * renamed over it) when it holds more than twice the lines the state needs, at start or while running.
 */

/** The log's name inside the `--data` folder. */
export const DATA_FILE = 'emulator.jsonl';
/** What older emulators kept in the folder (through better-sqlite3); read by nobody now, see `legacyMessage`. */
const LEGACY_FILE = 'emulator.sqlite';
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const FORMAT = 'casebridge-emulator-data';
const VERSION = 1;
/** Login sessions are not kept: a restart logs everyone out. */
const TRANSIENT = new Set(['sessions']);
/**
 * Never compact below this many lines: replaying 10,000 commits takes well under a second, and a rewrite of a big
 * state on every start would cost more than it saves.
 */
const COMPACT_MIN_LINES = 10_000;

type Id = number | string;
type Entry =
  | { op: 'put'; table: string; row: { id: Id } }
  | { op: 'delete'; table: string; id: Id }
  | { op: 'seq'; table: string; next: number }
  | { op: 'seeded' };

export interface PersistenceOptions {
  /** Lines below which the log is never compacted (tests set it low). Default 10,000. */
  compactMinLines?: number;
}

export class Persistence {
  private fd: number | undefined;
  /** Lines in the log (the header included) and its size in bytes: where a failed append is cut back to. */
  private lines = 0;
  private size = 0;
  /** The log holds a whole seeded state: loaded, or the seed committed. Compaction writes the state only then. */
  private complete: boolean;
  /** After a failed rewrite (a full disk), the next is tried only once the log has grown this long. */
  private retryAt = 0;

  private constructor(
    /** The log file. */
    readonly file: string,
    private readonly store: Store,
    /** True when the log holds a seeded state (loaded into the store); false: seed the store and `commitSeed`. */
    readonly seeded: boolean,
    /** What was noticed while opening (a torn last line skipped, a leftover SQLite file), for the caller to print. */
    readonly notes: string[],
    private readonly compactMinLines: number,
  ) {
    this.complete = seeded;
  }

  /**
   * Opens (or creates) the log in `dir` and loads a seeded state into `store`. Throws, saying how to convert it,
   * when `dir` holds only an older emulator's SQLite database, and when the log is damaged anywhere but its end.
   */
  static open(dir: string, store: Store, options: PersistenceOptions = {}): Persistence {
    if (existsSync(dir) && statSync(dir).isFile()) {
      throw new Error(
        `--data takes a folder, and ${dir} is a file` +
          (isSqlite(dir) ? ` (an SQLite database: older emulators kept DIR/${LEGACY_FILE}; give --data DIR).` : '.'),
      );
    }
    mkdirSync(dir, { recursive: true });
    const file = join(dir, DATA_FILE);
    const legacy = join(dir, LEGACY_FILE);
    const notes: string[] = [];
    const exists = existsSync(file);
    if (isSqlite(legacy)) {
      if (!exists) throw new Error(legacyMessage(legacy, dir));
      notes.push(`${legacy} is left from an older emulator and is not read (the state is in ${file}); delete it`);
    }
    const log = exists ? readLog(file, notes) : undefined;
    const seeded = log?.seeded ?? false;
    if (log && seeded) {
      for (const table of store.tables()) {
        table.load(log.rows.get(table.name)?.values() ?? [], log.seqs.get(table.name));
      }
    } else if (log && log.lines > 1) {
      notes.push(`${file} holds no complete seed (a start stopped while seeding): it starts again from the seed`);
    }
    const p = new Persistence(file, store, seeded, notes, options.compactMinLines ?? COMPACT_MIN_LINES);
    if (!log || !seeded || log.torn || p.oversized(log.lines)) p.compact();
    else p.append(log.lines, log.size);
    return p;
  }

  /** Appends one request's changes as one line, on disk before this returns. */
  commit(changes: Change[]): void {
    this.write(entriesOf(changes));
  }

  /** Commits the seed's changes and the marker that the state is whole, in one line: a crash keeps both or neither. */
  commitSeed(changes: Change[]): void {
    this.write([...entriesOf(changes), { op: 'seeded' }]);
    this.complete = true;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private write(entries: Entry[]): void {
    if (!entries.length) return;
    const fd = this.fd;
    if (fd === undefined) throw new Error(`${this.file} is closed: the emulator was stopped`);
    const line = Buffer.from(`${JSON.stringify(entries)}\n`);
    try {
      writeAll(fd, line);
      // fdatasync: the bytes and the file's new length, which is all an append needs (not its times).
      fdatasyncSync(fd);
    } catch (err) {
      // Cut a partly written line off, so the next line does not land after it (a disk full, not a crash).
      try {
        ftruncateSync(fd, this.size);
      } catch {
        // The note of the torn line at the next start covers it.
      }
      throw err;
    }
    this.size += line.length;
    this.lines += 1;
    if (this.lines < this.retryAt || !this.oversized(this.lines)) return;
    try {
      this.compact();
    } catch {
      // The write above is on disk and the log is whole: the answer stands, and the log stays long a while.
      this.retryAt = 2 * this.lines;
    }
  }

  private oversized(lines: number): boolean {
    let live = 2; // header and seeded marker
    for (const t of this.store.tables()) if (!TRANSIENT.has(t.name)) live += 1 + t.size;
    return lines > Math.max(this.compactMinLines, 2 * live);
  }

  /**
   * Rewrites the log as the store's state now: header, marker, each table's sequence and rows, one per line. Until
   * the rename the old log stays open and whole, so a failure leaves it as it was.
   */
  private compact(): void {
    const tmp = `${this.file}.tmp`;
    const fd = openSync(tmp, 'w');
    let lines = 0;
    let written = false;
    try {
      const out = (e: object) => {
        writeAll(fd, Buffer.from(`${JSON.stringify(e)}\n`));
        lines += 1;
      };
      out({ format: FORMAT, version: VERSION });
      if (this.complete) {
        out([{ op: 'seeded' }]);
        for (const t of this.store.tables()) {
          if (TRANSIENT.has(t.name)) continue;
          out([{ op: 'seq', table: t.name, next: t.nextId }]);
          for (const row of t.rows.values()) out([{ op: 'put', table: t.name, row }]);
        }
      }
      fsyncSync(fd);
      written = true;
    } finally {
      closeSync(fd);
      if (!written) rmSync(tmp, { force: true });
    }
    renameSync(tmp, this.file);
    syncDir(join(this.file, '..'));
    this.close();
    this.append(lines, statSync(this.file).size);
  }

  private append(lines: number, size: number): void {
    this.fd = openSync(this.file, 'a');
    this.lines = lines;
    this.size = size;
  }
}

interface Log {
  rows: Map<string, Map<Id, { id: Id }>>;
  seqs: Map<string, number>;
  seeded: boolean;
  /** Complete lines, the header included, and their bytes. */
  lines: number;
  size: number;
  /** The file ended in a partial line (skipped). */
  torn: boolean;
}

function readLog(file: string, notes: string[]): Log {
  const text = readFileSync(file, 'utf8');
  const log: Log = { rows: new Map(), seqs: new Map(), seeded: false, lines: 0, size: 0, torn: false };
  const end = text.lastIndexOf('\n') + 1;
  if (end < text.length) {
    log.torn = true;
    notes.push(
      `${file}: skipped a partial last line (${Buffer.byteLength(text.slice(end))} bytes, a write cut off by a crash; it was never acknowledged)`,
    );
  }
  const lines = text.slice(0, end).split('\n');
  lines.pop();
  log.lines = lines.length;
  log.size = Buffer.byteLength(text.slice(0, end));
  for (const [i, line] of lines.entries()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (err) {
      throw damaged(file, i + 1, (err as Error).message);
    }
    if (i === 0) checkHeader(file, parsed);
    else if (!Array.isArray(parsed)) throw damaged(file, i + 1, 'expected an array of changes');
    else for (const e of parsed as Entry[]) if (!apply(log, e)) throw damaged(file, i + 1, 'a change of unknown shape');
  }
  return log;
}

function entriesOf(changes: Change[]): Entry[] {
  const entries: Entry[] = [];
  for (const c of changes) {
    if (TRANSIENT.has(c.table)) continue;
    // A put's id is its row's: the line leaves it out.
    if (c.op === 'put') entries.push({ op: 'put', table: c.table, row: c.row as { id: Id } });
    else entries.push(c);
  }
  return entries;
}

const KNOWN = new Set(['put', 'delete', 'seq', 'seeded']);

function apply(log: Log, e: Entry): boolean {
  if (!KNOWN.has(e?.op) || (e.op !== 'seeded' && typeof e.table !== 'string')) return false;
  if (e.op === 'put' && (typeof e.row !== 'object' || e.row === null)) return false;
  if (e.op === 'seeded') {
    log.seeded = true;
    return true;
  }
  let rows = log.rows.get(e.table);
  if (!rows) log.rows.set(e.table, (rows = new Map()));
  if (e.op === 'put') rows.set(e.row.id, e.row);
  else if (e.op === 'delete') rows.delete(e.id);
  else log.seqs.set(e.table, e.next);
  return true;
}

function checkHeader(file: string, header: unknown): void {
  const h = header as { format?: unknown; version?: unknown } | null;
  if (h?.format !== FORMAT) {
    throw new Error(`${file} is not an emulator data file: line 1 should be {"format":"${FORMAT}","version":1}.`);
  }
  if (typeof h.version !== 'number' || h.version > VERSION) {
    throw new Error(
      `${file} was written by a newer emulator (format version ${String(h.version)}); this one reads version ${VERSION}.`,
    );
  }
}

function damaged(file: string, line: number, why: string): Error {
  return new Error(
    `${file} is damaged at line ${line} (${why}). Only a last line can be cut off by a crash; this one is not the ` +
      'last: mend or remove the line, or move the file away to start again from the seed.',
  );
}

/** True when `file` exists and starts with SQLite's header ("SQLite format 3\0"). */
function isSqlite(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_MAGIC);
  } finally {
    closeSync(fd);
  }
}

/**
 * How to move an older emulator's state: one `sqlite3` command prints its rows as the lines of the log. Node 20
 * reads no SQLite without a native module, so the emulator does not convert it itself.
 */
function legacyMessage(legacy: string, dir: string): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const file = join(dir, DATA_FILE);
  const sql =
    `SELECT json_object('format','${FORMAT}','version',${VERSION}); ` +
    "SELECT json_array(json_object('op','seeded')) FROM meta WHERE key='seeded'; " +
    "SELECT json_array(json_object('op','seq','table',tbl,'next',next)) FROM seqs; " +
    "SELECT json_array(json_object('op','put','table',tbl,'row',json(json))) FROM rows;";
  return (
    `${legacy} holds the state of an older emulator (SQLite); this one keeps ${file} (JSON lines) and reads no ` +
    'SQLite. Convert it once with the sqlite3 command-line tool, then start again:\n' +
    `  sqlite3 ${q(legacy)} "${sql}" > ${q(`${file}.new`)} && mv ${q(`${file}.new`)} ${q(file)}\n` +
    `Or start from the seed: move ${legacy} (and its -wal and -shm files) out of the folder.`
  );
}

function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off);
}

/** Makes a rename durable (POSIX); Windows cannot open a folder, and its rename is durable as it is. */
function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // See above.
  }
}
