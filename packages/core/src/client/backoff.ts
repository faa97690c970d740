/**
 * Retry timing: exponential backoff with full jitter (a uniformly random wait between 0 and the capped exponential
 * bound), so that many reporters retrying after the same outage spread out instead of arriving together.
 */

/** The wait before retry number `attempt` (0-based): uniform in [0, min(cap, base * 2^attempt)). */
export function backoffDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random) {
  const bound = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * bound);
}

/**
 * A wait of at least half the capped exponential bound ("equal jitter"): for answers that ask for a pause, a 500 or a
 * `Retry-After: 0`, where full jitter could mean sending again at once.
 */
export function pauseDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random) {
  const bound = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(bound / 2 + (random() * bound) / 2);
}

/**
 * A `Retry-After` header in milliseconds: delta-seconds (`120`) or an HTTP date. Undefined when absent or
 * unparseable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const s = raw.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const at = Date.parse(s);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
