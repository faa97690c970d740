import { runKey } from './attributes.js';
import type { ResultAttachment, ResultStep, TestResult } from './model.js';
import { lastAttempt, outcomeOf } from './model.js';

/** A refusal: the service's answer (short, redacted), when it last said so, and how many runs it said so. */
export interface RefusalMark {
  answer: string;
  at: string;
  times: number;
}

/** Which files of a result are uploaded (the `attachments` section of the config). */
export interface AttachmentChoice {
  screenshots: 'on-failure' | 'all' | 'off';
  traces: boolean;
  videos: boolean;
  others: boolean;
}

/**
 * One test result for one case key, in memory, the journal or a replay; `progress` records what reached the service,
 * so a retry or replay never does it twice.
 */
export interface WorkItem {
  /** Random id of this result for this key (journal entries and logs name it). */
  id: string;
  key: string;
  /** Run attribute name → value (`-`: none), kept in the journal so a replay goes to the same run. */
  attributes?: Record<string, string>;
  test: TestResult;
  target: Target;
  progress: Progress;
  /** The service refused this result alone, repeatedly (see splitBatch): named in the summary, kept for a replay. */
  refused?: RefusalMark;
}

/** The run of the cycle a result goes to: its case key, with its attribute set when it has one (see runKey). */
export function runKeyOf(item: Pick<WorkItem, 'key' | 'attributes'>): string {
  return runKey(item.key, item.attributes);
}

/** Where a result goes: decided when it enters the engine, kept in the journal (a replay reports to the same cycle). */
export interface Target {
  mode: 'adhoc' | 'cycle';
  projectKey: string;
  plan?: string;
  cycleName?: string;
  environment?: string;
  build?: string;
  /** A cycle this run creates gets a run for every case of the plan (option `preloadRuns`); absent: it does not. */
  preloadRuns?: boolean;
  /** A per-run cycle name: the cycle is created first, looked for only if the create is refused. */
  perRunCycle?: boolean;
}

export interface Progress {
  /** The run the result went to (ad hoc: created for it; cycle: the case's run in the cycle). */
  runId?: number;
  /** Steps were written. */
  steps?: boolean;
  /** File names uploaded to the run. */
  uploaded?: string[];
  /** Links to files stored in the content repository, by attachment name. */
  stored?: Record<string, string>;
  /** The defect created or linked for this failure. */
  defect?: string;
  defectCreated?: boolean;
  /** The defect was filed from this run (createRunBug): the service linked it, no run update is needed for it. */
  defectOnRun?: boolean;
  /** The run has its status, its classification and defect still to come: delivered, but kept in the journal. */
  status?: boolean;
  /** The run's result, comment and bugs were written: the item is delivered (or dropped, see below). */
  done?: boolean;
  /** A permanent problem (a bad key, a missing plan) stopped it: named in the summary, never journalled or counted. */
  dropped?: boolean;
}

/** The five run statuses every synapseRT has (administrators may add more; no call of the service lists them). */
export const RUN_STATUSES = ['Passed', 'Failed', 'Blocked', 'Not Tested', 'NA'] as const;

/** What `statusMap` maps: the final outcome, with `timedOut` split off `failed`. */
export type StatusMapKey = 'passed' | 'failed' | 'timedOut' | 'flaky' | 'skipped' | 'interrupted';

/** The run status of each kind of result; `null`: leave the run as it is. `timedOut` absent: as `failed`. */
export type StatusMap = Record<Exclude<StatusMapKey, 'timedOut'>, string | null> & { timedOut?: string | null };

/** The keys of `statusMap`, for `CASEBRIDGE_STATUS_MAP`. */
export const STATUS_MAP_KEYS: readonly StatusMapKey[] = [
  'passed',
  'failed',
  'timedOut',
  'flaky',
  'skipped',
  'interrupted',
];

/** Today's statuses (the option's defaults): a skipped test leaves the run as it is. */
export const DEFAULT_STATUS_MAP: StatusMap = {
  passed: 'Passed',
  failed: 'Failed',
  flaky: 'Passed',
  skipped: null,
  interrupted: 'Blocked',
};

/** Which entry of `statusMap` a result takes. A test expected to fail that timed out passed: it is `passed`. */
export function statusMapKeyOf(t: TestResult): StatusMapKey {
  const outcome = outcomeOf(t);
  return outcome === 'failed' && lastAttempt(t)?.status === 'timedOut' ? 'timedOut' : outcome;
}

/** The run status a result writes (see `statusMap`); undefined: the run is left as it is. */
export function runStatusOf(t: TestResult, map: StatusMap = DEFAULT_STATUS_MAP): string | undefined {
  const key = statusMapKeyOf(t);
  const status = key === 'timedOut' ? (map.timedOut === undefined ? map.failed : map.timedOut) : map[key];
  return status ?? undefined;
}

/** The user's steps of the last attempt, depth first (nested steps are part of their parent's text). */
export function topSteps(t: TestResult): ResultStep[] {
  return lastAttempt(t)?.steps ?? [];
}

export function kindOf(a: ResultAttachment): 'screenshot' | 'trace' | 'video' | 'other' {
  if (a.contentType.startsWith('video/') || a.name === 'video') return 'video';
  if (a.name === 'trace' || a.name.endsWith('.trace') || /trace/i.test(a.path ?? '')) return 'trace';
  if (a.contentType.startsWith('image/')) return 'screenshot';
  return 'other';
}

/** The attachments of the last attempt (and of its steps) that the config asks for, with the step they belong to. */
export function selectedAttachments(
  t: TestResult,
  c: AttachmentChoice,
): Array<{ attachment: ResultAttachment; step?: number }> {
  const outcome = outcomeOf(t);
  const failed = outcome === 'failed' || outcome === 'interrupted';
  const wanted = (a: ResultAttachment) => {
    if (!a.path && !a.body) return false;
    switch (kindOf(a)) {
      case 'screenshot':
        return c.screenshots === 'all' || (c.screenshots === 'on-failure' && failed);
      case 'trace':
        return c.traces;
      case 'video':
        return c.videos;
      case 'other':
        return c.others;
    }
  };
  const last = lastAttempt(t);
  if (!last) return [];
  const out: Array<{ attachment: ResultAttachment; step?: number }> = [];
  for (const a of last.attachments) if (wanted(a)) out.push({ attachment: a });
  last.steps.forEach((s, i) => {
    const walk = (step: ResultStep) => {
      for (const a of step.attachments) if (wanted(a)) out.push({ attachment: a, step: i + 1 });
      step.steps.forEach(walk);
    };
    walk(s);
  });
  return out;
}

/** Whether a result needs calls of its own (comment, steps, files, defects) or only a status in a bulk update. */
export function needsDetails(item: WorkItem, config: { attachments: AttachmentChoice }): boolean {
  const outcome = outcomeOf(item.test);
  if (outcome === 'failed' || outcome === 'flaky' || outcome === 'interrupted') return true;
  if (topSteps(item.test).length > 0) return true;
  return selectedAttachments(item.test, config.attachments).length > 0;
}

/** Shared by status-only results (1.6 MB fewer at 10,000 tests); frozen, so a change throws instead of spreading. */
const NONE: never[] = Object.freeze([]) as unknown as never[];

/**
 * What a status-only result still needs once logged: identity, tags, annotations, each attempt's status, duration and
 * errors. Output and unsent files (up to 8 kB a test) are dropped.
 */
export function statusOnly(t: TestResult): TestResult {
  return {
    ...t,
    tags: t.tags.length > 0 ? t.tags : NONE,
    annotations: t.annotations.length > 0 ? t.annotations : NONE,
    attempts: t.attempts.map((a) => ({
      retry: a.retry,
      status: a.status,
      durationMs: a.durationMs,
      startedAt: a.startedAt,
      errors: a.errors.length > 0 ? a.errors : NONE,
      steps: a.steps.length > 0 ? a.steps : NONE,
      attachments: NONE,
    })),
  };
}

/** Appends `value` to the list of `key` in place (copying it per value would be quadratic). */
export function appendTo<K, V>(groups: Map<K, V[]>, key: K, value: V): void {
  const list = groups.get(key);
  if (list) list.push(value);
  else groups.set(key, [value]);
}
