import { formatExecutionOn, formatTimestamp } from '@casebridge/core/contract';
import {
  addHistory,
  allBugsOfRun,
  assertRunWritable,
  createIssue,
  createRun,
  ISSUE_TYPES,
  issueRef,
  linkBugs,
  requireCycleByName,
  requireIssue,
  requireRun,
  resolveStatus,
  rollUp,
  runSteps,
  setRunStatus,
} from '../rules/domain.js';
import { attachmentUrl, lozenge, neighbours, presentRunDetails } from '../rules/present.js';
import { type Ctx, type Handler, idf, invalid, notFound, ServiceError } from '../service/context.js';
import type { Cycle, Issue, Run, RunStep } from '../store/store.js';
import { checkScreenFields } from './jira-fields.js';

/**
 * Handlers of the test run operations (group `runs`, plus the run-level `defects` and `attachments` operations).
 *
 * Every write checks everything it can refuse (run, cycle state, status name, bug keys) before it changes a row:
 * the server commits what a handler wrote even when it then throws, so a refused request must have written nothing.
 */

/** Name of the hidden cycle that holds a test case's ad hoc runs. */
const ADHOC_CYCLE = 'Adhoc';

function testCase(ctx: Ctx): Issue {
  return requireIssue(ctx.store, ctx.params.testCaseIssueKey, ISSUE_TYPES.testCase);
}

function requireStep(ctx: Ctx, id: number): { step: RunStep; run: Run } {
  const step = ctx.store.runSteps.get(id);
  const run = step ? ctx.store.runs.get(step.runId) : undefined;
  if (!step || !run) throw notFound(`Test run step ${id} not found`);
  return { step, run };
}

/** The runs of a test case in a plan's cycle (an advanced cycle may hold several, one per attribute set). */
function caseRunsInCycle(ctx: Ctx): { runs: Run[]; cycle: Cycle } {
  const plan = requireIssue(ctx.store, ctx.params.testPlanIssueKey, ISSUE_TYPES.testPlan);
  const cycle = requireCycleByName(ctx.store, plan, ctx.params.cycleName);
  const tc = requireIssue(ctx.store, ctx.body.testcaseKey, ISSUE_TYPES.testCase);
  const runs = ctx.store.runs
    .filter((r) => r.cycleId === cycle.id && r.tcId === tc.id)
    .sort((a, b) => a.order - b.order || a.id - b.id);
  if (!runs.length) throw notFound(`Test case ${tc.key} has no run in test cycle "${cycle.name}" of ${plan.key}`);
  return { runs, cycle };
}

/** Bug keys resolved up front: an unknown key is a 404 before anything is written. */
function checkBugs(ctx: Ctx, keys: readonly string[] | undefined): string[] {
  const unique = [...new Set(keys ?? [])];
  for (const key of unique) requireIssue(ctx.store, key);
  return unique;
}

/** Re-computes a run's result from all its steps after a step changed; history only when it changes. */
function rollUpRun(ctx: Ctx, run: Run): void {
  const status = rollUp(ctx.store, runSteps(ctx.store, run.id));
  if (status && status.name !== run.status) {
    setRunStatus(ctx, run, status);
    return;
  }
  run.executedBy = ctx.user.name;
  run.executedAt = ctx.now();
  ctx.store.runs.update(run);
}

/** Run details plus who executed the run and when, as the ad hoc and defect queries list runs. */
function presentRunWithDetails(ctx: Ctx, run: Run): Record<string, unknown> {
  return {
    ...presentRunDetails(ctx, run),
    executedBy: run.executedBy ?? '',
    ...(run.executedAt === null ? {} : { executionTimeStamp: formatTimestamp(run.executedAt, ctx.variant.timestamps) }),
  };
}

/** Where a run belongs: its plan and cycle; ad hoc runs have an empty plan key and the Adhoc cycle. */
function runPlacement(ctx: Ctx, run: Run): Record<string, unknown> {
  const cycle = ctx.store.cycles.get(run.cycleId);
  const plan = cycle?.tpId == null ? undefined : ctx.store.issues.get(cycle.tpId);
  return {
    testPlanKey: plan?.key ?? '',
    testPlanSummary: plan?.summary ?? '',
    testCycleId: cycle?.id ?? null,
    testCycleSummary: cycle?.name ?? null,
    executionOn: run.executedAt === null ? null : formatExecutionOn(run.executedAt),
    executedBy: run.executedBy ?? '',
  };
}

/**
 * Creates the defect issue of createRunBug / createRunStepBug in its project (key `<PROJECT>-n`). The add-on hands
 * `fields` to Jira's issue service, so the create screen of the project's issue type applies as to Jira's own create;
 * what Jira refuses comes back the add-on's way, a 500 naming every field at fault (`field` is the first).
 */
function createDefect(ctx: Ctx): Issue {
  const f = ctx.body.fields as Record<string, unknown> & {
    project: { key: string };
    summary: string;
    description?: string;
    issuetype?: { name: string };
  };
  const project = ctx.store.projects.find((p) => p.key === f.project.key);
  if (!project) throw notFound(`Project ${f.project.key} not found`);
  if (/[\r\n]/.test(f.summary)) {
    throw invalid('Invalid fields.summary: it contains a line break; expected a single line', 'fields.summary');
  }
  const wanted = f.issuetype?.name ?? ISSUE_TYPES.bug;
  const type = wanted.toLowerCase() === ISSUE_TYPES.bug.toLowerCase() ? ISSUE_TYPES.bug : wanted;
  const checked = checkScreenFields(ctx.store, project, type, f);
  const refused = Object.entries(checked.errors);
  if (refused.length) {
    const list = refused.map(([field, message]) => `${field}: ${message}`).join('; ');
    throw invalid(`Jira refused the defect's fields: ${list}`, `fields.${refused[0]?.[0]}`);
  }
  return createIssue(ctx, project, {
    type,
    summary: f.summary,
    description: f.description,
    labels: checked.labels,
    fields: checked.fields,
  });
}

/**
 * Stores the uploaded `file` parts as attachments of a run (or one of its steps), one `Attached` history entry
 * each. Parts under another name are not attachments: their bytes are dropped.
 */
async function attachFiles(ctx: Ctx, run: Run, stepId: number | null): Promise<void> {
  const files = ctx.files.filter((f) => f.field === 'file');
  if (!files.length) {
    const got = ctx.files.map((f) => `"${f.field}"`).join(', ') || 'none';
    throw invalid(`Expected at least one multipart part named "file", got parts: ${got}`, 'file');
  }
  for (const other of ctx.files.filter((f) => f.field !== 'file')) await ctx.blobs.remove(other.blob);
  for (const f of files) {
    ctx.store.attachments.insert({
      runId: run.id,
      runStepId: stepId,
      fileName: f.fileName,
      mimeType: f.mimeType,
      size: f.size,
      sha256: f.sha256,
      blob: f.blob,
      createdAt: ctx.now(),
      createdBy: ctx.user.name,
    });
    addHistory(ctx, run.id, 'Attached', 'Test Run');
  }
}

/** The hidden ad hoc cycle of a test case, created on first use; always Active, belongs to no plan. */
function adhocCycle(ctx: Ctx, tc: Issue): Cycle {
  const existing = ctx.store.cycles.find((c) => c.tpId === null && c.adhocTcId === tc.id);
  if (existing) return existing;
  const now = ctx.now();
  return ctx.store.cycles.insert({
    tpId: null,
    adhocTcId: tc.id,
    name: ADHOC_CYCLE,
    environment: null,
    build: null,
    plannedStartDate: null,
    plannedEndDate: null,
    status: 'Active',
    advanced: false,
    notifyTester: false,
    createdAt: now,
    startedAt: now,
    completedAt: null,
  });
}

export const runsHandlers: Record<string, Handler> = {
  'runs.get': (ctx) => presentRunDetails(ctx, requireRun(ctx.store, ctx.params.runID)),

  'runs.caseTestRuns': (ctx) => {
    const tc = testCase(ctx);
    return ctx.store.runs
      .filter((r) => r.tcId === tc.id)
      .sort((a, b) => a.createdAt - b.createdAt || a.id - b.id)
      .map((r) => ({ ...presentRunDetails(ctx, r), ...runPlacement(ctx, r) }));
  },

  'runs.updateTestRun': (ctx) => {
    const { runs } = caseRunsInCycle(ctx);
    for (const run of runs) assertRunWritable(ctx.store, run);
    const status = resolveStatus(ctx.store, ctx.body.result, 'result');
    for (const run of runs) {
      if (ctx.body.comment !== undefined) run.comment = ctx.body.comment;
      setRunStatus(ctx, run, status);
    }
  },

  'runs.updateStep': (ctx) => {
    const b = ctx.body as { runStepId: number; result?: string; actualResult?: string; bugs?: string[] };
    const { step, run } = requireStep(ctx, b.runStepId);
    assertRunWritable(ctx.store, run);
    const status = b.result === undefined ? undefined : resolveStatus(ctx.store, b.result, 'result');
    const bugs = checkBugs(ctx, b.bugs);
    if (b.actualResult !== undefined) step.actualResult = b.actualResult;
    if (status) step.status = status.name;
    ctx.store.runSteps.update(step);
    linkBugs(ctx, run, step.id, bugs);
    if (status) rollUpRun(ctx, run);
  },

  'runs.update': (ctx) => {
    const b = ctx.body as { runId: string | number; result?: string; comment?: string; bugs?: string[] };
    const run = requireRun(ctx.store, Number(String(b.runId).trim()));
    assertRunWritable(ctx.store, run);
    const status = b.result === undefined ? undefined : resolveStatus(ctx.store, b.result, 'result');
    const bugs = checkBugs(ctx, b.bugs);
    if (b.comment !== undefined) {
      run.comment = b.comment;
      ctx.store.runs.update(run);
    }
    if (status) setRunStatus(ctx, run, status);
    linkBugs(ctx, run, null, bugs);
  },

  'runs.bulkStatusUpdate': (ctx) => {
    const plan = requireIssue(ctx.store, ctx.params.testPlanIssueKey, ISSUE_TYPES.testPlan);
    const b = ctx.body as { testCycleId: number; status: string; runIds: number[] };
    const cycle = ctx.store.cycles.get(b.testCycleId);
    if (!cycle || cycle.tpId !== plan.id) {
      throw new ServiceError(500, `Test cycle ${b.testCycleId} not found in test plan ${plan.key}`);
    }
    const ids = [...new Set(b.runIds)];
    const runs = ids.map((id) => ctx.store.runs.get(id));
    const missing = ids.filter((_, i) => runs[i]?.cycleId !== cycle.id);
    if (missing.length) {
      throw new ServiceError(500, `Test run(s) ${missing.join(', ')} not found in test cycle "${cycle.name}"`);
    }
    for (const run of runs as Run[]) assertRunWritable(ctx.store, run);
    const status = resolveStatus(ctx.store, b.status);
    for (const run of runs as Run[]) setRunStatus(ctx, run, status);
  },

  'runs.linkBugToTestRun': (ctx) => {
    const { runs } = caseRunsInCycle(ctx);
    for (const run of runs) assertRunWritable(ctx.store, run);
    const bugs = checkBugs(ctx, ctx.body.bugs);
    for (const run of runs) linkBugs(ctx, run, null, bugs);
  },

  'attachments.addToRun': async (ctx) => {
    const run = requireRun(ctx.store, ctx.params.runId);
    assertRunWritable(ctx.store, run);
    await attachFiles(ctx, run, null);
  },

  'attachments.addToRunStep': async (ctx) => {
    const run = requireRun(ctx.store, ctx.params.runId);
    const steps = runSteps(ctx.store, run.id);
    const step = steps[ctx.params.stepno - 1];
    if (!step) {
      throw notFound(`Step ${ctx.params.stepno} not found in test run ${run.id}: it has ${steps.length} step(s)`);
    }
    assertRunWritable(ctx.store, run);
    await attachFiles(ctx, run, step.id);
  },

  'defects.createRunBug': (ctx) => {
    const run = requireRun(ctx.store, ctx.body.runId);
    assertRunWritable(ctx.store, run);
    const issue = createDefect(ctx);
    linkBugs(ctx, run, null, [issue.key]);
    return { id: issue.id, key: issue.key };
  },

  'defects.createRunStepBug': (ctx) => {
    const { step, run } = requireStep(ctx, ctx.body.runStepId);
    assertRunWritable(ctx.store, run);
    const issue = createDefect(ctx);
    linkBugs(ctx, run, step.id, [issue.key]);
    return { id: issue.id, key: issue.key };
  },

  'defects.ofRun': (ctx) => {
    // The spec's path names no run and its only answer is an array: a query that identifies no run (missing,
    // blank, not a number, or an unknown id) lists no defects rather than failing.
    const id: number | undefined = ctx.query.runId;
    const run = id === undefined ? undefined : ctx.store.runs.get(id);
    if (!run) return [];
    return allBugsOfRun(ctx.store, run.id)
      .sort((a, b) => a.id - b.id)
      .map(issueRef);
  },

  'attachments.getAttachmentDetails': (ctx) => {
    const run = requireRun(ctx.store, ctx.params.runId);
    return (
      ctx.store.attachments
        .filter((a) => a.runId === run.id)
        .sort((a, b) => a.id - b.id)
        // filePath belongs to this answer in either variant (run details carry it in the `id` variant only).
        .map((a) => ({ fileName: a.fileName, mimeType: a.mimeType, id: a.id, filePath: attachmentUrl(ctx, a) }))
    );
  },

  'attachments.deleteAttachment': async (ctx) => {
    const run = requireRun(ctx.store, ctx.params.runId);
    const attachment = ctx.store.attachments.get(ctx.params.attachmentId);
    if (!attachment || attachment.runId !== run.id) {
      throw notFound(`Attachment ${ctx.params.attachmentId} not found in test run ${run.id}`);
    }
    assertRunWritable(ctx.store, run);
    ctx.store.attachments.remove(attachment.id);
    await ctx.blobs.remove(attachment.blob);
  },

  'runs.adhocCreate': (ctx) => {
    const issue = requireIssue(ctx.store, ctx.params.testCaseIssueKey);
    if (issue.type !== ISSUE_TYPES.testCase) {
      throw invalid(`${issue.key} is a ${issue.type}, not a Test Case: ad hoc runs are runs of test cases`);
    }
    const run = createRun(ctx, adhocCycle(ctx, issue), issue.id, { tester: ctx.user.name });
    const { prevRunId } = neighbours(ctx.store, run);
    return {
      ...idf(ctx.variant, run.id),
      type: 0,
      status: run.status,
      testCaseKey: issue.key,
      lozenge: lozenge(ctx.store, run.status),
      summary: issue.summary,
      testRunDetails: prevRunId === undefined ? {} : { prevRunId },
      testerName: run.tester ?? '',
      testCaseId: issue.id,
    };
  },

  'runs.adhocTestRuns': (ctx) => {
    const tc = testCase(ctx);
    const cycle = ctx.store.cycles.find((c) => c.tpId === null && c.adhocTcId === tc.id);
    if (!cycle) return [];
    return ctx.store.runs
      .filter((r) => r.cycleId === cycle.id)
      .sort((a, b) => a.order - b.order || a.id - b.id)
      .map((r) => presentRunWithDetails(ctx, r));
  },

  'runs.getTestRunsForDefect': (ctx) => {
    const defect = requireIssue(ctx.store, ctx.params.defectIssueKey);
    const runIds = new Set(ctx.store.bugLinks.filter((l) => l.issueId === defect.id).map((l) => l.runId));
    return [...runIds]
      .sort((a, b) => a - b)
      .map((id) => ctx.store.runs.get(id))
      .filter((r): r is Run => r !== undefined)
      .map((r) => presentRunWithDetails(ctx, r));
  },
};
