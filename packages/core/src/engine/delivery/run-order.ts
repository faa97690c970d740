const NOTHING_BEFORE: Promise<unknown> = Promise.resolve();

/**
 * The status writes of each run, one after the other: `withTurn(runIds, write)` runs `write` once the writes queued
 * before on any of those runs have settled (whether they failed or not), and the next ones wait for it. With it, when
 * several tests report one case the worse status stays, whatever order their deliveries finish in. A run that went
 * quiet is forgotten.
 */
export class RunOrder {
  private readonly last = new Map<number, Promise<void>>();

  async withTurn<T>(runIds: readonly number[], write: () => Promise<T>): Promise<T> {
    // Only the distinct turns before are waited for: a bulk of 10,000 runs no other write touches waits for nothing,
    // not for 10,000 resolved promises (each promise costs the async hooks of whoever enabled them: Jest's runner in
    // band pays per promise and per test file loaded).
    const before = new Set<Promise<void>>();
    for (const id of runIds) {
      const p = this.last.get(id);
      if (p) before.add(p);
    }
    let done: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    for (const id of runIds) this.last.set(id, mine);
    try {
      // The turns before never reject: each is settled in its `finally`.
      await (before.size === 0 ? NOTHING_BEFORE : Promise.all(before));
      return await write();
    } finally {
      done();
      for (const id of runIds) if (this.last.get(id) === mine) this.last.delete(id);
    }
  }
}
