/** Token bucket: `requestsPerSecond` sustained, `burst` at once; over it the service answers 429. */
export class RateLimiter {
  private tokens: number;
  /** Time of the previous take; undefined before the first (a clock may well start at 0). */
  private last: number | undefined;
  private readonly rate: number;
  private readonly burst: number;
  readonly retryAfter: number;

  constructor(opts: { requestsPerSecond: number; burst?: number; retryAfterSeconds?: number }) {
    if (!(opts.requestsPerSecond > 0)) {
      throw new Error(`rateLimit.requestsPerSecond must be a number above 0, got ${opts.requestsPerSecond}`);
    }
    this.rate = opts.requestsPerSecond;
    this.burst = Math.max(1, opts.burst ?? Math.ceil(opts.requestsPerSecond));
    this.tokens = this.burst;
    this.retryAfter = opts.retryAfterSeconds ?? 1;
  }

  /** Takes one token at time `now` (ms); false when the bucket is empty. */
  take(now: number): boolean {
    const last = this.last ?? now;
    this.tokens = Math.min(this.burst, this.tokens + ((now - last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
