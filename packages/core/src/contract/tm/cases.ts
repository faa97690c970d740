import * as z from 'zod';
import { defineOperation, int, issueKey, lazy, obj, type SchemaMode } from '../define.js';
import { createdIssue, issueRefs, testStep } from './schemas.js';

/**
 * Test cases and steps, and what a case is linked to. A step is addressed by id or by its 1-based `sequenceNumber`,
 * which the service keeps gapless (deleting a step renumbers the ones after it).
 */

const caseKey = lazy(() => z.object({ testCaseIssueKey: issueKey }));

/** A positive integer that the request may carry as a JSON number or as a numeric string (`"2"`). */
const position = (what: string) =>
  z
    .union([
      z.number().int().nonnegative(`expected ${what} as a positive integer`),
      z.string().trim().regex(/^\d+$/, `expected ${what} as a positive integer, such as 2 or "2"`),
    ])
    .transform(Number);

/** A numeric id in a path segment: digits only. */
const idSegment = (what: string) => z.string().trim().regex(/^\d+$/, `expected ${what}: digits only`).transform(Number);

/** One step of a test case as a request gives it; `stepData` is optional (null is the same as absent). */
export const stepInput = lazy(() =>
  z.strictObject({
    step: z.string().trim().min(1, 'expected the step text (it may not be blank)'),
    stepData: z.string().nullable().optional(),
    expectedResult: z.string(),
  }),
);

/** The `fields` of a new test case: a subset of Jira's issue-creation fields. */
export const testCaseFields = lazy(() =>
  z.strictObject({
    project: z.strictObject({ key: z.string().trim().min(1, 'expected the key of the project, such as DEMO') }),
    summary: z.string().trim().min(1, 'expected a non-empty summary').max(255),
    description: z.string().optional(),
    /** Absent means `Test Case`; any other type is refused. */
    issuetype: z.strictObject({ name: z.string().trim().min(1, 'expected the issue type name Test Case') }).optional(),
  }),
);

/** Where a suite-linking operation files the case: an escaped suite path (`A/B\/C`) in a project. */
const suitePath = lazy(() =>
  z.string().min(1, 'expected a suite path such as Checkout/Cards (a "/" in a name is written \\/)'),
);
const projectKey = lazy(() => z.string().trim().min(1, 'expected the key of a project, such as DEMO'));

/** Linked test suites of a case: the escaped path of every suite the case is in. */
export const linkedTestSuites = (mode: SchemaMode) =>
  obj(mode, { summary: z.string(), projectKey: z.string(), testSuites: z.array(z.string()) });

/** Linked test plans of a case: every plan it is a member of, with the plan's cycles that hold a run of it. */
export const linkedTestPlans = (mode: SchemaMode) =>
  obj(mode, {
    summary: z.string(),
    projectKey: z.string(),
    testPlans: z.array(
      obj(mode, {
        testPlanKey: z.string(),
        testPlanSummary: z.string(),
        testCycles: z.array(
          obj(mode, { testCycleId: int(mode), testCycleName: z.string(), notifyTester: z.boolean() }),
        ),
      }),
    ),
  });

/** Automation reference of a case; an empty string when none is set. */
export const automationReference = (mode: SchemaMode) =>
  obj(mode, {
    summary: z.string(),
    projectKey: z.string(),
    automationReference: mode === 'tolerant' ? z.string().nullable() : z.string(),
  });

export const casesCreateTestCase = defineOperation({
  id: 'cases.createTestCase',
  service: 'tm',
  group: 'cases',
  method: 'POST',
  path: '/testCase/create/createTestCase',
  summary: 'Create a test case issue (key PROJECT-n) with its steps, in the order given',
  // `fields` (and the whole body) are optional here so that a missing `fields` reaches the handler, which answers
  // the documented 404 instead of the 500 of a validation error.
  body: () =>
    z
      .strictObject({
        fields: testCaseFields().nullish(),
        testcasesteps: z.array(stepInput()).optional(),
      })
      .optional(),
  response: createdIssue,
  errors: [
    { status: 404, when: '`fields` is missing, or the project is not found' },
    { status: 500, when: 'a field is invalid, or the issue type is not Test Case' },
  ],
  creates: true,
});

export const casesCreateTestCaseInSuite = defineOperation({
  id: 'cases.createTestCaseInSuite',
  service: 'tm',
  group: 'cases',
  method: 'POST',
  path: '/testSuite/createTestCase',
  summary:
    'Create a test case with its steps and file it in a test suite, creating each missing level of the suite path',
  body: () =>
    z.strictObject({
      fields: testCaseFields(),
      testcasesteps: z.array(stepInput()).optional(),
      linkToTestSuite: z.strictObject({ testSuitePath: suitePath(), projectKey: projectKey() }),
    }),
  response: (mode) =>
    obj(mode, {
      testSuitePath: z.string(),
      projectKey: z.string(),
      testCaseKey: z.string(),
      createdTestSuiteId: int(mode),
      createdTestCase: createdIssue(mode),
    }),
  errors: [
    {
      status: 500,
      when:
        'a field is invalid, the issue type is not Test Case, a project is not found (no 404 is documented), the ' +
        'suite path names no suite, or the suite project is not the test case project',
    },
  ],
  creates: true,
  variants: ['id'],
});

export const casesLinkTestCaseToSuite = defineOperation({
  id: 'cases.linkTestCaseToSuite',
  service: 'tm',
  group: 'cases',
  method: 'POST',
  path: '/testSuite/linkTestCase',
  summary: 'File test cases in a test suite, creating each missing level of the suite path (linking again is a no-op)',
  body: () =>
    z.strictObject({
      testCaseKeys: z.array(issueKey).min(1, 'expected at least one test case key'),
      testSuitePath: suitePath(),
      projectKey: projectKey(),
    }),
  errors: [
    {
      status: 500,
      when:
        'the project or a test case is not found (no 404 is documented), a key is not a Test Case of that project, ' +
        'or the suite path names no suite',
    },
  ],
  creates: true,
  variants: ['id'],
});

export const casesAddSteps = defineOperation({
  id: 'cases.addSteps',
  service: 'tm',
  group: 'cases',
  method: 'POST',
  path: '/testCase/{testCaseIssueKey}/addSteps',
  summary: 'Append steps to a test case; their positions continue after the last step',
  params: caseKey,
  body: () => z.array(stepInput()),
  response: (mode) => z.array(testStep(mode)),
  errors: [{ status: 404, when: 'the test case is not found' }],
  creates: true,
});

export const casesSteps = defineOperation({
  id: 'cases.steps',
  service: 'tm',
  group: 'cases',
  method: 'GET',
  path: '/testCase/{testCaseIssueKey}/steps',
  summary: 'The steps of a test case, in order',
  params: caseKey,
  response: (mode) => z.array(testStep(mode)),
  errors: [{ status: 404, when: 'the test case is not found' }],
});

export const casesLinkedTestSuites = defineOperation({
  id: 'cases.linkedTestSuites',
  service: 'tm',
  group: 'cases',
  method: 'GET',
  path: '/testCase/{testCaseIssueKey}/linkedTestSuites',
  summary: 'The test suites a test case is filed in, as escaped suite paths',
  params: caseKey,
  response: linkedTestSuites,
  errors: [{ status: 404, when: 'the test case is not found' }],
});

export const casesLinkedTestPlans = defineOperation({
  id: 'cases.linkedTestPlans',
  service: 'tm',
  group: 'cases',
  method: 'GET',
  path: '/testCase/{testCaseIssueKey}/linkedTestPlans',
  summary: 'The test plans a test case is a member of, each with its cycles that hold a run of the case',
  params: caseKey,
  response: linkedTestPlans,
  errors: [{ status: 404, when: 'the test case is not found' }],
});

export const casesAutomationReference = defineOperation({
  id: 'cases.automationReference',
  service: 'tm',
  group: 'cases',
  method: 'GET',
  path: '/testCase/{testCaseIssueKey}/automationReference',
  summary: 'The automation reference of a test case (an empty string when none is set)',
  params: caseKey,
  response: automationReference,
  errors: [{ status: 404, when: 'the test case is not found' }],
});

/** Fields of a step update; an absent field keeps its value, a null stepData clears it. */
const stepChanges = lazy(() => ({
  step: stepInput().shape.step.optional(),
  expectedResult: z.string().optional(),
  stepData: z.string().nullable().optional(),
}));

export const casesUpdateStepById = defineOperation({
  id: 'cases.updateStepById',
  service: 'tm',
  group: 'cases',
  method: 'PUT',
  path: '/testCase/{testCaseIssueKey}/updateStep',
  summary: 'Change a step of a test case, found by its id (`ID`); absent fields keep their values',
  params: caseKey,
  // Documented as a string; a JSON number is accepted as well.
  body: () => z.strictObject({ ID: position('ID (the step id)'), ...stepChanges() }),
  errors: [{ status: 404, when: 'the test case is not found, or it has no step with this ID' }],
});

export const casesUpdateStepBySequence = defineOperation({
  id: 'cases.updateStepBySequence',
  service: 'tm',
  group: 'cases',
  method: 'PUT',
  path: '/testCase/{testCaseIssueKey}/updateStep',
  summary: 'Change a step of a test case, found by its 1-based position (`sequenceNumber`)',
  params: caseKey,
  body: () => z.strictObject({ sequenceNumber: position('sequenceNumber'), ...stepChanges() }),
  errors: [{ status: 404, when: 'the test case is not found, or it has no step at this sequenceNumber' }],
});

export const casesDeleteStep = defineOperation({
  id: 'cases.deleteStep',
  service: 'tm',
  group: 'cases',
  method: 'DELETE',
  path: '/testCase/{testCaseIssueKey}/deleteStep/{stepId}',
  summary: 'Delete a step of a test case by id; the steps after it move up one position',
  params: () => z.object({ testCaseIssueKey: issueKey, stepId: idSegment('a step id') }),
  errors: [{ status: 404, when: 'the test case is not found, or it has no step with this id' }],
});

export const casesDeleteStepBySequenceNo = defineOperation({
  id: 'cases.deleteStepBySequenceNo',
  service: 'tm',
  group: 'cases',
  method: 'DELETE',
  path: '/testCase/{testCaseIssueKey}/deleteStepBySequenceNo/{stepNo}',
  summary: 'Delete the step at a 1-based position; the steps after it move up one position',
  params: () => z.object({ testCaseIssueKey: issueKey, stepNo: idSegment('a step position (1-based)') }),
  errors: [{ status: 404, when: 'the test case is not found, or it has no step at this position' }],
});

export const casesLinkedRequirements = defineOperation({
  id: 'cases.linkedRequirements',
  service: 'tm',
  group: 'cases',
  method: 'GET',
  path: '/testCase/{testCaseIssueKey}/linkedRequirements',
  summary: 'The requirements a test case is linked to',
  params: caseKey,
  response: issueRefs,
  errors: [{ status: 404, when: 'the test case is not found' }],
});

export const casesDeleteLinkedRequirements = defineOperation({
  id: 'cases.deleteLinkedRequirements',
  service: 'tm',
  group: 'cases',
  method: 'DELETE',
  path: '/testCase/{testCaseIssueKey}/deleteLinkedRequirements',
  summary: 'Unlink requirements from a test case (a requirement that is not linked is left alone)',
  params: caseKey,
  body: () => z.strictObject({ requirementKeys: z.array(issueKey) }),
  errors: [{ status: 404, when: 'the test case or a requirement key is not found, or is not of that issue type' }],
});

export const casesGetDefects = defineOperation({
  id: 'defects.ofCase',
  service: 'tm',
  group: 'defects',
  method: 'GET',
  path: '/testCase/{testCaseIssueKey}/getDefects',
  summary: 'Defects linked to any run (of any cycle, ad hoc runs included) or run step of a test case, each once',
  params: caseKey,
  response: issueRefs,
  errors: [{ status: 404, when: 'the test case is not found' }],
});

export const caseOperations = [
  casesCreateTestCase,
  casesCreateTestCaseInSuite,
  casesLinkTestCaseToSuite,
  casesAddSteps,
  casesSteps,
  casesLinkedTestSuites,
  casesLinkedTestPlans,
  casesAutomationReference,
  // The by-id form routes (defined first); the server picks the by-position form for a body with `sequenceNumber`.
  casesUpdateStepById,
  casesUpdateStepBySequence,
  casesDeleteStep,
  casesDeleteStepBySequenceNo,
  casesLinkedRequirements,
  casesDeleteLinkedRequirements,
  casesGetDefects,
];
