import { formatTimestamp } from '@casebridge/core/contract';
import {
  bugRefsOfRuns,
  checkDate,
  createRun,
  ISSUE_TYPES,
  removeRun,
  requireIssue,
  runSteps,
  statusDef,
} from '../rules/domain.js';
import { lozenge, presentCycle, presentHistory, presentMember } from '../rules/present.js';
import { type Ctx, type Handler, idf, invalid, notFound, ServiceError } from '../service/context.js';
import type { Cycle, Issue, Run, RunStep } from '../store/store.js';

/** The fields of a run step that both run listings of a plan show. */
function presentRunStep(ctx: Ctx, s: RunStep): Record<string, unknown> {
  return {
    ...idf(ctx.variant, s.id),
    step: s.step,
    stepRaw: s.step,
    expectedResult: s.expectedResult,
    expectedResultRaw: s.expectedResult,
    stepData: s.stepData ?? '',
    actualResult: s.actualResult ?? '',
  };
}

function plan(ctx: Ctx): Issue {
  return requireIssue(ctx.store, ctx.params.testPlanIssueKey, ISSUE_TYPES.testPlan);
}

/** The plan's own cycles (ad hoc cycles belong to no plan). */
export function planCycles(ctx: Ctx, tp: Issue): Cycle[] {
  return ctx.store.cycles.filter((c) => c.tpId === tp.id).sort((a, b) => a.id - b.id);
}

export function planRuns(ctx: Ctx, tp: Issue): Run[] {
  const ids = new Set(planCycles(ctx, tp).map((c) => c.id));
  return ctx.store.runs.filter((r) => ids.has(r.cycleId));
}

/** Deletes a cycle with everything that hangs off its runs. */
export function deleteCycle(ctx: Ctx, cycle: Cycle): void {
  const { store } = ctx;
  for (const run of store.runs.filter((r) => r.cycleId === cycle.id)) removeRun(ctx, run);
  store.automationJobs.removeWhere((x) => x.cycleId === cycle.id);
  store.cycles.remove(cycle.id);
}

export const plansHandlers: Record<string, Handler> = {
  'plans.addMembers': (ctx) => {
    const tp = plan(ctx);
    const cases = (ctx.body.testCaseKeys as string[]).map((k) => requireIssue(ctx.store, k, ISSUE_TYPES.testCase));
    for (const tc of cases) {
      const exists = ctx.store.planMembers.find((m) => m.tpId === tp.id && m.tcId === tc.id);
      if (!exists) ctx.store.planMembers.insert({ tpId: tp.id, tcId: tc.id, tester: null });
    }
  },

  'plans.assignTesterToTestCase': (ctx) => {
    const tp = plan(ctx);
    const member = ctx.store.planMembers.get(ctx.body.memberId);
    if (!member || member.tpId !== tp.id)
      throw notFound(`Member ${ctx.body.memberId} not found in test plan ${tp.key}`);
    const user = ctx.store.users.find((u) => u.name === ctx.body.userName);
    if (!user) throw notFound(`User ${ctx.body.userName} not found`);
    member.tester = user.name;
    ctx.store.planMembers.update(member);
    return { data: user.displayName };
  },

  'plans.addCycle': (ctx) => {
    const tp = plan(ctx);
    const b = ctx.body;
    const name = String(b.name).trim();
    if (!name) throw invalid('Cycle name is mandatory', 'name');
    if (ctx.store.cycles.find((c) => c.tpId === tp.id && c.name === name)) {
      throw invalid(`A test cycle named "${name}" already exists in test plan ${tp.key}`, 'name');
    }
    const plannedStartDate = checkDate(b.plannedStartDate, 'plannedStartDate');
    const plannedEndDate = checkDate(b.plannedEndDate, 'plannedEndDate');
    if (plannedStartDate && plannedEndDate && plannedEndDate < plannedStartDate) {
      throw invalid('plannedEndDate is before plannedStartDate', 'plannedEndDate');
    }
    const type = String(b.testCycleType ?? '').toLowerCase();
    if (type && type !== 'advanced' && type !== 'normal' && type !== 'default') {
      throw invalid(`Invalid testCycleType "${b.testCycleType}": expected Advanced or Normal`, 'testCycleType');
    }
    const preload = String(b.preloadRuns ?? 'no').toLowerCase();
    if (preload !== 'yes' && preload !== 'no') {
      throw invalid(`Invalid preloadRuns "${b.preloadRuns}": expected yes or no`, 'preloadRuns');
    }
    const cycle = ctx.store.cycles.insert({
      tpId: tp.id,
      adhocTcId: null,
      name,
      environment: b.environment ?? null,
      build: b.build ?? null,
      plannedStartDate,
      plannedEndDate,
      status: 'Draft',
      advanced: type === 'advanced',
      notifyTester: false,
      createdAt: ctx.now(),
      startedAt: null,
      completedAt: null,
    });
    if (preload === 'yes' && !cycle.advanced) {
      for (const m of ctx.store.planMembers.filter((x) => x.tpId === tp.id).sort((a, z) => a.id - z.id)) {
        createRun(ctx, cycle, m.tcId, { tester: m.tester });
      }
    }
  },

  'plans.cycles': (ctx) => planCycles(ctx, plan(ctx)).map((c) => presentCycle(ctx, c)),

  'plans.deleteCycleByIdOrName': (ctx) => {
    const tp = plan(ctx);
    const b = ctx.body as { name?: string; id?: string };
    const cycle =
      b.name !== undefined
        ? ctx.store.cycles.find((c) => c.tpId === tp.id && c.name === b.name)
        : ctx.store.cycles.find((c) => c.tpId === tp.id && String(c.id) === String(b.id).trim());
    if (!cycle) {
      throw new ServiceError(
        500,
        `Test cycle ${b.name !== undefined ? `"${b.name}"` : b.id} not found in test plan ${tp.key}`,
      );
    }
    if (cycle.status !== 'Draft' && cycle.status !== 'Aborted') {
      throw new ServiceError(
        500,
        `Test cycle "${cycle.name}" is ${cycle.status}: only Draft and Aborted cycles can be deleted`,
      );
    }
    deleteCycle(ctx, cycle);
  },

  'plans.members': (ctx) => {
    const tp = plan(ctx);
    return ctx.store.planMembers
      .filter((m) => m.tpId === tp.id)
      .sort((a, b) => a.id - b.id)
      .map((m) => presentMember(ctx, m));
  },

  'plans.testPlanInformation': (ctx) => {
    const tp = plan(ctx);
    // Pages are pages of cycles: pageNumber is 1-based, pageSize defaults to 10 (see the README).
    const pageNumber = ctx.query.pageNumber ?? 1;
    const pageSize = ctx.query.pageSize ?? 10;
    const cycles = planCycles(ctx, tp).slice((pageNumber - 1) * pageSize, pageNumber * pageSize);
    const cycleWithRuns: Record<string, unknown[]> = {};
    for (const c of cycles) {
      const runs = ctx.store.runs.filter((r) => r.cycleId === c.id).sort((a, b) => a.order - b.order || a.id - b.id);
      cycleWithRuns[c.name] = runs.map((r) => {
        const tc = ctx.store.issues.get(r.tcId);
        const executor = r.executedBy ? ctx.store.users.find((u) => u.name === r.executedBy) : undefined;
        return {
          ...idf(ctx.variant, r.id),
          executedBy: r.executedBy ?? '',
          executedByFromRun: r.executedBy ?? '',
          executedByDisplayName: executor?.displayName ?? '',
          testerName: r.tester ?? '',
          type: 0,
          comment: r.comment ?? '',
          commentWiki: r.comment ?? '',
          status: r.status,
          lozenge: lozenge(ctx.store, r.status),
          testCaseKey: tc?.key ?? '',
          testCaseId: r.tcId,
          summary: tc?.summary ?? '',
          changeInfo: '',
          executionTimeStamp: r.executedAt === null ? null : formatTimestamp(r.executedAt, 'iso'),
          executionOn: r.executedAt,
          testRunHistory: ctx.store.history
            .filter((h) => h.runId === r.id)
            .sort((a, b) => a.at - b.at || a.id - b.id)
            .map((h) => presentHistory(ctx, h)),
          testRunSteps: runSteps(ctx.store, r.id).map((s) => ({ ...presentRunStep(ctx, s), status: s.status })),
        };
      });
    }
    return {
      testCycles: cycles.map((c) => ({ testCycleId: c.id, testCycleName: c.name, notifyTester: c.notifyTester })),
      cycleWithRuns,
    };
  },

  'plans.getTestRunsCreated': (ctx) => {
    const key = String(ctx.query.testPlanIdOrKey).trim();
    const tp = /^\d+$/.test(key) ? ctx.store.issues.get(Number(key)) : ctx.store.issues.find((i) => i.key === key);
    if (!tp || tp.type !== ISSUE_TYPES.testPlan) throw notFound(`Test plan ${key} not found`);
    // The cut-off is server time; the emulator's server time is UTC.
    const cutOff = Date.parse(`${String(ctx.query.cutOffDateAndTime).replace(' ', 'T')}Z`);
    if (Number.isNaN(cutOff))
      throw invalid(`Invalid cutOffDateAndTime "${ctx.query.cutOffDateAndTime}"`, 'cutOffDateAndTime');
    const cycles = new Map(planCycles(ctx, tp).map((c) => [c.id, c]));
    return planRuns(ctx, tp)
      .filter((r) => r.createdAt >= cutOff)
      .sort((a, b) => a.createdAt - b.createdAt || a.id - b.id)
      .map((r) => {
        const tc = ctx.store.issues.get(r.tcId);
        const st = statusDef(ctx.store, r.status);
        const cycle = cycles.get(r.cycleId);
        const executor = r.executedBy ? ctx.store.users.find((u) => u.name === r.executedBy) : undefined;
        const runStatus = (name: string) => {
          const s = statusDef(ctx.store, name);
          return {
            id: s?.id ?? 0,
            name,
            description: s?.description ?? '',
            color: s?.color ?? '#cccccc',
            enabled: s?.enabled ?? true,
            immutable: s?.immutable ?? false,
            default: s?.isDefault ?? false,
          };
        };
        const steps = runSteps(ctx.store, r.id);
        return {
          ...idf(ctx.variant, r.id),
          summary: tc?.summary ?? '',
          testCaseId: r.tcId,
          testCaseKey: tc?.key ?? '',
          comment: r.comment ?? '',
          status: r.status,
          type: 0,
          lozenge: lozenge(ctx.store, r.status),
          resultColor: st?.color ?? '#cccccc',
          cycleReadOnly: cycle ? cycle.status !== 'Active' : false,
          adhocRunDeletable: false,
          executedByDisplayName: executor?.displayName ?? '',
          runStatus: runStatus(r.status),
          testRunHistory: ctx.store.history.filter((h) => h.runId === r.id).map((h) => presentHistory(ctx, h)),
          ...(steps.length
            ? {
                testRunSteps: steps.map((s) => ({
                  ...presentRunStep(ctx, s),
                  stepDataRaw: s.stepData ?? '',
                  actualResultRaw: s.actualResult ?? '',
                  runStatus: runStatus(s.status),
                  localizedStatus: s.status,
                  status: s.status,
                })),
              }
            : {}),
        };
      });
  },

  'defects.ofPlan': (ctx) => {
    return bugRefsOfRuns(ctx.store, planRuns(ctx, plan(ctx)));
  },
};
