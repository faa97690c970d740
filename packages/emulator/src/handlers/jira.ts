import { PROFILES } from '../behaviour/profile.js';
import { createIssue } from '../rules/domain.js';
import {
  captchaHeaders,
  captchaRequired,
  loginFailed,
  loginSucceeded,
  openSession,
  parseCookies,
} from '../service/auth.js';
import { routeCookie } from '../service/cluster.js';
import { type Ctx, type Handler, notFound, Reply, ServiceError } from '../service/context.js';
import type { Issue } from '../store/store.js';
import { checkScreenFields, presentScreenFields } from './jira-fields.js';
import { jiraMetaHandlers } from './jira-meta.js';
import {
  groupsOf,
  issueTypeOf,
  loginInfo,
  lower,
  presentIssue,
  presentIssueType,
  presentProjectRef,
  presentUser,
  projectByIdOrKey,
  projectIssueTypes,
  requireJiraIssue,
  selectFields,
  summaryProblem,
} from './jira-model.js';
import { jiraSearchHandlers } from './jira-search.js';
import { jiraWorkflowHandlers } from './jira-workflow.js';

/**
 * The Jira platform subset (REST API 2 and the cookie session) that the test-management add-on lives in. Every
 * authenticated user may use it, the unlicensed one included: only the add-on refuses him. Its vocabulary and
 * presenters are in jira-model.ts; the JQL parser in ../jira/jql.ts.
 */

export const jiraHandlers: Record<string, Handler> = {
  ...jiraMetaHandlers,
  ...jiraWorkflowHandlers,
  ...jiraSearchHandlers,

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
    const made = createFromFields(ctx, ctx.body.fields as Record<string, any>);
    if ('errors' in made) return new Reply(400, { errorMessages: [], errors: made.errors });
    return new Reply(201, presentCreated(ctx, made.issue));
  },

  /**
   * Jira's bulk create: each element as `jira.createIssue` would make it, in order; a refused one is named by its
   * 0-based position and the others are still created. 201 when any was created, else 400 with the same body. More
   * elements than `bulkCreateMax` are refused whole, as Jira Cloud (50) and a capped Data Center do.
   */
  'jira.bulkCreateIssues': (ctx) => {
    const updates = (ctx.body as { issueUpdates: Array<{ fields: Record<string, any> }> }).issueUpdates;
    const max = (ctx.cluster?.jira ?? PROFILES.ideal).bulkCreateMax;
    if (max === 0) throw notFound('No operation at POST /rest/api/2/issue/bulk (bulkCreateMax 0: a proxy without it)');
    if (updates.length > max) {
      return new Reply(400, {
        errorMessages: [`The bulk create request holds ${updates.length} issues, which exceeds the maximum of ${max}.`],
        errors: {},
      });
    }
    const issues: unknown[] = [];
    const errors: unknown[] = [];
    updates.forEach((u, i) => {
      const made = createFromFields(ctx, u.fields);
      if ('errors' in made) {
        errors.push({ status: 400, elementErrors: { errorMessages: [], errors: made.errors }, failedElementNumber: i });
      } else issues.push(presentCreated(ctx, made.issue));
    });
    return new Reply(issues.length > 0 ? 201 : 400, { issues, errors });
  },

  'jira.issue': (ctx) => {
    const issue = requireJiraIssue(ctx);
    return presentIssue(ctx, issue, selectFields(ctx.query.fields), presentScreenFields(ctx, issue));
  },

  'jira.login': (ctx) => {
    const { username, password } = ctx.body as { username: string; password: string };
    const user = ctx.store.users.find((u) => u.name === username);
    // Jira's login counter covers session logins too: under the CAPTCHA even the right password is refused.
    if (user && captchaRequired(ctx.store, user.name)) {
      return new Reply(
        403,
        {
          errorMessages: [
            `CAPTCHA_CHALLENGE: user ${user.name} must log in through the browser (${ctx.origin}/login.jsp) after failed logins`,
          ],
          errors: {},
        },
        captchaHeaders(ctx.origin),
      );
    }
    // A session login takes the password only (a personal access token is a Bearer credential).
    if (!user || user.password !== password) {
      if (user) loginFailed(ctx.store, user.name);
      throw new ServiceError(401, 'Login failed');
    }
    loginSucceeded(ctx.store, user.name);
    // The session lives on the node that opened it; the balancer's cookie keeps the client there.
    const node = ctx.cluster && ctx.cluster.jira.nodes > 1 ? ctx.cluster.node : undefined;
    const session = openSession(ctx.store, user, ctx.now(), node);
    return new Reply(
      200,
      { session: { name: 'JSESSIONID', value: session.id }, loginInfo: loginInfo(ctx.store, user) },
      { 'set-cookie': node === undefined ? session.cookie : [session.cookie, routeCookie(node)] },
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

/** The answer to a create: `{id, key, self}`. */
function presentCreated(ctx: Ctx, issue: Issue) {
  return { id: String(issue.id), key: issue.key, self: `${ctx.origin}/rest/api/2/issue/${issue.id}` };
}

/**
 * Creates an issue from a create's `fields`, or answers Jira's field errors: project and issue type decide the
 * screen, so Jira reports them alone; then every field at fault at once.
 */
function createFromFields(ctx: Ctx, f: Record<string, any>): { issue: Issue } | { errors: Record<string, string> } {
  if (!f.project || (f.project.key === undefined && f.project.id === undefined)) {
    return { errors: { project: 'project is required' } };
  }
  const project =
    f.project.id !== undefined
      ? ctx.store.projects.get(Number(f.project.id))
      : projectByIdOrKey(ctx.store, String(f.project.key));
  if (!project) return { errors: { project: 'valid project is required' } };

  if (!f.issuetype || (f.issuetype.id === undefined && f.issuetype.name === undefined)) {
    return { errors: { issuetype: 'issue type is required' } };
  }
  const offered = projectIssueTypes(ctx.store, project);
  const type =
    f.issuetype.id !== undefined
      ? offered.find((n) => issueTypeOf(n).id === String(f.issuetype.id))
      : offered.find((n) => lower(n) === lower(String(f.issuetype.name)));
  if (!type) return { errors: { issuetype: 'valid issue type is required' } };

  const checked = checkScreenFields(ctx.store, project, type, f);
  const summary = typeof f.summary === 'string' ? f.summary.trim() : '';
  const summaryError = summaryProblem(summary);
  const errors = { ...(summaryError ? { summary: summaryError } : {}), ...checked.errors };
  if (Object.keys(errors).length) return { errors };
  return {
    issue: createIssue(ctx, project, {
      type,
      summary,
      description: f.description,
      labels: [...new Set(checked.labels)],
      fields: checked.fields,
    }),
  };
}
