import type { Verdict } from './classify.js';

/**
 * Every rule of what becomes of a failing or flaky result, pure, over facts gathered once: `triage` and `judgeGroup`
 * give the final verdict and action before anything is done.
 */

/** The settings of the defects that the rules read. */
export interface DefectSettings {
  /** `defects.enabled`. */
  enabled: boolean;
  /** `defects.onFlaky`: a result that passed on retry gets a defect too. */
  onFlaky: boolean;
  /** A dry run files nothing. */
  dryRun: boolean;
}

/** What is known of one failing (`failed`) or flaky (passed on retry) result before anything is written for it. */
export interface FailureFacts {
  outcome: 'failed' | 'flaky';
  settings: DefectSettings;
  /** Why its case is quarantined (the runner's mark, or the quarantine set); undefined when it is not. */
  quarantined?: string | undefined;
  /** The verdict of its case's history (classify.ts); undefined when the history is off or could not be read. */
  history?: Verdict | undefined;
}

/** What to do about the failure's defect. */
export type DefectAction =
  /** Nothing is filed or linked (`why` for a reader: off, quarantined, flaky). */
  | { kind: 'none'; why: string }
  /** Link this bug, known from the history: no search, no new defect, no slot under the cap. */
  | { kind: 'link'; key: string }
  /** Find the group's defect: link it when open, else file one (metered by the cap), a regression of `regressionOf`. */
  | { kind: 'find'; regressionOf?: string };

export interface Triage {
  /** The classification for the run comment and the summary; undefined when nothing says anything. */
  verdict?: Verdict | undefined;
  action: DefectAction;
}

/** Whether a result may need a defect at all: the outcome and the settings (the cap counts only these). */
export function wantsDefect(outcome: string, s: Omit<DefectSettings, 'dryRun'>): boolean {
  return s.enabled && (outcome === 'failed' || (outcome === 'flaky' && s.onFlaky));
}

/** Whether the case's history is read for the failure: always for a failure, for a flaky result only when it may file. */
export function needsHistory(outcome: 'failed' | 'flaky', s: Omit<DefectSettings, 'dryRun'>): boolean {
  return outcome === 'failed' || (s.enabled && s.onFlaky);
}

/** Whether a result counts towards its group's blast radius for the cap: it may file, and is not quarantined. */
export function countsForCap(outcome: string, s: Omit<DefectSettings, 'dryRun'>, quarantined: boolean): boolean {
  return wantsDefect(outcome, s) && !quarantined;
}

/** The verdict and the defect action of one failure (see the file comment). */
export function triage(f: FailureFacts): Triage {
  const { outcome, settings: s, history } = f;
  if (f.quarantined !== undefined) {
    const verdict: Verdict = {
      classification: 'quarantined',
      reason: `quarantined: ${f.quarantined}`,
      ...(history?.knownBug ? { knownBug: history.knownBug } : {}),
    };
    const action: DefectAction =
      history?.knownBug && wantsDefect(outcome, s) && !s.dryRun
        ? { kind: 'link', key: history.knownBug }
        : { kind: 'none', why: 'quarantined' };
    return { verdict, action };
  }
  if (outcome === 'flaky' && !(s.enabled && s.onFlaky)) {
    return { verdict: history ?? { classification: 'flaky', reason: 'passed on retry' }, action: none('flaky') };
  }
  if (!wantsDefect(outcome, s) || s.dryRun) {
    return { verdict: history, action: none(s.dryRun ? 'dry run' : 'defects off') };
  }
  if (history?.knownBug) return { verdict: history, action: { kind: 'link', key: history.knownBug } };
  return {
    verdict: history,
    action: { kind: 'find', ...(history?.regressionOf ? { regressionOf: history.regressionOf } : {}) },
  };
}

/** A failure group's defects: the one linked in the cycle already, or the project's (oldest first) from the search. */
export interface GroupFacts {
  inCycle?: string | undefined;
  found: ReadonlyArray<{ key: string; open: boolean }>;
}

/** What a failure whose triage said `find` does about its group's defect: link this one, or file one. */
export type GroupAction = { kind: 'link'; key: string } | { kind: 'file'; regressionOf?: string };

/**
 * A `find`'s verdict and action: link the group's defect in the cycle, else its oldest open one; else file one, a
 * regression of the history's closed known bug or the newest closed one.
 */
export function judgeGroup(t: Triage, g: GroupFacts): { verdict: Verdict | undefined; action: GroupAction } {
  const key = g.inCycle ?? g.found.find((d) => d.open)?.key;
  if (key) return { verdict: t.verdict, action: { kind: 'link', key } };
  const regressionOf = (t.action.kind === 'find' ? t.action.regressionOf : undefined) ?? g.found.at(-1)?.key;
  const action: GroupAction = { kind: 'file', ...(regressionOf ? { regressionOf } : {}) };
  return { verdict: afterSearch(t.verdict, regressionOf), action };
}

/** Known bugs that were all the group's own defects, found all closed, make a regression; other verdicts stay. */
export function afterSearch(verdict: Verdict | undefined, closedOf: string | undefined): Verdict | undefined {
  if (!closedOf || !verdict?.ownDefects) return verdict;
  if (['regression', 'flaky', 'quarantined'].includes(verdict.classification)) return verdict;
  return { classification: 'regression', reason: `its known bug ${closedOf} is closed`, regressionOf: closedOf };
}

const none = (why: string): DefectAction => ({ kind: 'none', why });
