import { outcomeOf } from '@casebridge/core';
import { outputExcerpt, stableId } from '@casebridge/core/adapter';
import { describe, expect, it } from 'vitest';
import { modeOf } from '../src/mode.js';
import {
  isFinal,
  type PwAttachment,
  type PwResult,
  type PwStep,
  type PwSuite,
  type PwTestCase,
  reportedFile,
  toPlanned,
  toTestResult,
} from '../src/translate.js';

// Small literals shaped like Playwright's TestCase / TestResult / TestStep (the subset the translation reads).

const ROOT = '/work/app';
const PATHS = { root: ROOT, testDir: `${ROOT}/tests` };
const ESC = String.fromCharCode(27);

function suite(project: string, mode?: string): PwSuite {
  const projectSuite: PwSuite = { project: () => ({ name: project }) };
  const describe = { project: () => ({ name: project }), parent: projectSuite } as PwSuite & { _parallelMode?: string };
  if (mode) describe._parallelMode = mode;
  return describe;
}

function testCase(over: Partial<PwTestCase> & { title?: string; describes?: string[] } = {}): PwTestCase {
  const { title = 'DEMO-2 logs in', describes = ['login'], ...rest } = over;
  return {
    titlePath: () => ['', 'chromium', 'tests/login.spec.ts', ...describes, title],
    location: { file: `${ROOT}/tests/login.spec.ts`, line: 12, column: 3 },
    expectedStatus: 'passed',
    retries: 0,
    tags: ['@DEMO-4', '@smoke'],
    annotations: [{ type: 'testCase', description: 'DEMO-6' }],
    parent: suite('chromium'),
    ...rest,
  };
}

function step(title: string, over: Partial<PwStep> = {}): PwStep {
  return { title, category: 'test.step', duration: 5, steps: [], attachments: [], annotations: [], ...over };
}

function result(over: Partial<PwResult> = {}): PwResult {
  return {
    retry: 0,
    status: 'passed',
    duration: 120,
    startTime: new Date('2026-11-22T10:00:00.000Z'),
    errors: [],
    steps: [],
    attachments: [],
    stdout: [],
    stderr: [],
    ...over,
  };
}

describe('identity', () => {
  it('takes file relative to the root with forward slashes, describes + title, project, tags without @', () => {
    const planned = toPlanned(testCase(), PATHS);
    expect(planned).toEqual({
      id: stableId('tests/login.spec.ts', ['login', 'DEMO-2 logs in'], 'chromium'),
      file: 'tests/login.spec.ts',
      line: 12,
      titlePath: ['login', 'DEMO-2 logs in'],
      project: 'chromium',
      tags: ['DEMO-4', 'smoke'],
      annotations: [{ type: 'testCase', description: 'DEMO-6' }],
    });
    expect(reportedFile(PATHS, 'tests\\b.spec.ts')).toBe('tests/b.spec.ts');
    expect(reportedFile(PATHS, `${ROOT}/..hidden/c.spec.ts`)).toBe('..hidden/c.spec.ts');
    // A merged report recorded where the checkout path differs: outside the root, the path from testDir is kept.
    expect(reportedFile({ root: '/merge/here', testDir: '/ci/shard/tests' }, '/ci/shard/tests/a/b.spec.ts')).toBe(
      'a/b.spec.ts',
    );
    // Answered once per file and per set of paths (a cache): other paths give their own answer for the same file.
    const file = '/ci/shard/tests/a/b.spec.ts';
    expect(reportedFile({ root: '/ci/shard' }, file)).toBe('tests/a/b.spec.ts');
    expect(reportedFile({ root: '/ci/shard' }, file)).toBe('tests/a/b.spec.ts');
    expect(reportedFile({ root: '/ci' }, file)).toBe('shard/tests/a/b.spec.ts');
  });

  it('gives a stable id that depends on file, title path and project only', () => {
    const a = toPlanned(testCase(), PATHS).id;
    expect(
      toPlanned(testCase({ location: { file: `${ROOT}/tests/login.spec.ts`, line: 99, column: 1 } }), PATHS).id,
    ).toBe(a);
    expect(toPlanned(testCase({ parent: suite('firefox') }), PATHS).id).not.toBe(a);
    expect(toPlanned(testCase({ title: 'DEMO-2 logs in again' }), PATHS).id).not.toBe(a);
    expect(toPlanned(testCase({ describes: [] }), PATHS).id).not.toBe(a);
    // The same test seen from another checkout (a merged report rebases paths) keeps its id.
    const moved = testCase({ location: { file: '/ci/runner/tests/login.spec.ts', line: 12, column: 3 } });
    expect(toPlanned(moved, { root: '/ci/runner' }).id).toBe(a);
    expect(a).toMatch(/^[0-9a-f]{20}$/);
  });

  it('leaves out an unnamed project and tolerates Playwright versions without tags', () => {
    const t = testCase({ parent: suite(''), tags: undefined as unknown as string[] });
    const planned = toPlanned(t, PATHS);
    expect(planned.project).toBeUndefined();
    expect(planned.tags).toEqual([]);
  });
});

describe('toTestResult', () => {
  it('translates attempts with status, duration, start time, errors without colour codes, relative locations', () => {
    const test = testCase({ retries: 1 });
    const failed = result({
      status: 'failed',
      duration: 300,
      errors: [
        {
          message: `${ESC}[31mError: expect(received).toBe(expected)${ESC}[39m`,
          stack: `Error: boom\n    at ${ROOT}/tests/login.spec.ts:20:5`,
          snippet: `> 20 |   expect(1).toBe(2);`,
          location: { file: `${ROOT}/tests/login.spec.ts`, line: 20, column: 5 },
          cause: { message: 'socket hang up' },
        },
      ],
      stdout: ['hello ', Buffer.from(`${ESC}[32mworld${ESC}[0m\n`)],
    });
    const passed = result({ retry: 1, startTime: new Date('2026-11-22T10:00:01.000Z') });
    const t = toTestResult(test, [failed, passed], PATHS);
    expect(t.line).toBe(12);
    expect(t.expectedToFail).toBe(false);
    expect(t.attempts).toHaveLength(2);
    const [first, second] = t.attempts;
    expect(first).toMatchObject({ retry: 0, status: 'failed', durationMs: 300, startedAt: '2026-11-22T10:00:00.000Z' });
    expect(first?.errors[0]).toEqual({
      message: 'Error: expect(received).toBe(expected)',
      stack: `Error: boom\n    at ${ROOT}/tests/login.spec.ts:20:5\n[cause]: socket hang up`,
      snippet: '> 20 |   expect(1).toBe(2);',
      location: { file: 'tests/login.spec.ts', line: 20, column: 5 },
    });
    expect(first?.stdout).toBe('hello world\n');
    expect(first?.stderr).toBeUndefined();
    expect(second).toMatchObject({ retry: 1, status: 'passed', errors: [] });
    expect(outcomeOf(t)).toBe('flaky');
  });

  it('keeps only test.step steps, nested, lifting user steps out of hooks and dropping pw:api/expect steps', () => {
    const inner = step('Enter user name and password', { steps: [step('click', { category: 'pw:api' })] });
    const res = result({
      status: 'failed',
      steps: [
        step('Before Hooks', {
          category: 'hook',
          steps: [step('beforeEach hook', { category: 'hook', steps: [step('Seed the user')] })],
        }),
        step('Open the login page', {
          duration: 40,
          steps: [step('navigate', { category: 'pw:api' }), inner, step('expect.toBeVisible', { category: 'expect' })],
        }),
        step('Press "Log in"', { duration: -1, error: { message: 'Timed out' } }),
        step('Later', { annotations: [{ type: 'skip' }] }),
        step('custom category', { category: 'some.future.category' }),
      ],
    });
    const [attempt] = toTestResult(testCase(), [res], PATHS).attempts;
    const shape = (s: { title: string; status: string; steps: unknown[] }): unknown => ({
      title: s.title,
      status: s.status,
      steps: (s.steps as (typeof s)[]).map(shape),
    });
    expect(attempt?.steps.map(shape)).toEqual([
      { title: 'Seed the user', status: 'passed', steps: [] },
      {
        title: 'Open the login page',
        status: 'passed',
        steps: [{ title: 'Enter user name and password', status: 'passed', steps: [] }],
      },
      { title: 'Press "Log in"', status: 'failed', steps: [] },
      { title: 'Later', status: 'skipped', steps: [] },
    ]);
    expect(attempt?.steps[1]?.durationMs).toBe(40);
    expect(attempt?.steps[2]?.durationMs).toBe(0);
    expect(attempt?.steps[2]?.error?.message).toBe('Timed out');
  });

  it('puts a file attached in a step under that step only; bodies become Uint8Array; internal ones are dropped', () => {
    const shot: PwAttachment = {
      name: 'screenshot',
      contentType: 'image/png',
      path: `${ROOT}/test-results/a/shot.png`,
    };
    const note: PwAttachment = { name: 'note', contentType: 'text/plain', body: Buffer.from('card declined') };
    const internal: PwAttachment = { name: '_prompt', contentType: 'text/markdown', body: Buffer.from('x') };
    const empty: PwAttachment = { name: 'nothing', contentType: 'text/plain' };
    const res = result({
      status: 'failed',
      attachments: [note, internal, shot, empty],
      steps: [
        step('Place the order', {
          // testInfo.attach inside a step: the file hangs on a `test.attach` child step.
          steps: [step('Attach "note"', { category: 'test.attach', attachments: [note] })],
        }),
        step('After Hooks', { category: 'hook', attachments: [shot] }),
      ],
    });
    const [attempt] = toTestResult(testCase(), [res], PATHS).attempts;
    expect(attempt?.steps[0]?.attachments).toHaveLength(1);
    const body = attempt?.steps[0]?.attachments[0]?.body;
    expect(body).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(body)).toBe('card declined');
    expect(attempt?.attachments).toEqual([{ name: 'screenshot', contentType: 'image/png', path: shot.path }]);
  });

  it('takes annotations from the last result when present (1.52+), else from the test; marks expected failures', () => {
    const test = testCase({ expectedStatus: 'failed', annotations: [{ type: 'fail' }] });
    const withResultAnnotations = result({
      status: 'failed',
      annotations: [{ type: 'fail' }, { type: 'testCase', description: 'DEMO-7' }],
    });
    const t = toTestResult(test, [withResultAnnotations], PATHS);
    expect(t.annotations).toEqual([{ type: 'fail' }, { type: 'testCase', description: 'DEMO-7' }]);
    expect(t.expectedToFail).toBe(true);
    expect(outcomeOf(t)).toBe('passed');
    expect(toTestResult(test, [result({ status: 'failed' })], PATHS).annotations).toEqual([{ type: 'fail' }]);
  });

  it('bounds output excerpts, keeping the end', () => {
    const long = `${'a'.repeat(5000)}THE END`;
    const e = outputExcerpt([long]) as string;
    expect(e.length).toBe(4096);
    expect(e.startsWith('…')).toBe(true);
    expect(e.endsWith('THE END')).toBe(true);
    expect(outputExcerpt([])).toBeUndefined();
  });
});

describe('isFinal', () => {
  it('hands a test over when it ended as expected, was skipped, was interrupted or has no retry left', () => {
    const t = testCase({ retries: 2 });
    expect(isFinal(t, { retry: 0, status: 'passed' })).toBe(true);
    expect(isFinal(testCase({ retries: 2, expectedStatus: 'skipped' }), { retry: 0, status: 'skipped' })).toBe(true);
    expect(isFinal(t, { retry: 0, status: 'interrupted' })).toBe(true);
    expect(isFinal(t, { retry: 2, status: 'failed' })).toBe(true);
    expect(isFinal(testCase({ retries: 0 }), { retry: 0, status: 'timedOut' })).toBe(true);
  });

  it('waits for the retry after an unexpected attempt (including a pass of a test expected to fail)', () => {
    const t = testCase({ retries: 1 });
    expect(isFinal(t, { retry: 0, status: 'failed' })).toBe(false);
    expect(isFinal(t, { retry: 0, status: 'timedOut' })).toBe(false);
    expect(isFinal(testCase({ retries: 1, expectedStatus: 'failed' }), { retry: 0, status: 'passed' })).toBe(false);
    expect(isFinal(testCase({ retries: 1, expectedStatus: 'failed' }), { retry: 0, status: 'failed' })).toBe(true);
  });

  it('waits in a serial group, where Playwright retries passed tests with the group', () => {
    const marked = testCase({ retries: 1, annotations: [{ type: 'serial' }] });
    expect(isFinal(marked, { retry: 0, status: 'passed' })).toBe(false);
    const t = testCase({ retries: 1, parent: suite('chromium', 'serial') });
    expect(isFinal(t, { retry: 0, status: 'passed' })).toBe(false);
    expect(isFinal(t, { retry: 1, status: 'passed' })).toBe(true);
    expect(
      isFinal(testCase({ retries: 1, parent: suite('chromium', 'parallel') }), { retry: 0, status: 'passed' }),
    ).toBe(true);
  });
});

describe('modeOf: what Playwright is doing, from its public command line (not the private `_mode` option)', () => {
  it('list, merge or test', () => {
    expect(modeOf(['node', '/x/playwright/cli.js', 'test', '--list'])).toBe('list');
    expect(modeOf(['node', '/x/playwright/cli.js', 'merge-reports', '-c', 'm.config.ts', 'blob-report'])).toBe('merge');
    expect(modeOf(['node', '/x/playwright/cli.js', 'test', '--shard=1/2'])).toBe('test');
    expect(modeOf(['node', '/x/playwright/cli.js', 'test', '--grep', '--list-me'])).toBe('test');
  });
});
