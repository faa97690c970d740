import * as z from 'zod';
import type { CookieJar, CookieView } from './cookies.js';
import { registerSecret } from './secrets.js';
import { now } from './time.js';

/**
 * Credentials for both clients: `basic` (never a personal access token), `bearer` (the only way Jira DC takes a
 * token), `session` (one login, every cookie kept, one re-login on a 401), `ticket` (a content-repository ticket).
 */
export const authSchema = z.union([
  z.strictObject({ type: z.literal('basic'), username: z.string().min(1), password: z.string().min(1) }),
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1) }),
  z.strictObject({ type: z.literal('session'), username: z.string().min(1), password: z.string().min(1) }),
  z.strictObject({ type: z.literal('ticket'), ticket: z.string().min(1) }),
  z.strictObject({ type: z.literal('ticket'), username: z.string().min(1), password: z.string().min(1) }),
]);

export type AuthOptions = z.infer<typeof authSchema>;

/** Whether `value` looks like a Jira DC personal access token: as a password it fails and risks the CAPTCHA lock. */
export function looksLikePersonalAccessToken(value: string): boolean {
  if (value.length < 24 || value.length > 88 || value.length % 4 !== 0) return false;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return false;
  const bytes = Buffer.from(value, 'base64');
  const colon = bytes.indexOf(0x3a);
  if (colon < 1 || colon > 20 || bytes.length - colon - 1 < 8) return false;
  for (let i = 0; i < colon; i += 1) {
    const b = bytes[i] as number;
    if (b < 0x30 || b > 0x39) return false;
  }
  return true;
}

/** Why a personal access token is refused as a password; the callers add where to put it. */
export const TOKEN_AS_PASSWORD =
  'this looks like a Jira personal access token: a personal access token goes in token, sent as Bearer; Jira refuses it as a password and counts a failed login towards the CAPTCHA';

export function basicHeader(username: string, password: string): string {
  const value = `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
  registerSecret(value.slice(6));
  return value;
}

/** Registers every secret of the options, so that no message or log line can carry one. */
export function registerAuthSecrets(auth: AuthOptions): void {
  if ('password' in auth) {
    registerSecret(auth.password);
    basicHeader(auth.username, auth.password);
  }
  if ('token' in auth) registerSecret(auth.token);
  if ('ticket' in auth) registerSecret(auth.ticket);
}

/** The cookie value of `name` in Set-Cookie header(s), if any. */
export function cookieFrom(setCookie: string | string[] | undefined, name: string): string | undefined {
  const all = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  for (const c of all) {
    const m = new RegExp(`(?:^|;\\s*)${name}=([^;]+)`).exec(c);
    if (m?.[1]) return m[1];
  }
  return undefined;
}

/**
 * Produces a request's auth headers and renews a session or ticket once after a 401, one login shared by all waiters.
 */
export class Authenticator {
  private sessionJar: CookieJar | undefined;
  private credential: string | undefined;
  private renewing: Promise<string> | undefined;
  /** Bumped on each renewal: a 401 for an older credential just retries with the current one. */
  private generation = 0;

  constructor(
    readonly auth: AuthOptions,
    /** Obtains a session id or ticket (session and obtained-ticket modes). */
    private readonly obtain: () => Promise<string>,
    /** `url`: the server's, for the session's cookies. */
    private readonly scheme: { ticket: string; url?: string },
  ) {
    registerAuthSecrets(auth);
    if (auth.type === 'ticket' && 'ticket' in auth) this.credential = auth.ticket;
  }

  /** Session auth: the session's cookies, made by the first login (undefined before it and for other auth kinds). */
  get jar(): CookieJar | undefined {
    return this.sessionJar;
  }

  /** Whether a 401 can be cured by logging in again. */
  get renewable(): boolean {
    return this.auth.type === 'session' || (this.auth.type === 'ticket' && 'username' in this.auth);
  }

  /** A request's headers, their credential generation, and (session auth) the jar the transport sends each attempt. */
  async headers(): Promise<{ headers: Record<string, string>; generation: number; cookies?: CookieView }> {
    const a = this.auth;
    if (a.type === 'basic') return { headers: { authorization: basicHeader(a.username, a.password) }, generation: 0 };
    if (a.type === 'bearer') return { headers: { authorization: `Bearer ${a.token}` }, generation: 0 };
    if (this.credential === undefined) await this.renew(this.generation);
    const value = this.credential as string;
    if (this.jar) return { headers: {}, generation: this.generation, cookies: this.jar.view() };
    return { headers: { authorization: `${this.scheme.ticket} ${value}` }, generation: this.generation };
  }

  /** Renews the session or ticket after a 401 seen with credential `generation`. */
  async renew(generation: number): Promise<void> {
    if (generation !== this.generation && this.credential !== undefined) return;
    if (!this.renewing) {
      this.renewing = this.login().finally(() => {
        this.renewing = undefined;
      });
    }
    await this.renewing;
  }

  private async login(): Promise<string> {
    if (this.auth.type === 'session') {
      // Loaded at the first login, not with the client: tough-cookie and its public-suffix list serve sessions only.
      this.sessionJar ??= new (await import('./cookies.js')).CookieJar(now, this.scheme.url);
      // A new login starts a new set of cookies: the load balancer may route it to another node.
      this.sessionJar.clear();
    }
    const value = await this.obtain();
    registerSecret(value);
    // The session id a login names in its body, in case no Set-Cookie carried it.
    this.sessionJar?.setIfAbsent('JSESSIONID', value);
    this.credential = value;
    this.generation += 1;
    return value;
  }
}
