import { now as systemNow } from './time.js';
/**
 * Pacing by Jira's rate-limit headers (DC 8.6+, a token bucket per user): once it runs low, requests start no faster
 * than it refills, instead of draining it into 429s for every pipeline of that user. Without the headers nothing waits.
 */

export interface RateLimitHeaders {
  remaining: number;
  /** Tokens added per interval. */
  fillRate: number;
  intervalMs: number;
  /** The bucket's size, when the server says it. */
  limit?: number;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): number | undefined {
  const raw = headers[name];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (v === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(v)) return undefined;
  return Number(v);
}

/** The rate-limit headers of an answer, when it carries a usable set (Remaining, a positive FillRate and Interval). */
export function readRateLimit(headers: Record<string, string | string[] | undefined>): RateLimitHeaders | undefined {
  const remaining = header(headers, 'x-ratelimit-remaining');
  const fillRate = header(headers, 'x-ratelimit-fillrate');
  const interval = header(headers, 'x-ratelimit-interval-seconds');
  if (remaining === undefined || !fillRate || !interval) return undefined;
  const limit = header(headers, 'x-ratelimit-limit');
  return { remaining, fillRate, intervalMs: interval * 1000, ...(limit !== undefined ? { limit } : {}) };
}

export class RatePacer {
  private active = false;
  /** Tokens at `at`; negative when requests have reserved tokens not yet refilled. */
  private level = 0;
  private at = 0;
  /** Tokens per millisecond. */
  private rate = 0;
  private cap = Number.POSITIVE_INFINITY;
  /** Requests that reserved a token and have not been answered yet. */
  private outstanding = 0;

  constructor(private readonly now: () => number = systemNow) {}

  /** Whether the server has announced a limit. */
  get limited(): boolean {
    return this.active;
  }

  /** Takes a token and returns how long to wait first (0 without a limit); served in call order, from the queue. */
  reserve(): number {
    this.outstanding += 1;
    if (!this.active) return 0;
    const now = this.now();
    this.level = this.levelAt(now) - 1;
    this.at = now;
    return this.level >= 0 ? 0 : Math.ceil(-this.level / this.rate);
  }

  /** An answer arrived for a reserved request: its headers, when present, reset the level. */
  observe(headers: Record<string, string | string[] | undefined>): void {
    this.outstanding = Math.max(0, this.outstanding - 1);
    const h = readRateLimit(headers);
    if (!h) return;
    this.active = true;
    this.rate = h.fillRate / h.intervalMs;
    this.cap = h.limit ?? Number.POSITIVE_INFINITY;
    // The server counted what it had received; the requests still on their way will take their tokens too.
    this.level = h.remaining - this.outstanding;
    this.at = this.now();
  }

  /** A reserved request ended without an answer (connection failure, abort): it took no token from the server. */
  release(): void {
    this.outstanding = Math.max(0, this.outstanding - 1);
    if (this.active) this.level = Math.min(this.cap, this.level + 1);
  }

  private levelAt(now: number): number {
    return Math.min(this.cap, this.level + this.rate * Math.max(0, now - this.at));
  }
}
