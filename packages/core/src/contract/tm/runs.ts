import * as z from 'zod';
import { defineOperation, entity, int, intString, issueKey, lazy, obj, type SchemaMode, timestamp } from '../define.js';
import { issueCreateFields } from '../jira-shapes.js';
import { createdIssue, executionHistoryItem, issueRefs, testRunDetails } from './schemas.js';

/** Test runs: details, history, results of runs and steps, bugs, attachments, defects from runs, ad hoc runs. */

/** A run id in a path: digits only (a run id carries no `TR` prefix). */
const runIdSegment = lazy(() =>
  z.string().regex(/^\d+$/, 'expected a run id: digits only, without a TR prefix').transform(Number),
);

const runIdParam = lazy(() => z.object({ runId: runIdSegment() }));

/**
 * The spec's `GET /testRun/defects/runId` names no run, so this parameter (an emulator extension) is optional and
 * never refused: digits name a run, anything else none (`[]`). A repeated one counts by its first value, as in Java.
 */
const runIdQuery = lazy(() =>
  z
    .union([z.string(), z.number(), z.array(z.string())])
    .optional()
    .transform((v): number | undefined => {
      const text = String((Array.isArray(v) ? v[0] : v) ?? '').trim();
      return /^\d+$/.test(text) ? Number(text) : undefined;
    })
    .describe(
      'Emulator extension: the run whose defects to list (digits). Optional: without it, or with a value that ' +
        'names no run, the answer is an empty array',
    ),
);

const planKey = lazy(() => z.object({ testPlanIssueKey: issueKey }));
const planCycle = lazy(() => z.object({ testPlanIssueKey: issueKey, cycleName: z.string().min(1) }));
const caseKey = lazy(() => z.object({ testCaseIssueKey: issueKey }));

/** Issue keys of existing issues to link as bugs. */
const bugKeys = lazy(() => z.array(issueKey));

/**
 * A defect's `fields`: the add-on hands them to Jira's issue service, so any Jira create field passes beside the
 * spec's four, and the issue type's create screen decides.
 */
const defectFields = lazy(() =>
  z.looseObject({
    project: z.strictObject({ key: z.string().min(1, 'expected the key of the project to create the defect in') }),
    summary: z.string().trim().min(1, 'expected a non-empty summary').max(255),
    description: z.string().optional(),
    issuetype: z.strictObject({ name: z.string().trim().min(1, 'expected an issue type name such as Bug') }).optional(),
    ...issueCreateFields(),
  }),
);

/** A run as the ad hoc and defect queries list it: details plus who executed it and when (absent until executed). */
const runWithDetails = (mode: SchemaMode) => {
  const extra = obj(mode, {
    executedBy: z.string().nullable().optional(),
    executionTimeStamp: timestamp(mode).nullable().optional(),
  });
  // Tolerant run details keep unknown keys as they came while `extra` normalises the timestamp: the details side
  // must not see it, or the two results of the intersection could not be merged.
  const details =
    mode === 'tolerant' ? z.preprocess(withoutExecutionTimeStamp, testRunDetails(mode)) : testRunDetails(mode);
  return z.intersection(details, extra);
};

function withoutExecutionTimeStamp(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const { executionTimeStamp: _, ...rest } = value as Record<string, unknown>;
  return rest;
}

/** Attachment of the attachment-details query: the reference with its download URL. */
const attachmentDetails = (mode: SchemaMode) =>
  obj(mode, { fileName: z.string(), mimeType: z.string(), id: int(mode), filePath: z.string() });

export const runsGet = defineOperation({
  id: 'runs.get',
  service: 'tm',
  group: 'runs',
  method: 'GET',
  path: '/testRun/{runID}',
  summary: 'Details of a test run: steps, history, bugs, attachments, neighbouring runs',
  params: () => z.object({ runID: runIdSegment() }),
  response: testRunDetails,
  errors: [{ status: 404, when: 'the run is not found' }],
});

export const runsCaseTestRuns = defineOperation({
  id: 'runs.caseTestRuns',
  service: 'tm',
  group: 'runs',
  method: 'GET',
  path: '/testRun/{testCaseIssueKey}/testRuns',
  summary: 'Execution history of a test case: its runs in every cycle (ad hoc ones included), oldest first',
  params: caseKey,
  response: (mode) => z.array(executionHistoryItem(mode)),
  errors: [{ status: 404, when: 'the test case is not found' }],
});

export const runsUpdateTestRun = defineOperation({
  id: 'runs.updateTestRun',
  service: 'tm',
  group: 'runs',
  method: 'POST',
  path: '/testPlan/{testPlanIssueKey}/cycle/{cycleName}/updateTestRun',
  summary: "Set the result (and comment) of a test case's run in a cycle; its steps keep their results",
  params: planCycle,
  body: () => z.strictObject({ testcaseKey: issueKey, result: z.string().min(1), comment: z.string().optional() }),
  errors: [
    { status: 403, when: 'the cycle is not Active (runs of Draft, Completed and Aborted cycles are read-only)' },
    { status: 404, when: 'the test plan, the cycle, or a run of the test case in the cycle is not found' },
    { status: 500, when: 'the result is not a run status' },
  ],
});

export const runsUpdateStep = defineOperation({
  id: 'runs.updateStep',
  service: 'tm',
  group: 'runs',
  method: 'POST',
  path: '/testRun/updateStep/',
  summary: "Record a run step's result, actual result and bugs; the run's result rolls up from its steps",
  body: () =>
    z.strictObject({
      runStepId: z.number().int(),
      result: z.string().min(1).optional(),
      actualResult: z.string().optional(),
      bugs: bugKeys().optional(),
    }),
  errors: [
    { status: 403, when: "the run's cycle is not Active (ad hoc runs are exempt)" },
    { status: 404, when: 'the run step or a bug key is not found' },
    { status: 500, when: 'the result is not a run status' },
  ],
});

export const runsUpdate = defineOperation({
  id: 'runs.update',
  service: 'tm',
  group: 'runs',
  method: 'POST',
  path: '/testRun/update',
  summary: 'Set the result, comment and bugs of a run by id; its steps keep their results',
  body: () =>
    z.strictObject({
      // Documented as a string; a JSON number is accepted as well.
      runId: z.union([
        z.string().regex(/^\s*\d+\s*$/, 'expected a run id: digits only, without a TR prefix'),
        z.number().int(),
      ]),
      result: z.string().min(1).optional(),
      comment: z.string().optional(),
      bugs: bugKeys().optional(),
    }),
  errors: [
    { status: 403, when: "the run's cycle is not Active (ad hoc runs are exempt)" },
    { status: 404, when: 'the run or a bug key is not found' },
    { status: 500, when: 'the result is not a run status' },
  ],
});

export const runsBulkStatusUpdate = defineOperation({
  id: 'runs.bulkStatusUpdate',
  service: 'tm',
  group: 'runs',
  method: 'POST',
  path: '/testPlan/{testPlanIssueKey}/bulkStatusUpdate',
  summary: 'Set one status on several runs of a cycle (Passed, Failed, Not Tested, Blocked, NA)',
  params: planKey,
  body: () =>
    z.strictObject({
      testCycleId: z.number().int(),
      status: z.string().min(1),
      runIds: z.array(z.number().int()).min(1, 'expected at least one run id'),
    }),
  errors: [
    { status: 403, when: 'the cycle is not Active' },
    { status: 404, when: 'the test plan is not found' },
    { status: 500, when: 'the cycle is not in the plan, a run is not in the cycle, or the status is unknown' },
  ],
  textErrors: true,
  variants: ['id'],
});

export const runsLinkBugToTestRun = defineOperation({
  id: 'runs.linkBugToTestRun',
  service: 'tm',
  group: 'runs',
  method: 'POST',
  path: '/testPlan/{testPlanIssueKey}/cycle/{cycleName}/linkBugToTestRun',
  summary: "Link existing issues as bugs to a test case's run in a cycle",
  params: planCycle,
  body: () => z.strictObject({ testcaseKey: issueKey, bugs: bugKeys().min(1, 'expected at least one bug key') }),
  errors: [
    { status: 403, when: 'the cycle is not Active' },
    { status: 404, when: 'the test plan, the cycle, a run of the test case in it, or a bug key is not found' },
  ],
  textErrors: true,
});

export const attachmentsAddToRun = defineOperation({
  id: 'attachments.addToRun',
  service: 'tm',
  group: 'attachments',
  method: 'POST',
  path: '/attachment/{runId}/testrun',
  summary: 'Attach files to a run (multipart, one or more parts named file)',
  params: runIdParam,
  body: () => ({ kind: 'multipart', fileFields: ['file'] }),
  errors: [
    { status: 403, when: "the run's cycle is not Active (ad hoc runs are exempt)" },
    { status: 404, when: 'the run is not found' },
    { status: 500, when: 'the body is not multipart or has no part named file' },
  ],
  creates: true,
  variants: ['id'],
});

export const attachmentsAddToRunStep = defineOperation({
  id: 'attachments.addToRunStep',
  service: 'tm',
  group: 'attachments',
  method: 'POST',
  path: '/attachment/{runId}/testrun/step/{stepno}',
  summary: 'Attach files to a run step, by 1-based step number (multipart, parts named file)',
  params: () => z.object({ runId: runIdSegment(), stepno: intString.min(1, 'expected a 1-based step number') }),
  body: () => ({ kind: 'multipart', fileFields: ['file'] }),
  errors: [
    { status: 403, when: "the run's cycle is not Active (ad hoc runs are exempt)" },
    { status: 404, when: 'the run, or a step with that number in it, is not found' },
    { status: 500, when: 'the body is not multipart or has no part named file' },
  ],
  creates: true,
  variants: ['id'],
});

export const defectsCreateRunBug = defineOperation({
  id: 'defects.createRunBug',
  service: 'tm',
  group: 'defects',
  method: 'POST',
  path: '/testRun/createRunBug',
  summary: 'Create a defect issue in a project and link it to a run',
  body: () => z.strictObject({ fields: defectFields(), runId: z.number().int() }),
  response: createdIssue,
  errors: [
    { status: 403, when: "the run's cycle is not Active (ad hoc runs are exempt)" },
    { status: 404, when: 'the run or the project is not found' },
    {
      status: 500,
      when: "Jira refused the defect's fields (a required field missing, one not on the create screen, a value not allowed); the message names each",
    },
  ],
  creates: true,
  variants: ['id'],
});

export const defectsCreateRunStepBug = defineOperation({
  id: 'defects.createRunStepBug',
  service: 'tm',
  group: 'defects',
  method: 'POST',
  path: '/testRun/createRunStepBug',
  summary: 'Create a defect issue in a project and link it to a run step',
  body: () => z.strictObject({ fields: defectFields(), runStepId: z.number().int() }),
  response: createdIssue,
  errors: [
    { status: 403, when: "the run's cycle is not Active (ad hoc runs are exempt)" },
    { status: 404, when: 'the run step or the project is not found' },
    {
      status: 500,
      when: "Jira refused the defect's fields (a required field missing, one not on the create screen, a value not allowed); the message names each",
    },
  ],
  creates: true,
  variants: ['id'],
});

export const defectsOfRun = defineOperation({
  id: 'defects.ofRun',
  service: 'tm',
  group: 'defects',
  method: 'GET',
  path: '/testRun/defects/runId',
  summary:
    'Defects linked to a run or its steps; the path ends in the literal segment runId, the run is the query ' +
    'runId (an emulator extension); [] when the query names no run',
  query: () => z.object({ runId: runIdQuery() }),
  response: issueRefs,
  // No error of its own: whatever the query, the answer is an array (`[]` when it names no run).
  errors: [],
});

export const attachmentsDetails = defineOperation({
  id: 'attachments.getAttachmentDetails',
  service: 'tm',
  group: 'attachments',
  method: 'GET',
  path: '/attachment/{runId}/getAttachmentDetails',
  summary: 'Attachments of a run and of its steps, with download URLs (filePath)',
  params: runIdParam,
  response: (mode) => z.array(attachmentDetails(mode)),
  errors: [{ status: 404, when: 'the run is not found' }],
  variants: ['id'],
});

export const attachmentsDelete = defineOperation({
  id: 'attachments.deleteAttachment',
  service: 'tm',
  group: 'attachments',
  method: 'DELETE',
  path: '/attachment/{runId}/deleteAttachment/{attachmentId}',
  summary: 'Delete an attachment of a run or of one of its steps',
  params: () => z.object({ runId: runIdSegment(), attachmentId: intString }),
  errors: [
    { status: 403, when: "the run's cycle is not Active (ad hoc runs are exempt)" },
    { status: 404, when: 'the run, or the attachment in that run, is not found' },
  ],
  variants: ['id'],
});

export const runsAdhocCreate = defineOperation({
  id: 'runs.adhocCreate',
  service: 'tm',
  group: 'runs',
  method: 'PUT',
  path: '/testRun/adhoc/create/{testCaseIssueKey}',
  summary: "Create an ad hoc run of a test case (in the case's hidden Adhoc cycle, always writable); no body",
  params: caseKey,
  response: (mode) =>
    entity(mode, {
      type: int(mode),
      status: z.string(),
      testCaseKey: z.string(),
      lozenge: z.string(),
      summary: z.string(),
      testRunDetails: obj(mode, { prevRunId: int(mode).optional() }),
      testerName: z.string().nullable().optional(),
      testCaseId: int(mode),
    }),
  errors: [
    { status: 404, when: 'the test case is not found' },
    { status: 500, when: 'the issue is not a test case' },
  ],
  textErrors: true,
  creates: true,
});

export const runsAdhocTestRuns = defineOperation({
  id: 'runs.adhocTestRuns',
  service: 'tm',
  group: 'runs',
  method: 'GET',
  path: '/testRun/adhoc/getTestRuns/{testCaseIssueKey}',
  summary: 'Ad hoc runs of a test case with steps, history and neighbouring runs, oldest first',
  params: caseKey,
  response: (mode) => z.array(runWithDetails(mode)),
  errors: [{ status: 404, when: 'the test case is not found' }],
});

export const runsForDefect = defineOperation({
  id: 'runs.getTestRunsForDefect',
  service: 'tm',
  group: 'runs',
  method: 'GET',
  path: '/testRun/getTestRunsForDefect/{defectIssueKey}',
  summary: 'Runs a defect is linked to (on the run or on one of its steps), with run details',
  params: () => z.object({ defectIssueKey: issueKey }),
  response: (mode) => z.array(runWithDetails(mode)),
  errors: [{ status: 404, when: 'the defect is not found' }],
});

export const runOperations = [
  runsGet,
  runsCaseTestRuns,
  runsUpdateTestRun,
  runsUpdateStep,
  runsUpdate,
  runsBulkStatusUpdate,
  runsLinkBugToTestRun,
  attachmentsAddToRun,
  attachmentsAddToRunStep,
  defectsCreateRunBug,
  defectsCreateRunStepBug,
  defectsOfRun,
  attachmentsDetails,
  attachmentsDelete,
  runsAdhocCreate,
  runsAdhocTestRuns,
  runsForDefect,
];
