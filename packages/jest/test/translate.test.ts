import { outcomeOf } from '@casebridge/core';
import { relativeFile, stableId } from '@casebridge/core/adapter';
import { describe, expect, it } from 'vitest';
import { attemptsOf, type JestAssertion, projectName, statusOf, toError, toTestResult } from '../src/translate.js';

// Literals shaped like what Jest 30.5 hands a reporter (copied from a real run, stacks shortened): the per-attempt
// `TestCaseResult` of `onTestCaseResult` (`startedAt`) and the `AssertionResult` of the file result (`startAt`).

const ROOT = '/work/app';
const FILE = `${ROOT}/tests/account.test.js`;
const ESC = String.fromCharCode(27);

const STACK = `    at Object.toBe (${FILE}:9:15)
    at Promise.finally.completed (/work/app/node_modules/jest-circus/build/jestAdapterInit.js:1834:28)
    at processTicksAndRejections (node:internal/process/task_queues:95:5)`;

function assertion(over: Partial<JestAssertion> = {}): JestAssertion {
  return {
    ancestorTitles: ['outer'],
    title: 'DEMO-3 flaky one',
    fullName: 'outer DEMO-3 flaky one',
    status: 'passed',
    duration: 2,
    failureDetails: [],
    failureMessages: [],
    invocations: 1,
    location: null,
    retryReasons: [],
    startAt: 1795477661680,
    ...over,
  };
}

const failedTry = (invocations: number): JestAssertion =>
  assertion({
    status: 'failed',
    duration: 24,
    invocations,
    startAt: undefined,
    startedAt: 1795477661649 + invocations,
    // From a worker: a matcher error's details carry the matcher result, not the message.
    failureDetails: [{ matcherResult: { actual: 1, expected: 2, name: 'toBe', pass: false } }],
    failureMessages: [
      `Error: expect(${ESC}[31mreceived${ESC}[39m).toBe(expected) // Object.is equality\n\nExpected: 2\nReceived: 1\n${STACK}`,
    ],
  });

describe('test identity', () => {
  it('names the file relative to the root with forward slashes, and hashes file, titles and project', () => {
    expect(relativeFile(ROOT, FILE)).toBe('tests/account.test.js');
    expect(relativeFile(ROOT, 'tests\\a.test.js')).toBe('tests/a.test.js');
    const id = stableId('tests/a.test.js', ['outer', 'x'], undefined);
    expect(id).toMatch(/^[0-9a-f]{20}$/);
    expect(stableId('tests/a.test.js', ['outer', 'x'], undefined)).toBe(id);
    expect(stableId('tests/a.test.js', ['outer x'], undefined)).not.toBe(id);
    expect(stableId('tests/a.test.js', ['outer', 'x'], 'api')).not.toBe(id);
  });

  it('reads a project displayName given as a string or as { name, color }', () => {
    expect(projectName('api')).toBe('api');
    expect(projectName({ name: 'web', color: 'blue' })).toBe('web');
    expect(projectName('')).toBeUndefined();
    expect(projectName(undefined)).toBeUndefined();
  });
});

describe('statuses', () => {
  it('maps Jest statuses; skip, todo and disabled are skipped; a timeout is timedOut', () => {
    expect(statusOf(assertion())).toBe('passed');
    expect(statusOf(assertion({ status: 'focused' }))).toBe('passed');
    expect(statusOf(failedTry(1))).toBe('failed');
    for (const status of ['pending', 'skipped', 'todo', 'disabled'])
      expect(statusOf(assertion({ status }))).toBe('skipped');
    const timeout = 'thrown: "Exceeded timeout of 5000 ms for a test.\nAdd a timeout value to this test..."';
    expect(statusOf(assertion({ status: 'failed', failureMessages: [timeout] }))).toBe('timedOut');
  });
});

describe('errors', () => {
  it('takes the message from the text before the stack, without colour codes, and the location in the test file', () => {
    const e = toError(failedTry(1).failureMessages[0], {}, FILE, ROOT);
    expect(e.message).toBe('Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 2\nReceived: 1');
    expect(e.stack).toContain('at Object.toBe');
    expect(e.stack).not.toContain(ESC);
    expect(e.location).toEqual({ file: 'tests/account.test.js', line: 9, column: 15 });
  });

  it('reads the same in band (details are the Error) and from a worker (details lost)', () => {
    const text = `Error: ${ESC}[31mboom${ESC}[39m\n    at Object.<anonymous> (${FILE}:14:29)`;
    const inBand = new Error(`${ESC}[31mboom${ESC}[39m`);
    expect(toError(text, inBand, FILE, ROOT)).toEqual(toError(text, {}, FILE, ROOT));
    expect(toError(text, {}, FILE, ROOT).message).toBe('Error: boom');
  });

  it('uses the details when there is no text, and says Error when there is nothing', () => {
    expect(toError(undefined, { message: 'lost', stack: 'Error: lost\n    at x (y.js:1:1)' }).message).toBe(
      'Error: lost',
    );
    expect(toError(undefined, { message: 'only a message' }).message).toBe('only a message');
    expect(toError(undefined, undefined).message).toBe('Error');
  });
});

describe('attempts', () => {
  it('a retried test that passed is flaky: one attempt per event, the file result deciding the last', () => {
    const events = [failedTry(1), assertion({ invocations: 2, startedAt: 1795477661680, startAt: undefined })];
    const final = assertion({ invocations: 2 });
    const t = toTestResult(final, events, { path: FILE, root: ROOT });
    expect(t.attempts.map((a) => [a.retry, a.status, a.errors.length])).toEqual([
      [0, 'failed', 1],
      [1, 'passed', 0],
    ]);
    expect(t.attempts[0]?.startedAt).toBe(new Date(1795477661650).toISOString());
    expect(t.attempts[1]?.durationMs).toBe(2);
    expect(outcomeOf(t)).toBe('flaky');
    expect(t).toMatchObject({ file: 'tests/account.test.js', titlePath: ['outer', 'DEMO-3 flaky one'], tags: [] });
  });

  it('an event delivered twice counts once', () => {
    const attempts = attemptsOf(
      assertion({ status: 'failed', invocations: 1 }),
      [failedTry(1), failedTry(1)],
      FILE,
      ROOT,
    );
    expect(attempts).toHaveLength(1);
  });

  it('failed on every try: each attempt failed, the outcome failed', () => {
    const final = failedTry(3);
    const t = toTestResult(final, [failedTry(1), failedTry(2), failedTry(3)], { path: FILE, root: ROOT });
    expect(t.attempts.map((a) => a.status)).toEqual(['failed', 'failed', 'failed']);
    expect(outcomeOf(t)).toBe('failed');
  });

  it('without events (a skipped test), one attempt from the file result', () => {
    const t = toTestResult(assertion({ status: 'pending', duration: null }), [], { path: FILE, root: ROOT });
    expect(t.attempts).toMatchObject([{ retry: 0, status: 'skipped', durationMs: 0 }]);
    expect(outcomeOf(t)).toBe('skipped');
  });

  it('missing retry events are rebuilt from invocations, with retryReasons as their errors', () => {
    const final = assertion({
      invocations: 3,
      retryReasons: [{ message: 'first', stack: 'Error: first' }, 'Error: second'],
    });
    const attempts = attemptsOf(final, [], FILE, ROOT);
    expect(attempts.map((a) => [a.retry, a.status, a.errors[0]?.message])).toEqual([
      [0, 'failed', 'Error: first'],
      [1, 'failed', 'Error: second'],
      [2, 'passed', undefined],
    ]);
  });

  it('keeps the line when Jest gives locations (testLocationInResults) and the project name', () => {
    const t = toTestResult(assertion({ location: { line: 7, column: 3 } }), [], {
      path: FILE,
      root: ROOT,
      project: 'api',
    });
    expect(t.line).toBe(7);
    expect(t.project).toBe('api');
    expect(t.id).toBe(stableId('tests/account.test.js', ['outer', 'DEMO-3 flaky one'], 'api'));
  });
});
