import { describe, expect, it } from 'vitest';
import { type BugState, classify, type Execution, flips, knownBugs } from '../../src/engine/defects/classify.js';
import { executions } from '../../src/engine/defects/history.js';
import { DEFAULT_STATUS_MAP } from '../../src/engine/kernel/work.js';

/** The rules of classify.ts on histories written out by hand: no service. */

const SIG = '0123456789abcdef';
const OTHER = 'fedcba9876543210';
let id = 100;
const run = (result: 'passed' | 'failed', comment = '', bugs: Array<{ key: string; summary?: string }> = []) =>
  ({ runId: ++id, result, comment, bugs }) satisfies Execution;
const signed = (sig = SIG) => `Failed: t\ncasebridge signature: cb-${sig}`;
const open: BugState = { open: true, duplicate: false };
const closed: BugState = { open: false, duplicate: false };
const states = (entries: Record<string, BugState>) => new Map(Object.entries(entries));

describe('knownBugs', () => {
  it('bugs of runs with the same signature, newest run first, then those of the last failed run', () => {
    const h = [
      run('failed', signed(), [{ key: 'B-1' }]),
      run('failed', signed(OTHER), [{ key: 'B-2' }]),
      run('failed', signed(), [{ key: 'B-3' }, { key: 'B-1' }]),
      run('passed'),
      run('failed', 'by hand', [{ key: 'B-4' }]),
    ];
    expect(knownBugs(h, SIG)).toEqual(['B-3', 'B-1', 'B-4']);
  });

  it("leaves out casebridge's defect of another group, keeps one without a marker", () => {
    const h = [
      run('failed', signed(OTHER), [
        { key: 'B-1', summary: `x [cb-${OTHER}]` },
        { key: 'B-2', summary: 'y' },
      ]),
    ];
    expect(knownBugs(h, SIG)).toEqual(['B-2']);
  });
});

describe('classify', () => {
  it('new: the first failure, or the last run passed', () => {
    expect(classify('failed', [], SIG, new Map()).classification).toBe('new');
    expect(classify('failed', [run('passed'), run('passed')], SIG, new Map()).classification).toBe('new');
    // Failed the same way, then passed: failing again is two flips (flaky), not known.
    expect(classify('failed', [run('failed', signed()), run('passed')], SIG, new Map()).classification).toBe('flaky');
  });

  it('known: the same signature failed before; new when the last run failed another way', () => {
    expect(classify('failed', [run('failed', signed())], SIG, new Map()).classification).toBe('known');
    expect(classify('failed', [run('failed', signed(OTHER))], SIG, new Map()).classification).toBe('new');
  });

  it('known with an open known bug, which is linked; regression when every known bug is closed', () => {
    const h = [run('failed', signed(), [{ key: 'B-1' }, { key: 'B-2' }])];
    expect(classify('failed', h, SIG, states({ 'B-1': closed, 'B-2': open }))).toMatchObject({
      classification: 'known',
      knownBug: 'B-2',
    });
    expect(classify('failed', h, SIG, states({ 'B-1': closed, 'B-2': closed }))).toMatchObject({
      classification: 'regression',
      regressionOf: 'B-1',
    });
    // The group's own defect is known, but found by the defect search (not linked at once).
    const own = [run('failed', signed(), [{ key: 'B-9', summary: `t: expected [cb-${SIG}]` }])];
    expect(classify('failed', own, SIG, states({ 'B-9': open }))).toEqual({
      classification: 'known',
      reason: 'known bug B-9 is open',
    });
    // A bug closed as a duplicate was never fixed: not a regression's; an unread state is no known bug.
    expect(classify('failed', h, SIG, states({ 'B-1': { open: false, duplicate: true } })).classification).toBe(
      'known',
    );
    expect(classify('failed', h, SIG, new Map()).knownBug).toBeUndefined();
  });

  it('flaky: passed on retry, or two flips in the last ten runs (this one included)', () => {
    expect(classify('flaky', [], SIG, new Map()).classification).toBe('flaky');
    expect(classify('failed', [run('failed'), run('passed')], SIG, new Map()).classification).toBe('flaky');
    // The flips before the window do not count.
    const old = [run('passed'), run('failed'), ...Array.from({ length: 9 }, () => run('failed', signed()))];
    expect(classify('failed', old, SIG, new Map()).classification).toBe('known');
    expect(flips(['passed', 'failed', 'failed', 'passed'])).toBe(2);
  });
});

describe('executions (history.ts)', () => {
  it('the executed runs of a history list, oldest first, each with its cycle (none: an ad hoc run)', () => {
    const items = [
      { id: 7, status: 'Passed', comment: null, bugs: [], executionOn: '26-Nov-2026 02:49:03', testCycleId: 3 },
      { id: 8, status: 'Not Tested', bugs: [], testCycleId: 4 },
      { id: 5, status: 'Failed', comment: 'x', bugs: [], executionOn: '25-Nov-2026 10:00:00', testCycleId: null },
    ];
    expect(executions(items, DEFAULT_STATUS_MAP)).toEqual([
      { runId: 5, result: 'failed', comment: 'x', bugs: [] },
      { runId: 7, result: 'passed', comment: '', bugs: [], cycleId: 3 },
    ]);
  });
});
