import * as z from 'zod';
import { defineOperation, int, issueKey, issueRef, lazy, obj, type SchemaMode } from '../define.js';
import { issueRefs } from './schemas.js';

/** Requirements (hierarchy, case links, defects found through them) and the per-project requirement suite tree. */

const requirementKey = lazy(() => z.object({ requirementIssueKey: issueKey }));

/** A numeric id that a path or query string carries: digits only. */
const idString = (what: string) => z.string().trim().regex(/^\d+$/, `expected ${what}: digits only`).transform(Number);

/** Item of a suite list, and a sub-suite of a suite's detail. */
const suiteItem = (mode: SchemaMode) => obj(mode, { name: z.string(), id: int(mode), projectId: int(mode) });

export const requirementsAddChildren = defineOperation({
  id: 'requirements.addChildren',
  service: 'tm',
  group: 'requirements',
  method: 'POST',
  path: '/requirement/{requirementIssueKey}/addChildren',
  summary:
    'Make requirements children of a requirement; a requirement has one parent, so a child that had another ' +
    'parent moves here',
  params: requirementKey,
  body: () => z.strictObject({ requirementKeys: z.array(issueKey) }),
  errors: [
    { status: 404, when: 'the requirement or a child key is not found, or is not a Requirement issue' },
    { status: 500, when: 'a requirement would become its own child, or the hierarchy would get a cycle' },
  ],
});

export const requirementsGetChildren = defineOperation({
  id: 'requirements.getChildren',
  service: 'tm',
  group: 'requirements',
  method: 'GET',
  path: '/requirement/{requirementIssueKey}/getChildren',
  summary: 'All descendants of a requirement, depth first (each child followed by its own descendants)',
  params: requirementKey,
  response: issueRefs,
  errors: [{ status: 404, when: 'the requirement is not found' }],
});

export const requirementsGetImmediateChildren = defineOperation({
  id: 'requirements.getOnlyImmediateChildren',
  service: 'tm',
  group: 'requirements',
  method: 'GET',
  path: '/requirement/{requirementIssueKey}/getOnlyImmediateChildren',
  summary: 'The direct children of a requirement',
  params: requirementKey,
  response: issueRefs,
  errors: [{ status: 404, when: 'the requirement is not found' }],
});

export const requirementsLinkTestCase = defineOperation({
  id: 'requirements.linkTestCase',
  service: 'tm',
  group: 'requirements',
  method: 'POST',
  path: '/requirement/{requirementIssueKey}/linkTestCase',
  summary: 'Link test cases to a requirement (already linked ones stay linked once)',
  params: requirementKey,
  body: () => z.strictObject({ testCaseKeys: z.array(issueKey) }),
  errors: [{ status: 404, when: 'the requirement or a test case key is not found, or is not of that issue type' }],
});

export const requirementsLinkedTestCases = defineOperation({
  id: 'requirements.linkedTestCases',
  service: 'tm',
  group: 'requirements',
  method: 'GET',
  path: '/requirement/{requirementIssueKey}/linkedTestCases',
  summary: 'Test cases linked to a requirement',
  params: requirementKey,
  response: issueRefs,
  errors: [{ status: 404, when: 'the requirement is not found' }],
});

export const requirementsDeleteLinkedTestCases = defineOperation({
  id: 'requirements.deleteLinkedTestCases',
  service: 'tm',
  group: 'requirements',
  method: 'DELETE',
  path: '/requirement/{requirementIssueKey}/deleteLinkedTestCases',
  summary: 'Unlink test cases from a requirement (a test case that is not linked is left alone)',
  params: requirementKey,
  body: () => z.strictObject({ testCaseKeys: z.array(issueKey) }),
  errors: [{ status: 404, when: 'the requirement or a test case key is not found, or is not of that issue type' }],
});

export const requirementsGetDefects = defineOperation({
  id: 'defects.ofRequirement',
  service: 'tm',
  group: 'defects',
  method: 'GET',
  path: '/requirement/{requirementIssueKey}/getDefects',
  summary:
    "Defects linked to any run (of any cycle, ad hoc runs included) or run step of the requirement's linked " +
    'test cases, each once',
  params: requirementKey,
  response: issueRefs,
  errors: [{ status: 404, when: 'the requirement is not found' }],
});

export const requirementsLinkedSuites = defineOperation({
  id: 'requirements.linkedRequirementSuites',
  service: 'tm',
  group: 'requirements',
  method: 'GET',
  path: '/requirement/{requirementIssueKey}/linkedRequirementSuites',
  summary:
    "Where a requirement is filed: its suite path(s) ('/'-joined names, several paths joined by ', '), and its " +
    "hierarchy (issue keys from the root ancestor down to it, joined by '->')",
  params: requirementKey,
  response: (mode) =>
    obj(mode, {
      // Empty when the requirement is in no suite; a client also accepts null there.
      requirementSuites:
        mode === 'tolerant'
          ? z
              .string()
              .nullable()
              .transform((v) => v ?? '')
          : z.string(),
      summary: z.string(),
      projectKey: z.string(),
      requirementHierarchy: z.string(),
    }),
  errors: [{ status: 404, when: 'the requirement is not found' }],
});

export const requirementSuitesCreate = defineOperation({
  id: 'requirementSuites.create',
  service: 'tm',
  group: 'requirementSuites',
  method: 'POST',
  path: '/requirementSuite/create',
  summary: "Create a requirement suite in a project, at the root (parentSuiteId '0') or under another suite",
  body: () =>
    z.strictObject({
      projectKey: z.string().trim().min(1, 'expected the key of the project to create the suite in'),
      suiteName: z.string().trim().min(1, 'expected a non-empty suite name').max(255),
      /** A string on the wire; a number is accepted too (the service's JSON reader turns it into one). */
      parentSuiteId: z
        .union([
          z.string().trim().regex(/^\d+$/, "expected the id of the parent suite: digits only, '0' for a root suite"),
          z.number().int().min(0),
        ])
        .transform(Number)
        .optional(),
    }),
  response: (mode) =>
    obj(mode, { projectId: int(mode), suiteName: z.string(), parentSuiteId: int(mode), id: int(mode) }),
  errors: [
    { status: 404, when: 'the project is not found, or the parent suite is not found in that project' },
    { status: 500, when: 'the suite name is missing, or the parent already has a suite of that name' },
  ],
  creates: true,
});

export const requirementSuitesDelete = defineOperation({
  id: 'requirementSuites.delete',
  service: 'tm',
  group: 'requirementSuites',
  method: 'DELETE',
  path: '/requirementSuite/delete',
  summary: 'Delete a requirement suite with its sub-suites and their memberships (the requirements stay)',
  query: () =>
    z.object({
      projectKeyOrId: z.string().trim().min(1, 'expected a project key or id'),
      requirementSuiteId: idString('a requirement suite id'),
    }),
  errors: [{ status: 404, when: 'the project is not found, or the suite is not found in that project' }],
});

export const requirementSuitesAddMember = defineOperation({
  id: 'requirementSuites.addMember',
  service: 'tm',
  group: 'requirementSuites',
  method: 'POST',
  path: '/requirementSuite/addMember',
  summary: 'File a requirement (by issue id) in a suite; a requirement may be in several suites',
  query: () =>
    z.object({
      requirementSuiteId: idString('a requirement suite id'),
      memberId: idString('the issue id of a requirement'),
      memberProjectKeyOrId: z.string().trim().min(1, "expected the key or id of the requirement's project"),
    }),
  errors: [
    {
      status: 404,
      when: 'the suite, the project, or a Requirement issue with that id in that project is not found',
    },
  ],
});

export const requirementSuitesDeleteMember = defineOperation({
  id: 'requirementSuites.deleteMember',
  service: 'tm',
  group: 'requirementSuites',
  method: 'POST',
  path: '/requirementSuite/deleteMember',
  summary: 'Remove a requirement (by issue id) from a suite',
  query: () =>
    z.object({
      requirementSuiteId: idString('a requirement suite id'),
      memberId: idString('the issue id of a requirement'),
    }),
  errors: [{ status: 404, when: 'the suite is not found, or the requirement is not a member of it' }],
});

export const requirementSuitesList = defineOperation({
  id: 'requirementSuites.list',
  service: 'tm',
  group: 'requirementSuites',
  method: 'GET',
  path: '/requirement/{projectKey}/requirementSuites',
  summary: "The root level of a project's requirement tree: its root suites, and its requirements that are in no suite",
  params: () => z.object({ projectKey: z.string().min(1) }),
  response: (mode) => obj(mode, { requirementSuites: z.array(suiteItem(mode)), requirements: z.array(issueRef(mode)) }),
  errors: [{ status: 404, when: 'the project is not found' }],
});

export const requirementSuitesGet = defineOperation({
  id: 'requirementSuites.get',
  service: 'tm',
  group: 'requirementSuites',
  method: 'GET',
  path: '/requirement/requirementSuite/{suiteId}',
  summary: 'A requirement suite with its direct sub-suites and its member requirements',
  params: () => z.object({ suiteId: idString('a requirement suite id') }),
  response: (mode) =>
    obj(mode, {
      id: int(mode),
      name: z.string(),
      projectId: int(mode),
      requirementSuites: z.array(suiteItem(mode)),
      requirements: z.array(issueRef(mode)),
    }),
  errors: [{ status: 404, when: 'the suite is not found' }],
});

export const requirementOperations = [
  requirementsAddChildren,
  requirementsGetChildren,
  requirementsGetImmediateChildren,
  requirementsLinkTestCase,
  requirementsLinkedTestCases,
  requirementsDeleteLinkedTestCases,
  requirementsGetDefects,
  requirementsLinkedSuites,
  requirementSuitesCreate,
  requirementSuitesDelete,
  requirementSuitesAddMember,
  requirementSuitesDeleteMember,
  requirementSuitesList,
  requirementSuitesGet,
];
