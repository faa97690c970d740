import { describe, expect, it } from 'vitest';
import { commentFor, readComment } from '../../src/engine/delivery/comment.js';
import type { WorkItem } from '../../src/engine/kernel/work.js';
import { coverageState } from '../../src/engine/query/coverage.js';
import { DEFAULT_RULES, gateMarkdown, judge, rulesOf } from '../../src/engine/query/gate.js';
import type { Failure } from '../../src/engine/query/results.js';

const failure = (key: string, classification: Failure['classification']): Failure => ({
  key,
  title: `test of ${key}`,
  classification,
  defects: [],
  run: 1,
  url: '',
});
const runs = (passed: number, failed: number, notRun = 0) => [
  ...Array.from({ length: passed }, (_, i) => ({ key: `P-${i}`, decided: true, passed: true })),
  ...Array.from({ length: failed }, (_, i) => ({ key: `F-${i}`, decided: true, passed: false })),
  ...Array.from({ length: notRun }, (_, i) => ({ key: `N-${i}`, decided: false, passed: false })),
];

describe('the gate', () => {
  it('by default: no new failure and no regression; known and quarantined ones are waived', () => {
    const v = judge(
      { failures: [failure('A-1', 'known'), failure('A-2', 'quarantined')], runs: runs(8, 2) },
      DEFAULT_RULES,
    );
    expect(v.pass).toBe(true);
    expect(v.waived).toBe(2);
    expect(v.rules.map((r) => r.rule)).toEqual(['new failures ≤ 0', 'regressions ≤ 0']);
  });

  it("rulesOf: the configuration's rules, each one asked for above its own", () => {
    const configured = { maxNew: 2, maxRegressions: 0, minPassRate: 90, requireAllPlanned: true, strict: false };
    expect(rulesOf(configured)).toEqual({ maxNew: 2, maxRegressions: 0, minPassRate: 90, requireAllPlanned: true });
    expect(rulesOf(configured, { maxNew: 0, strict: true, requireAttributes: { Browser: ['Chrome'] } })).toEqual({
      maxNew: 0,
      maxRegressions: 0,
      minPassRate: 90,
      requireAllPlanned: true,
      requireAttributes: { Browser: ['Chrome'] },
      strict: true,
    });
    // Asked false is false, over a configuration's true.
    expect(rulesOf(configured, { requireAllPlanned: false }).requireAllPlanned).toBeUndefined();
    expect(rulesOf({ maxNew: 0, maxRegressions: 0, requireAllPlanned: false, strict: false })).toEqual(DEFAULT_RULES);
  });

  it('a case failing in several attribute sets counts once per run, and the figure says how many cases', () => {
    const mobile = { ...failure('A-1', 'new'), set: 'Device "Mobile"' };
    const desktop = { ...failure('A-1', 'new'), set: 'Device "Desktop"' };
    const v = judge({ failures: [mobile, desktop, failure('A-2', 'new')], runs: runs(3, 3) }, DEFAULT_RULES);
    expect(v.rules[0]).toEqual({
      rule: 'new failures ≤ 0',
      figure: '3 new in 2 cases: A-1 test of A-1, A-2 test of A-2',
      pass: false,
    });
    const one = judge(
      {
        failures: [
          { ...mobile, classification: 'regression' },
          { ...desktop, classification: 'regression' },
        ],
        runs: runs(1, 2),
      },
      DEFAULT_RULES,
    );
    expect(one.rules[1]).toEqual({ rule: 'regressions ≤ 0', figure: '2 in 1 case: A-1 test of A-1', pass: false });
  });

  it('a new, flaky or unclassified failure counts as new and is named; a regression counts apart', () => {
    const v = judge(
      {
        failures: [
          failure('A-1', 'new'),
          failure('A-2', 'flaky'),
          failure('A-3', 'unclassified'),
          failure('A-4', 'regression'),
        ],
        runs: runs(6, 4),
      },
      DEFAULT_RULES,
    );
    expect(v.pass).toBe(false);
    expect(v.rules[0]).toEqual({
      rule: 'new failures ≤ 0',
      figure: '3 new: A-1 test of A-1, A-2 test of A-2, A-3 test of A-3',
      pass: false,
    });
    expect(v.rules[1]).toEqual({ rule: 'regressions ≤ 0', figure: '1: A-4 test of A-4', pass: false });
    expect(
      judge({ failures: [failure('A-4', 'regression')], runs: runs(9, 1) }, { ...DEFAULT_RULES, maxRegressions: 1 })
        .pass,
    ).toBe(true);
  });

  it('--strict counts known and quarantined failures as new', () => {
    const v = judge({ failures: [failure('A-1', 'known')], runs: runs(9, 1) }, { ...DEFAULT_RULES, strict: true });
    expect(v.pass).toBe(false);
    expect(v.waived).toBe(0);
  });

  it('the pass rate is passed ÷ runs with a result, checked only when asked', () => {
    const input = { failures: [failure('A-1', 'known')], runs: runs(3, 1, 6) };
    expect(judge(input, DEFAULT_RULES).passRate).toBe(75);
    const v = judge(input, { ...DEFAULT_RULES, minPassRate: 80 });
    expect(v.rules.at(-1)).toEqual({ rule: 'pass rate ≥ 80%', figure: '75% of 4 runs', pass: false });
    expect(judge({ failures: [], runs: runs(0, 0, 3) }, { ...DEFAULT_RULES, minPassRate: 0 }).pass).toBe(false);
  });

  it('every planned case ran, and every value of an attribute ran', () => {
    const r = [
      { key: 'A-1', decided: true, passed: true, attributes: { Browser: 'Chrome' } },
      { key: 'A-2', decided: false, passed: false, attributes: { Browser: 'Firefox' } },
    ];
    const v = judge(
      { failures: [], runs: r, planned: ['A-1', 'A-2', 'A-3'] },
      { ...DEFAULT_RULES, requireAllPlanned: true, requireAttributes: { Browser: ['Chrome', 'Firefox'] } },
    );
    expect(v.rules.slice(2)).toEqual([
      { rule: 'every planned case ran', figure: '1 of 3; not run: A-2, A-3', pass: false },
      { rule: 'Browser Chrome, Firefox each ran', figure: 'no run with a result for Firefox', pass: false },
    ]);
  });

  it('Markdown: the verdict, a row per rule, and the trend as a Mermaid chart once there are two points', () => {
    const v = judge({ failures: [failure('A-1', 'new')], runs: runs(1, 1) }, DEFAULT_RULES);
    const md = gateMarkdown(v, { plan: 'P-1', cycle: 'CI | 12', url: 'http://x/browse/P-1?cycle=3' }, [
      { name: 'CI 11', passRate: 100 },
      { name: 'CI 12', passRate: 50 },
    ]);
    expect(md).toContain('## casebridge gate: ❌ failed');
    expect(md).toContain('| new failures ≤ 0 | 1 new: A-1 test of A-1 | **fail** |');
    expect(md).toContain('[CI \\| 12](http://x/browse/P-1?cycle=3)');
    expect(md).toContain('x-axis ["CI 11", "CI 12"]');
    expect(md).toContain('line [100, 50]');
    expect(gateMarkdown(v, { plan: 'P-1', cycle: 'c', url: '' }, [{ name: 'one', passRate: 1 }])).not.toContain(
      'mermaid',
    );
  });
});

describe('readComment reads back what commentFor wrote', () => {
  const item = (message: string): WorkItem =>
    ({
      id: 'r-1',
      key: 'A-1',
      target: { mode: 'cycle' },
      progress: {},
      test: {
        id: 't',
        file: 'a.spec.ts',
        titlePath: ['checks out'],
        tags: [],
        annotations: [],
        attempts: [
          { status: 'failed', retry: 0, durationMs: 1, errors: [{ message }], attachments: [], stdout: [], stderr: [] },
        ],
      },
    }) as unknown as WorkItem;

  it('the classification, its reason, the error’s lines and the signature', () => {
    const text = commentFor(
      item('Expected 3\nReceived 2'),
      ['Page state at the failure: error-context.md (attached)'],
      undefined,
      {
        classification: { classification: 'regression', reason: 'DEMO-40 (closed) failed the same way (run 12)' },
        signature: '0123456789abcdef',
      },
    );
    expect(readComment(text)).toEqual({
      error: 'Expected 3',
      errorLines: ['Expected 3', 'Received 2'],
      classification: 'regression',
      reason: 'DEMO-40 (closed) failed the same way (run 12)',
      signature: 'cb-0123456789abcdef',
      context: 'error-context.md (attached)',
    });
  });

  it('a comment a person wrote gives nothing it does not say', () => {
    expect(readComment('Looks like a flaky network to me.\nClassification: weird (x)')).toEqual({});
    expect(readComment(null)).toEqual({});
  });
});

describe('the requirements rule', () => {
  const reqs = [
    { key: 'R-1', summary: 'Sign in', state: 'passing' as const },
    { key: 'R-2', summary: 'Pay', state: 'failing' as const },
    { key: 'R-3', summary: 'Refunds', state: 'not covered' as const },
    { key: 'R-4', summary: 'Invoices', state: 'not run' as const },
  ];
  it('covered: fails naming each requirement without a case; passing: each not passing', () => {
    const covered = judge(
      { failures: [], runs: [], requirements: reqs },
      { ...DEFAULT_RULES, requirements: 'covered' },
    );
    expect(covered.rules.at(-1)).toEqual({
      rule: 'every requirement covered',
      figure: '1 of 4: R-3 Refunds (not covered)',
      pass: false,
    });
    const passing = judge(
      { failures: [], runs: [], requirements: reqs },
      { ...DEFAULT_RULES, requirements: 'passing', requirementsJql: 'fixVersion = 2.3' },
    );
    expect(passing.rules.at(-1)).toEqual({
      rule: 'every requirement passing (fixVersion = 2.3)',
      figure: '3 of 4: R-2 Pay (failing), R-3 Refunds (not covered), R-4 Invoices (not run)',
      pass: false,
    });
    expect(passing.pass).toBe(false);
  });

  it('states a requirement by its cases: failing beats not run beats passing', () => {
    expect(coverageState([])).toBe('not covered');
    expect(coverageState([{ result: 'passed' }, { result: 'failed' }])).toBe('failing');
    expect(coverageState([{ result: 'passed' }, {}])).toBe('not run');
    expect(coverageState([{ result: 'passed' }])).toBe('passing');
  });
});
