import { describe, expect, it } from 'vitest';
import { suitePathOf } from '../../src/engine/cases/registry.js';
import { commentFor } from '../../src/engine/delivery/comment.js';
import { matchSteps } from '../../src/engine/delivery/steps.js';
import type { TestResult } from '../../src/engine/kernel/model.js';
import { Problems } from '../../src/engine/kernel/problems.js';
import { statusRanker, worseOf } from '../../src/engine/kernel/status-rank.js';
import type { RunSummary } from '../../src/engine/kernel/types.js';
import { needsDetails, selectedAttachments, statusOnly } from '../../src/engine/kernel/work.js';
import { problemLines } from '../../src/engine/report/run-summary.js';
import { ciWarning, formatSummary } from '../../src/engine/report/summary.js';

const worseStatus = (a: string | undefined, b: string | undefined) => worseOf(statusRanker(), a, b);

import { configSchema } from '../../src/index.js';

const config = configSchema.parse({ url: 'https://jira.example.com', token: 't', projectKey: 'DEMO' });

function test(status: 'passed' | 'failed' | 'flaky', extra: Partial<TestResult> = {}): TestResult {
  const fail = {
    retry: 0,
    status: 'failed' as const,
    durationMs: 1,
    errors: [{ message: '\u001b[31mexpected 1 to be 2\u001b[39m' }],
    steps: [],
    attachments: [{ name: 'screenshot', contentType: 'image/png', path: '/tmp/s.png' }],
  };
  const pass = { retry: 1, status: 'passed' as const, durationMs: 1, errors: [], steps: [], attachments: [] };
  return {
    id: 'x',
    file: 'a.spec.ts',
    titlePath: ['suite', 'DEMO-2 works'],
    tags: [],
    annotations: [],
    attempts: status === 'passed' ? [{ ...pass, retry: 0 }] : status === 'failed' ? [fail] : [fail, pass],
    ...extra,
  };
}

describe('step matching', () => {
  const runSteps = [
    { id: 1, step: 'Open the login page' },
    { id: 2, step: 'Enter user name and password' },
    { id: 3, step: 'Press "Log in"' },
  ];
  it('matches by text first, whatever the order, then by position among the rest', () => {
    const pairs = matchSteps(
      [{ title: 'press "log in"' }, { title: 'something else' }, { title: 'Open the  login page' }],
      runSteps,
    );
    expect(pairs.map(([s, r]) => [s.title, r.id])).toEqual([
      ['press "log in"', 3],
      ['something else', 2],
      ['Open the  login page', 1],
    ]);
  });
  it('leaves extra test steps unmatched', () => {
    const pairs = matchSteps([{ title: 'a' }, { title: 'b' }, { title: 'c' }, { title: 'd' }], runSteps);
    expect(pairs.map(([, r]) => r.id)).toEqual([1, 2, 3]);
  });
});

/** A work item of case DEMO-2 in `mode`, nothing delivered yet. */
function workItem(t: TestResult, mode: 'cycle' | 'adhoc') {
  return { id: '1', key: 'DEMO-2', test: t, target: { mode, projectKey: 'DEMO' }, progress: {} };
}

describe('what a result needs', () => {
  const item = (t: TestResult) => workItem(t, 'cycle');
  it('only passing results without steps or chosen files go in bulk', () => {
    expect(needsDetails(item(test('passed')), config)).toBe(false);
    expect(needsDetails(item(test('failed')), config)).toBe(true);
    expect(needsDetails(item(test('flaky')), config)).toBe(true);
  });
  it('screenshots on failure by default; a passing test sends none', () => {
    expect(selectedAttachments(test('failed'), config.attachments).map((a) => a.attachment.name)).toEqual([
      'screenshot',
    ]);
    expect(selectedAttachments(test('flaky'), config.attachments)).toEqual([]);
  });
  it('a bulk result keeps its identity, outcome and comment, without output and files it does not send', () => {
    const chatty = test('passed', { tags: ['smoke'], annotations: [{ type: 'issue', description: 'DEMO-9' }] });
    chatty.attempts = chatty.attempts.map((a) => ({
      ...a,
      startedAt: '2026-11-24T10:00:00.000Z',
      stdout: 'x'.repeat(4096),
      stderr: 'y'.repeat(4096),
      attachments: [{ name: 'trace', contentType: 'application/zip', path: '/tmp/trace.zip' }],
    }));
    const slim = statusOnly(chatty);
    expect(JSON.stringify(slim).length).toBeLessThan(500);
    expect(slim.attempts).toEqual([
      {
        retry: 0,
        status: 'passed',
        durationMs: 1,
        startedAt: '2026-11-24T10:00:00.000Z',
        errors: [],
        steps: [],
        attachments: [],
      },
    ]);
    const { attempts: _a, ...identity } = chatty;
    expect(slim).toMatchObject(identity);
    expect(needsDetails(item(slim), config)).toBe(false);
    expect(commentFor(item(slim), [])).toBe(commentFor(item(chatty), []));
    // A test expected to fail passes with its errors: they stay.
    const expectedFailure = statusOnly(test('failed', { expectedToFail: true }));
    expect(expectedFailure.attempts[0]?.errors).toHaveLength(1);
    // Empty lists are one shared, frozen list: a result waiting for its bulk holds no arrays of its own for them.
    const other = statusOnly(test('passed'));
    expect(other.tags).toBe(other.annotations);
    expect(other.attempts[0]?.steps).toBe(slim.attempts[0]?.attachments);
    expect(other.attempts[0]?.errors).toBe(slim.attempts[0]?.errors);
    expect(Object.isFrozen(other.tags)).toBe(true);
    expect(() => (other.tags as string[]).push('x')).toThrow(TypeError);
    expect(other.tags).toEqual([]);
    // A list with something in it is the result's own.
    expect(slim.tags).toEqual(chatty.tags);
  });
  it('the worse status wins when two tests report one case', () => {
    expect(worseStatus('Passed', 'Failed')).toBe('Failed');
    expect(worseStatus('Failed', 'Passed')).toBe('Failed');
    expect(worseStatus(undefined, 'Passed')).toBe('Passed');
  });
});

describe('comments', () => {
  const item = (t: TestResult) => workItem(t, 'adhoc');
  it('a failure names the test and the error without colour codes', () => {
    const c = commentFor(item(test('failed')), []);
    expect(c).toContain('Failed: a.spec.ts > suite > DEMO-2 works');
    expect(c).toContain('expected 1 to be 2');
    expect(c).not.toContain('\u001b');
  });
  it('a flaky pass names the failed attempts', () => {
    expect(commentFor(item(test('flaky')), [])).toMatch(
      /^Flaky: passed on attempt 2 after 1 failed attempt\(s\) \(retry 0\)/,
    );
  });
  it('a plain pass has no comment', () => {
    expect(commentFor(item(test('passed')), [])).toBe('');
  });
});

describe('suite paths of files', () => {
  it('folders and the file name without its test suffix', () => {
    expect(suitePathOf('tests/shop/cart.spec.ts')).toBe('tests/shop/cart');
    expect(suitePathOf('src\\util.test.mjs')).toBe('src/util');
    expect(suitePathOf('e2e/login.cy.js')).toBe('e2e/login');
  });
});

describe('summary', () => {
  it('names the cycle, the defects, what was not delivered and how to replay it', () => {
    const s: RunSummary = {
      enabled: true,
      mode: 'cycle',
      dryRun: false,
      byStatus: { passed: 3, failed: 1 },
      results: 4,
      delivered: 3,
      cycle: { name: 'CI 7', id: 12, plan: 'DEMO-1' },
      defects: { created: ['DEMO-20'], linked: [] },
      attachments: { uploaded: 1, skipped: [], stored: [] },
      unmapped: ['a.spec.ts > x'],
      createdCases: [],
      problems: [],
      journaled: 1,
      journalDir: '/p/.casebridge/journal',
    };
    const text = formatSummary(s);
    expect(text).toContain('4 test result(s) (3 passed, 1 failed), mode cycle');
    expect(text).toContain('cycle "CI 7" (id 12) of test plan DEMO-1');
    expect(text).toContain('defects created: DEMO-20');
    expect(text).toContain('1 result(s) not delivered: kept in /p/.casebridge/journal');
    expect(text).toContain('npx @casebridge/cli replay');
    // Loud in CI: an annotation on GitHub Actions with the command that delivers them, nothing elsewhere.
    expect(ciWarning(s, { GITHUB_ACTIONS: 'true' })).toBe(
      '::warning title=casebridge: 1 result(s) not delivered::1 test result(s) were not delivered to Jira. They wait in /p/.casebridge/journal; run `npx @casebridge/cli replay` in this job to deliver them.',
    );
    expect(ciWarning(s, {})).toBeUndefined();
    expect(ciWarning({ ...s, journaled: 0 }, { GITHUB_ACTIONS: 'true' })).toBeUndefined();
  });

  it('names at most 10 created cases, then how many more and where all of them are', () => {
    const keys = Array.from({ length: 1400 }, (_, i) => `DEMO-${i + 2}`);
    const text = formatSummary({
      enabled: true,
      mode: 'cycle',
      dryRun: false,
      byStatus: { passed: 1400 },
      results: 1400,
      delivered: 1400,
      defects: { created: [], linked: [] },
      attachments: { uploaded: 0, skipped: [], stored: [] },
      unmapped: [],
      createdCases: keys,
      problems: [],
      journaled: 0,
      mappingFile: 'casebridge.keys.json',
    });
    expect(text).toContain(
      "1400 test case(s) created (every test's key is in casebridge.keys.json: commit it): DEMO-2, DEMO-3, DEMO-4, DEMO-5, DEMO-6, DEMO-7, DEMO-8, DEMO-9, DEMO-10, DEMO-11 ... and 1390 more",
    );
    expect(text).not.toContain('DEMO-12');
  });
});

describe("the run's problems", () => {
  it('one collector, in the order they happened: health, journal and the other parts add to it alike', () => {
    const problems = new Problems();
    problems.add('run', 'first, from health');
    problems.add('mapping', 'second, a mapping line');
    problems.add('run', 'third, from health');
    problems.refused('DEMO-2', 't.spec.ts > a', 'HTTP 500: no');
    problems.add('cycle', 'fourth, completing the cycle');
    problems.add('run', 'fifth, from health');
    expect(problems.all().map((p) => p.kind)).toEqual(['run', 'mapping', 'run', 'refused', 'cycle', 'run']);
    // Sentences in order, then the refused results, one line per answer of the service.
    const lines = problemLines(problems.all());
    expect(lines.slice(0, 5)).toEqual([
      'first, from health',
      'second, a mapping line',
      'third, from health',
      'fourth, completing the cycle',
      'fifth, from health',
    ]);
    expect(lines[5]).toMatch(
      /^DEMO-2 \(t\.spec\.ts > a\): the service refused its result on its own.*\(HTTP 500: no\)/,
    );
  });

  it('results refused with the same answer are one line, their keys named once each', () => {
    const problems = new Problems();
    for (const key of ['DEMO-5', 'DEMO-3', 'DEMO-4', 'DEMO-3', 'DEMO-9']) problems.refused(key, key, 'HTTP 500: bad');
    problems.refused('DEMO-7', 'x', 'HTTP 500: other');
    const lines = problemLines(problems.all());
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^5 results \(DEMO-3, DEMO-4, DEMO-5, 1 more\): the service refused each on its own/);
    expect(lines[1]).toMatch(/^DEMO-7 \(x\): /);
  });
});
