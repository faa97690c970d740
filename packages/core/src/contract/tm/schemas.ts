import * as z from 'zod';
import { attachmentRef, entity, int, issueRef, obj, type SchemaMode, timestamp } from '../define.js';

/** Entity shapes of the test-management service, per mode: `id` and `ID` on the wire, `tolerant` for a client. */

const opt = <T extends z.ZodType>(t: T) => t.optional();

/** Test cycle, item of a plan's cycle list. The `ID` variant omits environment, build and planned dates. */
export const testCycle = (mode: SchemaMode) =>
  entity(mode, {
    name: z.string(),
    ...(mode === 'ID'
      ? {}
      : {
          environment: opt(z.string().nullable()),
          build: opt(z.string().nullable()),
          plannedStartDate: opt(z.string().nullable()),
          plannedEndDate: opt(z.string().nullable()),
        }),
    status: z.string(),
    draft: z.boolean(),
    active: z.boolean(),
    aborted: z.boolean(),
    deleteable: z.boolean(),
    cycleStartedDate: opt(timestamp(mode)),
    cycleCompletedDate: opt(timestamp(mode)),
  });

/** Test plan member (a test case in a plan). The `ID` variant omits testPlanKey. */
export const planMember = (mode: SchemaMode) =>
  entity(mode, {
    tcId: int(mode),
    tpId: int(mode),
    testCaseKey: z.string(),
    ...(mode === 'ID' ? {} : { testPlanKey: mode === 'tolerant' ? opt(z.string()) : z.string() }),
    testCaseSummary: z.string(),
  });

/** Item of a cycle's run list. */
export const testRun = (mode: SchemaMode) =>
  entity(mode, {
    summary: z.string(),
    status: z.string(),
    testCaseKey: z.string(),
    comment: opt(z.string().nullable()),
    executedBy: opt(z.string().nullable()),
    testerName: opt(z.string().nullable()),
    executionTimeStamp: opt(timestamp(mode).nullable()),
    attachments: opt(z.array(attachmentRef(mode))),
    bugs: opt(z.array(issueRef(mode))),
    /** An advanced cycle's run attributes (name → value) as createTestRuns answers; absent if the service omits it. */
    attributeValues: opt(z.record(z.string(), z.string())),
  });

/** History entry of a run. */
export const historyEntry = (mode: SchemaMode) =>
  obj(mode, {
    executorName: z.string(),
    activity: z.string(),
    activityType: z.string(),
    testRunId: int(mode),
    executionTime: int(mode),
    executorId: opt(int(mode)),
    executorFullName: opt(z.string()),
    executionOn: opt(z.string()),
  });

/** Step of a run (run details). */
export const runStep = (mode: SchemaMode) =>
  entity(mode, {
    status: z.string(),
    step: z.string(),
    expectedResult: z.string(),
    stepData: opt(z.string().nullable()),
    actualResult: opt(z.string().nullable()),
    testRunStepBugsWrapper: opt(z.array(issueRef(mode))),
    testRunStepAttachments: z.array(attachmentRef(mode)),
  });

/** Run details (single run). */
export const testRunDetails = (mode: SchemaMode) =>
  entity(mode, {
    type: int(mode),
    summary: z.string(),
    comment: opt(z.string().nullable()),
    status: z.string(),
    testerName: opt(z.string().nullable()),
    testCaseKey: z.string(),
    testCaseId: int(mode),
    estimate: opt(z.string().nullable()),
    efforts: opt(z.string().nullable()),
    lozenge: z.string(),
    bugs: z.array(issueRef(mode)),
    testRunDetails: obj(mode, {
      testRunSteps: z.array(runStep(mode)),
      automationRunSteps: z.array(z.unknown()),
      testRunHistory: z.array(historyEntry(mode)),
      testRunBugs: z.array(issueRef(mode)),
      testRunAttachments: z.array(attachmentRef(mode)),
      prevRunId: opt(int(mode)),
      nextRunId: opt(int(mode)),
    }),
  });

/** Run status object of the created-runs query. */
export const runStatusObject = (mode: SchemaMode) =>
  obj(mode, {
    id: int(mode),
    name: z.string(),
    description: z.string(),
    color: z.string(),
    enabled: z.boolean(),
    immutable: z.boolean(),
    default: z.boolean(),
  });

/** Test step of a test case. */
export const testStep = (mode: SchemaMode) =>
  entity(mode, {
    tcId: int(mode),
    step: z.string(),
    stepData: opt(z.string().nullable()),
    expectedResult: z.string(),
    sequenceNumber: mode === 'tolerant' ? z.coerce.number().int() : z.union([z.number().int(), z.string()]),
  });

/** Execution-history item of a case: run details plus where the run belongs. */
export const executionHistoryItem = (mode: SchemaMode) =>
  z.intersection(
    testRunDetails(mode),
    obj(mode, {
      testPlanKey: z.string().nullable(),
      testPlanSummary: z.string().nullable(),
      testCycleId: int(mode).nullable(),
      testCycleSummary: z.string().nullable(),
      executionOn: opt(z.string().nullable()),
      executedBy: opt(z.string().nullable()),
    }),
  );

/** Created issue {id, key}. */
export const createdIssue = (mode: SchemaMode) => obj(mode, { id: int(mode), key: z.string() });

/** Automation job of a cycle. */
export const automationJob = (mode: SchemaMode) =>
  obj(mode, {
    automationBuildId: int(mode),
    appName: z.string(),
    jobKey: z.string(),
    testType: z.string(),
    params: z.string(),
  });

export const issueRefs = (mode: SchemaMode) => z.array(issueRef(mode));
