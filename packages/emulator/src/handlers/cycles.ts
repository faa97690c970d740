import {
  bugRefsOfRuns,
  checkDate,
  createRun,
  ISSUE_TYPES,
  removeRun,
  requireCycleById,
  requireCycleByName,
  requireIssue,
  requireRun,
  userByName,
} from '../rules/domain.js';
import { presentRun, runExtras } from '../rules/present.js';
import { type Ctx, forbidden, type Handler, invalid, notFound, ServiceError } from '../service/context.js';
import type { Cycle, CycleStatus, Issue, Run, Store } from '../store/store.js';

/**
 * Handlers of the test-cycle operations (createTestRuns is in create-test-runs.ts, the automation jobs of a cycle in
 * automation.ts).
 *
 * Choices where the spec says "not shown" (listed in the package README):
 * - Workflow: Start Draft→Active, Complete Active→Completed, Abort Active→Aborted, Resume Completed/Aborted→Active;
 *   any other action from a state is a 500 naming the state and the action. Start sets cycleStartedDate; Resume
 *   keeps it and clears cycleCompletedDate, which the next Complete or Abort sets again.
 * - Completed and Aborted cycles are read-only: adding, removing, assigning and reordering their runs answers 403,
 *   like run updates do. Draft cycles can be planned (runs added, assigned, reordered) before they start.
 * - addMembersToTestCycle: testCycleId wins over testCycleName; cases to add must be plan members (500 naming the
 *   keys otherwise, nothing changed); advanced cycles get their runs from createTestRuns instead.
 */

/** A workflow action of the wf/{action} route (the contract refuses any other spelling). */
type CycleAction = 'Start' | 'Complete' | 'Abort' | 'Resume';

/** Which cycle states each workflow action leaves from, and where it goes. */
const WORKFLOW: Record<CycleAction, { from: readonly CycleStatus[]; to: CycleStatus }> = {
  Start: { from: ['Draft'], to: 'Active' },
  Complete: { from: ['Active'], to: 'Completed' },
  Abort: { from: ['Active'], to: 'Aborted' },
  Resume: { from: ['Completed', 'Aborted'], to: 'Active' },
};

function plan(ctx: Ctx): Issue {
  return requireIssue(ctx.store, ctx.params.testPlanIssueKey, ISSUE_TYPES.testPlan);
}

/** The runs of a cycle in run order (the order reorderTestRun sets). */
export function cycleRuns(store: Store, cycle: Cycle): Run[] {
  return store.runs.filter((r) => r.cycleId === cycle.id).sort((a, b) => a.order - b.order || a.id - b.id);
}

/** Completed and Aborted cycles are read-only: their runs cannot be added, removed, assigned or reordered. */
export function assertCycleOpen(cycle: Cycle): void {
  if (cycle.adhocTcId !== null) return;
  if (cycle.status === 'Completed' || cycle.status === 'Aborted') {
    throw forbidden(`Test cycle "${cycle.name}" is ${cycle.status} and read-only: resume it to change its runs`);
  }
}

export const unique = <T>(xs: readonly T[]): T[] => [...new Set(xs)];

/** Splits a comma-separated request value into trimmed entries. */
export const commaList = (value: string): string[] => value.split(',').map((s) => s.trim());

export const cyclesHandlers: Record<string, Handler> = {
  'cycles.bulkAssignUpdate': (ctx) => {
    const { store } = ctx;
    const tp = plan(ctx);
    const b = ctx.body as { testCycleId: number; testerName: string; runIds: number[]; notifyTester?: boolean };
    const cycle = requireCycleById(store, tp, b.testCycleId);
    assertCycleOpen(cycle);
    const user = userByName(store, b.testerName);
    if (!user) throw new ServiceError(500, `Tester "${b.testerName}" not found: testerName must be a user name`);
    const ids = unique(b.runIds);
    const runs = ids.map((id) => store.runs.get(id));
    const strangers = ids.filter((_id, i) => runs[i]?.cycleId !== cycle.id);
    if (strangers.length) {
      throw new ServiceError(
        500,
        `Run id(s) ${strangers.join(', ')} are not runs of test cycle "${cycle.name}" (runIds)`,
      );
    }
    for (const run of runs as Run[]) {
      run.tester = user.name;
      store.runs.update(run);
    }
    if (b.notifyTester !== undefined && b.notifyTester !== cycle.notifyTester) {
      cycle.notifyTester = b.notifyTester;
      store.cycles.update(cycle);
    }
    return { message: `Assigned ${runs.length} test run(s) of test cycle "${cycle.name}" to ${user.displayName}` };
  },

  'cycles.workflow': (ctx) => {
    const tp = plan(ctx);
    const cycle = requireCycleByName(ctx.store, tp, ctx.params.cycleName);
    const action = ctx.params.action as CycleAction;
    const rule = WORKFLOW[action];
    if (!rule.from.includes(cycle.status)) {
      throw invalid(
        `Cannot ${action} test cycle "${cycle.name}": it is ${cycle.status}, and ${action} applies to ` +
          `${rule.from.join(' or ')} cycles only`,
        'action',
      );
    }
    cycle.status = rule.to;
    if (action === 'Start') cycle.startedAt = ctx.now();
    if (action === 'Resume') cycle.completedAt = null;
    if (action === 'Complete' || action === 'Abort') cycle.completedAt = ctx.now();
    ctx.store.cycles.update(cycle);
  },

  'cycles.editCycle': (ctx) => {
    const { store } = ctx;
    const tp = plan(ctx);
    const b = ctx.body as {
      id: number;
      name?: string;
      environment?: string | null;
      build?: string | null;
      plannedStartDate?: string | null;
      plannedEndDate?: string | null;
    };
    const cycle = requireCycleById(store, tp, b.id);
    let name = cycle.name;
    if (b.name !== undefined) {
      name = b.name.trim();
      if (!name) throw invalid('Invalid name "": a cycle name must not be blank', 'name');
      const clash = store.cycles.find((c) => c.tpId === tp.id && c.name === name && c.id !== cycle.id);
      if (clash) throw invalid(`A test cycle named "${name}" already exists in test plan ${tp.key}`, 'name');
    }
    const start =
      b.plannedStartDate === undefined ? cycle.plannedStartDate : checkDate(b.plannedStartDate, 'plannedStartDate');
    const end = b.plannedEndDate === undefined ? cycle.plannedEndDate : checkDate(b.plannedEndDate, 'plannedEndDate');
    if (start && end && end < start) {
      throw invalid(`plannedEndDate ${end} is before plannedStartDate ${start}`, 'plannedEndDate');
    }
    cycle.name = name;
    if (b.environment !== undefined) cycle.environment = b.environment || null;
    if (b.build !== undefined) cycle.build = b.build || null;
    cycle.plannedStartDate = start;
    cycle.plannedEndDate = end;
    store.cycles.update(cycle);
  },

  'cycles.testRuns': (ctx) => {
    const cycle = requireCycleByName(ctx.store, plan(ctx), ctx.params.cycleName);
    const extras = runExtras(ctx.store);
    return cycleRuns(ctx.store, cycle).map((r) => presentRun(ctx, r, extras));
  },

  'cycles.testRunsByCycleId': (ctx) => {
    const cycle = requireCycleById(ctx.store, plan(ctx), ctx.params.cycleId);
    const extras = runExtras(ctx.store);
    return cycleRuns(ctx.store, cycle).map((r) => presentRun(ctx, r, extras));
  },

  'cycles.addMembersToTestCycle': (ctx) => {
    const { store } = ctx;
    const tp = plan(ctx);
    const b = ctx.body as {
      testCycleId?: number | null;
      testCycleName?: string | null;
      addTestCaseKeys?: string[];
      removeTestCaseKeys?: string[];
    };
    let cycle: Cycle;
    if (b.testCycleId !== undefined && b.testCycleId !== null) cycle = requireCycleById(store, tp, b.testCycleId);
    else if (b.testCycleName) cycle = requireCycleByName(store, tp, b.testCycleName);
    else throw invalid('Cycle Id is Mandatory: give testCycleId or testCycleName', 'testCycleId');
    assertCycleOpen(cycle);

    const addKeys = unique(b.addTestCaseKeys ?? []);
    const removeKeys = unique(b.removeTestCaseKeys ?? []);
    const removing = new Set(removeKeys);
    const both = addKeys.filter((k) => removing.has(k));
    if (both.length) {
      throw invalid(
        `Test case(s) ${both.join(', ')} are both in addTestCaseKeys and removeTestCaseKeys`,
        'addTestCaseKeys',
      );
    }
    const toAdd = addKeys.map((k) => requireIssue(store, k, ISSUE_TYPES.testCase));
    const toRemove = removeKeys.map((k) => requireIssue(store, k, ISSUE_TYPES.testCase));
    if (toAdd.length && cycle.advanced) {
      throw invalid(
        `Test cycle "${cycle.name}" is an advanced cycle: create its runs with createTestRuns (one run per attribute set)`,
        'addTestCaseKeys',
      );
    }
    // Maps, not searches per key: a reporter adds thousands of cases in one call.
    const members = new Map(store.planMembers.filter((m) => m.tpId === tp.id).map((m) => [m.tcId, m]));
    const outsiders = toAdd.filter((tc) => !members.has(tc.id));
    if (outsiders.length) {
      throw invalid(
        `Test case(s) ${outsiders.map((tc) => tc.key).join(', ')} are not members of test plan ${tp.key}: add them to the plan first (addMembers)`,
        'addTestCaseKeys',
      );
    }

    const removeIds = new Set(toRemove.map((tc) => tc.id));
    for (const run of cycleRuns(store, cycle)) if (removeIds.has(run.tcId)) removeRun(ctx, run);
    const runs = cycleRuns(store, cycle);
    const present = new Set(runs.map((r) => r.tcId));
    let order = runs.reduce((m, r) => Math.max(m, r.order), 0);
    for (const tc of toAdd) {
      if (present.has(tc.id)) continue;
      present.add(tc.id);
      order += 1;
      createRun(ctx, cycle, tc.id, { tester: members.get(tc.id)?.tester ?? null, order });
    }
  },

  'cycles.reorderTestRun': (ctx) => {
    const { store } = ctx;
    const { testRunId, refTestRunId } = ctx.body as { testRunId: number; refTestRunId: number };
    const run = requireRun(store, testRunId);
    const cycle = store.cycles.get(run.cycleId);
    if (!cycle) throw notFound(`Test cycle of test run ${testRunId} not found`);
    assertCycleOpen(cycle);
    const others = cycleRuns(store, cycle).filter((r) => r.id !== run.id);
    let at = 0;
    if (refTestRunId !== -1) {
      if (refTestRunId === run.id) return;
      const ref = others.findIndex((r) => r.id === refTestRunId);
      if (ref < 0) {
        throw invalid(
          `Invalid refTestRunId ${refTestRunId}: expected -1 (top) or the id of another run of test cycle "${cycle.name}"`,
          'refTestRunId',
        );
      }
      at = ref + 1;
    }
    others.splice(at, 0, run);
    others.forEach((r, i) => {
      if (r.order === i + 1) return;
      r.order = i + 1;
      store.runs.update(r);
    });
  },

  'defects.ofCycle': (ctx) => {
    const cycle = requireCycleById(ctx.store, plan(ctx), ctx.params.cycleId);
    return bugRefsOfRuns(ctx.store, cycleRuns(ctx.store, cycle));
  },
};
