/** Work shared or ordered by key: one look-up per key, writes to a key in turn. */

/** Answers `make()` once per key; every caller of that key shares the one promise. */
export type Memo<K, V> = (key: K, make: () => Promise<V>) => Promise<V>;

/**
 * A memo that forgets failures, so the next caller asks again, unless `keepFailure` says the answer will not change.
 */
export function memoByKey<K, V>(keepFailure: (err: unknown) => boolean = () => false): Memo<K, V> {
  const known = new Map<K, Promise<V>>();
  return (key, make) => {
    let p = known.get(key);
    if (!p) {
      const made = make();
      made.catch((err) => {
        if (!keepFailure(err) && known.get(key) === made) known.delete(key);
      });
      known.set(key, made);
      p = made;
    }
    return p;
  };
}

/** Runs `fn` after everything queued before it on any of `keys` has settled (whether it failed or not). */
export type Serial<K> = <T>(keys: readonly K[], fn: () => Promise<T>) => Promise<T>;

const NOTHING_BEFORE: Promise<unknown> = Promise.resolve();

/**
 * The one keyed lock: a call waits for the previous calls on each of its keys; a key that went quiet is forgotten.
 * Only the distinct turns before are awaited: a bulk of 10,000 runs no other write touches waits for nothing (Jest's
 * runner in band pays the async hooks of every promise).
 */
export function serialByKey<K>(): Serial<K> {
  const last = new Map<K, Promise<void>>();
  return async (keys, fn) => {
    const before = new Set<Promise<void>>();
    for (const k of keys) {
      const p = last.get(k);
      if (p) before.add(p);
    }
    let done: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    for (const k of keys) last.set(k, mine);
    try {
      // The turns before never reject: each is settled in its `finally`.
      await (before.size === 0 ? NOTHING_BEFORE : Promise.all(before));
      return await fn();
    } finally {
      done();
      for (const k of keys) if (last.get(k) === mine) last.delete(k);
    }
  };
}
