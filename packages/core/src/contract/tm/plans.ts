import * as z from 'zod';
import { defineOperation, entity, int, intString, issueKey, lazy, obj, timestamp } from '../define.js';
import { historyEntry, issueRefs, planMember, runStatusObject, testCycle } from './schemas.js';

/** Test plan operations (test-management-api.md, "Test plan"). */

const planKey = lazy(() => z.object({ testPlanIssueKey: issueKey }));

export const plansAddMembers = defineOperation({
  id: 'plans.addMembers',
  service: 'tm',
  group: 'plans',
  method: 'POST',
  path: '/testPlan/{testPlanIssueKey}/addMembers',
  summary: 'Add test cases to a test plan',
  params: planKey,
  body: () => z.strictObject({ testCaseKeys: z.array(issueKey) }),
  errors: [{ status: 404, when: 'the test plan or a test case key is not found' }],
});

export const plansAssignTester = defineOperation({
  id: 'plans.assignTesterToTestCase',
  service: 'tm',
  group: 'plans',
  method: 'PUT',
  path: '/testPlan/{testPlanIssueKey}/assignTesterToTestCase',
  summary: 'Assign a tester to a test plan member',
  params: planKey,
  body: () => z.strictObject({ memberId: z.number().int(), userName: z.string().min(1) }),
  response: (mode) => obj(mode, { data: z.string() }),
  errors: [{ status: 404, when: 'the test plan, the member or the user is not found' }],
});

export const plansAddCycle = defineOperation({
  id: 'plans.addCycle',
  service: 'tm',
  group: 'plans',
  method: 'POST',
  path: '/testPlan/{testPlanIssueKey}/addCycle',
  summary: 'Create a test cycle in a test plan',
  params: planKey,
  body: () =>
    z.strictObject({
      name: z.string().min(1).max(255),
      environment: z.string().optional(),
      build: z.string().optional(),
      plannedStartDate: z.string().optional(),
      plannedEndDate: z.string().optional(),
      testCycleType: z.string().optional(),
      preloadRuns: z.string().optional(),
    }),
  errors: [{ status: 500, when: 'the name is missing or a cycle of that name exists in the plan' }],
  creates: true,
});

export const plansCycles = defineOperation({
  id: 'plans.cycles',
  service: 'tm',
  group: 'plans',
  method: 'GET',
  path: '/testPlan/{testPlanIssueKey}/cycles',
  summary: 'List the test cycles of a test plan',
  params: planKey,
  response: (mode) => z.array(testCycle(mode)),
  errors: [],
});

export const plansDeleteCycle = defineOperation({
  id: 'plans.deleteCycleByIdOrName',
  service: 'tm',
  group: 'plans',
  method: 'DELETE',
  path: '/testPlan/{testPlanIssueKey}/deleteCycleByIdOrName',
  summary: 'Delete a test cycle by id or by name',
  params: planKey,
  body: () => z.union([z.strictObject({ name: z.string().min(1) }), z.strictObject({ id: z.string().min(1) })]),
  errors: [{ status: 500, when: 'the cycle is not found or cannot be deleted (only Draft and Aborted cycles can)' }],
  textErrors: true,
  variants: ['id'],
});

export const plansMembers = defineOperation({
  id: 'plans.members',
  service: 'tm',
  group: 'plans',
  method: 'GET',
  path: '/testPlan/{testPlanIssueKey}/members',
  summary: 'List the test cases of a test plan',
  params: planKey,
  response: (mode) => z.array(planMember(mode)),
  errors: [],
});

/** A run as the plan-information query returns it. */
const planInfoRun = (mode: Parameters<typeof obj>[0]) =>
  entity(mode, {
    executedBy: z.string().nullable().optional(),
    executedByFromRun: z.string().nullable().optional(),
    executedByDisplayName: z.string().nullable().optional(),
    testerName: z.string().nullable().optional(),
    type: int(mode),
    comment: z.string().nullable().optional(),
    commentWiki: z.string().nullable().optional(),
    status: z.string(),
    lozenge: z.string(),
    testCaseKey: z.string(),
    testCaseId: int(mode),
    summary: z.string(),
    changeInfo: z.string().nullable().optional(),
    executionTimeStamp: timestamp(mode).nullable().optional(),
    executionOn: int(mode).nullable().optional(),
    testRunHistory: z.array(historyEntry(mode)),
    testRunSteps: z.array(
      entity(mode, {
        status: z.string(),
        step: z.string(),
        stepRaw: z.string(),
        expectedResult: z.string(),
        expectedResultRaw: z.string(),
        actualResult: z.string().nullable().optional(),
        stepData: z.string().nullable().optional(),
      }),
    ),
  });

export const plansInformation = defineOperation({
  id: 'plans.testPlanInformation',
  service: 'tm',
  group: 'plans',
  method: 'GET',
  path: '/testPlan/{testPlanIssueKey}/testPlanInformation',
  summary: 'Cycles of a test plan with their runs, paginated by cycle',
  params: planKey,
  query: () => z.object({ pageNumber: intString.min(1).optional(), pageSize: intString.min(1).max(1000).optional() }),
  response: (mode) =>
    obj(mode, {
      testCycles: z.array(obj(mode, { testCycleId: int(mode), testCycleName: z.string(), notifyTester: z.boolean() })),
      cycleWithRuns: z.record(z.string(), z.array(planInfoRun(mode))),
    }),
  errors: [],
});

/** A run as the created-runs query returns it. */
const createdRun = (mode: Parameters<typeof obj>[0]) =>
  entity(mode, {
    summary: z.string(),
    testCaseId: int(mode),
    testCaseKey: z.string(),
    comment: z.string().nullable().optional(),
    status: z.string(),
    type: int(mode),
    lozenge: z.string(),
    resultColor: z.string(),
    cycleReadOnly: z.boolean(),
    adhocRunDeletable: z.boolean(),
    executedByDisplayName: z.string().nullable().optional(),
    runStatus: runStatusObject(mode),
    testRunHistory: z.array(historyEntry(mode)),
    testRunSteps: z
      .array(
        entity(mode, {
          stepRaw: z.string(),
          step: z.string(),
          expectedResultRaw: z.string(),
          expectedResult: z.string(),
          stepDataRaw: z.string().nullable().optional(),
          stepData: z.string().nullable().optional(),
          actualResultRaw: z.string().nullable().optional(),
          actualResult: z.string().nullable().optional(),
          runStatus: runStatusObject(mode),
          localizedStatus: z.string(),
          status: z.string(),
        }),
      )
      .optional(),
  });

export const plansTestRunsCreated = defineOperation({
  id: 'plans.getTestRunsCreated',
  service: 'tm',
  group: 'plans',
  method: 'GET',
  path: '/testRun/getTestRunsCreated',
  summary: 'Runs of a test plan created after a cut-off moment',
  query: () =>
    z.object({
      testPlanIdOrKey: z.string().min(1),
      cutOffDateAndTime: z
        .string()
        .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, 'expected cutOffDateAndTime as yyyy-mm-dd hh:mm:ss'),
    }),
  response: (mode) => z.array(createdRun(mode)),
  errors: [{ status: 404, when: 'the test plan is not found' }],
});

export const plansDefects = defineOperation({
  id: 'defects.ofPlan',
  service: 'tm',
  group: 'defects',
  method: 'GET',
  path: '/testPlan/{testPlanIssueKey}/defects',
  summary: 'Defects linked to the runs of a test plan',
  params: planKey,
  response: issueRefs,
  errors: [],
});

export const planOperations = [
  plansAddMembers,
  plansAssignTester,
  plansAddCycle,
  plansCycles,
  plansDeleteCycle,
  plansMembers,
  plansInformation,
  plansTestRunsCreated,
  plansDefects,
];
