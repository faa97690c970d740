import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentRepositoryClient, TestManagementClient } from '../../src/index.js';
import { ADMIN, useEmulator } from '../support/emulator.js';

/**
 * Uploads stream from disk: a 500 MB file goes through `attachments.addToRun` and `storeFile` while the process's
 * resident memory is sampled every 50 ms; it must not grow by the file's size (the emulator runs in this process
 * too and streams to disk as well, so the bound covers both ends). The bytes the emulator stored are checked
 * against the file's own hash.
 */

const MB = 1024 * 1024;
const SIZE = 500 * MB;
/** Peak resident-memory growth allowed during an upload. */
const LIMIT = 100 * MB;

const emu = useEmulator();
const file = join(tmpdir(), `casebridge-upload-${process.pid}-${Date.now()}.bin`);
let sha256 = '';

beforeAll(async () => {
  // Sparse: 500 MB of zeros that take no disk, with a few marked places so that the content is not uniform.
  const fh = await open(file, 'w');
  try {
    await fh.truncate(SIZE);
    for (const at of [0, SIZE / 2, SIZE - 32])
      await fh.write(Buffer.from('casebridge marker 0123456789abcd'), 0, 32, at);
  } finally {
    await fh.close();
  }
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  sha256 = hash.digest('hex');
}, 120_000);

afterAll(async () => {
  await rm(file, { force: true });
});

/** Runs `upload` while sampling RSS every 50 ms; returns its result and the peak growth over the start. */
async function measured<T>(upload: () => Promise<T>): Promise<{ result: T; growth: number; samples: number }> {
  const start = process.memoryUsage().rss;
  let peak = start;
  let samples = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
    samples += 1;
  }, 50);
  try {
    const result = await upload();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, growth: peak - start, samples };
  } finally {
    clearInterval(timer);
  }
}

/** Size and hash of what the emulator stored, from its state dump. */
async function stored(table: 'attachments' | 'nodes', match: (row: Record<string, unknown>) => boolean) {
  const state = (await (await fetch(`${emu().url}/__emulator/state`)).json()) as Record<
    string,
    Record<string, unknown>[]
  >;
  const row = state[table]?.find(match);
  return { size: row?.size, sha256: row?.sha256 };
}

describe('a 500 MB upload streams from disk', () => {
  it('attachments.addToRun: memory stays flat, the emulator holds all 500 MB', async () => {
    const tm = new TestManagementClient({ baseUrl: emu().url, auth: ADMIN, timeouts: { headersMs: 120_000 } });
    try {
      const run = await tm.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' });
      const { growth, samples } = await measured(() =>
        tm.attachments.addToRun({ runId: run.id, file: { path: file, fileName: 'big.bin' } }),
      );
      expect(samples, 'the sampler ran during the upload').toBeGreaterThan(5);
      expect(growth, `peak RSS growth ${Math.round(growth / MB)} MB`).toBeLessThan(LIMIT);
      const files = await tm.attachments.getAttachmentDetails({ runId: run.id });
      const big = files.find((f) => f.fileName === 'big.bin');
      expect(big).toBeDefined();
      expect(await stored('attachments', (r) => r.id === big?.id)).toEqual({ size: SIZE, sha256 });
    } finally {
      await tm.close();
    }
  }, 300_000);

  it('ContentRepositoryClient.storeFile: memory stays flat, the node holds all 500 MB', async () => {
    const repo = new ContentRepositoryClient({ baseUrl: emu().url, auth: ADMIN, timeouts: { headersMs: 120_000 } });
    try {
      const { result: node, growth } = await measured(() =>
        repo.storeFile(file, { name: 'big.bin', mimetype: 'application/octet-stream' }),
      );
      expect(growth, `peak RSS growth ${Math.round(growth / MB)} MB`).toBeLessThan(LIMIT);
      expect(node.downloadUrl).toMatch(/^http/);
      expect(await stored('nodes', (r) => r.id === node.ref.id)).toEqual({ size: SIZE, sha256 });
    } finally {
      await repo.close();
    }
  }, 300_000);
});
