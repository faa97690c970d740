/** The system's time in one place; read at each call, so a test's fake timers drive it too. */

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

/** Calls `fn` after `ms` and returns its cancel; the timer keeps the process alive only with `keepAlive`. */
export function timer(ms: number, fn: () => void, keepAlive = false): () => void {
  const t = setTimeout(fn, ms);
  if (!keepAlive) t.unref();
  return () => clearTimeout(t);
}
