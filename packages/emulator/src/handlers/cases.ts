import {
  bugRefsOfRuns,
  byId,
  createIssue,
  ISSUE_TYPES,
  issueByKey,
  issueRef,
  issuesByIds,
  linkedIssues,
  requireOfType,
} from '../rules/domain.js';
import { ensureSuitePath, linkCaseToSuite, parseSuitePath, suitePathOf } from '../rules/suite-path.js';
import { type Ctx, type Handler, idf, invalid, notFound } from '../service/context.js';
import type { CaseStep, Issue, Project, Store } from '../store/store.js';

/**
 * Handlers of the test case and test step operations (group `cases`, and the case defects query).
 *
 * Choices where the spec is silent (listed in the package README):
 * - createTestCase: an unknown project is a 404 (the body key identifies it); `issuetype` may be omitted (it means
 *   Test Case) and matches case-insensitively; any other type is refused with 500, since these operations create
 *   test cases only.
 * - The two suite-linking operations document no 404: an unknown project or test case is a 500 naming the field.
 *   The suite project must be the test case project (500 otherwise). `createdTestSuiteId` is the id of the suite
 *   the case was filed in, whether this call created it or it existed.
 * - Steps are snapshots for runs: changing or deleting a case step leaves the steps of existing runs as they are.
 * - The `ID` variant writes `sequenceNumber` as a numeric string, the `id` variant as an integer.
 * - linkedTestPlans lists, per plan, the plan's cycles that hold a run of the case.
 * - automationReference is an empty string when none is set.
 */

/** A summary is one line: Jira refuses line breaks in it. */
const LINE_BREAK = /[\r\n]/;

function testCase(ctx: Ctx): Issue {
  return requireOfType(ctx.store, ctx.params.testCaseIssueKey, ISSUE_TYPES.testCase);
}

/** The steps of a case in order of position. */
function stepsOf(store: Store, tcId: number): CaseStep[] {
  return store.caseSteps.filter((s) => s.tcId === tcId).sort((a, b) => a.seq - b.seq || a.id - b.id);
}

function projectKeyOf(store: Store, issue: Issue): string {
  return store.projects.get(issue.projectId)?.key ?? '';
}

/** A test step in the variant's shape: `stepData` absent when unset. */
function presentStep(ctx: Ctx, s: CaseStep): Record<string, unknown> {
  return {
    ...idf(ctx.variant, s.id),
    tcId: s.tcId,
    step: s.step,
    ...(s.stepData === null ? {} : { stepData: s.stepData }),
    expectedResult: s.expectedResult,
    sequenceNumber: ctx.variant.ids === 'ID' ? String(s.seq) : s.seq,
  };
}

interface StepInput {
  step: string;
  stepData?: string | null;
  expectedResult: string;
}

/** Appends steps after the case's last position; returns the new rows. */
function appendSteps(store: Store, tcId: number, input: readonly StepInput[]): CaseStep[] {
  let seq = stepsOf(store, tcId).reduce((m, s) => Math.max(m, s.seq), 0);
  return input.map((s) => {
    seq += 1;
    return store.caseSteps.insert({
      tcId,
      seq,
      step: s.step,
      stepData: s.stepData ?? null,
      expectedResult: s.expectedResult,
    });
  });
}

/** Removes a step and moves the steps after it up one position, so positions stay 1..n. */
function deleteStepRow(store: Store, step: CaseStep): void {
  store.caseSteps.remove(step.id);
  // Run steps copied from it stay (runs are snapshots); they just no longer point at a case step.
  for (const rs of store.runSteps.filter((r) => r.caseStepId === step.id)) {
    rs.caseStepId = null;
    store.runSteps.update(rs);
  }
  stepsOf(store, step.tcId).forEach((s, i) => {
    if (s.seq !== i + 1) {
      s.seq = i + 1;
      store.caseSteps.update(s);
    }
  });
}

interface NewCase {
  fields: {
    project: { key: string };
    summary: string;
    description?: string;
    issuetype?: { name: string };
  };
  testcasesteps?: StepInput[];
}

/**
 * Checks the `fields` of a new test case and finds its project (`missingProject` builds the error for an unknown
 * one: the two create operations answer it differently). Writes nothing.
 */
function checkNewCase(
  store: Store,
  fields: NewCase['fields'],
  missingProject: (key: string) => Error,
): { project: Project } {
  const wanted = fields.issuetype?.name ?? ISSUE_TYPES.testCase;
  if (wanted.toLowerCase() !== ISSUE_TYPES.testCase.toLowerCase()) {
    throw invalid(
      `Invalid fields.issuetype.name "${wanted}": these operations create test cases only; expected "${ISSUE_TYPES.testCase}"`,
      'fields.issuetype.name',
    );
  }
  if (LINE_BREAK.test(fields.summary)) {
    throw invalid('Invalid fields.summary: it contains a line break; expected a single line', 'fields.summary');
  }
  const project = store.projects.find((p) => p.key === fields.project.key);
  if (!project) throw missingProject(fields.project.key);
  return { project };
}

/** Creates the test case issue (key `<PROJECT>-n`) and its steps in the order given. */
function createCase(ctx: Ctx, project: Project, body: NewCase): Issue {
  const { store } = ctx;
  const issue = createIssue(ctx, project, {
    type: ISSUE_TYPES.testCase,
    summary: body.fields.summary,
    description: body.fields.description,
  });
  appendSteps(store, issue.id, body.testcasesteps ?? []);
  return issue;
}

/** The longest suite name the service keeps (Jira's limit for a name field), as createTestSuite enforces it. */
const MAX_SUITE_NAME = 255;

/** The suite names of a path, refused (500) when the path names none or a name is too long. */
function suitePathNames(path: string, field: string): string[] {
  const names = parseSuitePath(path, field);
  const long = names.find((n) => n.length > MAX_SUITE_NAME);
  if (long !== undefined) {
    throw invalid(
      `${field} has a suite name of ${long.length} characters; a name has at most ${MAX_SUITE_NAME}`,
      field,
    );
  }
  return names;
}

/** A project of a suite-linking operation; these document no 404, so an unknown one is a validation error. */
function suiteProject(store: Store, key: string, field: string): Project {
  const project = store.projects.find((p) => p.key === key);
  if (!project) throw invalid(`Project "${key}" not found: ${field} must be the key of an existing project`, field);
  return project;
}

export const casesHandlers: Record<string, Handler> = {
  'cases.createTestCase': (ctx) => {
    const body = (ctx.body ?? {}) as Partial<NewCase>;
    if (!body.fields) throw notFound('Invalid request: "fields" is missing; expected {project: {key}, summary, ...}');
    const { project } = checkNewCase(ctx.store, body.fields, (key) => notFound(`Project ${key} not found`));
    const issue = createCase(ctx, project, body as NewCase);
    return { id: issue.id, key: issue.key };
  },

  'cases.createTestCaseInSuite': (ctx) => {
    const { store } = ctx;
    const body = ctx.body as NewCase & { linkToTestSuite: { testSuitePath: string; projectKey: string } };
    const link = body.linkToTestSuite;
    // Everything is checked before anything is written: a refused request leaves no case and no suite behind.
    const names = suitePathNames(link.testSuitePath, 'linkToTestSuite.testSuitePath');
    const suiteProj = suiteProject(store, link.projectKey, 'linkToTestSuite.projectKey');
    const { project } = checkNewCase(store, body.fields, (key) =>
      invalid(
        `Project "${key}" not found: fields.project.key must be the key of an existing project`,
        'fields.project.key',
      ),
    );
    if (project.id !== suiteProj.id) {
      throw invalid(
        `linkToTestSuite.projectKey "${suiteProj.key}" differs from fields.project.key "${project.key}": a test ` +
          'case is filed in the suites of its own project',
        'linkToTestSuite.projectKey',
      );
    }
    const issue = createCase(ctx, project, body);
    const { suite } = ensureSuitePath(store, project.id, names);
    linkCaseToSuite(store, suite, issue.id);
    return {
      testSuitePath: suitePathOf(store, suite),
      projectKey: project.key,
      testCaseKey: issue.key,
      createdTestSuiteId: suite.id,
      createdTestCase: { id: issue.id, key: issue.key },
    };
  },

  'cases.linkTestCaseToSuite': (ctx) => {
    const { store } = ctx;
    const body = ctx.body as { testCaseKeys: string[]; testSuitePath: string; projectKey: string };
    const names = suitePathNames(body.testSuitePath, 'testSuitePath');
    const project = suiteProject(store, body.projectKey, 'projectKey');
    const cases = [...new Set(body.testCaseKeys)].map((key) => {
      const issue = issueByKey(store, key);
      if (!issue) throw invalid(`Test case ${key} not found (testCaseKeys)`, 'testCaseKeys');
      if (issue.type !== ISSUE_TYPES.testCase) {
        throw invalid(`${key} is a ${issue.type}, not a Test Case (testCaseKeys)`, 'testCaseKeys');
      }
      if (issue.projectId !== project.id) {
        throw invalid(
          `Test case ${key} is not in project ${project.key}: a test case is filed in the suites of its own project`,
          'testCaseKeys',
        );
      }
      return issue;
    });
    const { suite } = ensureSuitePath(store, project.id, names);
    for (const tc of cases) linkCaseToSuite(store, suite, tc.id);
  },

  'cases.addSteps': (ctx) => {
    const tc = testCase(ctx);
    return appendSteps(ctx.store, tc.id, ctx.body as StepInput[]).map((s) => presentStep(ctx, s));
  },

  'cases.steps': (ctx) => {
    const tc = testCase(ctx);
    return stepsOf(ctx.store, tc.id).map((s) => presentStep(ctx, s));
  },

  'cases.linkedTestSuites': (ctx) => {
    const { store } = ctx;
    const tc = testCase(ctx);
    const paths = new Set<string>();
    for (const m of store.testSuiteMembers.filter((x) => x.tcId === tc.id)) {
      const suite = store.testSuites.get(m.suiteId);
      if (suite) paths.add(suitePathOf(store, suite));
    }
    return { summary: tc.summary, projectKey: projectKeyOf(store, tc), testSuites: [...paths].sort() };
  },

  'cases.linkedTestPlans': (ctx) => {
    const { store } = ctx;
    const tc = testCase(ctx);
    const cyclesWithRun = new Set(store.runs.filter((r) => r.tcId === tc.id).map((r) => r.cycleId));
    const planIds = store.planMembers.filter((m) => m.tcId === tc.id).map((m) => m.tpId);
    const plans = issuesByIds(store, planIds);
    return {
      summary: tc.summary,
      projectKey: projectKeyOf(store, tc),
      testPlans: plans.map((tp) => ({
        testPlanKey: tp.key,
        testPlanSummary: tp.summary,
        testCycles: store.cycles
          .filter((c) => c.tpId === tp.id && cyclesWithRun.has(c.id))
          .sort(byId)
          .map((c) => ({ testCycleId: c.id, testCycleName: c.name, notifyTester: c.notifyTester })),
      })),
    };
  },

  'cases.automationReference': (ctx) => {
    const tc = testCase(ctx);
    return {
      summary: tc.summary,
      projectKey: projectKeyOf(ctx.store, tc),
      automationReference: tc.automationReference ?? '',
    };
  },

  'cases.updateStepById': (ctx) => {
    const tc = testCase(ctx);
    const id = ctx.body.ID as number;
    const step = ctx.store.caseSteps.get(id);
    if (!step || step.tcId !== tc.id) throw notFound(`Test case ${tc.key} has no step with ID ${id}`);
    updateStep(ctx, step);
  },

  'cases.updateStepBySequence': (ctx) => {
    const tc = testCase(ctx);
    const seq = ctx.body.sequenceNumber as number;
    const step = stepsOf(ctx.store, tc.id).find((s) => s.seq === seq);
    if (!step) throw notFound(`Test case ${tc.key} has no step at sequenceNumber ${seq}`);
    updateStep(ctx, step);
  },

  'cases.deleteStep': (ctx) => {
    const tc = testCase(ctx);
    const id = ctx.params.stepId as number;
    const step = ctx.store.caseSteps.get(id);
    if (!step || step.tcId !== tc.id) throw notFound(`Test case ${tc.key} has no step with id ${id}`);
    deleteStepRow(ctx.store, step);
  },

  'cases.deleteStepBySequenceNo': (ctx) => {
    const tc = testCase(ctx);
    const seq = ctx.params.stepNo as number;
    const step = stepsOf(ctx.store, tc.id).find((s) => s.seq === seq);
    if (!step) throw notFound(`Test case ${tc.key} has no step at position ${seq}`);
    deleteStepRow(ctx.store, step);
  },

  'cases.linkedRequirements': (ctx) => {
    const tc = testCase(ctx);
    return linkedIssues(ctx.store, (l) => (l.tcId === tc.id ? l.reqId : undefined)).map(issueRef);
  },

  'cases.deleteLinkedRequirements': (ctx) => {
    const { store } = ctx;
    const tc = testCase(ctx);
    const keys = [...new Set(ctx.body.requirementKeys as string[])];
    const ids = new Set(keys.map((k) => requireOfType(store, k, ISSUE_TYPES.requirement).id));
    store.requirementCases.removeWhere((x) => x.tcId === tc.id && ids.has(x.reqId));
  },

  'defects.ofCase': (ctx) => {
    const { store } = ctx;
    const tc = testCase(ctx);
    const runs = store.runs.filter((r) => r.tcId === tc.id);
    return bugRefsOfRuns(store, runs);
  },
};

/** Applies the fields of an updateStep body that are present; a null stepData clears it. */
function updateStep(ctx: Ctx, step: CaseStep): void {
  const b = ctx.body as { step?: string; expectedResult?: string; stepData?: string | null };
  if (b.step !== undefined) step.step = b.step;
  if (b.expectedResult !== undefined) step.expectedResult = b.expectedResult;
  if (b.stepData !== undefined) step.stepData = b.stepData;
  ctx.store.caseSteps.update(step);
}
