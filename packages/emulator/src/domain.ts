import { formatExecutionOn, formatTimestamp } from '@casebridge/core/contract';
import { type Ctx, forbidden, idf, invalid, notFound } from './context.js';
import type {
  Attachment,
  BugLink,
  Cycle,
  HistoryEntry,
  Issue,
  PlanMember,
  Run,
  RunStatusDef,
  RunStep,
  Store,
  User,
} from './store.js';

/**
 * Rules of the test-management service shared by several operation groups, and the presenters that turn rows
 * into the documented response shapes of the active variant.
 */

export const ISSUE_TYPES = {
  testCase: 'Test Case',
  testPlan: 'Test Plan',
  requirement: 'Requirement',
  bug: 'Bug',
} as const;

/**
 * Issue ids by key, per store: a reporter names thousands of cases in one call, and a scan per key made that
 * quadratic. The index is checked on every hit (the row must still exist with that key) and rebuilt on a miss or a
 * stale hit, so issues created, removed or re-keyed since are found all the same.
 */
const keyIndexes = new WeakMap<Store, Map<string, number>>();

export function issueByKey(store: Store, key: string): Issue | undefined {
  const index = keyIndexes.get(store);
  const hit = index?.get(key);
  if (hit !== undefined) {
    const issue = store.issues.get(hit);
    if (issue?.key === key) return issue;
  }
  const fresh = new Map<string, number>();
  for (const issue of store.issues.rows.values()) fresh.set(issue.key, issue.id);
  keyIndexes.set(store, fresh);
  const id = fresh.get(key);
  return id === undefined ? undefined : store.issues.get(id);
}

/** The issue with this key (and type, when given); 404 naming what was looked for otherwise. */
export function requireIssue(store: Store, key: string, type?: string): Issue {
  const issue = issueByKey(store, key);
  if (!issue || (type && issue.type !== type)) {
    throw notFound(`${type ?? 'Issue'} ${key} not found`);
  }
  return issue;
}

export function issueRef(issue: Issue): { id: number; key: string; summary: string } {
  return { id: issue.id, key: issue.key, summary: issue.summary };
}

/** A run status by name, matched case-insensitively; 500 (validation) when there is none. */
export function resolveStatus(store: Store, name: string, field = 'status'): RunStatusDef {
  const wanted = name.trim().toLowerCase();
  const status = store.runStatuses.find((s) => s.enabled && s.name.toLowerCase() === wanted);
  if (!status) {
    const known = store.runStatuses
      .filter((s) => s.enabled)
      .map((s) => s.name)
      .join(', ');
    throw invalid(`Invalid status "${name}": expected one of ${known}`, field);
  }
  return status;
}

export function defaultStatus(store: Store): RunStatusDef {
  const status = store.runStatuses.find((s) => s.isDefault);
  if (!status) throw new Error('seed has no default run status');
  return status;
}

export function statusDef(store: Store, name: string): RunStatusDef | undefined {
  const wanted = name.toLowerCase();
  return store.runStatuses.find((s) => s.name.toLowerCase() === wanted);
}

export function cycleByName(store: Store, plan: Issue, name: string): Cycle | undefined {
  return store.cycles.find((c) => c.tpId === plan.id && c.name === name);
}

export function requireCycleByName(store: Store, plan: Issue, name: string): Cycle {
  const cycle = cycleByName(store, plan, name);
  if (!cycle) throw notFound(`Test cycle "${name}" not found in test plan ${plan.key}`);
  return cycle;
}

export function requireCycleById(store: Store, plan: Issue, id: number): Cycle {
  const cycle = store.cycles.get(id);
  if (!cycle || cycle.tpId !== plan.id) throw notFound(`Test cycle ${id} not found in test plan ${plan.key}`);
  return cycle;
}

export function requireRun(store: Store, id: number): Run {
  const run = Number.isInteger(id) ? store.runs.get(id) : undefined;
  if (!run) throw notFound(`Test run ${id} not found`);
  return run;
}

/**
 * Runs of a cycle can only be updated while it is Active, and while its plan is not resolved (403 otherwise).
 * Ad hoc cycles are exempt.
 */
export function assertRunWritable(store: Store, run: Run): void {
  const cycle = store.cycles.get(run.cycleId);
  if (!cycle || cycle.adhocTcId !== null) return;
  if (cycle.status !== 'Active') {
    throw forbidden(`Test cycle "${cycle.name}" is ${cycle.status}: runs can only be updated while it is Active`);
  }
  const plan = cycle.tpId === null ? undefined : store.issues.get(cycle.tpId);
  if (plan?.resolution) throw forbidden(`Test plan ${plan.key} is resolved: its runs are read-only`);
}

export function addHistory(
  ctx: Pick<Ctx, 'store' | 'user' | 'now'>,
  runId: number,
  activity: string,
  activityType: 'Status' | 'Issue' | 'Test Run',
): HistoryEntry {
  return ctx.store.history.insert({ runId, userId: ctx.user.id, activity, activityType, at: ctx.now() });
}

/** Creates a run of `tcId` in `cycle` with one run step per case step; history "New Created". */
export function createRun(
  ctx: Pick<Ctx, 'store' | 'user' | 'now'>,
  cycle: Cycle,
  tcId: number,
  extra: {
    attributes?: Record<string, string> | null;
    tester?: string | null;
    urgency?: string | null;
    /** Position in the cycle; default after its last run (a caller adding many runs passes it, to not scan each time). */
    order?: number;
  } = {},
): Run {
  const { store } = ctx;
  const initial = defaultStatus(store).name;
  const order =
    extra.order ?? store.runs.filter((r) => r.cycleId === cycle.id).reduce((m, r) => Math.max(m, r.order), 0) + 1;
  const run = store.runs.insert({
    cycleId: cycle.id,
    tcId,
    status: initial,
    comment: null,
    executedBy: null,
    executedAt: null,
    tester: extra.tester ?? null,
    order,
    attributes: extra.attributes ?? null,
    urgency: extra.urgency ?? null,
    createdAt: ctx.now(),
    createdBy: ctx.user.name,
  });
  const steps = store.caseSteps.filter((s) => s.tcId === tcId).sort((a, b) => a.seq - b.seq);
  for (const s of steps) {
    store.runSteps.insert({
      runId: run.id,
      caseStepId: s.id,
      seq: s.seq,
      status: initial,
      step: s.step,
      expectedResult: s.expectedResult,
      stepData: s.stepData,
      actualResult: null,
    });
  }
  addHistory(ctx, run.id, 'New Created', 'Test Run');
  return run;
}

/** Sets a run's result (status already resolved), records who executed it and when, and a history entry. */
export function setRunStatus(ctx: Pick<Ctx, 'store' | 'user' | 'now'>, run: Run, status: RunStatusDef): void {
  run.status = status.name;
  run.executedBy = ctx.user.name;
  run.executedAt = ctx.now();
  ctx.store.runs.update(run);
  addHistory(ctx, run.id, status.name, 'Status');
}

/**
 * Run result from step results: any Failed → Failed; else any Blocked → Blocked; else any Not Tested → Not Tested;
 * all Passed → Passed. Steps with another status (NA, custom) do not decide the result on their own; a run whose
 * steps are all NA is NA.
 */
export function rollUp(steps: readonly RunStep[]): string | undefined {
  if (steps.length === 0) return undefined;
  const has = (name: string) => steps.some((s) => s.status.toLowerCase() === name.toLowerCase());
  if (has('Failed')) return 'Failed';
  if (has('Blocked')) return 'Blocked';
  if (has('Not Tested')) return 'Not Tested';
  if (steps.every((s) => s.status.toLowerCase() === 'passed')) return 'Passed';
  if (steps.every((s) => s.status.toLowerCase() === 'na')) return 'NA';
  return 'Passed';
}

export function runSteps(store: Store, runId: number): RunStep[] {
  return store.runSteps.filter((s) => s.runId === runId).sort((a, b) => a.seq - b.seq);
}

/** Links bug issues to a run (or one of its steps); already linked ones are kept once. */
export function linkBugs(
  ctx: Pick<Ctx, 'store' | 'user' | 'now'>,
  run: Run,
  stepId: number | null,
  keys: readonly string[],
): void {
  const issues = keys.map((k) => requireIssue(ctx.store, k));
  for (const issue of issues) {
    const exists = ctx.store.bugLinks.find(
      (b) => b.runId === run.id && b.runStepId === stepId && b.issueId === issue.id,
    );
    if (exists) continue;
    ctx.store.bugLinks.insert({ runId: run.id, runStepId: stepId, issueId: issue.id });
    addHistory(ctx, run.id, `+ ${issue.key}`, 'Issue');
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Presenters

type PCtx = Pick<Ctx, 'store' | 'variant' | 'origin' | 'prefix'>;

export function presentCycle(ctx: PCtx, c: Cycle): Record<string, unknown> {
  const v = ctx.variant;
  const ts = (ms: number | null) => (ms === null ? undefined : formatTimestamp(ms, 'iso'));
  return {
    ...idf(v, c.id),
    name: c.name,
    ...(v.ids === 'ID'
      ? {}
      : {
          environment: c.environment ?? '',
          build: c.build ?? '',
          plannedStartDate: c.plannedStartDate ?? undefined,
          plannedEndDate: c.plannedEndDate ?? undefined,
        }),
    status: c.status,
    draft: c.status === 'Draft',
    active: c.status === 'Active',
    aborted: c.status === 'Aborted',
    deleteable: c.status === 'Draft' || c.status === 'Aborted',
    cycleStartedDate: ts(c.startedAt),
    cycleCompletedDate: c.status === 'Completed' || c.status === 'Aborted' ? ts(c.completedAt) : undefined,
  };
}

export function presentMember(ctx: PCtx, m: PlanMember): Record<string, unknown> {
  const tc = ctx.store.issues.get(m.tcId);
  const tp = ctx.store.issues.get(m.tpId);
  return {
    ...idf(ctx.variant, m.id),
    tcId: m.tcId,
    tpId: m.tpId,
    testCaseKey: tc?.key ?? '',
    ...(ctx.variant.ids === 'ID' ? {} : { testPlanKey: tp?.key ?? '' }),
    testCaseSummary: tc?.summary ?? '',
  };
}

export function userByName(store: Store, name: string): User | undefined {
  return store.users.find((u) => u.name === name);
}

export function presentHistory(ctx: PCtx, h: HistoryEntry): Record<string, unknown> {
  const u = ctx.store.users.get(h.userId);
  return {
    executorName: u?.name ?? 'unknown',
    activity: h.activity,
    activityType: h.activityType,
    testRunId: h.runId,
    executionTime: h.at,
    ...(ctx.variant.ids === 'id'
      ? { executorId: h.userId, executorFullName: u?.displayName ?? '', executionOn: formatExecutionOn(h.at) }
      : {}),
  };
}

export function attachmentUrl(ctx: PCtx, a: Attachment): string {
  return `${ctx.origin}${ctx.prefix}/attachment/${a.runId}/download/${a.id}/${encodeURIComponent(a.fileName)}`;
}

export function presentAttachment(ctx: PCtx, a: Attachment): Record<string, unknown> {
  return {
    id: a.id,
    fileName: a.fileName,
    mimeType: a.mimeType,
    ...(ctx.variant.ids === 'id' ? { filePath: attachmentUrl(ctx, a) } : {}),
  };
}

function bugsOf(store: Store, runId: number, stepId: number | null): Issue[] {
  return store.bugLinks
    .filter((b) => b.runId === runId && b.runStepId === stepId)
    .map((b) => store.issues.get(b.issueId))
    .filter((i): i is Issue => i !== undefined);
}

/** All bugs of a run: those linked to the run and to any of its steps, once each. */
export function allBugsOfRun(store: Store, runId: number): Issue[] {
  const seen = new Map<number, Issue>();
  for (const b of store.bugLinks.filter((l) => l.runId === runId)) {
    const issue = store.issues.get(b.issueId);
    if (issue) seen.set(issue.id, issue);
  }
  return [...seen.values()];
}

export function lozenge(store: Store, status: string): string {
  return statusDef(store, status)?.lozenge ?? 'aui-lozenge-default';
}

/** The run-level attachments and bug links of every run, for presenting a whole run list in one pass. */
export interface RunExtras {
  attachments: Map<number, Attachment[]>;
  bugLinks: Map<number, BugLink[]>;
}

export function runExtras(store: Store): RunExtras {
  const attachments = new Map<number, Attachment[]>();
  for (const a of store.attachments.rows.values()) if (a.runStepId === null) pushTo(attachments, a.runId, a);
  const bugLinks = new Map<number, BugLink[]>();
  for (const b of store.bugLinks.rows.values()) if (b.runStepId === null) pushTo(bugLinks, b.runId, b);
  return { attachments, bugLinks };
}

function pushTo<T>(map: Map<number, T[]>, key: number, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Item of a cycle's run list. A list passes `extras` (built once): looking each run's attachments and bugs up in
 * the whole store made a list of 10,000 runs cost runs × attachments.
 */
export function presentRun(ctx: PCtx, run: Run, extras?: RunExtras): Record<string, unknown> {
  const { store, variant } = ctx;
  const tc = store.issues.get(run.tcId);
  const attachments = extras
    ? (extras.attachments.get(run.id) ?? [])
    : store.attachments.filter((a) => a.runId === run.id && a.runStepId === null);
  const bugs = extras
    ? (extras.bugLinks.get(run.id) ?? []).map((b) => store.issues.get(b.issueId)).filter((i): i is Issue => !!i)
    : bugsOf(store, run.id, null);
  return {
    ...idf(variant, run.id),
    summary: tc?.summary ?? '',
    status: run.status,
    testCaseKey: tc?.key ?? '',
    comment: run.comment ?? '',
    executedBy: run.executedBy ?? '',
    testerName: run.tester ?? '',
    executionTimeStamp: run.executedAt === null ? undefined : formatTimestamp(run.executedAt, variant.timestamps),
    ...(attachments.length ? { attachments: attachments.map((a) => presentAttachment(ctx, a)) } : {}),
    ...(bugs.length ? { bugs: bugs.map(issueRef) } : {}),
  };
}

/** Neighbouring runs in the same cycle, by order. */
export function neighbours(store: Store, run: Run): { prevRunId?: number; nextRunId?: number } {
  const siblings = store.runs.filter((r) => r.cycleId === run.cycleId).sort((a, b) => a.order - b.order || a.id - b.id);
  const i = siblings.findIndex((r) => r.id === run.id);
  return { prevRunId: siblings[i - 1]?.id, nextRunId: siblings[i + 1]?.id };
}

/** Run details (single run). */
export function presentRunDetails(ctx: PCtx, run: Run): Record<string, unknown> {
  const { store, variant } = ctx;
  const tc = store.issues.get(run.tcId);
  const steps = runSteps(store, run.id);
  const attachments = store.attachments.filter((a) => a.runId === run.id && a.runStepId === null);
  const history = store.history.filter((h) => h.runId === run.id).sort((a, b) => a.at - b.at || a.id - b.id);
  return {
    ...idf(variant, run.id),
    type: 0,
    summary: tc?.summary ?? '',
    comment: run.comment ?? '',
    status: run.status,
    testerName: run.tester ?? '',
    testCaseKey: tc?.key ?? '',
    testCaseId: run.tcId,
    estimate: '',
    efforts: '',
    lozenge: lozenge(store, run.status),
    bugs: bugsOf(store, run.id, null).map(issueRef),
    testRunDetails: {
      testRunSteps: steps.map((s) => {
        const stepBugs = bugsOf(store, run.id, s.id);
        return {
          ...idf(variant, s.id),
          status: s.status,
          step: s.step,
          expectedResult: s.expectedResult,
          ...(s.stepData === null ? {} : { stepData: s.stepData }),
          ...(s.actualResult === null ? {} : { actualResult: s.actualResult }),
          ...(stepBugs.length ? { testRunStepBugsWrapper: stepBugs.map(issueRef) } : {}),
          testRunStepAttachments: store.attachments
            .filter((a) => a.runId === run.id && a.runStepId === s.id)
            .map((a) => presentAttachment(ctx, a)),
        };
      }),
      automationRunSteps: [],
      testRunHistory: history.map((h) => presentHistory(ctx, h)),
      testRunBugs: allBugsOfRun(store, run.id).map(issueRef),
      testRunAttachments: attachments.map((a) => presentAttachment(ctx, a)),
      ...neighbours(store, run),
    },
  };
}
