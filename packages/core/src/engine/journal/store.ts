import { createHash, randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { mayNeedRedaction, redact } from '../../client/secrets.js';
import { systemClock } from '../kernel/clock.js';
import type { RefusalMark } from '../kernel/work.js';

/**
 * The journal: undelivered results wait on disk for a later run or `casebridge replay`. One file per entry, written
 * atomically (temp, fsync, rename, 0600) and never edited; every string redacted.
 */

export interface JournalEntry<T = unknown> {
  /** File name without extension; sorts by creation time. */
  id: string;
  createdAt: string;
  /** What the payload is, e.g. `result`. */
  kind: string;
  payload: T;
  /** The service refused this entry alone, repeatedly: kept for `replay` to try once the cause is fixed. */
  refused?: RefusalMark;
}

/** Format version; `refused` stays optional within 1 so an older casebridge replays it (docs/architecture.md). */
const VERSION = 1;
const READABLE = new Set([1]);
/** Beside the entries: the reporter options of the run that wrote them, without credentials (for `replay`). */
// Not `.json`: the entries are the folder's `.json` files (tools and people count them).
const RUN_OPTIONS = 'run-options';
/** Options never written to disk: credentials, wherever they sit. */
const SECRET_OPTIONS = new Set(['token', 'password', 'ticket']);

function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !SECRET_OPTIONS.has(k))
        .map(([k, v]) => [k, withoutSecrets(v)]),
    );
  }
  return value;
}

async function atomicWrite(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.${randomUUID()}.tmp`;
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, path);
}

function redactDeep(value: unknown): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v);
    return out;
  }
  return value;
}

export class Journal {
  private seq = 0;

  constructor(readonly dir: string) {}

  private async ensure(): Promise<void> {
    await mkdir(join(this.dir, 'blobs'), { recursive: true, mode: 0o700 });
  }

  /** Stores bytes as a blob; returns its path (content-addressed: the same bytes are stored once). */
  async putBlob(bytes: Uint8Array): Promise<string> {
    await this.ensure();
    const name = createHash('sha256').update(bytes).digest('hex');
    const path = join(this.dir, 'blobs', name);
    try {
      await writeFile(path, bytes, { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    return path;
  }

  /** Adds an entry; resolves once it is durably on disk. `refused` marks a result the service refused. */
  async add<T>(kind: string, payload: T, refused?: RefusalMark): Promise<JournalEntry<T>> {
    await this.ensure();
    const now = new Date();
    this.seq += 1;
    const id = `${now.toISOString().replace(/[:.]/g, '-')}-${String(this.seq).padStart(6, '0')}-${randomUUID().slice(0, 8)}`;
    const entry: JournalEntry<T> = {
      id,
      createdAt: now.toISOString(),
      kind,
      payload: redactDeep(payload) as T,
      ...(refused ? { refused: redactDeep(refused) as RefusalMark } : {}),
    };
    await atomicWrite(join(this.dir, `${id}.json`), JSON.stringify({ version: VERSION, ...entry }));
    return entry;
  }

  /**
   * Records the runner's reporter options, without credentials, so `replay` delivers to the same place; latest wins.
   */
  async saveRunOptions(options: Record<string, unknown>, runner: string): Promise<void> {
    await this.ensure();
    const body = { version: VERSION, runner, savedAt: new Date().toISOString(), options: withoutSecrets(options) };
    await atomicWrite(join(this.dir, RUN_OPTIONS), `${JSON.stringify(redactDeep(body), null, 2)}\n`);
  }

  /** The options `saveRunOptions` recorded, if any. */
  async readRunOptions(): Promise<{ runner: string; savedAt: string; options: Record<string, unknown> } | undefined> {
    try {
      const parsed = JSON.parse(await readFile(join(this.dir, RUN_OPTIONS), 'utf8'));
      if (!READABLE.has(parsed?.version) || typeof parsed.options !== 'object' || parsed.options === null)
        return undefined;
      return { runner: String(parsed.runner), savedAt: String(parsed.savedAt), options: parsed.options };
    } catch {
      return undefined;
    }
  }

  /** Every readable entry, oldest first. Unreadable files are moved aside (`.corrupt`) and reported. */
  async list<T = unknown>(): Promise<{ entries: JournalEntry<T>[]; corrupt: string[] }> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], corrupt: [] };
      throw err;
    }
    await this.releaseStaleClaims(names);
    names = await readdir(this.dir);
    const entries: JournalEntry<T>[] = [];
    const corrupt: string[] = [];
    for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
      const path = join(this.dir, name);
      try {
        const parsed = JSON.parse(await readFile(path, 'utf8')) as JournalEntry<T> & { version?: number };
        if (!READABLE.has(parsed.version ?? 0) || typeof parsed.id !== 'string' || typeof parsed.kind !== 'string') {
          throw new Error('not a journal entry');
        }
        entries.push({
          id: parsed.id,
          createdAt: parsed.createdAt,
          kind: parsed.kind,
          payload: parsed.payload,
          ...(parsed.refused ? { refused: parsed.refused } : {}),
        });
      } catch {
        corrupt.push(path);
        await rename(path, `${path}.corrupt`).catch(() => undefined);
      }
    }
    return { entries, corrupt };
  }

  /** Takes an entry by renaming it to `<id>.json.claimed-<pid>`; false if taken first; `list` frees dead claims. */
  async claim(id: string): Promise<boolean> {
    try {
      await rename(join(this.dir, `${id}.json`), join(this.dir, `${id}.json.claimed-${process.pid}`));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  /** Removes a delivered entry (claimed or not). */
  async remove(id: string): Promise<void> {
    await rm(join(this.dir, `${id}.json`), { force: true });
    await rm(join(this.dir, `${id}.json.claimed-${process.pid}`), { force: true });
  }

  /** Gives back the claims of processes that died while delivering. */
  private async releaseStaleClaims(names: string[]): Promise<void> {
    for (const name of names) {
      const m = /^(.*\.json)\.claimed-(\d+)$/.exec(name);
      if (!m?.[1]) continue;
      if (Number(m[2]) !== process.pid && alive(Number(m[2]))) continue;
      if (Number(m[2]) === process.pid) continue;
      await rename(join(this.dir, name), join(this.dir, m[1])).catch(() => undefined);
    }
  }

  /** Stores bytes as a blob, synchronously (for the write-ahead log, which is written from a runner's hook). */
  putBlobSync(bytes: Uint8Array): string {
    mkdirSync(join(this.dir, 'blobs'), { recursive: true, mode: 0o700 });
    const name = createHash('sha256').update(bytes).digest('hex');
    const path = join(this.dir, 'blobs', name);
    try {
      writeFileSync(path, bytes, { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    return path;
  }

  /** The write-ahead log of this process (created on its first record). */
  openWal(): WriteAheadLog {
    return new WriteAheadLog(this);
  }

  /**
   * Journals what dead runs' write-ahead logs took in and did not mark delivered; returns how many. Dead: its process
   * is gone, or from another host an hour unwritten; a rename arbitrates races.
   */
  async recoverWals(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return 0;
    }
    let recovered = 0;
    const host = safeHost();
    for (const name of names) {
      const m = /^wal-(.+)-(\d+)-[0-9a-f]{8}\.jsonl$/.exec(name);
      if (!m) continue;
      const path = join(this.dir, name);
      if (m[1] === host) {
        if (Number(m[2]) === process.pid || alive(Number(m[2]))) continue;
      } else {
        const now = systemClock.now();
        const age = now - (await stat(path).catch(() => ({ mtimeMs: now }))).mtimeMs;
        if (age < 3_600_000) continue;
      }
      const mine = `${path}.recovering-${process.pid}`;
      try {
        await rename(path, mine);
      } catch {
        continue;
      }
      const items = new Map<string, unknown>();
      for (const line of (await readFile(mine, 'utf8')).split('\n')) {
        if (!line.trim()) continue;
        try {
          const r = JSON.parse(line) as { v?: number; item?: { id?: string }; done?: string };
          if (!READABLE.has(r.v ?? 0)) continue;
          if (r.item?.id) items.set(r.item.id, r.item);
          else if (r.done) items.delete(r.done);
        } catch {
          // The last line of a killed process may be torn: the lines before it count.
        }
      }
      for (const item of items.values()) {
        await this.add('result', item);
        recovered += 1;
      }
      await rm(mine, { force: true });
    }
    return recovered;
  }

  /** Removes unreferenced blobs; `only` limits it to the given paths (a run cleaning up after itself). */
  async pruneBlobs(only?: ReadonlySet<string>): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return;
    }
    const used = new Set<string>();
    for (const name of names) {
      if (!/\.json(\.claimed-\d+)?$|^wal-.*\.jsonl/.test(name)) continue;
      const text = await readFile(join(this.dir, name), 'utf8').catch(() => '');
      for (const m of text.matchAll(/blobs[\\/]+([0-9a-f]{64})/g)) if (m[1]) used.add(m[1]);
    }
    let blobs: string[] = [];
    try {
      blobs = await readdir(join(this.dir, 'blobs'));
    } catch {
      return;
    }
    for (const b of blobs) {
      const path = join(this.dir, 'blobs', b);
      if (used.has(b) || (only && !only.has(path))) continue;
      await rm(path, { force: true });
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function safeHost(): string {
  return hostname().replace(/[^A-Za-z0-9.]/g, '_') || 'host';
}

/** What the write-ahead log reads of an attempt or a step: its attachments (bytes maybe in memory) and its steps. */
interface Attached {
  attachments: Array<{ name?: string; contentType?: string; body?: Uint8Array; path?: string }>;
  steps: Attached[];
}

/** Whether an attempt or step, or a step under it, has an attachment whose bytes are in memory. */
function holdsBodies(at: Attached): boolean {
  return at.attachments.some((a) => a.body !== undefined) || at.steps.some(holdsBodies);
}

/**
 * A run's write-ahead log: each result appended as it comes and marked when delivered, so a killed run loses
 * nothing. A tick's lines go in one synchronous append.
 */
export class WriteAheadLog {
  /** File descriptor of the log, opened on the first line. */
  private fd: number | undefined;
  private readonly path: string;
  private failed = false;
  /** Lines of the current tick, written together. */
  private pending: string[] = [];
  /** Blobs this log wrote: removed with the log unless a journal entry needs them. */
  private readonly blobs = new Set<string>();

  constructor(private readonly journal: Journal) {
    this.path = join(journal.dir, `wal-${safeHost()}-${process.pid}-${randomUUID().slice(0, 8)}.jsonl`);
  }

  private write(record: unknown): void {
    if (this.failed) return;
    try {
      this.writeLine(JSON.stringify(record));
    } catch {
      this.failed = true;
    }
  }

  private writeLine(line: string): void {
    if (this.failed) return;
    // One write per tick: a burst of a thousand results costs one write; a kill loses only the current tick's lines.
    this.pending.push(line);
    if (this.pending.length === 1) setImmediate(() => this.flush());
  }

  /** Appends the lines waiting; on any failure the log stops (read-only folder, full disk). */
  private flush(): void {
    const lines = this.pending;
    this.pending = [];
    if (this.failed || lines.length === 0) return;
    try {
      if (this.fd === undefined) {
        mkdirSync(this.journal.dir, { recursive: true, mode: 0o700 });
        this.fd = openSync(this.path, 'a', 0o600);
      }
      writeSync(this.fd, `${lines.join('\n')}\n`);
    } catch {
      // No log: the end-of-run journal still covers every ending but a kill.
      this.failed = true;
    }
  }

  /** Logs a result taken in. In-memory attachment bodies become blobs (JSON has no bytes). */
  taken(item: { id: string; test: { attempts: Attached[] } }): void {
    if (this.failed) return;
    try {
      // Most results carry no bytes in memory: logged as they are, without a copy of each attempt and step.
      const logged = item.test.attempts.some(holdsBodies) ? this.withBlobs(item) : item;
      const line = JSON.stringify({ v: VERSION, item: logged });
      // Redacted string by string only when something in it could be a secret: most results hold none.
      if (mayNeedRedaction(line)) this.write({ v: VERSION, item: redactDeep(logged) });
      else this.writeLine(line);
    } catch {
      this.failed = true;
    }
  }

  /** The item with each in-memory attachment body stored as a blob and named by its path (JSON has no bytes). */
  private withBlobs<T extends { test: { attempts: Attached[] } }>(item: T): T {
    const toPath = (a: Attached['attachments'][number]) => {
      if (!a.body) return a;
      const path = this.journal.putBlobSync(a.body);
      this.blobs.add(path);
      return { name: a.name, contentType: a.contentType, path };
    };
    const steps = (list: Attached[]): Attached[] =>
      list.map((st) => ({
        ...st,
        attachments: st.attachments.map(toPath),
        steps: steps(st.steps),
      }));
    const test = {
      ...item.test,
      attempts: item.test.attempts.map((a) => ({
        ...a,
        attachments: a.attachments.map(toPath),
        steps: steps(a.steps),
      })),
    };
    return { ...item, test };
  }

  /** Logs that a result reached the service (or was dropped for good): recovery skips it. */
  delivered(id: string): void {
    this.write({ v: VERSION, done: id });
  }

  /** The run ended and journalled what was left: the log is not needed any more. */
  async discard(): Promise<void> {
    this.pending = [];
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // Closed already.
      }
      this.fd = undefined;
    }
    await rm(this.path, { force: true });
    if (this.blobs.size > 0) await this.journal.pruneBlobs(this.blobs);
  }
}
