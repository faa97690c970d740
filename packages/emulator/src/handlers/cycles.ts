import { type Ctx, forbidden, type Handler, idf, invalid, notFound, ServiceError } from '../context.js';
import {
  allBugsOfRun,
  createRun,
  ISSUE_TYPES,
  issueRef,
  presentRun,
  requireCycleById,
  requireCycleByName,
  requireIssue,
  requireRun,
  runExtras,
  userByName,
} from '../domain.js';
import type { Cycle, CycleStatus, Issue, Run, RunAttribute, Store } from '../store.js';

/**
 * Handlers of the test-cycle operations and of the automation jobs of a cycle.
 *
 * Choices where the spec says "not shown" (listed in the package README):
 * - Workflow: Start Draft→Active, Complete Active→Completed, Abort Active→Aborted, Resume Completed/Aborted→Active;
 *   any other action from a state is a 500 naming the state and the action. Start sets cycleStartedDate; Resume
 *   keeps it and clears cycleCompletedDate, which the next Complete or Abort sets again.
 * - Completed and Aborted cycles are read-only: adding, removing, assigning and reordering their runs answers 403,
 *   like run updates do. Draft cycles can be planned (runs added, assigned, reordered) before they start.
 * - addMembersToTestCycle: testCycleId wins over testCycleName; cases to add must be plan members (500 naming the
 *   keys otherwise, nothing changed); advanced cycles get their runs from createTestRuns instead.
 * - createTestRuns answers `{createdRuns, errors}`; see `cycles.createTestRuns` in the contract.
 * - One automation job per cycle: adding another replaces it and keeps its automationBuildId. Triggering records
 *   the moment in the job (the emulator has no build server to call); it changes nothing else.
 */

const DATE = /^\d{4}-\d{2}-\d{2}$/;

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
function assertCycleOpen(cycle: Cycle): void {
  if (cycle.adhocTcId !== null) return;
  if (cycle.status === 'Completed' || cycle.status === 'Aborted') {
    throw forbidden(`Test cycle "${cycle.name}" is ${cycle.status} and read-only: resume it to change its runs`);
  }
}

/** Deletes a run with its steps, bug links, history and attachments. */
function removeRun(ctx: Ctx, run: Run): void {
  const { store } = ctx;
  for (const s of store.runSteps.filter((x) => x.runId === run.id)) store.runSteps.remove(s.id);
  for (const b of store.bugLinks.filter((x) => x.runId === run.id)) store.bugLinks.remove(b.id);
  for (const h of store.history.filter((x) => x.runId === run.id)) store.history.remove(h.id);
  for (const a of store.attachments.filter((x) => x.runId === run.id)) {
    store.attachments.remove(a.id);
    void ctx.blobs.remove(a.blob);
  }
  store.runs.remove(run.id);
}

function checkDate(value: string | null | undefined, field: string): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (!DATE.test(value) || Number.isNaN(Date.parse(value))) {
    throw invalid(`Invalid ${field} "${value}": expected a date yyyy-mm-dd`, field);
  }
  return value;
}

const unique = <T>(xs: readonly T[]): T[] => [...new Set(xs)];

/** Splits a comma-separated request value into trimmed entries. */
const commaList = (value: string): string[] => value.split(',').map((s) => s.trim());

/**
 * The params string of an automation job as the service hands it out: whitespace stripped, then
 * `;SRTCYCLE=<cycleId>` appended to name=value pairs, or `SRTCYCLE=<cycleId>` alone when the params are blank or
 * hold no `=`. An SRTCYCLE pair already present (a job re-added from a retrieval) and empty pairs are dropped, so
 * the pair appears once.
 */
export function automationParams(stored: string, cycleId: number): string {
  const own = `SRTCYCLE=${cycleId}`;
  const s = stored.replace(/\s+/g, '');
  if (!s.includes('=')) return own;
  const pairs = s.split(';').filter((p) => p !== '' && !p.startsWith('SRTCYCLE='));
  return [...pairs, own].join(';');
}

/** The plan and cycle an automation-job call names in its body (404 when either is not found). */
function jobCycle(ctx: Ctx, planKey: string, cycleName: string): Cycle {
  const tp = requireIssue(ctx.store, planKey.trim(), ISSUE_TYPES.testPlan);
  return requireCycleByName(ctx.store, tp, cycleName);
}

/** A validated attribute set of createTestRuns. */
interface AttributeSet {
  index: number;
  given: Record<string, string>;
  attributes: Record<string, string>;
  urgency: string | null;
  tester: string | null;
}

const sameAttributes = (a: Record<string, string> | null, b: Record<string, string>): boolean => {
  const x = a ?? {};
  const keys = Object.keys(x);
  return keys.length === Object.keys(b).length && keys.every((k) => x[k] === b[k]);
};

/**
 * Reads one attributeValues object of createTestRuns: the set, or the message of why it yields no runs (a partial
 * failure). An attribute value the project does not define is a 404 for the whole request.
 */
function readAttributeSet(
  store: Store,
  defs: readonly RunAttribute[],
  earlier: readonly AttributeSet[],
  given: Record<string, string>,
  index: number,
  urgency: string,
  assignee: string,
): AttributeSet | string {
  const attributes: Record<string, string> = {};
  const unknownNames: string[] = [];
  for (const [name, value] of Object.entries(given)) {
    // `-: -` pads the object when the project has one attribute; a `-` value means "no value".
    if (name === '-' || value === '-') continue;
    const def = defs.find((d) => d.name === name);
    if (!def) {
      unknownNames.push(name);
      continue;
    }
    if (!def.values.includes(value)) {
      throw notFound(
        `Run attribute value "${value}" not found for attribute ${name} (attribute set ${index}): expected one of ${def.values.join(', ')}`,
      );
    }
    attributes[name] = value;
  }
  if (unknownNames.length) {
    const known = defs.map((d) => d.name).join(', ') || 'none';
    return `Unknown run attribute ${unknownNames.map((n) => `"${n}"`).join(', ')}: the project has ${known}`;
  }
  if (!Object.keys(attributes).length) return 'The attribute set gives no attribute value (all are "-")';
  if (earlier.some((v) => sameAttributes(v.attributes, attributes))) {
    return 'The same attribute values are given by an earlier attribute set';
  }
  let tester: string | null = null;
  if (assignee !== '' && assignee.toLowerCase() !== 'unassigned') {
    const user = userByName(store, assignee);
    if (!user) return `Tester "${assignee}" (assignValue) is not a user`;
    tester = user.name;
  }
  return {
    index,
    given,
    attributes,
    tester,
    urgency: urgency === '' || urgency.toLowerCase() === 'null' ? null : urgency,
  };
}

export const cyclesHandlers: Record<string, Handler> = {
  'cycles.createTestRuns': (ctx) => {
    const { store } = ctx;
    const b = ctx.body as {
      testCaseKeys: string;
      cycleId: string;
      attributeValues: Record<string, string>[];
      urgencyValue?: string;
      assignValue?: string;
    };
    const cycle = store.cycles.get(Number(b.cycleId));
    if (!cycle || cycle.tpId === null) throw notFound(`Test cycle ${b.cycleId} not found`);
    const tp = store.issues.get(cycle.tpId);
    if (!tp) throw notFound(`Test plan of test cycle ${b.cycleId} not found`);
    if (!cycle.advanced) {
      throw invalid(
        `Test cycle "${cycle.name}" is not an advanced cycle: run attributes need a cycle created with ` +
          'testCycleType Advanced (add runs to this one with addMembersToTestCycle)',
        'cycleId',
      );
    }
    assertCycleOpen(cycle);

    const keys = unique(commaList(b.testCaseKeys).filter(Boolean));
    if (!keys.length) throw invalid('TestCaseId is Mandatory', 'testCaseKeys');
    const cases = keys.map((k) => requireIssue(store, k, ISSUE_TYPES.testCase));

    const sets = b.attributeValues;
    const perSet = (field: 'urgencyValue' | 'assignValue'): string[] => {
      const raw = b[field];
      if (raw === undefined || raw.trim() === '') return sets.map(() => '');
      const entries = commaList(raw);
      if (entries.length !== sets.length) {
        throw invalid(
          `${field} has ${entries.length} entries, expected one per attributeValues object (${sets.length})`,
          field,
        );
      }
      return entries;
    };
    const urgencies = perSet('urgencyValue');
    const assignees = perSet('assignValue');

    const defs = store.runAttributes.filter((a) => a.projectId === tp.projectId);
    const errors: Record<string, unknown>[] = [];
    const valid: AttributeSet[] = [];
    // First every input is checked, so that a 404 (unknown value) leaves nothing half created.
    sets.forEach((given, index) => {
      const set = readAttributeSet(store, defs, valid, given, index, urgencies[index] ?? '', assignees[index] ?? '');
      if (typeof set === 'string') errors.push({ message: set, attributeSet: index, attributeValues: given });
      else valid.push(set);
    });

    const members = new Set(store.planMembers.filter((m) => m.tpId === tp.id).map((m) => m.tcId));
    const inPlan = cases.filter((tc) => {
      if (members.has(tc.id)) return true;
      errors.push({ message: `Test case ${tc.key} is not a member of test plan ${tp.key}`, testCaseKey: tc.key });
      return false;
    });
    const existing = store.runs.filter((r) => r.cycleId === cycle.id);
    const created: Run[] = [];
    for (const set of valid) {
      for (const tc of inPlan) {
        if (existing.some((r) => r.tcId === tc.id && sameAttributes(r.attributes, set.attributes))) {
          errors.push({
            message: `Test case ${tc.key} already has a run with these attribute values in test cycle "${cycle.name}"`,
            attributeSet: set.index,
            attributeValues: set.given,
            testCaseKey: tc.key,
          });
          continue;
        }
        created.push(
          createRun(ctx, cycle, tc.id, { attributes: set.attributes, tester: set.tester, urgency: set.urgency }),
        );
      }
    }
    return {
      createdRuns: created.map((r) => {
        const tc = store.issues.get(r.tcId);
        return {
          ...idf(ctx.variant, r.id),
          testCaseKey: tc?.key ?? '',
          summary: tc?.summary ?? '',
          status: r.status,
          testerName: r.tester ?? '',
          urgency: r.urgency,
          attributeValues: r.attributes ?? {},
        };
      }),
      errors,
    };
  },

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

  'cycles.defects': (ctx) => {
    const cycle = requireCycleById(ctx.store, plan(ctx), ctx.params.cycleId);
    const seen = new Map<number, Issue>();
    for (const r of cycleRuns(ctx.store, cycle)) for (const i of allBugsOfRun(ctx.store, r.id)) seen.set(i.id, i);
    return [...seen.values()].sort((a, b) => a.id - b.id).map(issueRef);
  },

  'automation.addAutomationJobToTestCycle': (ctx) => {
    const { store } = ctx;
    const b = ctx.body as Record<string, string | undefined>;
    // This call answers validation failures with 404 (service-facts.md), unlike the usual 500.
    for (const field of ['testPlanKey', 'testCycleName', 'appName', 'jobKey', 'testType']) {
      const value = b[field];
      if (value === undefined || value.trim() === '') {
        throw new ServiceError(404, `${field} is mandatory: got ${value === undefined ? 'none' : 'a blank value'}`, {
          field,
        });
      }
    }
    const cycle = jobCycle(ctx, b.testPlanKey as string, b.testCycleName as string);
    const fields = {
      appName: (b.appName as string).trim(),
      jobKey: (b.jobKey as string).trim(),
      testType: (b.testType as string).trim(),
      params: (b.params ?? '').replace(/\s+/g, ''),
    };
    const job = store.automationJobs.find((j) => j.cycleId === cycle.id);
    if (job) store.automationJobs.update(Object.assign(job, fields));
    else store.automationJobs.insert({ cycleId: cycle.id, ...fields, triggers: [] });
  },

  'automation.automationJobs': (ctx) => {
    const cycle = jobCycle(ctx, ctx.body.testPlanKey, ctx.body.testCycleName);
    const job = ctx.store.automationJobs.find((j) => j.cycleId === cycle.id);
    if (!job) throw notFound(`Test cycle "${cycle.name}" has no automation job`);
    return {
      automationBuildId: job.id,
      appName: job.appName,
      jobKey: job.jobKey,
      testType: job.testType,
      params: automationParams(job.params, cycle.id),
    };
  },

  'automation.triggerAutomationJob': (ctx) => {
    const cycle = jobCycle(ctx, ctx.body.testPlanKey, ctx.body.testCycleName);
    const id = Number(ctx.body.automationBuildId);
    const job = ctx.store.automationJobs.get(id);
    if (!job || job.cycleId !== cycle.id) {
      throw notFound(`Automation job ${id} not found in test cycle "${cycle.name}"`);
    }
    job.triggers.push(ctx.now());
    ctx.store.automationJobs.update(job);
  },
};
