import { openSession, parseCookies } from '../auth.js';
import { type Handler, notFound, Reply, ServiceError } from '../context.js';
import { createIssue } from '../domain.js';
import { type JqlClause, type JqlQuery, parseJql } from '../jql.js';
import type { Issue, Store } from '../store.js';
import { checkScreenFields, presentScreenFields } from './jiraFields.js';
import { jiraMetaHandlers } from './jiraMeta.js';
import {
  cannotBeSet,
  groupsOf,
  issueTypeOf,
  knownStatuses,
  knownTypes,
  loginInfo,
  lower,
  offeredTransitions,
  presentIssue,
  presentIssueType,
  presentProjectRef,
  presentStatus,
  presentUser,
  projectByIdOrKey,
  projectIssueTypes,
  RESOLUTIONS,
  requireJiraIssue,
  selectFields,
} from './jiraModel.js';

/**
 * The Jira platform subset (REST API 2 and the cookie session) that the test-management add-on lives in. Every
 * authenticated user may use it, the unlicensed one included: only the add-on refuses him. Its vocabulary and
 * presenters are in jiraModel.ts; the JQL parser in ../jql.ts.
 */

// -------------------------------------------------------------------------------------------------------------
// JQL evaluation

function noSuchValue(value: string, field: string): ServiceError {
  return new ServiceError(400, `The value '${value}' does not exist for the field '${field}'.`);
}

/** Turns a clause into a predicate, refusing values Jira would not know (Jira answers 400 for those too). */
function predicate(store: Store, c: JqlClause): (i: Issue) => boolean {
  const values = c.values;
  let test: (i: Issue) => boolean;
  switch (c.field) {
    case 'project': {
      const ids = values.map((v) => {
        const p = projectByIdOrKey(store, v);
        if (!p) throw noSuchValue(v, 'project');
        return p.id;
      });
      test = (i) => ids.includes(i.projectId);
      break;
    }
    case 'issuetype': {
      const known = knownTypes(store);
      const wanted = values.map((v) => {
        if (/^\d+$/.test(v)) {
          const byId = known.find((n) => issueTypeOf(n).id === v);
          if (!byId) throw noSuchValue(v, 'issuetype');
          return lower(byId);
        }
        if (!known.some((n) => lower(n) === lower(v))) throw noSuchValue(v, 'issuetype');
        return lower(v);
      });
      test = (i) => wanted.includes(lower(i.type));
      break;
    }
    case 'status': {
      const known = knownStatuses(store);
      for (const v of values) if (!known.some((n) => lower(n) === lower(v))) throw noSuchValue(v, 'status');
      const wanted = values.map(lower);
      test = (i) => wanted.includes(lower(i.status));
      break;
    }
    case 'resolution': {
      const wanted = values.map(lower);
      test = (i) => wanted.includes(i.resolution === null ? 'unresolved' : lower(i.resolution));
      break;
    }
    case 'labels':
      test = (i) => i.labels.some((l) => values.includes(l));
      break;
    case 'key':
      test = (i) => values.some((v) => lower(v) === lower(i.key) || v === String(i.id));
      break;
    case 'summary': {
      const text = lower(values[0] ?? '');
      test = (i) => lower(i.summary).includes(text);
      break;
    }
    case 'description': {
      const text = lower(values[0] ?? '');
      test = (i) => lower(i.description ?? '').includes(text);
      break;
    }
    case 'text': {
      const text = lower(values[0] ?? '');
      test = (i) => lower(i.summary).includes(text) || lower(i.description ?? '').includes(text);
      break;
    }
  }
  return c.negated ? (i) => !test(i) : test;
}

function sortKey(issue: Issue, field: string): number | string {
  switch (field) {
    case 'created':
      return issue.created;
    case 'updated':
      return issue.updated;
    case 'summary':
      return lower(issue.summary);
    default:
      return issue.id;
  }
}

function runJql(store: Store, q: JqlQuery): Issue[] {
  const tests = q.clauses.map((c) => predicate(store, c));
  const hits = store.issues.filter((i) => tests.every((t) => t(i)));
  const order = q.orderBy.length ? q.orderBy : [{ field: 'id', direction: 'ASC' as const }];
  return hits.sort((a, b) => {
    for (const o of order) {
      const x = sortKey(a, o.field);
      const y = sortKey(b, o.field);
      if (x !== y) return (x < y ? -1 : 1) * (o.direction === 'DESC' ? -1 : 1);
    }
    // Ties (issues created in the same millisecond) follow creation order in the requested direction.
    return (a.id - b.id) * (order[0]?.direction === 'DESC' ? -1 : 1);
  });
}

const MAX_RESULTS = 1000;

export const jiraHandlers: Record<string, Handler> = {
  ...jiraMetaHandlers,

  'jira.myself': (ctx) => {
    const user = ctx.user;
    const expand = String(ctx.query.expand ?? '').split(',');
    const groups = groupsOf(user);
    return {
      ...presentUser(ctx, user),
      deleted: false,
      locale: 'en_US',
      // Like Jira, the items are listed only when expanded; the size always.
      groups: {
        size: groups.length,
        items: expand.includes('groups')
          ? groups.map((name) => ({ name, self: `${ctx.origin}/rest/api/2/group?groupname=${name}` }))
          : [],
      },
      applicationRoles: {
        size: 1,
        items: expand.includes('applicationRoles') ? [{ key: 'jira-software', name: 'Jira Software' }] : [],
      },
      expand: 'groups,applicationRoles',
    };
  },

  'jira.project': (ctx) => {
    const ref = String(ctx.params.projectIdOrKey);
    const p = projectByIdOrKey(ctx.store, ref);
    if (!p) {
      throw notFound(`No project could be found with ${/^\d+$/.test(ref) ? 'id' : 'key'} '${ref}'.`);
    }
    const lead = ctx.store.users.find((u) => u.admin) ?? ctx.store.users.all()[0];
    return {
      expand: 'description,lead,url,projectKeys',
      ...presentProjectRef(ctx, p),
      description: '',
      lead: lead ? presentUser(ctx, lead) : undefined,
      components: [],
      issueTypes: projectIssueTypes(ctx.store, p).map((name) => presentIssueType(ctx, name)),
      assigneeType: 'UNASSIGNED',
      versions: [],
      roles: {},
      archived: false,
    };
  },

  'jira.createIssue': (ctx) => {
    const f = ctx.body.fields as Record<string, any>;
    // Project and issue type decide the screen, so Jira reports them alone; then every field at fault at once.
    const invalid = (errors: Record<string, string>) => new Reply(400, { errorMessages: [], errors });
    if (!f.project || (f.project.key === undefined && f.project.id === undefined)) {
      return invalid({ project: 'project is required' });
    }
    const project =
      f.project.id !== undefined
        ? ctx.store.projects.get(Number(f.project.id))
        : projectByIdOrKey(ctx.store, String(f.project.key));
    if (!project) return invalid({ project: 'valid project is required' });

    if (!f.issuetype || (f.issuetype.id === undefined && f.issuetype.name === undefined)) {
      return invalid({ issuetype: 'issue type is required' });
    }
    const offered = projectIssueTypes(ctx.store, project);
    const type =
      f.issuetype.id !== undefined
        ? offered.find((n) => issueTypeOf(n).id === String(f.issuetype.id))
        : offered.find((n) => lower(n) === lower(String(f.issuetype.name)));
    if (!type) return invalid({ issuetype: 'valid issue type is required' });

    const checked = checkScreenFields(ctx.store, project, type, f);
    const summary = typeof f.summary === 'string' ? f.summary.trim() : '';
    const summaryError = summaryProblem(summary);
    const errors = { ...(summaryError ? { summary: summaryError } : {}), ...checked.errors };
    if (Object.keys(errors).length) return invalid(errors);

    const issue = createIssue(ctx, project, {
      type,
      summary,
      description: f.description,
      labels: [...new Set(checked.labels)],
      fields: checked.fields,
    });
    return new Reply(201, {
      id: String(issue.id),
      key: issue.key,
      self: `${ctx.origin}/rest/api/2/issue/${issue.id}`,
    });
  },

  'jira.editIssue': (ctx) => {
    const issue = requireJiraIssue(ctx);
    const f = ctx.body.fields as { summary?: string; description?: string | null };
    if (f.summary !== undefined) {
      const summary = f.summary.trim();
      const problem = summaryProblem(summary);
      if (problem) return new Reply(400, { errorMessages: [], errors: { summary: problem } });
      issue.summary = summary;
    }
    if (f.description !== undefined) issue.description = f.description ?? '';
    ctx.store.issues.update(issue);
    return new Reply(204, undefined);
  },

  'jira.issue': (ctx) => {
    const issue = requireJiraIssue(ctx);
    return presentIssue(ctx, issue, selectFields(ctx.query.fields), presentScreenFields(ctx, issue));
  },

  'jira.transitions': (ctx) => {
    const issue = requireJiraIssue(ctx);
    const only = ctx.query.transitionId as string | undefined;
    return {
      expand: 'transitions',
      transitions: offeredTransitions(ctx.store, issue)
        .filter((t) => only === undefined || String(t.id) === only)
        .map((t) => ({
          id: String(t.id),
          name: t.name,
          to: presentStatus(ctx, t.to),
          hasScreen: false,
          isGlobal: t.from.length === 0,
          isInitial: false,
          isAvailable: true,
          isConditional: false,
        })),
    };
  },

  'jira.transition': (ctx) => {
    const issue = requireJiraIssue(ctx);
    const wanted = String(ctx.body.transition.id);
    const t = offeredTransitions(ctx.store, issue).find((x) => String(x.id) === wanted);
    if (!t) throw new ServiceError(400, `Transition id '${wanted}' is not valid for this issue.`);
    const fields = (ctx.body.fields ?? {}) as Record<string, any>;
    let resolution = t.resolution;
    for (const k of Object.keys(fields)) if (k !== 'resolution') throw cannotBeSet(k);
    if (fields.resolution !== undefined) {
      // Only a resolving transition has the resolution on its screen.
      if (t.resolution === null) throw cannotBeSet('resolution');
      const r = fields.resolution as { id?: string | number; name?: string };
      const name = Object.keys(RESOLUTIONS).find((n) =>
        r.id !== undefined ? RESOLUTIONS[n] === String(r.id) : lower(n) === lower(String(r.name)),
      );
      if (!name) {
        throw new ServiceError(400, `Resolution '${r.name ?? r.id}' does not exist.`, { field: 'resolution' });
      }
      resolution = name;
    }
    issue.status = t.to;
    issue.resolution = resolution;
    issue.updated = ctx.now();
    ctx.store.issues.update(issue);
    return new Reply(204, undefined);
  },

  'jira.search': (ctx) => {
    const query = parseJql(String(ctx.query.jql ?? ''));
    const hits = runJql(ctx.store, query);
    const startAt = (ctx.query.startAt as number | undefined) ?? 0;
    const maxResults = Math.min((ctx.query.maxResults as number | undefined) ?? 50, MAX_RESULTS);
    const fields = selectFields(ctx.query.fields);
    return {
      expand: 'schema,names',
      startAt,
      maxResults,
      total: hits.length,
      issues: hits
        .slice(startAt, startAt + maxResults)
        .map((i) => presentIssue(ctx, i, fields, presentScreenFields(ctx, i))),
    };
  },

  'jira.login': (ctx) => {
    const { username, password } = ctx.body as { username: string; password: string };
    const user = ctx.store.users.find((u) => u.name === username);
    // A session login takes the password only (a personal access token is a Bearer credential).
    if (!user || user.password !== password) throw new ServiceError(401, 'Login failed');
    const session = openSession(ctx.store, user, ctx.now());
    return new Reply(
      200,
      { session: { name: 'JSESSIONID', value: session.id }, loginInfo: loginInfo(ctx.store, user) },
      { 'set-cookie': session.cookie },
    );
  },

  'jira.session': (ctx) => ({
    self: `${ctx.origin}/rest/api/latest/user?username=${encodeURIComponent(ctx.user.name)}`,
    name: ctx.user.name,
    loginInfo: loginInfo(ctx.store, ctx.user),
  }),

  'jira.logout': (ctx) => {
    const sid = parseCookies(typeof ctx.headers.cookie === 'string' ? ctx.headers.cookie : undefined).JSESSIONID;
    if (sid && ctx.store.sessions.get(sid)?.userId === ctx.user.id) ctx.store.sessions.remove(sid);
    return new Reply(204, undefined, { 'set-cookie': 'JSESSIONID=; Path=/; Max-Age=0; HttpOnly' });
  },
};

/** Jira's refusal of a summary, or undefined when it is fine. */
function summaryProblem(summary: string): string | undefined {
  if (summary === '') return 'You must specify a summary of the issue.';
  if (/[\r\n]/.test(summary)) return 'The summary is invalid because it contains newline characters.';
  if (summary.length > 255) return 'Summary must be less than 255 characters.';
  return undefined;
}
