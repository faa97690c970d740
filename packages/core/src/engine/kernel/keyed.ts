/**
 * Work shared or ordered by key: one look-up per key however many callers ask at once (`memoByKey`), writes to one
 * key one after the other (`serialByKey`), and keys gathered into batches (`KeyBatcher`).
 */

/** Answers `make()` once per key; every caller of that key shares the one promise. */
export type Memo<K, V> = (key: K, make: () => Promise<V>) => Promise<V>;

/**
 * A memo whose failures are forgotten, so that the next caller asks again, unless `keepFailure` says the answer
 * will not change (then every later caller gets the same rejection without a request).
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

/** A queue per key: a call waits for the previous calls on each of its keys; a key that went quiet is forgotten. */
export function serialByKey<K>(): Serial<K> {
  const last = new Map<K, Promise<unknown>>();
  return (keys, fn) => {
    const before = Promise.all(keys.map((k) => last.get(k)?.catch(() => undefined)));
    const p = before.then(fn);
    for (const k of keys) last.set(k, p);
    const forget = () => {
      for (const k of keys) if (last.get(k) === p) last.delete(k);
    };
    p.then(forget, forget);
    return p;
  };
}

/**
 * Calls of `run` coalesced by key: keys asked for while a batch is under way go together into the next batch, and
 * every caller gets the answer of the batch that held its keys.
 */
export class KeyBatcher<T> {
  private next?: { keys: Set<string>; flag: boolean; promise: Promise<T> };
  private current: Promise<unknown> = Promise.resolve();

  constructor(private readonly run: (keys: string[], flag: boolean) => Promise<T>) {}

  /** `flag` is or-ed over the batch's callers (here: whether the batch must read the run ids back). */
  request(keys: Iterable<string>, flag = false): Promise<T> {
    let batch = this.next;
    if (!batch) {
      const b: { keys: Set<string>; flag: boolean; promise: Promise<T> } = {
        keys: new Set<string>(),
        flag: false,
        promise: Promise.resolve() as Promise<T>,
      };
      b.promise = this.current
        .catch(() => undefined)
        .then(() => {
          if (this.next === b) this.next = undefined;
          return this.run([...b.keys], b.flag);
        });
      batch = b;
      this.current = b.promise;
      this.next = b;
    }
    for (const k of keys) batch.keys.add(k);
    batch.flag ||= flag;
    return batch.promise;
  }
}
