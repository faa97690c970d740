import * as z from 'zod';
import { defineOperation, intString, lazy, type OperationDef, obj, type SchemaMode } from './define.js';
import {
  avatarUrls,
  byNameOrId,
  issueCreateFields,
  jiraFieldMeta,
  jiraId,
  jiraIssue,
  jiraIssueType,
  jiraMyself,
  jiraProject,
  jiraTransitionItem,
  loginInfo,
  loose,
  metaPage,
  metaPaging,
} from './jira-shapes.js';

export * from './jira-shapes.js';

/**
 * The Jira subset the add-on lives in (REST API 2): the caller, projects, issues, create screens, transitions, JQL
 * search, the cookie session. Full paths (empty prefix); errors `{"errorMessages": [...], "errors": {field: message}}`.
 */

const issuePath = lazy(() => z.object({ issueIdOrKey: z.string().min(1) }));

export const jiraMyselfOp = defineOperation({
  id: 'jira.myself',
  service: 'jira',
  group: 'jira',
  method: 'GET',
  path: '/rest/api/2/myself',
  summary: 'The calling user',
  query: () => z.object({ expand: z.string().optional() }),
  response: jiraMyself,
  errors: [],
});

export const jiraProjectOp = defineOperation({
  id: 'jira.project',
  service: 'jira',
  group: 'jira',
  method: 'GET',
  path: '/rest/api/2/project/{projectIdOrKey}',
  summary: 'A project with its issue types',
  params: () => z.object({ projectIdOrKey: z.string().min(1) }),
  query: () => z.object({ expand: z.string().optional() }),
  response: jiraProject,
  errors: [{ status: 404, when: 'no project has that id or key' }],
});

/** One issue create, `{fields, update}`: the body of `POST /issue` and each element of a bulk create. */
const issueCreate = () =>
  z.strictObject({
    fields: z.looseObject({
      project: byNameOrId().extend({ key: z.string().optional() }).optional(),
      summary: z.string().optional(),
      description: z.string().nullable().optional(),
      issuetype: byNameOrId().optional(),
      ...issueCreateFields(),
    }),
    update: z.record(z.string(), z.unknown()).optional(),
  });

export const jiraCreateIssue = defineOperation({
  id: 'jira.createIssue',
  service: 'jira',
  group: 'jira',
  method: 'POST',
  path: '/rest/api/2/issue',
  summary: "Create an issue (answers 201 {id, key, self}); the fields must be on the issue type's create screen",
  body: issueCreate,
  response: (mode) => obj(mode, { id: jiraId(mode), key: z.string(), self: loose(mode, z.string()) }),
  errors: [
    {
      status: 400,
      when:
        'Jira\'s field errors, `{"errorMessages": [], "errors": {"<fieldId>": "<message>"}}`, one entry per field at ' +
        'fault: summary, project or issue type missing or invalid; a required field missing ' +
        '(`"customfield_10010": "Team is required."`); a field not on the create screen or unknown ' +
        '(`"Field \'x\' cannot be set. It is not on the appropriate screen, or unknown."`); a value that is not ' +
        'allowed (`"components": "Component name \'Foo\' is not valid"`, ' +
        '`"priority": "Priority name \'Urgentest\' is not valid"`); a label with spaces',
    },
  ],
  creates: true,
});

const bulkElementError = (mode: SchemaMode) =>
  obj(mode, {
    status: z.number().int().optional(),
    elementErrors: loose(
      mode,
      z.object({
        errorMessages: z.array(z.string()).optional(),
        errors: z.record(z.string(), z.string()).optional(),
      }),
    ).optional(),
    failedElementNumber: z.number().int().optional(),
  });

export const jiraBulkCreateIssues = defineOperation({
  id: 'jira.bulkCreateIssues',
  service: 'jira',
  group: 'jira',
  method: 'POST',
  path: '/rest/api/2/issue/bulk',
  summary:
    'Create many issues at once (answers 201 {issues: [{id, key, self}], errors: [{status, elementErrors, ' +
    'failedElementNumber}]}): what can be created is, each refused element is named by its 0-based position',
  body: () =>
    z.strictObject({
      issueUpdates: z.array(issueCreate()).min(1),
    }),
  response: (mode) =>
    obj(mode, {
      issues: z.array(obj(mode, { id: jiraId(mode), key: z.string(), self: loose(mode, z.string()) })),
      errors: z.array(bulkElementError(mode)).default([]),
    }),
  errors: [
    {
      status: 400,
      when:
        'no element could be created (the body is the same `{issues: [], errors: [...]}`), or the request holds more ' +
        'issues than the server takes at once (`{"errorMessages": ["... exceeds the maximum of 50 ..."]}`)',
    },
    { status: 404, when: 'a Jira without bulk create (a proxy or an old server); some answer 405' },
  ],
  creates: true,
});

export const jiraCreateMetaIssueTypes = defineOperation({
  id: 'jira.createMetaIssueTypes',
  service: 'jira',
  group: 'jira',
  method: 'GET',
  path: '/rest/api/2/issue/createmeta/{projectIdOrKey}/issuetypes',
  summary: 'The issue types a user can create in a project (Jira DC 8.4+), paged (`startAt`, `maxResults` 50)',
  params: () => z.object({ projectIdOrKey: z.string().min(1) }),
  query: metaPaging,
  response: (mode) => metaPage(mode, jiraIssueType(mode)),
  errors: [{ status: 404, when: 'no project has that id or key' }],
});

export const jiraCreateMetaFields = defineOperation({
  id: 'jira.createMetaFields',
  service: 'jira',
  group: 'jira',
  method: 'GET',
  path: '/rest/api/2/issue/createmeta/{projectIdOrKey}/issuetypes/{issueTypeId}',
  summary:
    "The fields of an issue type's create screen (Jira DC 8.4+): id, name, `required`, schema, allowed values; paged",
  params: () => z.object({ projectIdOrKey: z.string().min(1), issueTypeId: z.string().min(1) }),
  query: metaPaging,
  response: (mode) => metaPage(mode, jiraFieldMeta(mode)),
  errors: [{ status: 404, when: 'no project has that id or key, or the project offers no issue type of that id' }],
});

export const jiraCreateMeta = defineOperation({
  id: 'jira.createMeta',
  service: 'jira',
  group: 'jira',
  method: 'GET',
  path: '/rest/api/2/issue/createmeta',
  summary:
    'Create-screen metadata of projects and issue types in one answer (deprecated in Jira 9, served by 8.x); ' +
    'fields only with `expand=projects.issuetypes.fields`, keyed by field id',
  query: () =>
    z.object({
      projectKeys: z.string().optional(),
      projectIds: z.string().optional(),
      issuetypeNames: z.string().optional(),
      issuetypeIds: z.string().optional(),
      expand: z.string().optional(),
    }),
  response: (mode) =>
    obj(mode, {
      expand: loose(mode, z.string()),
      projects: z.array(
        obj(mode, {
          self: loose(mode, z.string()),
          id: jiraId(mode),
          key: z.string(),
          name: z.string(),
          avatarUrls: avatarUrls(mode),
          issuetypes: z.array(
            obj(mode, {
              self: loose(mode, z.string()),
              id: jiraId(mode),
              description: loose(mode, z.string()),
              iconUrl: loose(mode, z.string()),
              name: z.string(),
              subtask: loose(mode, z.boolean()),
              expand: loose(mode, z.string()),
              fields: z.record(z.string(), jiraFieldMeta(mode)).optional(),
            }),
          ),
        }),
      ),
    }),
  // An unknown project key or issue type name is left out of the answer, as in Jira: no error of its own.
  errors: [],
});

export const jiraGetIssue = defineOperation({
  id: 'jira.issue',
  service: 'jira',
  group: 'jira',
  method: 'GET',
  path: '/rest/api/2/issue/{issueIdOrKey}',
  summary: 'An issue by id or key',
  params: issuePath,
  query: () => z.object({ fields: z.string().optional(), expand: z.string().optional() }),
  response: jiraIssue,
  errors: [{ status: 404, when: 'the issue does not exist' }],
});

export const jiraEditIssue = defineOperation({
  id: 'jira.editIssue',
  service: 'jira',
  group: 'jira',
  method: 'PUT',
  path: '/rest/api/2/issue/{issueIdOrKey}',
  summary: "Edit an issue's summary or description (answers 204); other fields are not modelled",
  params: issuePath,
  body: () =>
    z.strictObject({
      fields: z.strictObject({ summary: z.string().optional(), description: z.string().nullable().optional() }),
    }),
  errors: [
    { status: 400, when: 'the summary is empty, has a line break or is longer than 255 characters' },
    { status: 404, when: 'the issue does not exist' },
  ],
});

export const jiraTransitions = defineOperation({
  id: 'jira.transitions',
  service: 'jira',
  group: 'jira',
  method: 'GET',
  path: '/rest/api/2/issue/{issueIdOrKey}/transitions',
  summary: "The workflow transitions offered from the issue's current status",
  params: issuePath,
  query: () => z.object({ expand: z.string().optional(), transitionId: z.string().optional() }),
  response: (mode) => obj(mode, { expand: loose(mode, z.string()), transitions: z.array(jiraTransitionItem(mode)) }),
  errors: [{ status: 404, when: 'the issue does not exist' }],
});

export const jiraDoTransition = defineOperation({
  id: 'jira.transition',
  service: 'jira',
  group: 'jira',
  method: 'POST',
  path: '/rest/api/2/issue/{issueIdOrKey}/transitions',
  summary: 'Move the issue through a transition (answers 204); closing sets the resolution, reopening clears it',
  params: issuePath,
  body: () =>
    z.strictObject({
      transition: z.looseObject({ id: z.union([z.string().min(1), z.number().int()]) }),
      fields: z.looseObject({ resolution: byNameOrId().optional() }).optional(),
      update: z.record(z.string(), z.unknown()).optional(),
    }),
  errors: [
    { status: 400, when: 'the transition is not offered from the current status' },
    { status: 404, when: 'the issue does not exist' },
  ],
});

/** A page of a JQL search (GET or POST alike). */
const searchAnswer = (mode: SchemaMode) =>
  obj(mode, {
    expand: loose(mode, z.string()),
    startAt: z.number().int(),
    maxResults: z.number().int(),
    total: z.number().int(),
    issues: z.array(jiraIssue(mode)),
  });

export const jiraSearch = defineOperation({
  id: 'jira.search',
  service: 'jira',
  group: 'jira',
  method: 'GET',
  path: '/rest/api/2/search',
  summary:
    'Search issues with JQL (project, issuetype, status, summary ~, description ~, text ~, labels, key; AND; ORDER BY)',
  query: () =>
    z.object({
      jql: z.string().optional(),
      startAt: intString.min(0).optional(),
      maxResults: intString.min(0).optional(),
      fields: z.string().optional(),
      expand: z.string().optional(),
      validateQuery: z.string().optional(),
    }),
  response: searchAnswer,
  errors: [{ status: 400, when: 'the JQL cannot be parsed, or names a field or value that does not exist' }],
});

/**
 * The search with a JSON body, for JQL too long for a URL (Tomcat refuses a request line over 8 KB with 400 or 414);
 * keyset.ts uses it only then, so the usual search stays a GET.
 */
export const jiraSearchPost = defineOperation({
  id: 'jira.searchPost',
  service: 'jira',
  group: 'jira',
  method: 'POST',
  path: '/rest/api/2/search',
  summary: 'Search issues with JQL, the parameters in the body (for JQL too long for a URL)',
  body: () =>
    z.looseObject({
      jql: z.string().optional(),
      startAt: z.number().int().min(0).optional(),
      maxResults: z.number().int().min(0).optional(),
      fields: z.array(z.string()).optional(),
      expand: z.array(z.string()).optional(),
      validateQuery: z.union([z.string(), z.boolean()]).optional(),
    }),
  response: searchAnswer,
  errors: [{ status: 400, when: 'the JQL cannot be parsed, or names a field or value that does not exist' }],
});

export const jiraLogin = defineOperation({
  id: 'jira.login',
  service: 'jira',
  group: 'jira',
  method: 'POST',
  path: '/rest/auth/1/session',
  summary: 'Log in with user name and password; answers a JSESSIONID session (also set as a cookie)',
  body: () => z.strictObject({ username: z.string().min(1), password: z.string() }),
  response: (mode) =>
    obj(mode, {
      session: obj(mode, { name: z.literal('JSESSIONID'), value: z.string().min(1) }),
      loginInfo: loose(mode, loginInfo(mode)),
    }),
  errors: [{ status: 401, when: 'the user name or password is wrong' }],
  creates: true,
});

export const jiraCurrentSession = defineOperation({
  id: 'jira.session',
  service: 'jira',
  group: 'jira',
  method: 'GET',
  path: '/rest/auth/1/session',
  summary: 'The current user of the session (or of the supplied credentials)',
  response: (mode) =>
    obj(mode, { self: loose(mode, z.string()), name: z.string(), loginInfo: loose(mode, loginInfo(mode)) }),
  errors: [],
});

export const jiraLogout = defineOperation({
  id: 'jira.logout',
  service: 'jira',
  group: 'jira',
  method: 'DELETE',
  path: '/rest/auth/1/session',
  summary: 'Log out: end the session of the JSESSIONID cookie (answers 204)',
  errors: [],
});

export const jiraOperations: OperationDef[] = [
  jiraMyselfOp,
  jiraProjectOp,
  jiraCreateIssue,
  jiraBulkCreateIssues,
  jiraCreateMetaIssueTypes,
  jiraCreateMetaFields,
  jiraCreateMeta,
  jiraGetIssue,
  jiraEditIssue,
  jiraTransitions,
  jiraDoTransition,
  jiraSearch,
  jiraSearchPost,
  jiraLogin,
  jiraCurrentSession,
  jiraLogout,
];
