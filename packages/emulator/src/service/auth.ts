import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Service } from '@casebridge/core/contract';
import type { Store, User } from '../store/store.js';

/**
 * Authentication as the two real products do it.
 * - Test management (inside Jira): Basic (the password; a personal access token too only where `patAsBasic`
 *   allows it, the ideal profile), `Bearer <PAT>`, or a JSESSIONID cookie from `POST /rest/auth/1/session`, valid
 *   on the cluster node that issued it (cluster.ts).
 * - Content repository: the `Authorization` header with `Basic`, `Bearer` or `EDU-TICKET` (prefix matched
 *   case-insensitively), or a JSESSIONID cookie set by an earlier authenticated response.
 * - Code hosts: a token only, a user's personal access token (the demo's `casebridge-dev-token`): Bitbucket as
 *   `Authorization: Bearer`, GitLab as `PRIVATE-TOKEN` or Bearer, GitHub as `Bearer` or `token`.
 */

export type AuthResult =
  | { ok: true; user: User; via: 'basic' | 'bearer' | 'ticket' | 'session' | 'guest'; sessionId?: string }
  | { ok: false; reason: 'missing' | 'invalid' }
  /** Jira wants this user to log in through the browser (and solve a CAPTCHA) first: 403, see `captchaHeaders`. */
  | { ok: false; reason: 'captcha'; user: User };

/**
 * Jira's CAPTCHA after failed logins (`jira.maximum.authentication.attempts.allowed`, 3 by default in Jira and on
 * the realistic profile; the seed's `captchaAfterFailedLogins` wins): once a user's Basic and session logins failed
 * that many times in a row, every Basic or session login of the user answers 403 with
 * `X-Authentication-Denied-Reason: CAPTCHA_CHALLENGE`,
 * right password or not, until the user logs in through the browser (`solveCaptcha`). A seed user with
 * `captcha: true` starts that way. Bearer tokens and existing sessions are not affected. The state lives in memory,
 * like the sessions: a reset goes back to the seed's.
 */
interface CaptchaState {
  afterFailedLogins: number | undefined;
  /** Failed Basic and session logins in a row, by user name. */
  failures: Map<string, number>;
  /** Users who must log in through the browser first. */
  required: Set<string>;
}

const captchaStates = new WeakMap<Store, CaptchaState>();

function captchaState(store: Store): CaptchaState {
  let state = captchaStates.get(store);
  if (!state) {
    state = { afterFailedLogins: undefined, failures: new Map(), required: new Set() };
    captchaStates.set(store, state);
  }
  return state;
}

/** The rule of the Jira behaviour (`captchaAfterFailedLogins` knob), used when the seed sets none. */
const captchaDefaults = new WeakMap<Store, number | null>();

/** Sets the CAPTCHA rule that applies when the seed has none (the profile's; null: never). */
export function setCaptchaDefault(store: Store, afterFailedLogins: number | null): void {
  captchaDefaults.set(store, afterFailedLogins);
}

/** Sets the CAPTCHA rule of a store from its seed; forgets every failure and challenge before. */
export function configureCaptcha(store: Store, rule: { afterFailedLogins?: number; required?: string[] }): void {
  captchaStates.set(store, {
    afterFailedLogins: rule.afterFailedLogins,
    failures: new Map(),
    required: new Set(rule.required ?? []),
  });
}

/** Whether Jira asks `name` for a CAPTCHA. */
export function captchaRequired(store: Store, name: string): boolean {
  return captchaState(store).required.has(name);
}

/** Puts `name` under the CAPTCHA challenge, as enough failed logins would. */
export function requireCaptcha(store: Store, name: string): void {
  captchaState(store).required.add(name);
}

/** The user logged in through the browser and solved the CAPTCHA: Basic logins work again. */
export function solveCaptcha(store: Store, name: string): void {
  const state = captchaState(store);
  state.required.delete(name);
  state.failures.delete(name);
}

/** The headers of Jira's CAPTCHA answer; `origin` is where the emulator is reached (the login page's address). */
export function captchaHeaders(origin: string): Record<string, string> {
  return {
    'x-authentication-denied-reason': `CAPTCHA_CHALLENGE; login-url=${origin}/login.jsp`,
    'x-seraph-loginreason': 'AUTHENTICATION_DENIED',
  };
}

/**
 * Counts a failed Basic or session login of an existing user; the one that reaches the limit puts the CAPTCHA on.
 */
export function loginFailed(store: Store, name: string): void {
  const state = captchaState(store);
  const limit = state.afterFailedLogins ?? captchaDefaults.get(store) ?? undefined;
  if (limit === undefined) return;
  const failures = (state.failures.get(name) ?? 0) + 1;
  state.failures.set(name, failures);
  if (failures >= limit) state.required.add(name);
}

/** A successful login: the count of failures in a row starts again. */
export function loginSucceeded(store: Store, name: string): void {
  captchaState(store).failures.delete(name);
}

/**
 * Operations that answer without authentication (they report on or create the login itself). The request pipeline
 * lets them through without credentials, and the OpenAPI document says so; the contract has no field for it yet.
 */
export const PUBLIC_OPERATIONS: ReadonlySet<string> = new Set(['repo.validateSession', 'jira.login']);

export const GUEST: User = {
  id: 0,
  name: 'guest',
  displayName: 'Guest',
  email: '',
  password: '',
  tokens: [],
  licensed: false,
  admin: false,
};

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

/**
 * Constant-time-ish comparison is not needed for an emulator; plain equality keeps it readable. A personal access
 * token works as a Basic password only where `tokenAsPassword` says so: Jira Data Center takes tokens as Bearer only
 * ("Using Personal Access Tokens"), the content repository takes either.
 */
function byPasswordOrToken(store: Store, name: string, secret: string, tokenAsPassword: boolean): User | undefined {
  const user = store.users.find((u) => u.name === name);
  if (!user) return undefined;
  return user.password === secret || (tokenAsPassword && user.tokens.includes(secret)) ? user : undefined;
}

/** The token a code host reads from the request: undefined when none is sent, '' when it is sent malformed. */
function codeHostToken(service: 'bitbucket' | 'gitlab' | 'github', headers: IncomingHttpHeaders): string | undefined {
  const privateToken = headers['private-token'];
  if (service === 'gitlab' && typeof privateToken === 'string' && privateToken !== '') return privateToken.trim();
  const raw = headers.authorization;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  const m = /^(\S+)\s+(\S+)\s*$/.exec(raw.trim());
  const scheme = m?.[1]?.toLowerCase();
  const schemes = service === 'github' ? ['bearer', 'token'] : ['bearer'];
  return m && scheme && schemes.includes(scheme) ? (m[2] ?? '') : '';
}

function byToken(store: Store, token: string | undefined): AuthResult {
  if (token === undefined) return { ok: false, reason: 'missing' };
  const user = token ? store.users.find((u) => u.tokens.includes(token)) : undefined;
  return user ? { ok: true, user, via: 'bearer' } : { ok: false, reason: 'invalid' };
}

/** Where a request landed, for the Jira-hosted services. */
export interface AuthOptions {
  /** The simulated cluster node the request landed on: a session opened on another node is unknown here. */
  node?: number;
  /** Jira accepts a personal access token as a Basic password (the ideal profile); default true. */
  patAsBasic?: boolean;
}

export function authenticate(
  store: Store,
  service: Service,
  headers: IncomingHttpHeaders,
  opts: AuthOptions = {},
): AuthResult {
  if (service === 'bitbucket' || service === 'gitlab' || service === 'github') {
    return byToken(store, codeHostToken(service, headers));
  }
  const raw = headers.authorization;
  if (typeof raw === 'string' && raw.trim() !== '') {
    const space = raw.indexOf(' ');
    const scheme = (space < 0 ? raw : raw.slice(0, space)).toLowerCase();
    const value = space < 0 ? '' : raw.slice(space + 1).trim();
    if (scheme === 'basic') {
      let decoded = '';
      try {
        decoded = Buffer.from(value, 'base64').toString('utf8');
      } catch {
        return { ok: false, reason: 'invalid' };
      }
      const colon = decoded.indexOf(':');
      if (colon < 0) return { ok: false, reason: 'invalid' };
      const name = decoded.slice(0, colon);
      // Jira's login counter (the content repository has none): the password is not even checked under a CAPTCHA.
      const jira = service !== 'repo';
      const known = jira ? store.users.find((u) => u.name === name) : undefined;
      if (known && captchaRequired(store, name)) return { ok: false, reason: 'captcha', user: known };
      const user = byPasswordOrToken(store, name, decoded.slice(colon + 1), !jira || opts.patAsBasic !== false);
      if (known && !user && jira) loginFailed(store, name);
      if (user && jira) loginSucceeded(store, name);
      return user ? { ok: true, user, via: 'basic' } : { ok: false, reason: 'invalid' };
    }
    if (scheme === 'bearer') {
      const user = store.users.find((u) => u.tokens.includes(value));
      return user ? { ok: true, user, via: 'bearer' } : { ok: false, reason: 'invalid' };
    }
    if (scheme === 'edu-ticket' && service === 'repo') {
      const ticket = store.tickets.get(value);
      const user = ticket ? store.users.get(ticket.userId) : undefined;
      return user ? { ok: true, user, via: 'ticket' } : { ok: false, reason: 'invalid' };
    }
    return { ok: false, reason: 'invalid' };
  }
  const sid = parseCookies(headers.cookie).JSESSIONID;
  if (sid) {
    const session = store.sessions.get(sid);
    // Sessions are not shared between Data Center nodes: on another node this one does not exist.
    const elsewhere =
      session?.node !== undefined && opts.node !== undefined && service !== 'repo' && session.node !== opts.node;
    const user = session && !elsewhere ? store.users.get(session.userId) : undefined;
    if (user) return { ok: true, user, via: 'session', sessionId: sid };
    return { ok: false, reason: 'invalid' };
  }
  return { ok: false, reason: 'missing' };
}

/**
 * Opens a login session and returns the Set-Cookie value for it. `node`: the cluster node that holds it (valid
 * there only); without one it is valid on every node (the web UI's loopback viewer, the content repository).
 */
export function openSession(store: Store, user: User, now: number, node?: number): { id: string; cookie: string } {
  const id = randomBytes(16).toString('hex').toUpperCase();
  store.sessions.insert({ id, userId: user.id, createdAt: now, ...(node !== undefined ? { node } : {}) });
  return { id, cookie: `JSESSIONID=${id}; Path=/; HttpOnly` };
}
