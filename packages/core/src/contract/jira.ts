import * as z from 'zod';
import { defineOperation, intString, lazy, type OperationDef, obj, type SchemaMode } from './define.js';

/**
 * The Jira platform subset the test-management add-on lives in (Jira Server / Data Center REST API 2): the
 * caller, projects, issues, workflow transitions, JQL search and the cookie session. Paths are full paths (the
 * jira service has an empty prefix). Jira spells ids as strings; tolerant mode also accepts numbers and keeps
 * unknown keys. Jira's error body is `{"errorMessages": [...], "errors": {field: message}}`.
 */

/** In tolerant mode a field may also be null or absent (the client does not depend on it). */
function loose<T extends z.ZodType>(mode: SchemaMode, t: T): z.ZodType<z.output<T> | null | undefined> {
  return (mode === 'tolerant' ? t.nullable().optional() : t) as z.ZodType<z.output<T> | null | undefined>;
}

/** A Jira id: a numeric string on the wire; tolerant mode accepts a number and normalises to a string. */
const jiraId = (mode: SchemaMode) =>
  mode === 'tolerant'
    ? z.union([z.string(), z.number().int()]).transform((v) => String(v))
    : z.string().regex(/^\d+$/, 'expected a numeric id as a string');

/** Jira's timestamp `2026-01-31T12:00:00.000+0000` (tolerant: any string). */
const jiraTime = (mode: SchemaMode) =>
  mode === 'tolerant'
    ? z.string()
    : z
        .string()
        .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{4}$/, 'expected yyyy-MM-ddTHH:mm:ss.SSS+0000');

const avatarUrls = (mode: SchemaMode) => loose(mode, z.record(z.string(), z.string()));

/** A user as Jira's user resources write it. */
export const jiraUser = (mode: SchemaMode) =>
  obj(mode, {
    self: loose(mode, z.string()),
    key: loose(mode, z.string()),
    name: z.string(),
    emailAddress: loose(mode, z.string()),
    avatarUrls: avatarUrls(mode),
    displayName: z.string(),
    active: loose(mode, z.boolean()),
    timeZone: loose(mode, z.string()),
  });

const sizedList = (mode: SchemaMode, item: z.ZodType) =>
  loose(mode, obj(mode, { size: z.number().int(), items: z.array(item) }));

/** The calling user (`GET /rest/api/2/myself`); group items are listed with `expand=groups`. */
export const jiraMyself = (mode: SchemaMode) =>
  obj(mode, {
    self: loose(mode, z.string()),
    key: loose(mode, z.string()),
    name: z.string(),
    emailAddress: loose(mode, z.string()),
    avatarUrls: avatarUrls(mode),
    displayName: z.string(),
    active: loose(mode, z.boolean()),
    deleted: loose(mode, z.boolean()),
    timeZone: loose(mode, z.string()),
    locale: loose(mode, z.string()),
    groups: sizedList(mode, obj(mode, { name: z.string(), self: loose(mode, z.string()) })),
    applicationRoles: sizedList(mode, obj(mode, { key: z.string(), name: z.string() })),
    expand: loose(mode, z.string()),
  });

/** An issue type of a project. */
export const jiraIssueType = (mode: SchemaMode) =>
  obj(mode, {
    self: loose(mode, z.string()),
    id: jiraId(mode),
    description: loose(mode, z.string()),
    iconUrl: loose(mode, z.string()),
    name: z.string(),
    subtask: loose(mode, z.boolean()),
  });

export const jiraStatusCategory = (mode: SchemaMode) =>
  obj(mode, {
    self: loose(mode, z.string()),
    id: mode === 'tolerant' ? z.union([z.number().int(), z.string()]) : z.number().int(),
    key: z.string(),
    colorName: loose(mode, z.string()),
    name: z.string(),
  });

export const jiraStatus = (mode: SchemaMode) =>
  obj(mode, {
    self: loose(mode, z.string()),
    description: loose(mode, z.string()),
    iconUrl: loose(mode, z.string()),
    name: z.string(),
    id: jiraId(mode),
    statusCategory: jiraStatusCategory(mode),
  });

const projectRef = (mode: SchemaMode) =>
  obj(mode, {
    self: loose(mode, z.string()),
    id: jiraId(mode),
    key: z.string(),
    name: z.string(),
    projectTypeKey: loose(mode, z.string()),
    avatarUrls: avatarUrls(mode),
  });

export const jiraProject = (mode: SchemaMode) =>
  obj(mode, {
    expand: loose(mode, z.string()),
    self: loose(mode, z.string()),
    id: jiraId(mode),
    key: z.string(),
    description: loose(mode, z.string()),
    lead: loose(mode, jiraUser(mode)),
    components: loose(mode, z.array(z.unknown())),
    issueTypes: z.array(jiraIssueType(mode)),
    assigneeType: loose(mode, z.string()),
    versions: loose(mode, z.array(z.unknown())),
    name: z.string(),
    roles: loose(mode, z.record(z.string(), z.string())),
    avatarUrls: avatarUrls(mode),
    projectTypeKey: loose(mode, z.string()),
    archived: loose(mode, z.boolean()),
  });

/** Issue fields; each is present only when requested (`fields=`), all by default. */
const issueFields = (mode: SchemaMode) =>
  obj(mode, {
    summary: z.string().optional(),
    description: z.string().nullable().optional(),
    status: jiraStatus(mode).optional(),
    issuetype: jiraIssueType(mode).optional(),
    labels: z.array(z.string()).optional(),
    project: projectRef(mode).optional(),
    resolution: obj(mode, {
      self: loose(mode, z.string()),
      id: jiraId(mode),
      description: loose(mode, z.string()),
      name: z.string(),
    })
      .nullable()
      .optional(),
    resolutiondate: jiraTime(mode).nullable().optional(),
    reporter: jiraUser(mode).nullable().optional(),
    created: jiraTime(mode).optional(),
    updated: jiraTime(mode).optional(),
  });

export const jiraIssue = (mode: SchemaMode) =>
  obj(mode, {
    expand: loose(mode, z.string()),
    id: jiraId(mode),
    self: loose(mode, z.string()),
    key: z.string(),
    fields: issueFields(mode),
  });

export const jiraTransitionItem = (mode: SchemaMode) =>
  obj(mode, {
    id: jiraId(mode),
    name: z.string(),
    to: jiraStatus(mode),
    hasScreen: loose(mode, z.boolean()),
    isGlobal: loose(mode, z.boolean()),
    isInitial: loose(mode, z.boolean()),
    isAvailable: loose(mode, z.boolean()),
    isConditional: loose(mode, z.boolean()),
  });

const loginInfo = (mode: SchemaMode) =>
  obj(mode, {
    failedLoginCount: loose(mode, z.number().int()),
    loginCount: loose(mode, z.number().int()),
    lastFailedLoginTime: z.string().optional(),
    previousLoginTime: z.string().optional(),
  });

const issuePath = lazy(() => z.object({ issueIdOrKey: z.string().min(1) }));

/** `{"name": ...}` or `{"id": ...}` reference inside an issue's fields. */
const byNameOrId = lazy(() =>
  z.looseObject({
    id: z.union([z.string(), z.number().int()]).optional(),
    name: z.string().optional(),
  }),
);

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

export const jiraCreateIssue = defineOperation({
  id: 'jira.createIssue',
  service: 'jira',
  group: 'jira',
  method: 'POST',
  path: '/rest/api/2/issue',
  summary: 'Create an issue (answers 201 {id, key, self})',
  body: () =>
    z.strictObject({
      /** Fields outside this subset are refused by the emulator with Jira's "Field 'x' cannot be set" answer. */
      fields: z.looseObject({
        project: byNameOrId().extend({ key: z.string().optional() }).optional(),
        summary: z.string().optional(),
        description: z.string().nullable().optional(),
        issuetype: byNameOrId().optional(),
        labels: z.array(z.string()).optional(),
      }),
      update: z.record(z.string(), z.unknown()).optional(),
    }),
  response: (mode) => obj(mode, { id: jiraId(mode), key: z.string(), self: loose(mode, z.string()) }),
  errors: [
    {
      status: 400,
      when: 'summary, project or issue type missing or invalid, a label with spaces, or a field that cannot be set',
    },
  ],
  creates: true,
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
  response: (mode) =>
    obj(mode, {
      expand: loose(mode, z.string()),
      startAt: z.number().int(),
      maxResults: z.number().int(),
      total: z.number().int(),
      issues: z.array(jiraIssue(mode)),
    }),
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
  jiraGetIssue,
  jiraTransitions,
  jiraDoTransition,
  jiraSearch,
  jiraLogin,
  jiraCurrentSession,
  jiraLogout,
];
