import { redact } from '@casebridge/core';

/**
 * What `sync --update` would change in one test case, computed without the network: the case as the service holds
 * it against the case as the code describes it. Pure, so the plan is shown (dry run) and applied from one value.
 *
 * Steps are compared by position, because that is how the service addresses them (`sequenceNumber`, gapless): a
 * step whose text differs is changed in place (its expected result and test data stay as they are), steps beyond
 * the code's last are removed, steps beyond the case's last are appended. So the requests never need a step moved,
 * and a step inserted in the middle of a test shows as a change to each step after it plus one added at the end.
 */

/** A test case as the service holds it. */
export interface CaseNow {
  key: string;
  summary: string;
  /** Step texts in order of their positions (sequence 1 first). */
  steps: readonly string[];
}

/** A test case as the code describes it. */
export interface CaseFromCode {
  summary: string;
  /**
   * Step titles in order; `undefined` when the code does not tell (no step calls found, or titles built at run
   * time): the case's steps are then left alone, never deleted.
   */
  steps?: readonly string[];
}

export type StepChange =
  | { kind: 'changed'; seq: number; from: string; to: string }
  | { kind: 'added'; seq: number; to: string }
  | { kind: 'removed'; seq: number; from: string };

export interface CaseDiff {
  key: string;
  summary?: { from: string; to: string };
  steps: StepChange[];
}

/** The requests that apply a diff's steps, in an order that keeps every sequence number valid. */
export type StepRequest =
  | { op: 'update'; sequenceNumber: number; step: string }
  | { op: 'delete'; stepNo: number }
  | { op: 'add'; steps: string[] };

/** The longest step text the service keeps; the same cut as for a new case's steps. */
const STEP_MAX = 2000;

/** A step title as a new case gets it (trimmed, never blank, cut to the service's length, secrets redacted). */
export function stepText(title: string): string {
  const clean = redact(title.trim()) || '(untitled step)';
  return clean.length > STEP_MAX ? `${clean.slice(0, STEP_MAX - 1)}…` : clean;
}

export function diffCase(now: CaseNow, code: CaseFromCode): CaseDiff {
  const diff: CaseDiff = { key: now.key, steps: [] };
  const to = code.summary.trim();
  if (to && now.summary.trim() !== to) diff.summary = { from: now.summary, to };
  // No steps known is not "no steps": a case is never emptied because the source shows none.
  if (!code.steps || code.steps.length === 0) return diff;
  const want = code.steps.map(stepText);
  const have = now.steps;
  const shared = Math.min(want.length, have.length);
  for (let i = 0; i < shared; i++) {
    const from = have[i] ?? '';
    const next = want[i] ?? '';
    if (from !== next) diff.steps.push({ kind: 'changed', seq: i + 1, from, to: next });
  }
  for (let i = shared; i < have.length; i++) diff.steps.push({ kind: 'removed', seq: i + 1, from: have[i] ?? '' });
  for (let i = shared; i < want.length; i++) diff.steps.push({ kind: 'added', seq: i + 1, to: want[i] ?? '' });
  return diff;
}

/** Whether a diff has anything to show. */
export function hasChanges(d: CaseDiff): boolean {
  return d.summary !== undefined || d.steps.length > 0;
}

/**
 * Updates in place first (positions unchanged), then deletions from the last position down (deleting renumbers only
 * the steps after the deleted one, and none is left there), then one append for every added step.
 */
export function stepRequests(d: CaseDiff): StepRequest[] {
  const out: StepRequest[] = [];
  for (const c of d.steps) if (c.kind === 'changed') out.push({ op: 'update', sequenceNumber: c.seq, step: c.to });
  const removed = d.steps.filter((c) => c.kind === 'removed').sort((a, b) => b.seq - a.seq);
  for (const c of removed) out.push({ op: 'delete', stepNo: c.seq });
  const added = d.steps.flatMap((c) => (c.kind === 'added' ? [c] : [])).sort((a, b) => a.seq - b.seq);
  if (added.length > 0) out.push({ op: 'add', steps: added.map((c) => c.to) });
  return out;
}

export interface UpdateTotals {
  /** Cases with a change that is applied (steps; summaries too when `summaries` is `apply`). */
  cases: number;
  summaries: number;
  steps: number;
}

/**
 * The counts of the one-line total. With `summaries: 'show'` (the service API has no issue edit) a differing
 * summary is shown but changes nothing, so it does not make a case count as changed.
 */
export function totals(diffs: readonly CaseDiff[], summaries: 'apply' | 'show'): UpdateTotals {
  let cases = 0;
  let summaryCount = 0;
  let steps = 0;
  for (const d of diffs) {
    if (d.summary) summaryCount += 1;
    steps += d.steps.length;
    if (d.steps.length > 0 || (summaries === 'apply' && d.summary)) cases += 1;
  }
  return { cases, summaries: summaryCount, steps };
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "2 cases would change: 5 steps" / "changed"; "no case would change" when there is nothing to do. */
export function totalLine(diffs: readonly CaseDiff[], applied: boolean, summaries: 'apply' | 'show'): string {
  const t = totals(diffs, summaries);
  const verb = applied ? 'changed' : 'would change';
  const parts: string[] = [];
  if (summaries === 'apply' && t.summaries > 0) parts.push(plural(t.summaries, 'summary', 'summaries'));
  if (t.steps > 0) parts.push(plural(t.steps, 'step', 'steps'));
  const head =
    t.cases === 0
      ? `no case ${verb}: the keyed cases match the code`
      : `${plural(t.cases, 'case', 'cases')} ${verb}: ${parts.join(', ')}`;
  if (summaries === 'apply' || t.summaries === 0) return head;
  const differ = t.summaries === 1 ? '1 summary differs' : `${t.summaries} summaries differ`;
  return `${head}; ${differ} from the code and ${t.summaries === 1 ? 'is' : 'are'} left alone (the service API has no issue edit)`;
}

const q = (s: string) => JSON.stringify(s);

/** The lines of one case's diff, indented under its key and test. */
export function diffLines(d: CaseDiff, test: string, summaries: 'apply' | 'show'): string[] {
  const out = [`  ${d.key}  ${test}`];
  if (d.summary) {
    const note = summaries === 'show' ? ' (shown only: the service API has no issue edit)' : '';
    out.push(`    summary: ${q(d.summary.from)} -> ${q(d.summary.to)}${note}`);
  }
  for (const c of d.steps) {
    if (c.kind === 'changed') out.push(`    ~ step ${c.seq}: ${q(c.from)} -> ${q(c.to)}`);
    else if (c.kind === 'removed') out.push(`    - step ${c.seq}: ${q(c.from)}`);
    else out.push(`    + step ${c.seq}: ${q(c.to)}`);
  }
  return out;
}
