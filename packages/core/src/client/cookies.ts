import { registerSecret } from './secrets.js';

/**
 * The cookies of a session, by name. A login on a Jira Data Center cluster sets more than `JSESSIONID`: the load
 * balancer's own cookie (`ROUTEID`, `AWSALB`, ...) pins the session to the node that issued it, and a request
 * without it may land on another node, where the session does not exist (401). So every cookie an answer sets is
 * kept, replaced when a later answer sets it again, dropped when an answer expires it (`Max-Age=0`, an `Expires` in
 * the past) or when it runs out, and all are sent on every request of the session.
 *
 * One jar serves one client and one server, so `Domain` and `Path` are not checked. Values long enough to be
 * credentials are registered as secrets; `redact` also removes any `Cookie` / `Set-Cookie` header value.
 */
/** What the transport needs of a jar for one request: the header to send, and where its answer's cookies go. */
export interface CookieView {
  header(): string | undefined;
  update(setCookie: string | readonly string[] | undefined): void;
}

export class CookieJar {
  private readonly cookies = new Map<string, { value: string; expires?: number }>();
  /** Bumped by `clear` (a new login): answers to requests sent before it no longer update the jar. */
  private epoch = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes in the `Set-Cookie` header(s) of an answer. */
  update(setCookie: string | readonly string[] | undefined): void {
    const all = typeof setCookie === 'string' ? [setCookie] : (setCookie ?? []);
    for (const line of all) this.take(line);
  }

  /** Sets a cookie only when the jar has none of that name (the session id a login names in its body). */
  setIfAbsent(name: string, value: string): void {
    if (!this.cookies.has(name)) this.put(name, value, undefined);
  }

  /** The `Cookie` header value of every live cookie, or undefined when there is none. */
  header(): string | undefined {
    const now = this.now();
    const parts: string[] = [];
    for (const [name, c] of this.cookies) {
      if (c.expires !== undefined && c.expires <= now) this.cookies.delete(name);
      else parts.push(`${name}=${c.value}`);
    }
    return parts.length ? parts.join('; ') : undefined;
  }

  /** Names of the live cookies (for tests and `doctor`; never the values). */
  names(): string[] {
    this.header();
    return [...this.cookies.keys()];
  }

  get(name: string): string | undefined {
    this.header();
    return this.cookies.get(name)?.value;
  }

  clear(): void {
    this.cookies.clear();
    this.epoch += 1;
  }

  /**
   * A view for one request: it sends the jar's cookies as they are at each attempt, and its answers update the jar
   * only while no new login has cleared it since that attempt was sent. An answer of the old session arriving after
   * the new login (a request that was in flight) must not put the old node's route cookie back.
   */
  view(): CookieView {
    let sentIn = this.epoch;
    return {
      header: () => {
        sentIn = this.epoch;
        return this.header();
      },
      update: (setCookie) => {
        if (sentIn === this.epoch) this.update(setCookie);
      },
    };
  }

  private take(line: string): void {
    const [pair = '', ...attributes] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq <= 0) return;
    const name = pair.slice(0, eq).trim();
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (!name) return;
    let maxAge: number | undefined;
    let expires: number | undefined;
    for (const attr of attributes) {
      const i = attr.indexOf('=');
      const key = (i === -1 ? attr : attr.slice(0, i)).trim().toLowerCase();
      const v = i === -1 ? '' : attr.slice(i + 1).trim();
      if (key === 'max-age' && /^-?\d+$/.test(v)) maxAge = Number(v);
      else if (key === 'expires') {
        const at = Date.parse(v);
        if (!Number.isNaN(at)) expires = at;
      }
    }
    // Max-Age wins over Expires (RFC 6265 5.3); zero or negative, or a date passed, deletes the cookie.
    const until = maxAge !== undefined ? this.now() + maxAge * 1000 : expires;
    if (until !== undefined && until <= this.now()) {
      this.cookies.delete(name);
      return;
    }
    this.put(name, value, until);
  }

  private put(name: string, value: string, expires: number | undefined): void {
    // A route tag such as `.node1` is no credential, and as a secret would blank out unrelated text.
    if (value.length >= 8) registerSecret(value);
    this.cookies.set(name, { value, ...(expires !== undefined ? { expires } : {}) });
  }
}
