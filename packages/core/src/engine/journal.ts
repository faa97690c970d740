import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { redact } from '../client/secrets.js';

/**
 * The journal: results that could not be delivered wait here, on disk, until a later run or `casebridge replay`
 * delivers them. One file per entry, written atomically (temporary file, fsync, rename) with mode 0600, so a crash
 * leaves either the whole entry or nothing. Entries are only ever added or removed (after delivery), never edited.
 * In-memory attachment bodies are stored beside the entries as content-addressed blobs. Nothing secret is written:
 * every string passes through the redactor.
 */

export interface JournalEntry<T = unknown> {
  /** File name without extension; sorts by creation time. */
  id: string;
  createdAt: string;
  /** What the payload is, e.g. `result`. */
  kind: string;
  payload: T;
}

const VERSION = 1;

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

  /** Adds an entry; resolves once it is durably on disk. */
  async add<T>(kind: string, payload: T): Promise<JournalEntry<T>> {
    await this.ensure();
    const now = new Date();
    this.seq += 1;
    const id = `${now.toISOString().replace(/[:.]/g, '-')}-${String(this.seq).padStart(6, '0')}-${randomUUID().slice(0, 8)}`;
    const entry: JournalEntry<T> = { id, createdAt: now.toISOString(), kind, payload: redactDeep(payload) as T };
    await atomicWrite(join(this.dir, `${id}.json`), JSON.stringify({ version: VERSION, ...entry }));
    return entry;
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
        if (parsed.version !== VERSION || typeof parsed.id !== 'string' || typeof parsed.kind !== 'string') {
          throw new Error('not a journal entry');
        }
        entries.push({ id: parsed.id, createdAt: parsed.createdAt, kind: parsed.kind, payload: parsed.payload });
      } catch {
        corrupt.push(path);
        await rename(path, `${path}.corrupt`).catch(() => undefined);
      }
    }
    return { entries, corrupt };
  }

  /**
   * Takes an entry for delivery: renamed to `<id>.json.claimed-<pid>`, so a second process replaying the same
   * folder (shards on one machine) skips it. False when someone else took it first. A claim of a process that is no
   * longer alive is given back by `list`.
   */
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

  /** Removes blobs no entry refers to any more. */
  async pruneBlobs(): Promise<void> {
    const { entries } = await this.list();
    const used = new Set<string>();
    const text = JSON.stringify(entries.map((e) => e.payload));
    for (const m of text.matchAll(/blobs[\\/]+([0-9a-f]{64})/g)) if (m[1]) used.add(m[1]);
    let blobs: string[] = [];
    try {
      blobs = await readdir(join(this.dir, 'blobs'));
    } catch {
      return;
    }
    for (const b of blobs) if (!used.has(b)) await rm(join(this.dir, 'blobs', b), { force: true });
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
