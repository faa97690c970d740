import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/engine/defects/classify.js';
import {
  afterSearch,
  countsForCap,
  type DefectSettings,
  type FailureFacts,
  needsHistory,
  triage,
} from '../../src/engine/defects/triage.js';

/** The triage of a failure over facts alone: no service, no clock (defects/triage.ts). */

const on: DefectSettings = { enabled: true, onFlaky: false, dryRun: false };
const facts = (f: Partial<FailureFacts>): FailureFacts => ({ outcome: 'failed', settings: on, ...f });
const known = (bug?: string): Verdict => ({
  classification: 'known',
  reason: 'failed the same way in run 12',
  ...(bug ? { knownBug: bug } : {}),
});

describe('triage: one verdict and one defect action per failure', () => {
  it('new: no history says anything, the group defect is found or filed', () => {
    expect(triage(facts({}))).toEqual({ verdict: undefined, action: { kind: 'find' } });
    const v: Verdict = { classification: 'new', reason: 'first failure of the case' };
    expect(triage(facts({ history: v }))).toEqual({ verdict: v, action: { kind: 'find' } });
  });

  it('known: an open bug from the history is linked without a search or a slot', () => {
    const v = known('BUG-7');
    expect(triage(facts({ history: v }))).toEqual({ verdict: v, action: { kind: 'link', key: 'BUG-7' } });
    // Known by its signature only (the group's own defect): the search finds it.
    expect(triage(facts({ history: known() })).action).toEqual({ kind: 'find' });
  });

  it('regression: a new defect names the closed known bug', () => {
    const v: Verdict = { classification: 'regression', reason: 'its known bug BUG-3 is closed', regressionOf: 'BUG-3' };
    expect(triage(facts({ history: v }))).toEqual({ verdict: v, action: { kind: 'find', regressionOf: 'BUG-3' } });
  });

  it('flaky: no defect unless defects.onFlaky, then as a failure (its known bug linked)', () => {
    expect(triage(facts({ outcome: 'flaky' }))).toEqual({
      verdict: { classification: 'flaky', reason: 'passed on retry' },
      action: { kind: 'none', why: 'flaky' },
    });
    const withBug: Verdict = { classification: 'flaky', reason: 'passed on retry', knownBug: 'BUG-9' };
    const onFlaky = { ...on, onFlaky: true };
    expect(triage(facts({ outcome: 'flaky', settings: onFlaky, history: withBug })).action).toEqual({
      kind: 'link',
      key: 'BUG-9',
    });
    expect(triage(facts({ outcome: 'flaky', settings: onFlaky })).action).toEqual({ kind: 'find' });
  });

  it('quarantined: classified so whatever the history, its known bug linked, nothing filed', () => {
    expect(triage(facts({ quarantined: 'label cb-quarantine', history: known() }))).toEqual({
      verdict: { classification: 'quarantined', reason: 'quarantined: label cb-quarantine' },
      action: { kind: 'none', why: 'quarantined' },
    });
    expect(triage(facts({ quarantined: 'bug BUG-2', history: known('BUG-2') }))).toEqual({
      verdict: { classification: 'quarantined', reason: 'quarantined: bug BUG-2', knownBug: 'BUG-2' },
      action: { kind: 'link', key: 'BUG-2' },
    });
    // A quarantined flaky result is quarantined, not flaky.
    expect(triage(facts({ outcome: 'flaky', quarantined: 'x' })).verdict?.classification).toBe('quarantined');
  });

  it('defects off or a dry run: the history classifies, nothing is linked or filed', () => {
    const v = known('BUG-7');
    expect(triage(facts({ history: v, settings: { ...on, enabled: false } }))).toEqual({
      verdict: v,
      action: { kind: 'none', why: 'defects off' },
    });
    expect(triage(facts({ history: v, settings: { ...on, dryRun: true } })).action).toEqual({
      kind: 'none',
      why: 'dry run',
    });
    expect(triage(facts({ quarantined: 'x', history: v, settings: { ...on, dryRun: true } })).action.kind).toBe('none');
  });

  it('after the search: own defects all closed make a regression; flaky and quarantined stay', () => {
    const own: Verdict = { ...known(), ownDefects: ['BUG-1'] };
    expect(afterSearch(own, 'BUG-1')).toEqual({
      classification: 'regression',
      reason: 'its known bug BUG-1 is closed',
      regressionOf: 'BUG-1',
    });
    expect(afterSearch(own, undefined)).toBe(own);
    expect(afterSearch(known(), 'BUG-1')?.classification).toBe('known');
    const flaky: Verdict = { classification: 'flaky', reason: '2 flips', ownDefects: ['BUG-1'] };
    expect(afterSearch(flaky, 'BUG-1')).toBe(flaky);
  });

  it('the cap counts the failures that may file; the history is read only where it can change the outcome', () => {
    expect(countsForCap('failed', on, false)).toBe(true);
    expect(countsForCap('failed', on, true)).toBe(false);
    expect(countsForCap('flaky', on, false)).toBe(false);
    expect(countsForCap('flaky', { ...on, onFlaky: true }, false)).toBe(true);
    expect(countsForCap('passed', on, false)).toBe(false);
    expect(countsForCap('failed', { ...on, enabled: false }, false)).toBe(false);
    expect(needsHistory('failed', { ...on, enabled: false })).toBe(true);
    expect(needsHistory('flaky', on)).toBe(false);
    expect(needsHistory('flaky', { ...on, onFlaky: true })).toBe(true);
  });
});
