/**
 * The system's time, in one place: the client's stamps and pauses, and the engine's clock built on them
 * (engine/kernel/clock.ts). Date.now and setTimeout are read at each call, so a test's fake timers drive these too.
 */

/** Now, in ms. */
export const now = (): number => Date.now();

/** Resolves after `ms`, or as soon as `signal` aborts; never rejects (a caller that must know checks the signal). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Calls `fn` after `ms`; returns its cancel. It does not keep the process alive unless `keepAlive` (work a caller
 * awaits depends on it).
 */
export function timer(ms: number, fn: () => void, keepAlive = false): () => void {
  const t = setTimeout(fn, ms);
  if (!keepAlive) t.unref();
  return () => clearTimeout(t);
}
