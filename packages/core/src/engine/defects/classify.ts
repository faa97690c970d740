import type { Classification } from '../kernel/types.js';
import { marker } from './text.js';

/**
 * What a failure is, from its case's execution history: pure rules. The signature, written into every failed run's
 * comment, lets later runs find the same failure.
 */

/** One executed run of the case, as its execution history lists it. */
export interface Execution {
  runId: number;
  result: 'passed' | 'failed';
  comment: string;
  bugs: ReadonlyArray<{ key: string; summary?: string }>;
  /** The cycle of the run (none: an ad hoc run, or a list that does not say). */
  cycleId?: number;
}

/** A bug's state from Jira: open, or closed (a duplicate closed is not a fixed bug: never a regression's). */
export interface BugState {
  open: boolean;
  duplicate: boolean;
}

/** The classification of one failure and what it means for its defect. */
export interface Verdict {
  classification: Classification;
  /** Why, for the run comment (`Classification: known (failed the same way in run 12)`). */
  reason: string;
  /** The first open known bug that is not the group's own defect (that one is left to the search, which dedupes). */
  knownBug?: string;
  /** Every known bug is closed: the new defect is a regression of the newest. */
  regressionOf?: string;
  /** The known bugs were all the group's own defects: a regression if the defect search finds them all closed. */
  ownDefects?: string[];
}

/** How many executed runs the flip count looks at (this one included). */
export const FLIP_WINDOW = 10;
/** Flips between pass and fail in the window that make a failure flaky. */
export const FLIPS_FLAKY = 2;

const OTHER_MARKER = /\[cb-([0-9a-f]{16})\]/;

/**
 * A failure's known bugs, newest first: those linked to earlier runs with its signature, then those on the case's
 * last failed run (a person's triage). Another group's casebridge defect is left out.
 */
export function knownBugs(history: readonly Execution[], signature: string): string[] {
  const sig = marker(signature);
  const ofThisGroup = (b: { summary?: string }) => {
    const other = OTHER_MARKER.exec(b.summary ?? '')?.[1];
    return other === undefined || other === signature;
  };
  const out: string[] = [];
  const add = (e: Execution | undefined) => {
    for (const b of e?.bugs ?? []) if (ofThisGroup(b) && !out.includes(b.key)) out.push(b.key);
  };
  const newestFirst = [...history].reverse();
  for (const e of newestFirst) if (e.comment.includes(sig)) add(e);
  add(newestFirst.find((e) => e.result === 'failed'));
  return out;
}

/** The one flip rule of the reporters and every read: flaky at FLIPS_FLAKY flips in the last FLIP_WINDOW results. */
export function flipRule(results: ReadonlyArray<'passed' | 'failed'>): { flips: number; flaky: boolean } {
  const n = flips(results.slice(-FLIP_WINDOW));
  return { flips: n, flaky: n >= FLIPS_FLAKY };
}

/** Changes between passed and failed along the results, oldest first. */
export function flips(results: ReadonlyArray<'passed' | 'failed'>): number {
  let n = 0;
  for (let i = 1; i < results.length; i += 1) if (results[i] !== results[i - 1]) n += 1;
  return n;
}

/**
 * Classifies a failing or flaky result from the case's earlier runs (oldest first), first rule wins. The flip rule
 * goes before an open known bug: what the test does says more than its bug (which is still linked).
 */
export function classify(
  outcome: 'failed' | 'flaky',
  history: readonly Execution[],
  signature: string,
  states: ReadonlyMap<string, BugState>,
): Verdict {
  const bugs = knownBugs(history, signature).filter((k) => states.has(k));
  const open = bugs.find((k) => states.get(k)?.open);
  const fixed = bugs.filter((k) => !states.get(k)?.open && !states.get(k)?.duplicate);
  const own = `[${marker(signature)}]`;
  const groupsOwn = (key: string) => history.some((e) => e.bugs.some((b) => b.key === key && b.summary?.includes(own)));
  const withBug = open && !groupsOwn(open) ? { knownBug: open } : {};
  if (outcome === 'flaky') return { classification: 'flaky', reason: 'passed on retry', ...withBug };
  if (!open && fixed[0]) {
    return { classification: 'regression', reason: `its known bug ${fixed[0]} is closed`, regressionOf: fixed[0] };
  }
  const recent = [...history.slice(-(FLIP_WINDOW - 1)).map((e) => e.result), 'failed' as const];
  const { flips: n, flaky } = flipRule(recent);
  if (flaky) {
    const reason = `${n} flips between pass and fail in its last ${recent.length} runs`;
    return { classification: 'flaky', reason, ...withBug };
  }
  if (open) return { classification: 'known', reason: `known bug ${open} is open`, ...withBug };
  const last = history[history.length - 1];
  if (!last) return { classification: 'new', reason: 'first failure of the case' };
  if (last.result === 'passed') return { classification: 'new', reason: `its last run (${last.runId}) passed` };
  const sig = marker(signature);
  const same = [...history].reverse().find((e) => e.result === 'failed' && e.comment.includes(sig));
  if (same) return { classification: 'known', reason: `failed the same way in run ${same.runId}` };
  return { classification: 'new', reason: `its last run (${last.runId}) failed another way` };
}
