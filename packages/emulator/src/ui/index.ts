import type { Env, Exchange } from '../kernel/exchange.js';
import { ISSUE_TYPES } from '../rules/domain.js';
import { safeDecode } from '../service/router.js';
import type { Cycle, Issue } from '../store/store.js';
import { refuseNonAdmin, resolveViewer, serveLogin, serveLogout, toLogin } from './access.js';
import { codeReviewPage, codeReviewRoute } from './code-review.js';
import { chooseCycle } from './coverage.js';
import { cycleFragment, cyclePage } from './cycle.js';
import { faultsPage } from './faults-page.js';
import { homePage } from './home.js';
import { browseUrl, html, type SafeHtml } from './html.js';
import { jiraPage } from './jira-page.js';
import { messagePage, redirect, sendHtml, sendText } from './layout.js';
import { sendLiveJs } from './live.js';
import { issueAt, planOf } from './model.js';
import { defectPage, requirementPage } from './other-pages.js';
import { clearRequests, requestsPage, resetPage } from './rehearsal.js';
import { requirementsHref, requirementsPage, requirementsRoute } from './requirements-page.js';
import { uiState } from './state.js';
import { casePage, planPage } from './test-pages.js';
import type { View } from './view.js';

export { refuseAdminApi } from './access.js';
export { isOpen, uiChanged } from './state.js';

/**
 * The web UI: server-rendered pages over the emulator's store, at the paths Jira and synapseRT use where there is
 * one (`/browse/<KEY>`, `/login.jsp`, `/logout`; the code hosts' commit, merge-request and pull-request pages at
 * theirs), at `/projects/<KEY>/requirements` for a project's requirement coverage (Jira's project pages are under
 * `/projects/<KEY>/`), under `/ui/` for its script, fragments and events, and under `/rehearsal/` for the emulator's own tools. Only these methods and paths are taken; every other request goes
 * on to the API pipeline exactly as before (so `/rest/...` and a Jira 404 for anything else are unchanged).
 */

type Route =
  | 'home'
  | 'browse'
  | 'requirements'
  | 'code'
  | 'fragment'
  | 'events'
  | 'script'
  | 'login'
  | 'logout'
  | 'rehearsal';

function routeOf(method: string, path: string): Route | undefined {
  const read = method === 'GET' || method === 'HEAD';
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (p === '/login.jsp' && (read || method === 'POST')) return 'login';
  if (p === '/logout' && (read || method === 'POST')) return 'logout';
  if (p.startsWith('/rehearsal') && /^\/rehearsal(\/(requests|faults|jira|reset))?$/.test(p)) {
    return read || (method === 'POST' && p !== '/rehearsal') ? 'rehearsal' : undefined;
  }
  if (!read) return undefined;
  if (path === '/') return 'home';
  if (/^\/browse\/[^/]+$/.test(p)) return 'browse';
  if (requirementsRoute(p) !== undefined) return 'requirements';
  if (p === '/ui/fragments/cycle') return 'fragment';
  // An event stream never ends, so HEAD (which would wait for the end) is not served there.
  if (p === '/ui/events' && method === 'GET') return 'events';
  if (p === '/ui/live.js') return 'script';
  if (codeReviewRoute(p)) return 'code';
  return undefined;
}

/** Answers a UI request; false when the path is not the UI's (the pipeline goes on). */
export async function serveUi(env: Env, x: Exchange): Promise<boolean> {
  const route = routeOf(x.method, x.rawPath);
  if (!route) return false;
  x.entry.service = 'ui';
  if (route === 'script') {
    x.req.resume();
    sendLiveJs(x.res, x.method);
    return true;
  }
  const { viewer, setCookie } = resolveViewer(env, x);
  if (setCookie) x.res.setHeader('set-cookie', setCookie);
  x.entry.user = viewer.user?.name ?? null;
  if (route === 'login') {
    await serveLogin(env, x, viewer);
    return true;
  }
  if (route === 'logout') {
    await serveLogout(env, x, viewer);
    return true;
  }
  const v: View = {
    env,
    store: env.store,
    res: x.res,
    method: x.method,
    path: x.rawPath,
    query: x.query,
    origin: x.origin,
    viewer,
  };
  if (route === 'rehearsal') {
    if (refuseNonAdmin(x, viewer)) return true;
    await serveRehearsal(v, x);
    return true;
  }
  if (!viewer.user) {
    x.req.resume();
    // Scripts get a status they can read; a person gets the login page.
    if (route === 'fragment' || route === 'events') sendText(x.res, 401, 'Log in at /login.jsp to see this.');
    else toLogin(x.res, x);
    return true;
  }
  x.req.resume();
  if (route === 'home') sendHtml(x.res, x.method, 200, homePage(v));
  else if (route === 'browse') serveBrowse(v, safeDecode(x.rawPath.slice('/browse/'.length).replace(/\/$/, '')));
  else if (route === 'requirements') serveRequirements(v);
  else if (route === 'code') serveCodeReview(v);
  else {
    const cycle = cycleParam(v);
    const plan = cycle && planOf(v.store, cycle);
    if (!cycle || !plan) sendText(x.res, 404, `Test cycle ${v.query.get('cycle') ?? ''} not found`);
    else if (route === 'fragment') sendHtml(x.res, x.method, 200, cycleFragment(v, plan, cycle));
    else uiState(env).events.subscribe(cycle.id, x.req, x.res);
  }
  return true;
}

async function serveRehearsal(v: View, x: Exchange): Promise<void> {
  const p = x.rawPath.replace(/\/$/, '');
  if (p === '/rehearsal') {
    x.req.resume();
    redirect(x.res, '/rehearsal/requests');
  } else if (p === '/rehearsal/requests') {
    if (x.method === 'POST') await clearRequests(v, x);
    else {
      x.req.resume();
      requestsPage(v, x);
    }
  } else if (p === '/rehearsal/faults') await faultsPage(v, x);
  else if (p === '/rehearsal/jira') await jiraPage(v, x);
  else await resetPage(v, x);
}

/** A code host's page (code-review.ts); a repository, commit or review the emulator does not hold is a 404. */
function serveCodeReview(v: View): void {
  const p = v.path.length > 1 && v.path.endsWith('/') ? v.path.slice(0, -1) : v.path;
  const route = codeReviewRoute(p);
  const body = route && codeReviewPage(v, route);
  if (body) sendHtml(v.res, v.method, 200, body);
  else {
    notFound(
      v,
      'Not found',
      html`<p>The emulator holds no such repository, commit (a full 40-character hash) or review. <a href="/#code-review">Back to the code review list</a></p>`,
    );
  }
}

/** `/projects/<KEY>/requirements`: the project's requirements with their coverage in a cycle (requirements-page.ts). */
function serveRequirements(v: View): void {
  const p = v.path.length > 1 && v.path.endsWith('/') ? v.path.slice(0, -1) : v.path;
  const key = safeDecode(requirementsRoute(p) ?? '');
  const project =
    v.store.projects.find((x) => x.key === key) ?? v.store.projects.find((x) => x.key === key.toUpperCase());
  if (!project) {
    notFound(
      v,
      'Project not found',
      html`<p>There is no project <strong>${key}</strong>. <a href="/">Back to the projects</a></p>`,
    );
    return;
  }
  const choice = chooseCycle(v.store, project, v.query);
  if (choice.error) {
    notFound(
      v,
      'Test cycle not found',
      html`<p>${choice.error} <a href="${requirementsHref(project)}">Back to the requirements of ${project.key}</a></p>`,
    );
  } else sendHtml(v.res, v.method, 200, requirementsPage(v, project, choice));
}

/** A requirement's page, with its coverage in the cycle `?plan=&cycle=` names (by default the project's latest). */
function serveRequirement(v: View, req: Issue): void {
  const project = v.store.projects.get(req.projectId);
  const choice = project ? chooseCycle(v.store, project, v.query) : { plan: undefined, cycle: undefined };
  if (choice.error) {
    notFound(
      v,
      'Test cycle not found',
      html`<p>${choice.error} <a href="${browseUrl(req.key)}">Back to ${req.key}</a></p>`,
    );
  } else sendHtml(v.res, v.method, 200, requirementPage(v, req, choice));
}

function cycleParam(v: View): Cycle | undefined {
  const raw = v.query.get('cycle') ?? '';
  return /^\d{1,15}$/.test(raw) ? v.store.cycles.get(Number(raw)) : undefined;
}

function notFound(v: View, title: string, message: SafeHtml): void {
  sendHtml(v.res, v.method, 404, messagePage(v.viewer, title, message));
}

/**
 * `/browse/<KEY>`: the issue's page by its type; with `?cycle=<id>` on a plan, the cycle page, on a requirement its
 * coverage in that cycle.
 */
function serveBrowse(v: View, key: string): void {
  const issue = issueAt(v.store, key);
  if (!issue) {
    notFound(
      v,
      'Issue not found',
      html`<p>The issue <strong>${key}</strong> does not exist. <a href="/">Back to the projects</a></p>`,
    );
    return;
  }
  if (issue.key !== key) {
    // Jira answers a key typed in lower case with the issue at its canonical key.
    const q = v.query.toString();
    v.res.writeHead(301, {
      location: `/browse/${encodeURIComponent(issue.key)}${q ? `?${q}` : ''}`,
      'content-length': '0',
    });
    v.res.end();
    return;
  }
  if (issue.type === ISSUE_TYPES.requirement) serveRequirement(v, issue);
  else if (v.query.has('cycle')) serveCycle(v, issue);
  else sendHtml(v.res, v.method, 200, issuePageOf(v, issue));
}

function issuePageOf(v: View, issue: Issue): SafeHtml {
  switch (issue.type) {
    case 'Test Plan':
      return planPage(v, issue);
    case 'Test Case':
      return casePage(v, issue);
    default:
      // Bug, and any other type a reporter or a seed uses for defects (a requirement is serveRequirement's).
      return defectPage(v, issue);
  }
}

function serveCycle(v: View, plan: Issue): void {
  const cycle = cycleParam(v);
  if (plan.type !== 'Test Plan' || !cycle || cycle.tpId !== plan.id) {
    notFound(
      v,
      'Test cycle not found',
      html`<p>Test plan <a href="/browse/${encodeURIComponent(plan.key)}">${plan.key}</a> has no test cycle
        <strong>${v.query.get('cycle') ?? ''}</strong>.</p>`,
    );
  } else sendHtml(v.res, v.method, 200, cyclePage(v, plan, cycle));
}
