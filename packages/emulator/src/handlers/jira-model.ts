import {
  type CategoryKey,
  DEFAULT_STATUSES,
  statusCategory,
  offeredTransitions as workflowOffered,
  workflowStatusNames,
} from '../jira/workflows.js';
import { resolutions } from '../seed/seed-jira.js';
import { type Ctx, notFound, ServiceError } from '../service/context.js';
import type { Issue, Project, Store, User } from '../store/store.js';

/**
 * The Jira platform's vocabulary (statuses, issue types, resolutions) and how its objects are looked up and
 * presented. Ids are numeric strings as Jira writes them; issue and project ids are the emulator's row ids, so they
 * agree with the ids the test-management operations report.
 */

const NOT_VISIBLE = 'Issue does not exist or you do not have permission to see it.';

const CATEGORIES: Record<CategoryKey, { id: number; colorName: string; name: string }> = {
  new: { id: 2, colorName: 'blue-gray', name: 'To Do' },
  indeterminate: { id: 4, colorName: 'yellow', name: 'In Progress' },
  done: { id: 3, colorName: 'green', name: 'Done' },
};

/** Issue types of every project; a project also offers any other type name its issues use. */
const ISSUE_TYPES: readonly { id: string; name: string; description: string }[] = [
  { id: '1', name: 'Bug', description: 'A problem which impairs or prevents the functions of the product.' },
  { id: '3', name: 'Task', description: 'A task that needs to be done.' },
  { id: '10001', name: 'Story', description: 'A user story.' },
  { id: '10100', name: 'Requirement', description: 'A requirement (test management).' },
  { id: '10101', name: 'Test Case', description: 'A test case (test management).' },
  { id: '10102', name: 'Test Plan', description: 'A test plan (test management).' },
];

/** A resolution by name, with the instance's id for it (a stable one for a name it no longer has). */
function presentResolution(ctx: Ctx, name: string): Record<string, unknown> {
  const id = resolutions(ctx.store).find((r) => lower(r.name) === lower(name))?.id ?? stableId(40000, name);
  return { self: `${ctx.origin}/rest/api/2/resolution/${id}`, id, description: '', name };
}

/** A small stable number for a name (FNV-1a), so unknown statuses and types keep their id across restarts. */
function stableId(base: number, name: string): string {
  let h = 0x811c9dc5;
  for (const ch of name) h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  return String(base + (h % 10000));
}

/** Jira's timestamp: `2026-01-31T12:00:00.000+0000`. */
export function jiraTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}

export const lower = (s: string) => s.toLowerCase();

/** A status's id (Jira's own for its defaults, a stable one for other names) and category (../jira/workflows.ts). */
function statusInfo(store: Store, name: string): { id: string; category: CategoryKey } {
  const known = Object.entries(DEFAULT_STATUSES).find(([n]) => lower(n) === lower(name));
  return { id: known?.[1].id ?? stableId(20000, name), category: statusCategory(store, name) };
}

export function presentStatus(ctx: Ctx, name: string): Record<string, unknown> {
  const info = statusInfo(ctx.store, name);
  const cat = CATEGORIES[info.category];
  return {
    self: `${ctx.origin}/rest/api/2/status/${info.id}`,
    description: '',
    iconUrl: `${ctx.origin}/images/icons/statuses/generic.png`,
    name,
    id: info.id,
    statusCategory: {
      self: `${ctx.origin}/rest/api/2/statuscategory/${cat.id}`,
      id: cat.id,
      key: info.category,
      colorName: cat.colorName,
      name: cat.name,
    },
  };
}

export function issueTypeOf(name: string): { id: string; name: string; description: string } {
  return ISSUE_TYPES.find((t) => lower(t.name) === lower(name)) ?? { id: stableId(30000, name), name, description: '' };
}

export function presentIssueType(ctx: Ctx, name: string): Record<string, unknown> {
  const t = issueTypeOf(name);
  return {
    self: `${ctx.origin}/rest/api/2/issuetype/${t.id}`,
    id: t.id,
    description: t.description,
    iconUrl: `${ctx.origin}/secure/viewavatar?size=xsmall&avatarType=issuetype`,
    name: t.name,
    subtask: false,
  };
}

/** The issue types a project offers: the defaults plus any other type its issues use. */
export function projectIssueTypes(store: Store, project: Project): string[] {
  const names = ISSUE_TYPES.map((t) => t.name);
  for (const i of store.issues.filter((x) => x.projectId === project.id)) {
    if (!names.some((n) => lower(n) === lower(i.type))) names.push(i.type);
  }
  return names;
}

function avatarUrls(ctx: Ctx, kind: 'user' | 'project'): Record<string, string> {
  const path = kind === 'user' ? '/secure/useravatar?avatarId=10122' : '/secure/projectavatar?avatarId=10324';
  const out: Record<string, string> = {};
  for (const size of ['48x48', '24x24', '16x16', '32x32']) out[size] = `${ctx.origin}${path}&size=${size}`;
  return out;
}

export function presentUser(ctx: Ctx, user: User): Record<string, unknown> {
  return {
    self: `${ctx.origin}/rest/api/2/user?username=${encodeURIComponent(user.name)}`,
    key: lower(user.name),
    name: user.name,
    emailAddress: user.email,
    avatarUrls: avatarUrls(ctx, 'user'),
    displayName: user.displayName,
    active: true,
    timeZone: 'UTC',
  };
}

export function groupsOf(user: User): string[] {
  return user.admin ? ['jira-administrators', 'jira-software-users'] : ['jira-software-users'];
}

export function presentProjectRef(ctx: Ctx, p: Project): Record<string, unknown> {
  return {
    self: `${ctx.origin}/rest/api/2/project/${p.id}`,
    id: String(p.id),
    key: p.key,
    name: p.name,
    projectTypeKey: 'software',
    avatarUrls: avatarUrls(ctx, 'project'),
  };
}

const ALL_FIELDS = [
  'summary',
  'description',
  'status',
  'issuetype',
  'labels',
  'project',
  'resolution',
  'resolutiondate',
  'reporter',
  'created',
  'updated',
] as const;

/**
 * Jira's `fields=` selection: names, `*all` / `*navigable`, `-name` to leave one out; default all. The set also
 * holds `*all` and the `-name` tokens, so fields beyond the fixed ones (create-screen fields) follow the same rule.
 */
export function selectFields(spec: string | undefined): Set<string> {
  const tokens = (spec ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const includes = tokens.filter((t) => !t.startsWith('-'));
  const all = includes.length === 0 || includes.includes('*all') || includes.includes('*navigable');
  const out = new Set<string>(all ? [...ALL_FIELDS, '*all'] : includes);
  for (const t of tokens) {
    if (!t.startsWith('-')) continue;
    out.delete(t.slice(1));
    out.add(t);
  }
  return out;
}

/** An issue as Jira answers it; `extra` are its other fields (create-screen fields), chosen by `fields` too. */
export function presentIssue(
  ctx: Ctx,
  issue: Issue,
  fields: Set<string>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const project = ctx.store.projects.get(issue.projectId);
  const reporter = ctx.store.users.find((u) => u.name === issue.reporter);
  const all: Record<string, unknown> = {
    summary: issue.summary,
    description: issue.description === '' ? null : issue.description,
    status: presentStatus(ctx, issue.status),
    issuetype: presentIssueType(ctx, issue.type),
    labels: issue.labels,
    project: project ? presentProjectRef(ctx, project) : undefined,
    resolution: issue.resolution ? presentResolution(ctx, issue.resolution) : null,
    // The emulator keeps no resolution date; the last update is when a resolving transition happened.
    resolutiondate: issue.resolution ? jiraTime(issue.updated) : null,
    reporter: reporter ? presentUser(ctx, reporter) : null,
    created: jiraTime(issue.created),
    updated: jiraTime(issue.updated),
  };
  const out: Record<string, unknown> = {};
  for (const f of ALL_FIELDS) if (fields.has(f) && all[f] !== undefined) out[f] = all[f];
  for (const [f, v] of Object.entries(extra)) {
    if (fields.has(f) || (fields.has('*all') && !fields.has(`-${f}`))) out[f] = v;
  }
  return {
    expand: 'renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations',
    id: String(issue.id),
    self: `${ctx.origin}/rest/api/2/issue/${issue.id}`,
    key: issue.key,
    fields: out,
  };
}

/** An issue by numeric id or by key (keys match case-insensitively, as in Jira URLs); 404 otherwise. */
export function requireJiraIssue(ctx: Ctx): Issue {
  const ref = String(ctx.params.issueIdOrKey);
  const issue = /^\d+$/.test(ref)
    ? ctx.store.issues.get(Number(ref))
    : ctx.store.issues.find((i) => lower(i.key) === lower(ref));
  if (!issue) throw notFound(NOT_VISIBLE);
  return issue;
}

export function projectByIdOrKey(store: Store, ref: string): Project | undefined {
  return /^\d+$/.test(ref) ? store.projects.get(Number(ref)) : store.projects.find((p) => lower(p.key) === lower(ref));
}

/** Transitions offered from the issue's status (see ../jira/workflows.ts). */
export const offeredTransitions = workflowOffered;

export function cannotBeSet(field: string): ServiceError {
  return new ServiceError(400, `Field '${field}' cannot be set. It is not on the appropriate screen, or unknown.`, {
    field,
  });
}

export function loginInfo(store: Store, user: User): Record<string, unknown> {
  const sessions = store.sessions.filter((s) => s.userId === user.id).sort((a, b) => a.createdAt - b.createdAt);
  const previous = sessions.at(-2);
  return {
    failedLoginCount: 0,
    loginCount: sessions.length,
    ...(previous ? { previousLoginTime: jiraTime(previous.createdAt) } : {}),
  };
}

export function knownStatuses(store: Store): string[] {
  const names = new Set<string>(workflowStatusNames(store));
  for (const i of store.issues.all()) names.add(i.status);
  return [...names];
}

export function knownTypes(store: Store): string[] {
  const names = new Set<string>(ISSUE_TYPES.map((t) => t.name));
  for (const i of store.issues.all()) names.add(i.type);
  return [...names];
}

/** Jira's refusal of a summary, or undefined when it is fine. */
export function summaryProblem(summary: string): string | undefined {
  if (summary === '') return 'You must specify a summary of the issue.';
  if (/[\r\n]/.test(summary)) return 'The summary is invalid because it contains newline characters.';
  if (summary.length > 255) return 'Summary must be less than 255 characters.';
  return undefined;
}
