import * as z from 'zod';
import { registerSecret } from './secrets.js';

/**
 * Credentials, the same shapes for both clients:
 * - `basic`: user name with a password or an API token.
 * - `bearer`: a personal access token.
 * - `session`: log in once, reuse the JSESSIONID cookie, log in again once when a request answers 401.
 * - `ticket`: a content-repository ticket, given or obtained with user name and password.
 */
export const authSchema = z.union([
  z.strictObject({ type: z.literal('basic'), username: z.string().min(1), password: z.string().min(1) }),
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1) }),
  z.strictObject({ type: z.literal('session'), username: z.string().min(1), password: z.string().min(1) }),
  z.strictObject({ type: z.literal('ticket'), ticket: z.string().min(1) }),
  z.strictObject({ type: z.literal('ticket'), username: z.string().min(1), password: z.string().min(1) }),
]);

export type AuthOptions = z.infer<typeof authSchema>;

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
 * Produces the auth headers of a request, and renews a session or ticket once after a 401. A renewal is shared by
 * every request that was waiting for it (one login, not one per request in flight).
 */
export class Authenticator {
  private credential: string | undefined;
  private renewing: Promise<string> | undefined;
  /** Bumped on each renewal: a 401 for an older credential just retries with the current one. */
  private generation = 0;

  constructor(
    readonly auth: AuthOptions,
    /** Obtains a session id or ticket (session and obtained-ticket modes). */
    private readonly obtain: () => Promise<string>,
    private readonly scheme: { ticket: string },
  ) {
    registerAuthSecrets(auth);
    if (auth.type === 'ticket' && 'ticket' in auth) this.credential = auth.ticket;
  }

  /** Whether a 401 can be cured by logging in again. */
  get renewable(): boolean {
    return this.auth.type === 'session' || (this.auth.type === 'ticket' && 'username' in this.auth);
  }

  async headers(): Promise<{ headers: Record<string, string>; generation: number }> {
    const a = this.auth;
    if (a.type === 'basic') return { headers: { authorization: basicHeader(a.username, a.password) }, generation: 0 };
    if (a.type === 'bearer') return { headers: { authorization: `Bearer ${a.token}` }, generation: 0 };
    if (this.credential === undefined) await this.renew(this.generation);
    const value = this.credential as string;
    if (a.type === 'session') return { headers: { cookie: `JSESSIONID=${value}` }, generation: this.generation };
    return { headers: { authorization: `${this.scheme.ticket} ${value}` }, generation: this.generation };
  }

  /** Renews the session or ticket after a 401 seen with credential `generation`. */
  async renew(generation: number): Promise<void> {
    if (generation !== this.generation && this.credential !== undefined) return;
    if (!this.renewing) {
      this.renewing = this.obtain()
        .then((value) => {
          registerSecret(value);
          this.credential = value;
          this.generation += 1;
          return value;
        })
        .finally(() => {
          this.renewing = undefined;
        });
    }
    await this.renewing;
  }
}
