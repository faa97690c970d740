import * as z from 'zod';
import { defineOperation, entity, int, intString, issueKey, lazy, obj, type SchemaMode } from '../define.js';
import { automationJob, issueRefs, testRun } from './schemas.js';

/** Test cycles and their automation jobs. A cycle name is one encoded path segment, so any character gets through. */

const planKey = lazy(() => z.object({ testPlanIssueKey: issueKey }));
const planCycleName = lazy(() => z.object({ testPlanIssueKey: issueKey, cycleName: z.string().min(1) }));
const planCycleId = lazy(() => z.object({ testPlanIssueKey: issueKey, cycleId: intString }));

/** The workflow actions of a cycle; matched case-sensitively, as the service does. */
const CYCLE_ACTIONS = ['Start', 'Complete', 'Abort', 'Resume'] as const;

/** A run created by createTestRuns: which case, which attribute combination, with its urgency and tester. */
const createdRunItem = (mode: SchemaMode) =>
  entity(mode, {
    testCaseKey: z.string(),
    summary: z.string(),
    status: z.string(),
    testerName: z.string().nullable().optional(),
    urgency: z.string().nullable().optional(),
    /** Run attribute name → value; attributes given as `-` are absent. */
    attributeValues: z.record(z.string(), z.string()),
  });

/**
 * One input createTestRuns could not turn into runs: `attributeSet` indexes the attribute set concerned,
 * `testCaseKey` names the case when the error concerns one (alone for a case of no set).
 */
const createRunsError = (mode: SchemaMode) =>
  obj(mode, {
    message: z.string(),
    attributeSet: int(mode).optional(),
    attributeValues: z.record(z.string(), z.string()).optional(),
    testCaseKey: z.string().optional(),
  });

export const cyclesCreateTestRuns = defineOperation({
  id: 'cycles.createTestRuns',
  service: 'tm',
  group: 'cycles',
  method: 'POST',
  path: '/testRun/createTestRuns',
  summary:
    'Create runs with run attributes in an advanced cycle: one run set (a run per test case) per attributeValues ' +
    'object; answers 200 with the created runs and the inputs that failed',
  body: () =>
    z.strictObject({
      /** Comma-separated test case keys (a string, not an array). */
      testCaseKeys: z.string({ error: 'TestCaseId is Mandatory' }).trim().min(1, 'TestCaseId is Mandatory'),
      /** The advanced cycle's id, as a string (a JSON number is accepted too). */
      cycleId: z
        .union([z.string(), z.number().int()], { error: 'Cycle Id is Mandatory' })
        .transform((v) => String(v).trim())
        .pipe(z.string().min(1, 'Cycle Id is Mandatory').regex(/^\d+$/, 'expected cycleId as a number such as "12"')),
      /** One object per run set: attribute name → value; `-` means no value (and `-: -` pads a lone attribute). */
      attributeValues: z
        .array(z.record(z.string(), z.string()), { error: 'Please specify attribute values' })
        .min(1, 'Please specify attribute values'),
      /** Comma-separated, one entry per attributeValues object; `null` leaves urgency blank. */
      urgencyValue: z.string().optional(),
      /** Comma-separated, one entry per attributeValues object; `Unassigned` leaves the tester unassigned. */
      assignValue: z.string().optional(),
      /** Progress identifier of the caller's UI; not interpreted. */
      progressKey: z.string().optional(),
    }),
  response: (mode) =>
    obj(mode, {
      createdRuns: z.array(createdRunItem(mode)),
      errors: z.array(createRunsError(mode)),
    }),
  errors: [
    {
      status: 404,
      when:
        'nothing could be created because the cycle id, every test case key, or an attribute value in every ' +
        'attribute set is not found (an unknown key or value among valid ones is an entry of errors instead)',
    },
    {
      status: 500,
      when: 'testCaseKeys, cycleId or attributeValues is missing, the cycle is not advanced, or urgencyValue / assignValue does not have one entry per attribute set',
    },
    { status: 403, when: 'the cycle is Completed or Aborted (read-only)' },
  ],
  creates: true,
});

export const cyclesBulkAssignUpdate = defineOperation({
  id: 'cycles.bulkAssignUpdate',
  service: 'tm',
  group: 'cycles',
  method: 'POST',
  path: '/testPlan/{testPlanIssueKey}/bulkAssignUpdate',
  summary: 'Assign one tester to several runs of a cycle',
  params: planKey,
  body: () =>
    z.strictObject({
      testCycleId: z.number().int(),
      testerName: z.string().trim().min(1),
      runIds: z.array(z.number().int()).min(1),
      notifyTester: z.boolean().optional(),
    }),
  response: (mode) => obj(mode, { message: z.string() }),
  errors: [
    { status: 404, when: 'the test plan or the cycle (testCycleId) is not found' },
    { status: 500, when: 'the tester is not a user, or a run id is not a run of the cycle (plain-text body)' },
    { status: 403, when: 'the cycle is Completed or Aborted (read-only)' },
  ],
  textErrors: true,
  variants: ['id'],
});

export const cyclesWorkflow = defineOperation({
  id: 'cycles.workflow',
  service: 'tm',
  group: 'cycles',
  method: 'PUT',
  path: '/testPlan/{testPlanIssueKey}/cycle/{cycleName}/wf/{action}',
  summary:
    'Move a cycle through its workflow: Start (Draft→Active), Complete (Active→Completed), Abort (Active→Aborted), ' +
    'Resume (Completed or Aborted→Active)',
  params: () =>
    z.object({
      testPlanIssueKey: issueKey,
      cycleName: z.string().min(1),
      action: z.enum(CYCLE_ACTIONS, { error: 'expected action Start, Complete, Abort or Resume (case-sensitive)' }),
    }),
  errors: [
    { status: 404, when: 'the test plan or the cycle name is not found' },
    { status: 500, when: 'the action is not one of the four, or is not allowed from the cycle state' },
  ],
});

export const cyclesEditCycle = defineOperation({
  id: 'cycles.editCycle',
  service: 'tm',
  group: 'cycles',
  method: 'POST',
  path: '/testPlan/{testPlanIssueKey}/editCycle',
  summary: 'Edit a cycle (name, environment, build, planned dates) by id; fields left out keep their value',
  params: planKey,
  body: () =>
    z.strictObject({
      id: z.number().int(),
      name: z.string().max(255).optional(),
      environment: z.string().nullable().optional(),
      build: z.string().nullable().optional(),
      plannedStartDate: z.string().nullable().optional(),
      plannedEndDate: z.string().nullable().optional(),
    }),
  errors: [
    { status: 404, when: 'the test plan or the cycle id is not found' },
    { status: 500, when: 'the name is blank or used by another cycle of the plan, or a date is invalid' },
  ],
  variants: ['id'],
});

export const cyclesTestRuns = defineOperation({
  id: 'cycles.testRuns',
  service: 'tm',
  group: 'cycles',
  method: 'GET',
  path: '/testPlan/{testPlanIssueKey}/cycle/{cycleName}/testRuns',
  summary: 'List the runs of a cycle (identified by name) in run order',
  params: planCycleName,
  response: (mode) => z.array(testRun(mode)),
  errors: [{ status: 404, when: 'the test plan or the cycle name is not found' }],
});

export const cyclesTestRunsByCycleId = defineOperation({
  id: 'cycles.testRunsByCycleId',
  service: 'tm',
  group: 'cycles',
  method: 'GET',
  path: '/testPlan/{testPlanIssueKey}/cycle/{cycleId}/testRunsByCycleId',
  summary: 'List the runs of a cycle (identified by id) in run order',
  params: planCycleId,
  response: (mode) => z.array(testRun(mode)),
  errors: [{ status: 404, when: 'the test plan or the cycle id is not found' }],
});

export const cyclesAddMembersToTestCycle = defineOperation({
  id: 'cycles.addMembersToTestCycle',
  service: 'tm',
  group: 'cycles',
  method: 'POST',
  path: '/testPlan/{testPlanIssueKey}/addMembersToTestCycle',
  summary:
    'Add runs for test cases of the plan to a cycle, and remove the runs of others; testCycleId wins over ' +
    'testCycleName; a case that already has a run in the cycle gets no second one',
  params: planKey,
  body: () =>
    z.strictObject({
      testCycleId: z.number().int().nullable().optional(),
      testCycleName: z.string().nullable().optional(),
      addTestCaseKeys: z.array(issueKey).optional(),
      removeTestCaseKeys: z.array(issueKey).optional(),
    }),
  errors: [
    { status: 404, when: 'the test plan, the cycle or a test case key is not found' },
    {
      status: 500,
      when: 'no cycle is named, a case to add is not a member of the plan, a key is both added and removed, or runs are added to an advanced cycle',
    },
    { status: 403, when: 'the cycle is Completed or Aborted (read-only)' },
  ],
  creates: true,
});

export const cyclesReorderTestRun = defineOperation({
  id: 'cycles.reorderTestRun',
  service: 'tm',
  group: 'cycles',
  method: 'PUT',
  path: '/testRun/reorderTestRun',
  summary: 'Move a run directly below another run of its cycle; refTestRunId -1 moves it to the top',
  body: () => z.strictObject({ testRunId: z.number().int(), refTestRunId: z.number().int() }),
  errors: [
    { status: 404, when: 'testRunId is not found' },
    { status: 500, when: 'refTestRunId is neither -1 nor a run of the same cycle' },
    { status: 403, when: 'the cycle is Completed or Aborted (read-only)' },
  ],
});

export const cyclesDefects = defineOperation({
  id: 'defects.ofCycle',
  service: 'tm',
  group: 'defects',
  method: 'GET',
  path: '/testPlan/{testPlanIssueKey}/cycle/{cycleId}/defects',
  summary: 'Defects linked to the runs and run steps of a cycle, each once',
  params: planCycleId,
  response: issueRefs,
  errors: [{ status: 404, when: 'the test plan or the cycle id is not found' }],
});

/** Plan and cycle of an automation-job call, carried in the body. */
const jobCycle = lazy(() => ({
  testPlanKey: z.string().trim().min(1),
  testCycleName: z.string().min(1),
}));

export const automationAddJob = defineOperation({
  id: 'automation.addJobToTestCycle',
  service: 'tm',
  group: 'automation',
  method: 'POST',
  path: '/testCycle/addAutomationJobToTestCycle',
  summary:
    'Attach an automation job to a cycle (one per cycle: a second call replaces the first and keeps its ' +
    'automationBuildId); params is `;`-separated name=value pairs, SRTCYCLE is added on retrieval',
  // The fields are optional here because the service answers a missing one with 404, not with the usual 500
  // validation error: the emulator checks them itself. A client sends all six.
  body: () =>
    z.strictObject({
      testPlanKey: z.string().optional(),
      testCycleName: z.string().optional(),
      appName: z.string().optional(),
      jobKey: z.string().optional(),
      testType: z.string().optional(),
      params: z.string().optional(),
    }),
  errors: [
    {
      status: 404,
      when: 'the test plan or cycle is not found, or a field is missing or blank (this call answers validation failures with 404)',
    },
  ],
  creates: true,
  variants: ['id'],
});

export const automationJobs = defineOperation({
  id: 'automation.jobs',
  service: 'tm',
  group: 'automation',
  method: 'POST',
  path: '/testCycle/automationJobs',
  summary: 'The automation job of a cycle, its params ending in SRTCYCLE=<cycle id>',
  body: () => z.strictObject(jobCycle()),
  response: automationJob,
  errors: [{ status: 404, when: 'the test plan or cycle is not found, or the cycle has no automation job' }],
  variants: ['id'],
});

export const automationTriggerJob = defineOperation({
  id: 'automation.triggerJob',
  service: 'tm',
  group: 'automation',
  method: 'POST',
  path: '/testCycle/triggerAutomationJob',
  summary: "Trigger the cycle's automation job identified by automationBuildId",
  body: () =>
    z.strictObject({
      ...jobCycle(),
      automationBuildId: z
        .union([z.string(), z.number().int()])
        .transform((v) => String(v).trim())
        .pipe(z.string().regex(/^\d+$/, 'expected automationBuildId as a number such as "3"')),
    }),
  errors: [
    { status: 404, when: 'the test plan, the cycle or the automation job (automationBuildId) is not found' },
    { status: 500, when: 'automationBuildId is not a number' },
  ],
  variants: ['id'],
});

export const cycleOperations = [
  cyclesCreateTestRuns,
  cyclesBulkAssignUpdate,
  cyclesWorkflow,
  cyclesEditCycle,
  cyclesTestRuns,
  cyclesTestRunsByCycleId,
  cyclesAddMembersToTestCycle,
  cyclesReorderTestRun,
  cyclesDefects,
  automationAddJob,
  automationJobs,
  automationTriggerJob,
];
