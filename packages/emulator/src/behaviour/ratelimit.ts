/**
 * Jira Data Center's REST rate limiting (8.6+, "Adjusting your code for rate limiting"): a token bucket that holds at
 * most `burst` requests (Jira's "max requests") and gains `fillRate` tokens every `intervalSeconds` (Jira's
 * "requests allowed" per second, minute or hour); over it the service answers 429 with `Retry-After`. Jira keeps one
 * bucket per user (`perUser`); the emulator's older form has one bucket for every request.
 */
export interface RateLimitOptions {
  /** Sustained rate; the same as `fillRate / intervalSeconds`. Give this or `fillRate`. */
  requestsPerSecond?: number;
  /** Tokens added every interval (Jira's "requests allowed"). */
  fillRate?: number;
  /** Length of the interval, seconds (1 by default; Jira offers seconds, minutes and hours). */
  intervalSeconds?: number;
  /** Bucket size: requests at once. Default: the tokens of one interval, rounded up (at least 1). */
  burst?: number;
  /** `Retry-After` of a 429, 0 up to a day. Default: the seconds until the next token, at least 1. */
  retryAfterSeconds?: number;
  /** One bucket per user, as Jira does (anonymous requests are not limited); default one bucket for all. */
  perUser?: boolean;
}

/** What one request took: whether it may go on, and Jira's `X-RateLimit-*` headers (and `Retry-After` on 429). */
export interface RateLimitTake {
  ok: boolean;
  headers: Record<string, string>;
}

interface Bucket {
  tokens: number;
  /** Time of the previous take; undefined before the first (a clock may well start at 0). */
  last: number | undefined;
}

const DAY = 86_400;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  /** Tokens per second. */
  private readonly rate: number;
  private readonly burst: number;
  readonly fillRate: number;
  readonly intervalSeconds: number;
  readonly perUser: boolean;
  /** The configured `Retry-After`, or undefined: computed per answer. */
  readonly retryAfter: number | undefined;

  constructor(opts: RateLimitOptions) {
    const interval = opts.intervalSeconds ?? 1;
    if (!(interval > 0)) throw new Error(`rateLimit.intervalSeconds must be a number above 0, got ${interval}`);
    const fill =
      opts.fillRate ?? (opts.requestsPerSecond === undefined ? undefined : opts.requestsPerSecond * interval);
    if (fill === undefined || !(fill > 0)) {
      const [name, got] =
        opts.fillRate !== undefined ? ['fillRate', opts.fillRate] : ['requestsPerSecond', opts.requestsPerSecond];
      throw new Error(`rateLimit.${name} must be a number above 0, got ${got}`);
    }
    const retry = opts.retryAfterSeconds;
    if (retry !== undefined && !(Number.isInteger(retry) && retry >= 0 && retry <= DAY)) {
      throw new Error(`rateLimit.retryAfterSeconds must be a whole number from 0 to ${DAY}, got ${retry}`);
    }
    this.fillRate = fill;
    this.intervalSeconds = interval;
    this.rate = fill / interval;
    this.burst = Math.max(1, opts.burst ?? Math.ceil(fill));
    this.retryAfter = retry;
    this.perUser = opts.perUser ?? false;
  }

  /** Takes one token of the shared bucket at time `now` (ms); false when it is empty. */
  take(now: number): boolean {
    return this.takeFor('*', now).ok;
  }

  /** Takes one token of `key`'s bucket at `now` (ms). */
  takeFor(key: string, now: number): RateLimitTake {
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: this.burst, last: undefined };
      this.buckets.set(key, b);
    }
    const last = b.last ?? now;
    b.tokens = Math.min(this.burst, b.tokens + ((now - last) / 1000) * this.rate);
    b.last = now;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(this.burst),
      'x-ratelimit-remaining': String(Math.floor(b.tokens)),
      'x-ratelimit-interval-seconds': String(this.intervalSeconds),
      'x-ratelimit-fillrate': String(this.fillRate),
    };
    if (!ok) {
      const wait = Math.max(1, Math.ceil((1 - b.tokens) / this.rate));
      headers['retry-after'] = String(this.retryAfter ?? Math.min(wait, DAY));
    }
    return { ok, headers };
  }
}
