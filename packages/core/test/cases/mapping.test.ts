import { describe, expect, it } from 'vitest';
import {
  keyPattern,
  keysOfTest,
  mappingKey,
  mappingProblems,
  resolveKeys,
  titleWithoutKeys,
} from '../../src/engine/cases/mapping.js';
import { fingerprintOf, firstFrameIn, normaliseMessage } from '../../src/engine/defects/fingerprint.js';
import { type Attempt, outcomeOf, type TestResult } from '../../src/engine/kernel/model.js';

const attempt = (status: Attempt['status'], message?: string, stack?: string): Attempt => ({
  retry: 0,
  status,
  durationMs: 1,
  errors: message ? [{ message, stack }] : [],
  steps: [],
  attachments: [],
});

const test = (over: Partial<TestResult>): TestResult => ({
  id: 'tests/login.spec.ts > login > logs in',
  file: 'tests/login.spec.ts',
  titlePath: ['login', 'logs in'],
  tags: [],
  annotations: [],
  attempts: [attempt('passed')],
  ...over,
});

describe('case keys of a test', () => {
  const re = keyPattern();

  it('reads keys from the title, brackets, tags and annotations, each once, in order', () => {
    const t = test({
      titlePath: ['suite DEMO-99 in describe', '[DEMO-2] DEMO-3 logs in'],
      tags: ['@DEMO-4', 'smoke', '@DEMO-2'],
      annotations: [
        { type: 'testCase', description: 'DEMO-5' },
        { type: 'issue', description: 'DEMO-6, DEMO-7' },
        { type: 'skip', description: 'DEMO-8' },
      ],
    });
    expect(keysOfTest(t, re)).toEqual(['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6', 'DEMO-7']);
  });

  it('does not take parts of longer tokens, zero numbers or lower case for keys', () => {
    const t = test({ titlePath: ['xDEMO-1 DEMO-0 demo-5 DEMO-12a DEMO-123'] });
    expect(keysOfTest(t, re)).toEqual(['DEMO-123']);
  });

  it('limits keys to the configured projects, so HTTP-2 in a title is not a key', () => {
    const t = test({ titlePath: ['DEMO-1 speaks HTTP-2 to SRV-9'] });
    expect(keysOfTest(t, keyPattern())).toEqual(['DEMO-1', 'HTTP-2', 'SRV-9']);
    expect(keysOfTest(t, keyPattern({ projectKeys: ['DEMO', 'SRV'] }))).toEqual(['DEMO-1', 'SRV-9']);
  });

  it('accepts a custom pattern (first capture group wins)', () => {
    const t = test({ titlePath: ['logs in (case: QA_77)'] });
    expect(keysOfTest(t, keyPattern({ pattern: 'case: ([A-Z]+_\\d+)' }))).toEqual(['QA_77']);
  });

  it('adds keys from the mapping file by file and title path', () => {
    const t = test({ file: 'tests\\login.spec.ts', titlePath: ['login', 'DEMO-2 logs in'] });
    expect(mappingKey(t)).toBe('tests/login.spec.ts > login > DEMO-2 logs in');
    const file = { 'tests/login.spec.ts > login > DEMO-2 logs in': ['DEMO-3', 'DEMO-2'] };
    expect(resolveKeys(t, re, file)).toEqual(['DEMO-2', 'DEMO-3']);
  });

  it('names what is wrong in a mapping file', () => {
    expect(mappingProblems([], re)[0]).toMatch(/JSON object/);
    expect(mappingProblems({ 'a > b': 'DEMO-1', 'c > d': ['nope', 3] }, re)).toEqual([
      '"c > d": "nope" is not a test-case key',
      '"c > d": 3 is not a test-case key',
    ]);
  });

  it('strips keys from a title for a case summary', () => {
    expect(titleWithoutKeys('[DEMO-2] logs in', re)).toBe('logs in');
    expect(titleWithoutKeys('DEMO-2: logs in @DEMO-3', re)).toBe('logs in');
    expect(titleWithoutKeys('DEMO-2', re)).toBe('DEMO-2');
  });
});

describe('final outcome', () => {
  it('is decided by the last attempt; a pass after a failure is flaky', () => {
    expect(outcomeOf(test({ attempts: [attempt('passed')] }))).toBe('passed');
    expect(outcomeOf(test({ attempts: [attempt('failed'), attempt('passed')] }))).toBe('flaky');
    expect(outcomeOf(test({ attempts: [attempt('passed'), attempt('timedOut')] }))).toBe('failed');
    expect(outcomeOf(test({ attempts: [attempt('skipped')] }))).toBe('skipped');
    expect(outcomeOf(test({ attempts: [attempt('interrupted')] }))).toBe('interrupted');
    expect(outcomeOf(test({ attempts: [] }))).toBe('skipped');
  });

  it('treats an expected failure as a pass', () => {
    expect(outcomeOf(test({ expectedToFail: true, attempts: [attempt('failed')] }))).toBe('passed');
    expect(outcomeOf(test({ expectedToFail: true, attempts: [attempt('passed')] }))).toBe('failed');
  });
});

describe('failure fingerprints', () => {
  it('removes numbers, ids, paths, urls and timestamps from messages', () => {
    const a = normaliseMessage(
      '\u001b[31mExpected 200, got 503\u001b[39m at 2026-11-22T10:11:12.123Z for https://x.test/a?b=1 (order 8f3e2a9c1b7d, /tmp/run-42/out.png:12:3)',
    );
    const b = normaliseMessage(
      'Expected 200, got 503 at 2025-01-02T03:04:05Z for https://y.test/c (order 0a1b2c3d4e5f, /var/tmp/x/y.png:9:1)',
    );
    expect(a).toBe(b);
    expect(a).toBe('Expected <n>, got <n> at <time> for <url> (order <hex>, <path>)');
  });

  it("finds the first frame in the test's own file", () => {
    const stack = [
      'Error: boom',
      '    at expect (/repo/node_modules/expect/index.js:10:5)',
      '    at helper (/repo/tests/helpers.ts:4:2)',
      '    at /repo/tests/login.spec.ts:17:9',
      '    at /repo/tests/login.spec.ts:30:1',
    ].join('\n');
    expect(firstFrameIn(stack, 'tests/login.spec.ts')).toBe('tests/login.spec.ts:17');
    expect(firstFrameIn('Error\n    at C:\\repo\\tests\\login.spec.ts:5:1', 'tests/login.spec.ts')).toBe(
      'tests/login.spec.ts:5',
    );
    expect(firstFrameIn(stack, 'tests/other.spec.ts')).toBeUndefined();
  });

  it('is stable across runs and differs between tests and failures', () => {
    const stack = 'Error: x\n    at /ci/build-1/tests/login.spec.ts:17:9';
    const run1 = test({ attempts: [attempt('failed', 'Timeout 5000ms exceeded after 5123 ms', stack)] });
    const run2 = test({
      attempts: [attempt('failed', 'Timeout 5000ms exceeded after 5371 ms', stack.replace('build-1', 'build-2'))],
    });
    expect(fingerprintOf(run1).hash).toBe(fingerprintOf(run2).hash);
    expect(fingerprintOf(run1).label).toMatch(/^casebridge-[0-9a-f]{16}$/);
    const otherTest = { ...run1, id: 'tests/login.spec.ts > login > logs out' };
    expect(fingerprintOf(otherTest).hash).not.toBe(fingerprintOf(run1).hash);
    const otherError = test({ attempts: [attempt('failed', 'Element not found: #submit', stack)] });
    expect(fingerprintOf(otherError).hash).not.toBe(fingerprintOf(run1).hash);
  });
});
