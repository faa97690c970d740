import { formatExecutionOn, formatTimestamp } from '@casebridge/core/contract';
import { type Ctx, idf } from '../service/context.js';
import type { Attachment, BugLink, Cycle, HistoryEntry, Issue, PlanMember, Run, Store } from '../store/store.js';
import { allBugsOfRun, bugsOf, issueRef, runSteps, statusDef } from './domain.js';

/** The presenters of the test-management service: rows turned into the documented response shapes of the variant. */

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
    // A run of an advanced cycle names its attribute set, as createTestRuns answers it, so a client can tell the
    // runs of one case apart (the spec lists no such field; synapseRT's cycle page shows the attributes per run).
    ...(run.attributes && Object.keys(run.attributes).length ? { attributeValues: { ...run.attributes } } : {}),
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
