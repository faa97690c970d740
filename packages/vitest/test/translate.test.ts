import { outcomeOf } from '@casebridge/core';
import { stableId } from '@casebridge/core/adapter';
import { describe, expect, it } from 'vitest';
import { identify } from '../src/runtime.js';
import {
  RECORDED_META,
  reportedFile,
  runtimeName,
  titlePathOf,
  toTestResult,
  type VtParent,
  type VtTestCase,
} from '../src/translate.js';

// Literals shaped like Vitest's reported `TestCase` (vitest/node) in 3.2 (no tags, no artifacts, no relativeModuleId),
// 4.1 (tags, artifacts) and 5.1 (attempts, logs): the subset the translation reads.

const ROOT = '/work/app';
const ESC = String.fromCharCode(27);
const moduleOf = { type: 'module' } as VtParent;

function testCase(over: Partial<VtTestCase> = {}, meta: Record<string, unknown> = {}): VtTestCase {
  return {
    name: 'pays with the saved card',
    module: { moduleId: `${ROOT}/tests/shop.spec.ts` },
    project: { name: '' },
    parent: { type: 'suite', name: 'checkout', parent: moduleOf },
    meta: () => meta,
    result: () => ({ state: 'passed', errors: undefined }),
    diagnostic: () => ({ duration: 42.4, startTime: Date.parse('2026-11-22T10:00:00Z'), retryCount: 0, flaky: false }),
    ...over,
  };
}

const assertion = (message: string) => ({
  name: 'AssertionError',
  message: `${ESC}[31m${message}${ESC}[39m`,
  stack: `AssertionError: ${message}\n    at ${ROOT}/tests/shop.spec.ts:13:50`,
  diff: `- Expected\n+ Received\n\n- 1\n+ 2`,
  stacks: [{ file: `${ROOT}/tests/shop.spec.ts`, line: 13, column: 50, method: '' }],
});

describe('identity', () => {
  it('is the relative file, the title path and the project; stable, not order-dependent', () => {
    const r = toTestResult(testCase({ project: { name: 'unit' } }), ROOT);
    expect(r).toMatchObject({ file: 'tests/shop.spec.ts', titlePath: ['checkout', 'pays with the saved card'] });
    expect(r.project).toBe('unit');
    expect(r.id).toBe(stableId('tests/shop.spec.ts', ['checkout', 'pays with the saved card'], 'unit'));
    expect(toTestResult(testCase(), ROOT).project).toBeUndefined();
  });

  it('skips unnamed suites and stops at the module', () => {
    const parent: VtParent = {
      type: 'suite',
      name: 'b',
      parent: { type: 'suite', name: '', parent: { type: 'suite', name: 'a', parent: moduleOf } },
    };
    expect(titlePathOf({ name: 't', parent })).toEqual(['a', 'b', 't']);
  });

  it('falls back to relativeModuleId for a file outside the root (a merge recorded elsewhere)', () => {
    expect(reportedFile(ROOT, '/ci/build/tests/a.spec.ts', 'tests/a.spec.ts')).toBe('tests/a.spec.ts');
    expect(reportedFile(ROOT, `${ROOT}/tests/a.spec.ts`, 'other')).toBe('tests/a.spec.ts');
  });
});

describe('keys', () => {
  it('tags (4.1+) without @, testCase annotations (3.2+) and meta keys', () => {
    const r = toTestResult(
      testCase(
        {
          tags: ['@DEMO-4', 'smoke'],
          annotations: () => [
            { type: 'testCase', message: 'DEMO-2' },
            { type: 'notice', message: 'slow network' },
          ],
        },
        { testCase: 'DEMO-6', caseKeys: ['DEMO-7', 'DEMO-2'] },
      ),
      ROOT,
    );
    expect(r.tags).toEqual(['DEMO-4', 'smoke']);
    expect(r.annotations).toEqual([
      { type: 'testCase', description: 'DEMO-2' },
      { type: 'notice', description: 'slow network' },
      { type: 'testCase', description: 'DEMO-6' },
      { type: 'testCase', description: 'DEMO-7' },
    ]);
  });

  it('3.0/3.1 shapes (no tags, no annotations) give empty lists', () => {
    const r = toTestResult(testCase(), ROOT);
    expect([r.tags, r.annotations]).toEqual([[], []]);
  });
});

describe('attempts before Vitest 5 (result + diagnostic)', () => {
  it('a pass: one attempt with duration and start', () => {
    const r = toTestResult(testCase(), ROOT);
    expect(r.attempts).toEqual([
      {
        retry: 0,
        status: 'passed',
        durationMs: 42,
        startedAt: '2026-11-22T10:00:00.000Z',
        errors: [],
        steps: [],
        attachments: [],
      },
    ]);
  });

  it('a pass after a retry is flaky: the retried error goes to the first attempt', () => {
    const tc = testCase({
      result: () => ({ state: 'passed', errors: [assertion('passes on the second attempt')] }),
      diagnostic: () => ({ duration: 3, startTime: 0, retryCount: 1, flaky: true }),
    });
    const r = toTestResult(tc, ROOT);
    expect(r.attempts.map((a) => [a.retry, a.status, a.errors.length])).toEqual([
      [0, 'failed', 1],
      [1, 'passed', 0],
    ]);
    expect(outcomeOf(r)).toBe('flaky');
  });

  it('a failure: message without colours, stack with the diff, location relative', () => {
    const tc = testCase({ result: () => ({ state: 'failed', errors: [assertion('expected 2 to be 1')] }) });
    const [a] = toTestResult(tc, ROOT).attempts;
    expect(a?.status).toBe('failed');
    expect(a?.errors[0]?.message).toBe('expected 2 to be 1');
    expect(a?.errors[0]?.stack).toContain('- Expected\n+ Received');
    expect(a?.errors[0]?.location).toEqual({ file: 'tests/shop.spec.ts', line: 13, column: 50 });
  });

  it('a timeout is timedOut; a skip is one skipped attempt', () => {
    const timedOut = testCase({
      result: () => ({ state: 'failed', errors: [{ message: 'Test timed out in 5000ms.' }] }),
    });
    expect(toTestResult(timedOut, ROOT).attempts[0]?.status).toBe('timedOut');
    const skipped = testCase({ result: () => ({ state: 'skipped', errors: undefined }), diagnostic: () => undefined });
    expect(toTestResult(skipped, ROOT).attempts).toEqual([
      { retry: 0, status: 'skipped', durationMs: 0, errors: [], steps: [], attachments: [] },
    ]);
  });
});

describe('attempts in Vitest 5 (attempts())', () => {
  it('one attempt per try, each with its own errors; logs become stdout/stderr of the last', () => {
    const tc = testCase({
      result: () => ({ state: 'passed', errors: [assertion('first try')] }),
      attempts: () => [
        { state: 'failed', errors: [assertion('first try')], duration: 4, startTime: 1_000 },
        { state: 'passed', errors: undefined, duration: 2, startTime: 2_000 },
      ],
      logs: () => [
        { type: 'stdout', content: 'hello\n' },
        { type: 'stderr', content: `${ESC}[33mwarn${ESC}[39m\n` },
      ],
    });
    const r = toTestResult(tc, ROOT);
    expect(r.attempts.map((a) => [a.retry, a.status, a.errors.map((e) => e.message)])).toEqual([
      [0, 'failed', ['first try']],
      [1, 'passed', []],
    ]);
    expect(r.attempts[1]).toMatchObject({ stdout: 'hello\n', stderr: 'warn\n' });
    expect(outcomeOf(r)).toBe('flaky');
  });
});

describe('attachments', () => {
  it('annotation files (path and base64 or utf-8 bodies), 4.1 failure screenshots and custom artifacts', () => {
    const tc = testCase({
      result: () => ({ state: 'failed', errors: [assertion('x')] }),
      annotations: () => [
        { type: 'notice', message: 'render log', attachment: { path: '.vitest-attachments/render-1.log' } },
        {
          type: 'notice',
          message: 'payload',
          attachment: { body: Buffer.from('{}').toString('base64'), contentType: 'application/json' },
        },
        { type: 'notice', message: 'note', attachment: { body: 'plain', bodyEncoding: 'utf-8' } },
        { type: 'notice', message: 'no file' },
      ],
      artifacts: () => [
        { type: 'internal:annotation', attachments: [{ path: '/tmp/dup.txt' }] },
        {
          type: 'internal:failureScreenshot',
          attachments: [{ path: `${ROOT}/__screenshots__/shop.png`, name: 'failure' } as never],
        },
        {
          type: 'my:har',
          attachments: [{ path: '/tmp/net.har', name: 'network', contentType: 'application/json' } as never],
        },
      ],
    });
    const files = toTestResult(tc, ROOT).attempts[0]?.attachments ?? [];
    expect(files.map((f) => [f.name, f.contentType, f.path ?? new TextDecoder().decode(f.body)])).toEqual([
      ['render log', 'text/plain', `${ROOT}/.vitest-attachments/render-1.log`],
      ['payload', 'application/json', '{}'],
      ['note', 'application/octet-stream', 'plain'],
      ['screenshot', 'image/png', `${ROOT}/__screenshots__/shop.png`],
      ['network', 'application/json', '/tmp/net.har'],
    ]);
  });

  it('before 4.1 the failure screenshot is meta().failScreenshotPath; it goes to the last attempt', () => {
    const tc = testCase(
      {
        result: () => ({ state: 'failed', errors: [assertion('a'), assertion('b')] }),
        diagnostic: () => ({ duration: 1, startTime: 0, retryCount: 1, flaky: false }),
      },
      { failScreenshotPath: `${ROOT}/__screenshots__/old.png` },
    );
    const r = toTestResult(tc, ROOT);
    expect(r.attempts.map((a) => a.attachments.length)).toEqual([0, 1]);
    expect(r.attempts[1]?.attachments[0]).toMatchObject({ name: 'screenshot', contentType: 'image/png' });
  });
});

describe('the runtime identity', () => {
  // Runs in the real Vitest worker of our own suite: the worker-side identity must equal what the reporter rebuilds.
  describe('nested suite', () => {
    it('matches the reporter side', ({ task }) => {
      const id = identify();
      expect(id).toEqual({
        file: task.file.filepath,
        // The Vitest project this file runs in (`unit`: vitest.config.ts): the identity names it, as a user's does.
        name: runtimeName(task.file.projectName ?? '', [
          'the runtime identity',
          'nested suite',
          'matches the reporter side',
        ]),
        attempt: 0,
      });
    });
  });

  it('marks the test in its meta, which Vitest sends to the reporter with the result', ({ task }) => {
    expect(task.meta).not.toHaveProperty(RECORDED_META);
    identify();
    expect(task.meta).toHaveProperty(RECORDED_META, true);
  });

  it('is undefined outside a test', () => {
    const state = (globalThis as { __vitest_worker__?: { current?: unknown } }).__vitest_worker__;
    const current = state?.current;
    if (state) state.current = undefined;
    try {
      expect(identify()).toBeUndefined();
    } finally {
      if (state) state.current = current;
    }
  });
});
