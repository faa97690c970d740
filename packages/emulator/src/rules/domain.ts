import { initialStatus } from '../jira/workflows.js';
import { type Ctx, forbidden, invalid, notFound } from '../service/context.js';
import type {
  Cycle,
  HistoryEntry,
  Issue,
  Project,
  RequirementCase,
  Run,
  RunStatusDef,
  RunStep,
  Store,
  User,
} from '../store/store.js';

/**
 * Rules of the test-management service shared by several operation groups (the presenters that turn rows into the
 * documented response shapes are in present.ts).
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

/**
 * A run status a caller sets, by name, matched case-insensitively among the instance's statuses (renamed built-ins
 * by their new name only). 500 (validation) naming it when there is none or it is disabled: an administrator's
 * disabled status is no longer available for results, as on synapseRT's Test Run Status page.
 */
export function resolveStatus(store: Store, name: string, field = 'status'): RunStatusDef {
  const wanted = name.trim().toLowerCase();
  const status = store.runStatuses.find((s) => s.name.toLowerCase() === wanted);
  if (!status?.enabled) {
    const known = store.runStatuses
      .filter((s) => s.enabled)
      .map((s) => s.name)
      .join(', ');
    const why = status ? `Run status "${status.name}" is disabled` : `Invalid status "${name}"`;
    throw invalid(`${why}: expected one of ${known}`, field);
  }
  return status;
}

/** The built-in status a run status is (whatever it is named now), or undefined for a custom one. */
export function builtInOf(def: RunStatusDef): string | undefined {
  // Rows written before renaming existed carry no builtIn: the immutable ones are the built-ins by name.
  return def.builtIn ?? (def.builtIn === undefined && def.immutable ? def.name : undefined);
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
 * steps are all NA is NA. The rule reads the built-in statuses whatever the instance names them, and answers the
 * status by its current name.
 */
export function rollUp(store: Store, steps: readonly RunStep[]): RunStatusDef | undefined {
  if (steps.length === 0) return undefined;
  const builtIns = steps.map((s) => {
    const def = statusDef(store, s.status);
    return def ? builtInOf(def) : undefined;
  });
  const byBuiltIn = (name: string) => store.runStatuses.find((d) => builtInOf(d) === name);
  const has = (name: string) => builtIns.includes(name);
  if (has('Failed')) return byBuiltIn('Failed');
  if (has('Blocked')) return byBuiltIn('Blocked');
  if (has('Not Tested')) return byBuiltIn('Not Tested');
  if (builtIns.every((b) => b === 'NA')) return byBuiltIn('NA');
  return byBuiltIn('Passed');
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

export function userByName(store: Store, name: string): User | undefined {
  return store.users.find((u) => u.name === name);
}

/** Orders rows by id. */
export function byId(a: { id: number }, b: { id: number }): number {
  return a.id - b.id;
}

/** An issue of one type by key; 404 saying what was found instead when the type differs. */
export function requireOfType(store: Store, key: string, type: string): Issue {
  const issue = issueByKey(store, key);
  if (!issue) throw notFound(`${type} ${key} not found`);
  if (issue.type !== type) throw notFound(`${key} is a ${issue.type}, not a ${type}`);
  return issue;
}

/** The issues with these ids that exist, by id. */
export function issuesByIds(store: Store, ids: Iterable<number>): Issue[] {
  const out: Issue[] = [];
  for (const id of ids) {
    const issue = store.issues.get(id);
    if (issue) out.push(issue);
  }
  return out.sort(byId);
}

/**
 * The issues at the other end of requirement–case links: `end` picks the other end's id of a link that concerns
 * this issue (undefined for the others).
 */
export function linkedIssues(store: Store, end: (link: RequirementCase) => number | undefined): Issue[] {
  return issuesByIds(
    store,
    store.requirementCases.all().flatMap((l) => end(l) ?? []),
  );
}

/** Creates an issue in a project: the project's next key, its workflow's first status, reported by the caller. */
export function createIssue(
  ctx: Pick<Ctx, 'store' | 'user' | 'now'> & Partial<Pick<Ctx, 'cluster' | 'workMs'>>,
  project: Project,
  fields: {
    type: string;
    summary: string;
    description?: string | null;
    labels?: string[];
    /** Other create-screen fields, normalised (see ../handlers/jira-fields.ts). */
    fields?: Record<string, unknown>;
  },
): Issue {
  // Creating an issue takes Jira time (Jira behaviour `createMs`): the answer waits for it (../pipeline/index.ts).
  const cost = ctx.cluster?.jira.createMs ?? 0;
  if (cost > 0) ctx.workMs = (ctx.workMs ?? 0) + cost;
  project.issueCounter += 1;
  ctx.store.projects.update(project);
  const now = ctx.now();
  return ctx.store.issues.insert({
    key: `${project.key}-${project.issueCounter}`,
    projectId: project.id,
    type: fields.type,
    summary: fields.summary,
    description: fields.description ?? '',
    status: initialStatus(ctx.store, project.id, fields.type),
    resolution: null,
    labels: fields.labels ?? [],
    reporter: ctx.user.name,
    created: now,
    updated: now,
    automationReference: null,
    ...(fields.fields && Object.keys(fields.fields).length ? { fields: fields.fields } : {}),
  });
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A planned date as given (`yyyy-mm-dd`), null when blank; a validation error naming the field otherwise. */
export function checkDate(value: string | null | undefined, field: string): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (!DATE.test(value) || Number.isNaN(Date.parse(value))) {
    throw invalid(`Invalid ${field} "${value}": expected a date yyyy-mm-dd`, field);
  }
  return value;
}

/** Deletes a run with its steps, bug links, history and attachments. */
export function removeRun(ctx: Pick<Ctx, 'store' | 'blobs'>, run: Run): void {
  const { store } = ctx;
  store.runSteps.removeWhere((x) => x.runId === run.id);
  for (const b of store.bugLinks.filter((x) => x.runId === run.id)) store.bugLinks.remove(b.id);
  for (const h of store.history.filter((x) => x.runId === run.id)) store.history.remove(h.id);
  for (const a of store.attachments.filter((x) => x.runId === run.id)) {
    store.attachments.remove(a.id);
    void ctx.blobs.remove(a.blob);
  }
  store.runs.remove(run.id);
}

/** The bugs linked to a run (`stepId` null) or to one of its steps. */
export function bugsOf(store: Store, runId: number, stepId: number | null): Issue[] {
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

/** The bugs of these runs (linked to a run or to one of its steps), once each, by id, as issue references. */
export function bugRefsOfRuns(store: Store, runs: Iterable<Run>): ReturnType<typeof issueRef>[] {
  const bugs = new Map<number, Issue>();
  for (const run of runs) for (const bug of allBugsOfRun(store, run.id)) bugs.set(bug.id, bug);
  return [...bugs.values()].sort(byId).map(issueRef);
}
