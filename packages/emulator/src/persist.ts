import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Change, Store } from './store.js';

/**
 * Durable state for `--data DIR`: one SQLite database (WAL) holding every table's rows as JSON, written in one
 * transaction per request before the answer is sent. WAL with synchronous=NORMAL is durable against a crash of the
 * process (kill -9); `durability: 'full'` also survives a power cut, at a cost per write.
 */

interface Db {
  prepare(sql: string): { run(...a: unknown[]): unknown; all(...a: unknown[]): unknown[] };
  exec(sql: string): void;
  pragma(p: string): unknown;
  transaction<T extends (...a: never[]) => unknown>(fn: T): T;
  close(): void;
}

export class Persistence {
  private readonly put;
  private readonly del;
  private readonly seq;
  private readonly commitTx: (changes: Change[]) => void;

  private constructor(private readonly db: Db) {
    db.exec(`CREATE TABLE IF NOT EXISTS rows (tbl TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL,
               PRIMARY KEY (tbl, id));
             CREATE TABLE IF NOT EXISTS seqs (tbl TEXT PRIMARY KEY, next INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`);
    this.put = db.prepare('INSERT OR REPLACE INTO rows (tbl, id, json) VALUES (?, ?, ?)');
    this.del = db.prepare('DELETE FROM rows WHERE tbl = ? AND id = ?');
    this.seq = db.prepare('INSERT OR REPLACE INTO seqs (tbl, next) VALUES (?, ?)');
    this.commitTx = db.transaction((changes: Change[]) => {
      for (const c of changes) {
        if (c.op === 'put') this.put.run(c.table, String(c.id), JSON.stringify(c.row));
        else if (c.op === 'delete') this.del.run(c.table, String(c.id));
        else this.seq.run(c.table, c.next);
      }
    });
  }

  static open(dir: string, durability: 'normal' | 'full' = 'normal'): Persistence {
    mkdirSync(dir, { recursive: true });
    let Database: new (file: string) => Db;
    try {
      Database = createRequire(import.meta.url)('better-sqlite3');
    } catch (err) {
      throw new Error(
        `--data needs the better-sqlite3 package, which failed to load (${(err as Error).message}). ` +
          'Reinstall with a C++ toolchain available (npm rebuild better-sqlite3), or run in memory without --data.',
      );
    }
    const db = new Database(join(dir, 'emulator.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
    return new Persistence(db);
  }

  /** True when the database holds no state yet (seed it). */
  isEmpty(): boolean {
    const rows = this.db.prepare("SELECT value FROM meta WHERE key = 'seeded'").all() as { value: string }[];
    return rows.length === 0;
  }

  markSeeded(): void {
    this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('seeded', ?)").run(new Date().toISOString());
  }

  /** Loads every table of `store` from the database. */
  load(store: Store): void {
    const rows = this.db.prepare('SELECT tbl, json FROM rows').all() as { tbl: string; json: string }[];
    const seqs = new Map(
      (this.db.prepare('SELECT tbl, next FROM seqs').all() as { tbl: string; next: number }[]).map((r) => [
        r.tbl,
        r.next,
      ]),
    );
    const byTable = new Map<string, unknown[]>();
    for (const r of rows) {
      let list = byTable.get(r.tbl);
      if (!list) byTable.set(r.tbl, (list = []));
      list.push(JSON.parse(r.json));
    }
    for (const table of store.tables()) {
      table.load((byTable.get(table.name) ?? []) as { id: number | string }[], seqs.get(table.name));
    }
  }

  commit(changes: Change[]): void {
    if (changes.length) this.commitTx(changes);
  }

  close(): void {
    this.db.close();
  }
}
