import { Cookie, CookieJar as ToughJar } from 'tough-cookie';
import { registerSecret } from './secrets.js';
import { now as systemNow } from './time.js';

/** What the transport needs of a jar for one request: the header to send, and where its answer's cookies go. */
export interface CookieView {
  header(): string | undefined;
  update(setCookie: string | readonly string[] | undefined): void;
}

/**
 * A session's cookies (tough-cookie). Every cookie is kept and sent whatever its Path: without the load balancer's
 * (`ROUTEID`, `AWSALB`) a request may reach a node without the session (401). Long values are registered as secrets.
 */
export class CookieJar {
  private readonly jar = new ToughJar();
  private readonly url: string;
  /** Bumped by `clear` (a new login): answers to requests sent before it no longer update the jar. */
  private epoch = 0;

  /** @param url the server's URL (a Secure cookie is kept and sent only over https, or to this machine). */
  constructor(
    private readonly now: () => number = systemNow,
    url = 'http://localhost/',
  ) {
    this.url = new URL('/', url).href;
  }

  /** Takes in the `Set-Cookie` header(s) of an answer. */
  update(setCookie: string | readonly string[] | undefined): void {
    const all = typeof setCookie === 'string' ? [setCookie] : (setCookie ?? []);
    for (const line of all) {
      const cookie = Cookie.parse(line);
      if (!cookie?.key) continue;
      // As the jar always did: the quotes around a value are not part of it (`"v a l"` is sent as `v a l`).
      if (/^".*"$/.test(cookie.value) && cookie.value.length >= 2) cookie.value = cookie.value.slice(1, -1);
      // Max-Age counts from now (RFC 6265 5.2.2), made an expiry here: tough-cookie counts it from the last read.
      const until = cookie.expiryTime(new Date(this.now()));
      if (until !== undefined && until !== Number.POSITIVE_INFINITY) {
        cookie.expires = new Date(Math.max(0, until));
        cookie.maxAge = null;
      }
      this.put(cookie);
    }
  }

  /** Sets a cookie only when the jar has none of that name (the session id a login names in its body). */
  setIfAbsent(name: string, value: string): void {
    if (!this.live().some((c) => c.key === name)) this.put(new Cookie({ key: name, value }));
  }

  /** The `Cookie` header value of every live cookie, or undefined when there is none. */
  header(): string | undefined {
    const parts = this.live().map((c) => c.cookieString());
    return parts.length ? parts.join('; ') : undefined;
  }

  /** Names of the live cookies (for tests and `doctor`; never the values). */
  names(): string[] {
    return this.live().map((c) => c.key);
  }

  get(name: string): string | undefined {
    return this.live().find((c) => c.key === name)?.value;
  }

  clear(): void {
    this.jar.removeAllCookiesSync();
    this.epoch += 1;
  }

  /** One request's view: a late answer of a session a new login cleared cannot restore the old node's route cookie. */
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

  /** The cookies to send, oldest first; expired ones are dropped on this clock (tough-cookie's is the real one). */
  private live(): Cookie[] {
    const now = this.now();
    const all = this.jar.getCookiesSync(this.url, { allPaths: true, expire: false, sort: true });
    const expired = all.filter((c) => (c.expiryTime() ?? Number.POSITIVE_INFINITY) <= now);
    for (const c of expired) void this.jar.store.removeCookie(c.domain, c.path, c.key);
    return expired.length ? all.filter((c) => !expired.includes(c)) : all;
  }

  private put(cookie: Cookie): void {
    // One cookie per name: the jar sends every path anyway, and a Path set once and not the next time is one cookie.
    cookie.path = '/';
    // A route tag such as `.node1` is no credential, and as a secret would blank out unrelated text.
    if (cookie.value.length >= 8) registerSecret(cookie.value);
    this.jar.setCookieSync(cookie, this.url, { now: new Date(this.now()), ignoreError: true });
  }
}
