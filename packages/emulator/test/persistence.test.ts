import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../src/index.js';
import { startEmulator } from '../src/server.js';
import { BlobStore } from '../src/store/blobs.js';
import { DATA_FILE, Persistence } from '../src/store/persist.js';
import { Store } from '../src/store/store.js';
import { call, TM } from './helpers.js';
import { ensureBuilt, startCli, stopCli } from './spawn.js';

/**
 * Durable state with `dataDir` / `--data`: rows and id sequences survive a restart and a kill -9 of the process;
 * attachment bytes survive; in memory nothing does. The log (`emulator.jsonl`): a torn last line is skipped with a
 * note, a rewrite keeps the state, an earlier emulator's SQLite file is refused with the command that converts it.
 */

const PLAN = `${TM}/testPlan/DEMO-1`;
const dirs: string[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'casebridge-persist-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const cycleOf = (emu: RunningEmulator, name: string) => emu.store.cycles.find((c) => c.name === name);
const logLines = (dir: string) => readFileSync(join(dir, DATA_FILE), 'utf8').split('\n').slice(0, -1);

/** Cycle names of DEMO-1 as the service lists them. */
async function listedCycles(emu: { url: string }): Promise<string[]> {
  const r = await call(emu as RunningEmulator, 'GET', `${PLAN}/cycles`);
  expect(r.status).toBe(200);
  return (r.json as { name: string }[]).map((c) => c.name);
}

describe('dataDir', () => {
  it('keeps a created cycle across a restart, with the same id', async () => {
    const dir = freshDir();
    const first = await startEmulator({ port: 0, dataDir: dir });
    expect(
      (await call(first, 'POST', `${PLAN}/addCycle`, { body: { name: 'durable', preloadRuns: 'yes' } })).status,
    ).toBe(200);
    const id = cycleOf(first, 'durable')?.id;
    const runs = first.store.runs.filter((r) => r.cycleId === id).length;
    expect(runs).toBe(6);
    await first.close();
    const lines = logLines(dir);
    expect(JSON.parse(lines[0] ?? '')).toEqual({ format: 'casebridge-emulator-data', version: 1 });
    // The seed and its marker in one line, then one line per request.
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/\{"op":"seeded"\}\]$/);

    const second = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(await listedCycles(second)).toContain('durable');
      expect(cycleOf(second, 'durable')?.id).toBe(id);
      expect(second.store.runs.filter((r) => r.cycleId === id)).toHaveLength(runs);
      // The seed is not applied a second time.
      expect((await call(second, 'GET', `${PLAN}/members`)).json).toHaveLength(6);
      expect(second.store.users.size).toBe(3);
    } finally {
      await second.close();
    }
  });

  it('continues id sequences after a restart: a deleted id is never reused', async () => {
    const dir = freshDir();
    const first = await startEmulator({ port: 0, dataDir: dir });
    await call(first, 'POST', `${PLAN}/addCycle`, { body: { name: 'kept' } });
    await call(first, 'POST', `${PLAN}/addCycle`, { body: { name: 'deleted' } });
    const deletedId = cycleOf(first, 'deleted')?.id ?? 0;
    expect((await call(first, 'DELETE', `${PLAN}/deleteCycleByIdOrName`, { body: { name: 'deleted' } })).status).toBe(
      200,
    );
    await first.close();

    const second = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(await listedCycles(second)).toEqual(['kept']);
      await call(second, 'POST', `${PLAN}/addCycle`, { body: { name: 'after restart' } });
      expect(cycleOf(second, 'after restart')?.id).toBe(deletedId + 1);
    } finally {
      await second.close();
    }
  });

  it('keeps attachment rows and their bytes', async () => {
    const dir = freshDir();
    const first = await startEmulator({ port: 0, dataDir: dir });
    await call(first, 'POST', `${PLAN}/addCycle`, { body: { name: 'with attachment', preloadRuns: 'yes' } });
    const run = first.store.runs.find((r) => r.cycleId === cycleOf(first, 'with attachment')?.id);
    // Written the way an upload does: bytes to the blob store in the data folder, then the row.
    const blobs = await BlobStore.open(join(dir, 'blobs'));
    const bytes = 'screenshot bytes ✓ '.repeat(1000);
    const blob = await blobs.put(Readable.from([Buffer.from(bytes)]));
    const row = first.store.attachments.insert({
      runId: run?.id ?? 0,
      runStepId: null,
      fileName: 'shot.png',
      mimeType: 'image/png',
      size: blob.size,
      sha256: blob.sha256,
      blob: blob.id,
      createdAt: 1,
      createdBy: 'admin',
    });
    await first.close();

    const second = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(second.store.attachments.get(row.id)).toEqual(row);
      const again = await BlobStore.open(join(dir, 'blobs'));
      expect(again.size(blob.id)).toBe(Buffer.byteLength(bytes));
      expect(await text(again.read(blob.id))).toBe(bytes);
    } finally {
      await second.close();
    }
  });

  it('does not keep login sessions', async () => {
    const dir = freshDir();
    const first = await startEmulator({ port: 0, dataDir: dir });
    first.store.sessions.insert({ id: 'SESSION-1', userId: 1, createdAt: 0 });
    await first.close();
    const second = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(second.store.sessions.size).toBe(0);
    } finally {
      await second.close();
    }
  });

  it('makes a reset durable too', async () => {
    const dir = freshDir();
    const first = await startEmulator({ port: 0, dataDir: dir });
    await call(first, 'POST', `${PLAN}/addCycle`, { body: { name: 'before reset' } });
    expect((await call(first, 'POST', '/__emulator/reset')).status).toBe(200);
    await first.close();
    const second = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(await listedCycles(second)).toEqual([]);
      expect((await call(second, 'GET', `${PLAN}/members`)).json).toHaveLength(6);
    } finally {
      await second.close();
    }
  });
});

describe('a failed start', () => {
  it('releases the data folder when the port is taken', async () => {
    const dir = freshDir();
    const running = await startEmulator({ port: 0 });
    try {
      await expect(startEmulator({ port: running.port, dataDir: dir })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await running.close();
    }
    const next = await startEmulator({ port: 0, dataDir: dir });
    await call(next, 'POST', `${PLAN}/addCycle`, { body: { name: 'after a failed start' } });
    await next.close();
    const again = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(await listedCycles(again)).toEqual(['after a failed start']);
    } finally {
      await again.close();
    }
  });
});

describe('in memory (no dataDir)', () => {
  it('keeps nothing across a restart', async () => {
    const first = await startEmulator({ port: 0 });
    await call(first, 'POST', `${PLAN}/addCycle`, { body: { name: 'ephemeral' } });
    expect(await listedCycles(first)).toContain('ephemeral');
    await first.close();
    const second = await startEmulator({ port: 0 });
    try {
      expect(await listedCycles(second)).toEqual([]);
    } finally {
      await second.close();
    }
  });
});

describe('kill -9 of the emulator process', () => {
  beforeAll(ensureBuilt, 240_000);

  it('keeps every acknowledged write', async () => {
    const dir = freshDir();
    const N = 25;
    const first = await startCli(['--data', dir, '--port', '0']);
    const names = Array.from({ length: N }, (_, i) => `acknowledged ${i + 1}`);
    try {
      for (const name of names) {
        const r = await call(first as unknown as RunningEmulator, 'POST', `${PLAN}/addCycle`, { body: { name } });
        expect(r.status).toBe(200);
      }
    } finally {
      expect(await stopCli(first, 'SIGKILL')).toBe('SIGKILL');
    }

    const second = await startCli(['--data', dir, '--port', '0']);
    try {
      const listed = await listedCycles(second);
      expect(listed).toEqual(names);
      expect(first.stdout()).toContain(`data in ${join(dir, DATA_FILE)} (JSON lines, fsync on each write)`);
      // Ids continue after the crash as well.
      const r = await call(second as unknown as RunningEmulator, 'POST', `${PLAN}/addCycle`, {
        body: { name: 'after the crash' },
      });
      expect(r.status).toBe(200);
      const state = (await call(second as unknown as RunningEmulator, 'GET', '/__emulator/state')).json;
      const ids = (state.cycles as { id: number; name: string }[]).map((c) => c.id);
      expect(new Set(ids).size).toBe(N + 1);
      expect(state.cycles.find((c: { name: string }) => c.name === 'after the crash').id).toBe(N + 1);
    } finally {
      await stopCli(second);
    }
  });
});

describe('the data file', () => {
  it('skips a torn last line with a note, and appends after it cleanly', async () => {
    const dir = freshDir();
    const first = await startEmulator({ port: 0, dataDir: dir });
    await call(first, 'POST', `${PLAN}/addCycle`, { body: { name: 'whole' } });
    await first.close();
    // What a crash in the middle of a write leaves: part of a line, no newline.
    const torn = '[{"op":"put","table":"cycles","row":{"tpId":1,"name":"to';
    appendFileSync(join(dir, DATA_FILE), torn);

    const second = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(second.notes).toEqual([
        `${join(dir, DATA_FILE)}: skipped a partial last line (${torn.length} bytes, a write cut off by a crash; it was never acknowledged)`,
      ]);
      expect(await listedCycles(second)).toEqual(['whole']);
      await call(second, 'POST', `${PLAN}/addCycle`, { body: { name: 'after the tear' } });
    } finally {
      await second.close();
    }
    expect(readFileSync(join(dir, DATA_FILE), 'utf8')).not.toContain(torn);

    const third = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(third.notes).toEqual([]);
      expect(await listedCycles(third)).toEqual(['whole', 'after the tear']);
    } finally {
      await third.close();
    }
  });

  it('refuses a damaged line that is not the last, naming it', async () => {
    const dir = freshDir();
    await (await startEmulator({ port: 0, dataDir: dir })).close();
    appendFileSync(join(dir, DATA_FILE), 'not json\n[]\n');
    await expect(startEmulator({ port: 0, dataDir: dir })).rejects.toThrow(
      new RegExp(`${DATA_FILE} is damaged at line 3 \\(.*\\)\\. Only a last line can be cut off by a crash`),
    );
  });

  it('rewrites a long log at start and keeps the state', async () => {
    const dir = freshDir();
    const first = await startEmulator({ port: 0, dataDir: dir });
    await call(first, 'POST', `${PLAN}/addCycle`, { body: { name: 'edited 0' } });
    const cycle = cycleOf(first, 'edited 0');
    await first.close();
    // 12,000 edits of one row: past the 10,000 lines below which a log is never rewritten.
    const edits = Array.from({ length: 12_000 }, (_, i) =>
      JSON.stringify([{ op: 'put', table: 'cycles', row: { ...cycle, name: `edited ${i + 1}` } }]),
    );
    appendFileSync(join(dir, DATA_FILE), `${edits.join('\n')}\n`);
    const before = first.store.tables().map((t) => [t.name, t.size, t.nextId]);

    const second = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(await listedCycles(second)).toEqual(['edited 12000']);
      expect(logLines(dir).length).toBeLessThan(200);
      await call(second, 'POST', `${PLAN}/addCycle`, { body: { name: 'after the rewrite' } });
      expect(cycleOf(second, 'after the rewrite')?.id).toBe((cycle?.id ?? 0) + 1);
    } finally {
      await second.close();
    }
    const third = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(await listedCycles(third)).toEqual(['edited 12000', 'after the rewrite']);
      const tables = third.store.tables().filter((t) => t.name !== 'cycles' && t.name !== 'sessions');
      expect(tables.map((t) => [t.name, t.size, t.nextId])).toEqual(
        before.filter(([n]) => n !== 'cycles' && n !== 'sessions'),
      );
    } finally {
      await third.close();
    }
  });

  it('rewrites a growing log while running and keeps rows, deletes and sequences', () => {
    const dir = freshDir();
    const store = new Store();
    const log = Persistence.open(dir, store, { compactMinLines: 20 });
    expect(log.seeded).toBe(false);
    store.users.insert({ name: 'admin' } as never);
    for (let i = 0; i < 10; i++) store.priorities.insert({ name: `p${i}` });
    log.commitSeed(store.takeChanges());
    // The state needs 2 + 27 + 11 lines (header and marker, a sequence per kept table, the rows): 80 at most.
    const bound = 2 * (2 + store.tables().length - 1 + 11);
    let longest = 0;
    for (let i = 0; i < 300; i++) {
      const p = store.priorities.insert({ name: `new ${i}` });
      store.priorities.update({ ...p, name: `renamed ${i}` });
      store.priorities.remove(p.id - 1);
      log.commit(store.takeChanges());
      longest = Math.max(longest, logLines(dir).length);
    }
    log.close();
    expect(longest).toBe(bound);
    expect(logLines(dir).length).toBeLessThanOrEqual(bound);

    const again = new Store();
    const reopened = Persistence.open(dir, again, { compactMinLines: 20 });
    try {
      expect(reopened.seeded).toBe(true);
      expect(reopened.notes).toEqual([]);
      expect(again.users.all()).toEqual(store.users.all());
      expect(again.priorities.all().map((p) => p.name)).toEqual([
        'p0',
        'p1',
        'p2',
        'p3',
        'p4',
        'p5',
        'p6',
        'p7',
        'p8',
        'renamed 299',
      ]);
      expect(again.priorities.all()).toEqual(store.priorities.all());
      expect(again.priorities.nextId).toBe(311);
    } finally {
      reopened.close();
    }
  });

  it('keeps writing to a whole log when a rewrite fails', () => {
    const dir = freshDir();
    const store = new Store();
    const log = Persistence.open(dir, store, { compactMinLines: 1 });
    log.commitSeed(store.takeChanges());
    // The rewrite's temporary file cannot be made (a full disk would fail it the same way).
    mkdirSync(join(dir, `${DATA_FILE}.tmp`));
    for (let i = 0; i < 200; i++) {
      store.priorities.insert({ name: `p${i}` });
      log.commit(store.takeChanges());
    }
    log.close();
    expect(logLines(dir)).toHaveLength(2 + 200);
    const again = new Store();
    Persistence.open(dir, again).close();
    expect(again.priorities.all()).toEqual(store.priorities.all());
  });

  it('does not keep login sessions, rewritten or not', () => {
    const dir = freshDir();
    const store = new Store();
    const log = Persistence.open(dir, store, { compactMinLines: 1 });
    store.sessions.insert({ id: 'SESSION-1', userId: 1, createdAt: 0 });
    log.commitSeed(store.takeChanges());
    log.close();
    expect(readFileSync(join(dir, DATA_FILE), 'utf8')).not.toContain('SESSION-1');
  });
});

describe('data of an earlier emulator (SQLite)', () => {
  // The first 16 bytes of every SQLite database file; the rest does not matter to the check.
  const sqliteFile = () => Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(84)]);

  it('refuses the folder, printing the command that converts it', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'emulator.sqlite'), sqliteFile());
    const start = startEmulator({ port: 0, dataDir: dir });
    await expect(start).rejects.toThrow(
      `${join(dir, 'emulator.sqlite')} holds the state of an older emulator (SQLite); this one keeps ${join(dir, DATA_FILE)} (JSON lines) and reads no SQLite. Convert it once with the sqlite3 command-line tool, then start again:\n  sqlite3 '${join(dir, 'emulator.sqlite')}' "SELECT json_object('format','casebridge-emulator-data','version',1);`,
    );
    await expect(start).rejects.toThrow(`Or start from the seed: move ${join(dir, 'emulator.sqlite')}`);
    // Nothing was written beside it.
    expect(existsSync(join(dir, DATA_FILE))).toBe(false);
    expect(existsSync(join(dir, 'blobs'))).toBe(false);
  });

  it('says that --data takes the folder when given the database itself', async () => {
    const dir = freshDir();
    const file = join(dir, 'emulator.sqlite');
    writeFileSync(file, sqliteFile());
    await expect(startEmulator({ port: 0, dataDir: file })).rejects.toThrow(
      `--data takes a folder, and ${file} is a file (an SQLite database: older emulators kept DIR/emulator.sqlite; give --data DIR).`,
    );
  });

  it('notes a leftover database once the data is converted', async () => {
    const dir = freshDir();
    await (await startEmulator({ port: 0, dataDir: dir })).close();
    writeFileSync(join(dir, 'emulator.sqlite'), sqliteFile());
    const emu = await startEmulator({ port: 0, dataDir: dir });
    try {
      expect(emu.notes).toEqual([
        `${join(dir, 'emulator.sqlite')} is left from an older emulator and is not read (the state is in ${join(dir, DATA_FILE)}); delete it`,
      ]);
    } finally {
      await emu.close();
    }
  });
});
