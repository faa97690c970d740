import * as z from 'zod';
import { defineOperation, int, issueRef, lazy, obj, type SchemaMode } from '../define.js';
import { issueRefs } from './schemas.js';

/**
 * Test suites and the build / environment defect queries. A suite path joins names with `/` (a literal one is
 * `\/`); suites spell `id` in both variants, and their operations belong to the `id` variant only.
 */

/** An item of a project's suite list: `name` its own, `nameEncoded` the escaped full path suite operations take. */
export const testSuiteItem = (mode: SchemaMode) =>
  obj(mode, {
    name: z.string(),
    state: int(mode),
    id: int(mode),
    projectId: int(mode),
    nameEncoded: z.string(),
  });

/** A test case in a suite: `memberType` 1 is a test case, `memberId` its issue id, `sequence` its 1-based position. */
export const testSuiteMember = (mode: SchemaMode) =>
  obj(mode, {
    memberType: int(mode),
    id: int(mode),
    sequence: int(mode),
    memberId: int(mode),
    testCaseIssue: issueRef(mode),
  });

/** Test suite detail: the list item plus its direct test-case members, in sequence order. */
export const testSuiteDetail = (mode: SchemaMode) =>
  z.intersection(testSuiteItem(mode), obj(mode, { testSuiteMembers: z.array(testSuiteMember(mode)) }));

/** A suite id as the path carries it: digits only (`1e2` or `0x10` are not ids). */
const suiteId = lazy(() => z.string().trim().regex(/^\d+$/, 'expected a test suite id: digits only').transform(Number));

const projectKey = lazy(() => z.string().trim().min(1, 'expected the key of a project, such as DEMO'));

export const suitesCreateTestSuite = defineOperation({
  id: 'testSuites.create',
  service: 'tm',
  group: 'testSuites',
  method: 'POST',
  path: '/testSuite/createTestSuite',
  summary: 'Create a test suite path in a project, each missing level of it (creating an existing path is a no-op)',
  body: () =>
    z.strictObject({
      testSuitePath: z.string().min(1, 'expected a suite path such as Checkout/Cards (a "/" in a name is written \\/)'),
      projectKey: projectKey(),
    }),
  response: (mode) => obj(mode, { testSuitePath: z.string(), projectKey: z.string() }),
  errors: [
    {
      status: 500,
      when: 'the project is not found (no 404 is documented), the path names no suite or has an empty name, or a name is longer than 255 characters',
    },
  ],
  creates: true,
  variants: ['id'],
});

export const suitesTestSuites = defineOperation({
  id: 'testSuites.list',
  service: 'tm',
  group: 'testSuites',
  method: 'GET',
  path: '/testSuite/{projectKey}/testSuites',
  summary: 'Every test suite of a project, all levels, in tree order',
  params: () => z.object({ projectKey: z.string().min(1) }),
  response: (mode) => z.array(testSuiteItem(mode)),
  errors: [{ status: 404, when: 'the project is not found' }],
  variants: ['id'],
});

export const suitesTestSuite = defineOperation({
  id: 'testSuites.get',
  service: 'tm',
  group: 'testSuites',
  method: 'GET',
  path: '/testSuite/testSuite/{suiteId}',
  summary: 'A test suite with its test-case members',
  params: () => z.object({ suiteId: suiteId() }),
  response: testSuiteDetail,
  errors: [{ status: 404, when: 'the suite is not found' }],
  variants: ['id'],
});

export const defectsBuildDefects = defineOperation({
  id: 'defects.ofBuild',
  service: 'tm',
  group: 'defects',
  method: 'GET',
  path: '/testPlan/defects/buildDefects/{buildName}',
  summary: 'Defects linked to runs (or run steps) of every test cycle whose build is this name',
  params: () => z.object({ buildName: z.string().min(1) }),
  response: issueRefs,
  errors: [{ status: 404, when: 'no test cycle has this build' }],
});

export const defectsEnvironmentDefects = defineOperation({
  id: 'defects.ofEnvironment',
  service: 'tm',
  group: 'defects',
  method: 'GET',
  path: '/testPlan/defects/environmentDefects/{envName}',
  summary: 'Defects linked to runs (or run steps) of every test cycle whose environment is this name',
  params: () => z.object({ envName: z.string().min(1) }),
  response: issueRefs,
  errors: [{ status: 404, when: 'no test cycle has this environment' }],
});

export const suiteOperations = [
  suitesCreateTestSuite,
  suitesTestSuites,
  suitesTestSuite,
  defectsBuildDefects,
  defectsEnvironmentDefects,
];
