import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Service } from '@casebridge/core/contract';
import type { Store, User } from './store.js';

/**
 * Authentication as the two real products do it.
 * - Test management (inside Jira): Basic (password or personal access token), `Bearer <PAT>`, or a JSESSIONID
 *   cookie from `POST /rest/auth/1/session`.
 * - Content repository: the `Authorization` header with `Basic`, `Bearer` or `EDU-TICKET` (prefix matched
 *   case-insensitively), or a JSESSIONID cookie set by an earlier authenticated response.
 */

export type AuthResult =
  | { ok: true; user: User; via: 'basic' | 'bearer' | 'ticket' | 'session' | 'guest'; sessionId?: string }
  | { ok: false; reason: 'missing' | 'invalid' };

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

/** Constant-time-ish comparison is not needed for an emulator; plain equality keeps it readable. */
function byPasswordOrToken(store: Store, name: string, secret: string): User | undefined {
  const user = store.users.find((u) => u.name === name);
  if (!user) return undefined;
  return user.password === secret || user.tokens.includes(secret) ? user : undefined;
}

export function authenticate(store: Store, service: Service, headers: IncomingHttpHeaders): AuthResult {
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
      const user = byPasswordOrToken(store, decoded.slice(0, colon), decoded.slice(colon + 1));
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
    const user = session ? store.users.get(session.userId) : undefined;
    if (user) return { ok: true, user, via: 'session', sessionId: sid };
    return { ok: false, reason: 'invalid' };
  }
  return { ok: false, reason: 'missing' };
}

/** Opens a login session and returns the Set-Cookie value for it. */
export function openSession(store: Store, user: User, now: number): { id: string; cookie: string } {
  const id = randomBytes(16).toString('hex').toUpperCase();
  store.sessions.insert({ id, userId: user.id, createdAt: now });
  return { id, cookie: `JSESSIONID=${id}; Path=/; HttpOnly` };
}
