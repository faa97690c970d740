import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobStore } from '../src/blobs.js';
import type { RunningEmulator } from '../src/index.js';
import { startEmulator } from '../src/server.js';
import { call, TM } from './helpers.js';
import { ensureBuilt, startCli, stopCli } from './spawn.js';

/**
 * Durable state with `dataDir` / `--data`: rows and id sequences survive a restart and a kill -9 of the process;
 * attachment bytes survive; in memory nothing does.
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
