import type { IncomingMessage, ServerResponse } from 'node:http';
import { balance } from '../kernel/balance.js';
import type { Env, Exchange } from '../kernel/exchange.js';
import { authenticate, openSession, parseCookies, solveCaptcha } from '../service/auth.js';
import { routeCookie } from '../service/cluster.js';
import type { User } from '../store/store.js';
import { href, html, type SafeHtml } from './html.js';
import { messagePage, page, redirect, SECURITY_HEADERS, sendHtml, type Viewer } from './layout.js';
import { isOpen, type UiState, uiState } from './state.js';

/**
 * Who may see what.
 *
 * - On the loopback (the default `127.0.0.1`), every page is open, as `/__emulator/*` is: a browser without a
 *   session gets the loopback viewer's session (the first administrator of the seed), so attachment images load
 *   from the same URLs the API hands out. `/login.jsp` switches to another user.
 * - Beyond the loopback (`--host 0.0.0.0` or any other address: a team's shared rehearsal server), pages need a
 *   login as Jira asks for one: `/login.jsp` with `os_destination`, setting the JSESSIONID session the REST API
 *   accepts; `/logout` ends it. The rehearsal pages and `/__emulator/*` need an administrator (`admin: true`).
 */

/** A browser's session cookie: the REST session, plus SameSite so another site cannot post forms with it. */
const sessionCookie = (id: string) => `JSESSIONID=${id}; Path=/; HttpOnly; SameSite=Lax`;
const CLEAR_COOKIE = 'JSESSIONID=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0';

/** The user who views the loopback's pages without logging in: the first licensed administrator, else anyone. */
function loopbackUser(env: Env): User | undefined {
  const users = env.store.users.all().sort((a, b) => a.id - b.id);
  return users.find((u) => u.admin && u.licensed) ?? users.find((u) => u.licensed) ?? users[0];
}

/** The viewer of a request and the cookie to set, if the loopback viewer's session was handed out. */
export function resolveViewer(env: Env, x: Exchange): { viewer: Viewer; setCookie?: string } {
  const state = uiState(env);
  const auth = authenticate(env.store, 'jira', x.req.headers);
  if (auth.ok) return { viewer: { user: auth.user, loopback: state.loopback } };
  if (!state.loopback) return { viewer: { user: undefined, loopback: false } };
  const session = state.viewerSession ? env.store.sessions.get(state.viewerSession) : undefined;
  let user = session ? env.store.users.get(session.userId) : undefined;
  if (!user) {
    user = loopbackUser(env);
    if (!user) return { viewer: { user: undefined, loopback: true } };
    state.viewerSession = openSession(env.store, user, env.now()).id;
    env.commit();
  }
  return { viewer: { user, loopback: true }, setCookie: sessionCookie(state.viewerSession as string) };
}

/** Where a login may send the browser: a path on this server, never another site (`//evil`, `/\evil`). */
export function safeDestination(dest: string | null | undefined): string {
  if (!dest?.startsWith('/') || dest.startsWith('//') || dest.startsWith('/\\')) return '/';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused here
  if (/[\u0000-\u001f\u007f]/.test(dest) || dest.startsWith('/login.jsp') || dest.startsWith('/logout')) return '/';
  return dest;
}

/** Sends a browser without a session to the login page, to come back here afterwards. */
export function toLogin(res: ServerResponse, x: Exchange): void {
  const here = x.req.url ?? '/';
  redirect(res, href('/login.jsp', { permissionViolation: 'true', os_destination: safeDestination(here) }));
}

/**
 * A form post from another site (or another port of this host) is refused: with the session cookie's SameSite it
 * would carry no login anyway, but on the loopback the pages need none.
 */
export function crossSite(x: Exchange): boolean {
  const origin = x.req.headers.origin;
  if (typeof origin === 'string') return origin !== x.origin;
  const site = x.req.headers['sec-fetch-site'];
  return site === 'cross-site' || site === 'same-site';
}

/** Reads a form body (`application/x-www-form-urlencoded`), at most 64 KiB. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > 64 * 1024) return undefined;
    chunks.push(c);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function loginPage(state: UiState, viewer: Viewer, dest: string, notice?: SafeHtml, name = ''): SafeHtml {
  const hint = state.loopback
    ? html`<p class="muted">Demo users: admin / admin (administrator), tester / tester.</p>`
    : html`<p class="muted">Use your user of this emulator's seed. The rehearsal pages need an administrator.</p>`;
  return page({
    title: 'Log in',
    viewer,
    main: html`<h1>Log in</h1>
      ${notice ?? ''}
      <form class="stack panel" method="post" action="/login.jsp" id="login-form">
        <div class="field"><label for="login-form-username">Username</label>
          <input id="login-form-username" name="os_username" autocomplete="username" required value="${name}"></div>
        <div class="field"><label for="login-form-password">Password</label>
          <input id="login-form-password" name="os_password" type="password" autocomplete="current-password" required></div>
        <input type="hidden" name="os_destination" value="${dest}">
        <div><button class="primary" id="login-form-submit" type="submit" name="login" value="Log In">Log In</button></div>
      </form>
      ${hint}`,
  });
}

/** `GET /login.jsp`, `POST /login.jsp`: Jira's login form, answering with the REST API's JSESSIONID session. */
export async function serveLogin(env: Env, x: Exchange, viewer: Viewer): Promise<void> {
  const state = uiState(env);
  const { req, res } = x;
  if (x.method !== 'POST') {
    req.resume();
    const dest = safeDestination(x.query.get('os_destination'));
    const notice = x.query.get('logout')
      ? html`<p class="notice" role="status">You are now logged out.</p>`
      : x.query.get('permissionViolation')
        ? html`<p class="notice" role="status">You must log in to see this page.</p>`
        : undefined;
    return sendHtml(res, x.method, 200, loginPage(state, viewer, dest, notice));
  }
  if (crossSite(x)) return refuseCrossSite(req, res, viewer);
  const form = await readForm(req);
  const name = form?.get('os_username') ?? '';
  const dest = safeDestination(form?.get('os_destination'));
  const user = env.store.users.find((u) => u.name === name);
  if (!user || user.password !== (form?.get('os_password') ?? '')) {
    const error = html`<p class="error" role="alert">Sorry, your username and password are incorrect - please try again.</p>`;
    return sendHtml(res, 'POST', 200, loginPage(state, viewer, dest, error, name), {
      'x-seraph-loginreason': 'AUTHENTICATED_FAILED',
    });
  }
  const old = parseCookies(req.headers.cookie).JSESSIONID;
  if (old && old !== state.viewerSession) env.store.sessions.remove(old);
  // As in Jira, a login through the browser lifts the CAPTCHA that failed REST logins set.
  solveCaptcha(env.store, user.name);
  // On a cluster the session lives on the node the balancer sent the login to, and its cookie keeps the browser
  // there (the pages themselves are the emulator's and open on any node).
  const node = env.jira.nodes > 1 ? balance(env, x) : undefined;
  const session = openSession(env.store, user, env.now(), node);
  env.commit();
  const cookies = node === undefined ? sessionCookie(session.id) : [sessionCookie(session.id), routeCookie(node)];
  redirect(res, dest, { 'set-cookie': cookies, 'x-seraph-loginreason': 'OK' });
}

/** `GET /logout` asks (a link must not log anyone out); `POST /logout` ends the session. */
export async function serveLogout(env: Env, x: Exchange, viewer: Viewer): Promise<void> {
  const { req, res } = x;
  if (x.method !== 'POST') {
    req.resume();
    const main = html`<h1>Log out</h1>
      <form method="post" action="/logout" class="panel"><p>End your session on this emulator?</p>
        <button class="primary" type="submit">Log out</button> <a href="/">Cancel</a></form>`;
    return sendHtml(res, x.method, 200, page({ title: 'Log out', viewer, main }));
  }
  if (crossSite(x)) return refuseCrossSite(req, res, viewer);
  req.resume();
  const state = uiState(env);
  const sid = parseCookies(req.headers.cookie).JSESSIONID;
  if (sid) {
    env.store.sessions.remove(sid);
    if (sid === state.viewerSession) state.viewerSession = undefined;
    env.commit();
  }
  redirect(res, '/login.jsp?logout=true', { 'set-cookie': CLEAR_COOKIE });
}

export function refuseCrossSite(req: IncomingMessage, res: ServerResponse, viewer: Viewer): void {
  req.resume();
  sendHtml(
    res,
    'POST',
    403,
    messagePage(
      viewer,
      'Refused',
      html`<p class="error">This form was posted from another site. Open the page here and post it again.</p>`,
    ),
  );
}

/** The rehearsal pages: on the loopback open; beyond it an administrator's. Returns true when it answered. */
export function refuseNonAdmin(x: Exchange, viewer: Viewer): boolean {
  if (viewer.loopback || viewer.user?.admin) return false;
  x.req.resume();
  if (!viewer.user) {
    toLogin(x.res, x);
    return true;
  }
  const message = html`<p class="error">The rehearsal pages need an administrator (a user with <code>admin: true</code> in
    the seed) when the emulator listens beyond the loopback. You are logged in as ${viewer.user.name}.</p>
    <p><a href="/login.jsp?os_destination=${encodeURIComponent(x.req.url ?? '/')}">Log in as another user</a></p>`;
  sendHtml(x.res, x.method, 403, messagePage(viewer, 'Administrators only', message));
  return true;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json;charset=UTF-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/**
 * `/__emulator/*` beyond the loopback: an administrator's Basic auth (or token) or login session. Returns true
 * when it refused the request (401 without or with wrong credentials, 403 for another user). On the loopback it
 * does nothing: scripts that use the admin API there keep working unchanged.
 */
export function refuseAdminApi(env: Env, x: Exchange): boolean {
  if (isOpen(env)) return false;
  const auth = authenticate(env.store, 'jira', x.req.headers);
  if (auth.ok && auth.user.admin) return false;
  x.req.resume();
  const where = `the emulator listens on ${env.host}, beyond the loopback`;
  if (!auth.ok) {
    sendJson(
      x.res,
      401,
      {
        message:
          auth.reason === 'missing'
            ? `Authentication required: ${where}, so ${x.rawPath} needs an administrator (a user with admin: true in the seed). Send Basic auth (curl -u NAME:PASSWORD) or log in at /login.jsp.`
            : 'Invalid credentials: the user name, password or token was not accepted.',
      },
      { 'www-authenticate': 'Basic realm="casebridge emulator"', ...noStore },
    );
    return true;
  }
  sendJson(
    x.res,
    403,
    {
      message: `User ${auth.user.name} is not an administrator: ${where}, so ${x.rawPath} needs a user with admin: true in the seed.`,
    },
    noStore,
  );
  return true;
}

const noStore = { 'cache-control': SECURITY_HEADERS['cache-control'] as string };
