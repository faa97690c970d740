import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  closeChannel,
  createRuntime,
  listChannel,
  mergeRuntime,
  openChannel,
  RUNTIME_DIR_ENV,
  type RuntimeTestIdentity,
  readChannel,
} from '@casebridge/core/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestResult } from '../../src/engine/kernel/model.js';

let identity: RuntimeTestIdentity | undefined;
const rt = createRuntime(() => identity);

const result = (retries = 0): TestResult => ({
  id: 'x',
  file: 'a.test.ts',
  titlePath: ['suite', 'works'],
  tags: [],
  annotations: [],
  attempts: Array.from({ length: retries + 1 }, (_, retry) => ({
    retry,
    status: retry === retries ? 'passed' : 'failed',
    durationMs: 1,
    errors: [],
    steps: [],
    attachments: [],
  })),
});

afterEach(() => {
  const dir = process.env[RUNTIME_DIR_ENV];
  if (dir) closeChannel(dir);
  identity = undefined;
});

describe('runtime channel', () => {
  it('is a no-op without a reporter: steps still run, nothing is written, nothing throws', async () => {
    delete process.env[RUNTIME_DIR_ENV];
    identity = { file: '/p/a.test.ts', name: 'suite > works' };
    rt.caseKey('DEMO-1');
    rt.attach('note', { body: 'hello' });
    await expect(rt.step('adds', () => 2 + 2)).resolves.toBe(4);
    await expect(
      rt.step('fails', () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
  });

  it('is a no-op outside a test (no identity)', () => {
    const dir = openChannel();
    rt.caseKey('DEMO-1');
    rt.attach('note', { body: 'hello' });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('carries keys, nested steps with status and error, and attachments from the test to the reporter', async () => {
    const dir = openChannel();
    identity = { file: '/p/a.test.ts', name: 'suite > works' };
    rt.caseKey('DEMO-2', ' DEMO-3 ', '');
    await rt.step('open the cart', async () => {
      await rt.step('add an item', () => {
        rt.attach('cart.json', { body: JSON.stringify({ items: 1 }) });
      });
      await rt.step('check the total', () => undefined);
    });
    await expect(
      rt.step('pay', () => {
        throw new Error('card declined');
      }),
    ).rejects.toThrow('card declined');
    const shot = join(mkdtempSync(join(tmpdir(), 'cb-rt-')), 'shot.png');
    writeFileSync(shot, 'png');
    rt.attach('screenshot', { path: shot });

    const data = readChannel(dir, '/p/a.test.ts', 'suite > works');
    expect(data?.keys).toEqual(['DEMO-2', 'DEMO-3']);
    const merged = mergeRuntime(result(), data, dir);
    expect(merged.annotations).toEqual([
      { type: 'testCase', description: 'DEMO-2' },
      { type: 'testCase', description: 'DEMO-3' },
    ]);
    const a = merged.attempts[0];
    expect(a?.steps.map((s) => [s.title, s.status, s.steps.map((c) => c.title)])).toEqual([
      ['open the cart', 'passed', ['add an item', 'check the total']],
      ['pay', 'failed', []],
    ]);
    expect(a?.steps[1]?.error?.message).toBe('card declined');
    const inner = a?.steps[0]?.steps[0]?.attachments[0];
    expect(inner?.name).toBe('cart.json');
    expect(inner?.contentType).toBe('application/json');
    // Bytes written in the worker are read into memory: the channel folder may go away before delivery.
    expect(Buffer.from(inner?.body ?? []).toString()).toBe('{"items":1}');
    expect(a?.attachments).toEqual([{ name: 'screenshot', contentType: 'image/png', path: shot }]);
  });

  it('keeps attempts apart: the records of each retry go to that retry', async () => {
    const dir = openChannel();
    identity = { file: '/p/a.test.ts', name: 't', attempt: 0 };
    await rt.step('first try', () => undefined);
    identity = { file: '/p/a.test.ts', name: 't', attempt: 1 };
    await rt.step('second try', () => undefined);
    const merged = mergeRuntime(result(1), readChannel(dir, '/p/a.test.ts', 't'), dir);
    expect(merged.attempts.map((a) => a.steps.map((s) => s.title))).toEqual([['first try'], ['second try']]);
  });

  it('separates tests by file and name, skips torn lines, and returns undefined for a silent test', async () => {
    const dir = openChannel();
    identity = { file: '/p/a.test.ts', name: 't' };
    rt.caseKey('DEMO-2');
    identity = { file: '/p/b.test.ts', name: 't' };
    rt.caseKey('DEMO-3');
    expect(readChannel(dir, '/p/a.test.ts', 't')?.keys).toEqual(['DEMO-2']);
    expect(readChannel(dir, '/p/b.test.ts', 't')?.keys).toEqual(['DEMO-3']);
    expect(readChannel(dir, '/p/c.test.ts', 't')).toBeUndefined();
    const file = readdirSync(dir).find((f) => f.endsWith('.jsonl')) as string;
    writeFileSync(join(dir, file), '{"v":1,"kind":"keys","attempt":0,"keys":["DEMO-4"]}\n{"v":1,"kind":"ke');
    expect(readChannel(dir, '/p/a.test.ts', 't')?.keys ?? readChannel(dir, '/p/b.test.ts', 't')?.keys).toEqual([
      'DEMO-4',
    ]);
  });

  it('consume removes what it read: a rerun of the test (watch mode) starts from an empty file', () => {
    const dir = openChannel();
    identity = { file: '/p/a.test.ts', name: 't' };
    rt.caseKey('DEMO-2');
    expect(readChannel(dir, '/p/a.test.ts', 't', { consume: true })?.keys).toEqual(['DEMO-2']);
    expect(readChannel(dir, '/p/a.test.ts', 't')).toBeUndefined();
    rt.caseKey('DEMO-3');
    expect(readChannel(dir, '/p/a.test.ts', 't')?.keys).toEqual(['DEMO-3']);
  });

  it('with a listing of the folder, a test missing from it is read as silent without a stat; one in it is read', () => {
    const dir = openChannel();
    identity = { file: '/p/a.test.ts', name: 'listed' };
    rt.caseKey('DEMO-7');
    const listed = listChannel(dir);
    identity = { file: '/p/a.test.ts', name: 'after' };
    rt.caseKey('DEMO-8');
    expect(readChannel(dir, '/p/a.test.ts', 'listed', { listed })?.keys).toEqual(['DEMO-7']);
    // Written after the listing: not in it, so not read with it (a reporter lists once the file's tests ended).
    expect(readChannel(dir, '/p/a.test.ts', 'after', { listed })).toBeUndefined();
    expect(readChannel(dir, '/p/a.test.ts', 'after')?.keys).toEqual(['DEMO-8']);
    expect(listChannel(join(dir, 'gone'))).toEqual(new Set());
  });

  it('closeChannel removes the folder and the variable', () => {
    const dir = openChannel();
    closeChannel(dir);
    expect(existsSync(dir)).toBe(false);
    expect(process.env[RUNTIME_DIR_ENV]).toBeUndefined();
  });
});
