import * as z from 'zod';
import { intString, lazy, obj, type SchemaMode } from './define.js';

/** The Jira REST API 2 shapes that jira.ts uses; Jira spells ids as strings, tolerant mode accepts numbers too. */

/** In tolerant mode a field may also be null or absent (the client does not depend on it). */
export function loose<T extends z.ZodType>(mode: SchemaMode, t: T): z.ZodType<z.output<T> | null | undefined> {
  return (mode === 'tolerant' ? t.nullable().optional() : t) as z.ZodType<z.output<T> | null | undefined>;
}

/** A Jira id: a numeric string on the wire; tolerant mode accepts a number and normalises to a string. */
export const jiraId = (mode: SchemaMode) =>
  mode === 'tolerant'
    ? z.union([z.string(), z.number().int()]).transform((v) => String(v))
    : z.string().regex(/^\d+$/, 'expected a numeric id as a string');

/** Jira's timestamp `2026-01-31T12:00:00.000+0000` (tolerant: any string). */
export const jiraTime = (mode: SchemaMode) =>
  mode === 'tolerant'
    ? z.string()
    : z
        .string()
        .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{4}$/, 'expected yyyy-MM-ddTHH:mm:ss.SSS+0000');

export const avatarUrls = (mode: SchemaMode) => loose(mode, z.record(z.string(), z.string()));

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

export const projectRef = (mode: SchemaMode) =>
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

/** A component, version or priority as an issue's fields write it: `{self, id, name}`. */
const namedRef = (mode: SchemaMode) => obj(mode, { self: loose(mode, z.string()), id: jiraId(mode), name: z.string() });

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
    // Create-screen fields, present when the issue type's screen has them (null or [] when unset); custom fields
    // (`customfield_NNNNN`) come as Jira writes their kind: a string, a number, {id, value}, [{id, value}], a user.
    components: z.array(namedRef(mode)).optional(),
    fixVersions: z.array(namedRef(mode)).optional(),
    versions: z.array(namedRef(mode)).optional(),
    priority: namedRef(mode).nullable().optional(),
    assignee: jiraUser(mode).nullable().optional(),
    duedate: z.string().nullable().optional(),
    environment: z.string().nullable().optional(),
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

export const loginInfo = (mode: SchemaMode) =>
  obj(mode, {
    failedLoginCount: loose(mode, z.number().int()),
    loginCount: loose(mode, z.number().int()),
    lastFailedLoginTime: z.string().optional(),
    previousLoginTime: z.string().optional(),
  });

/** `{"name": ...}` or `{"id": ...}` reference inside an issue's fields. */
export const byNameOrId = lazy(() =>
  z.looseObject({
    id: z.union([z.string(), z.number().int()]).optional(),
    name: z.string().optional(),
  }),
);

/**
 * The create fields casebridge names; the object is loose, so any other field (`customfield_NNNNN`, any JSON) passes
 * and Jira decides (400 for a field not on the create screen). Shared with synapseRT's createRunBug's `fields`.
 */
export const issueCreateFields = lazy(() => ({
  labels: z.array(z.string()).optional(),
  components: z.array(byNameOrId()).optional(),
  priority: byNameOrId().optional(),
  fixVersions: z.array(byNameOrId()).optional(),
  versions: z.array(byNameOrId()).optional(),
  assignee: z.looseObject({ name: z.string().nullable() }).nullable().optional(),
  /** `yyyy-MM-dd`. */
  duedate: z.string().nullable().optional(),
  environment: z.string().nullable().optional(),
}));

/** A field of a create screen, as Jira's createmeta describes it. */
export const jiraFieldMeta = (mode: SchemaMode) =>
  obj(mode, {
    fieldId: z.string(),
    name: z.string(),
    required: z.boolean(),
    schema: obj(mode, {
      /** `string`, `number`, `date`, `array`, `option`, `priority`, `user`, `project`, `issuetype`, ... */
      type: z.string(),
      /** Item type of an array: `string`, `component`, `version`, `option`. */
      items: z.string().optional(),
      /** System field id (`components`), or for a custom field its type key and numeric id. */
      system: z.string().optional(),
      custom: z.string().optional(),
      customId: z.number().int().optional(),
    }),
    /** The values a field accepts (components, versions, priorities, options, project, issue type). */
    allowedValues: z
      .array(
        obj(mode, {
          self: loose(mode, z.string()),
          id: jiraId(mode),
          name: z.string().optional(),
          value: z.string().optional(),
          key: z.string().optional(),
        }),
      )
      .optional(),
    hasDefaultValue: z.boolean(),
    defaultValue: z.unknown().optional(),
    operations: z.array(z.string()),
  });

/** A page of Jira DC's createmeta resources (8.4+): `{maxResults, startAt, total, isLast, values}`. */
export const metaPage = <T extends z.ZodType>(mode: SchemaMode, item: T) =>
  obj(mode, {
    maxResults: z.number().int(),
    startAt: z.number().int(),
    total: z.number().int(),
    isLast: z.boolean(),
    values: z.array(item),
  });

export const metaPaging = () =>
  z.object({ startAt: intString.min(0).optional(), maxResults: intString.min(0).optional() });
