import { Batcher, type Gathering } from '../kernel/batcher.js';
import type { Clock } from '../kernel/clock.js';
import type { Target } from '../kernel/work.js';
import type { CycleRuns } from './cycle-runs.js';
import type { RunHealth } from './health.js';

/** Status-only results in one bulk update at most (it goes at once when this many have gathered). */
export const BULK_MAX = 10_000;

export interface PreparationOptions {
  /** Where the run reports: runs are prepared only in a cycle. */
  target: Target;
  /** Adds the keys' cases to the cycle (`load`: and reads the run ids back). */
  runs: Pick<CycleRuns, 'ensure'>;
  /** Nothing is prepared while the service is judged down. */
  health: Pick<RunHealth, 'down'>;
  clock: Clock;
  /** Each new batch, from when it is made: the end of the run waits for it, its failure is classified. */
  track: (done: Promise<unknown>) => void;
}

/**
 * Each key's run prepared in the cycle in batches, so the run's end does not add every case at once; a result waiting
 * on its run id brings its batch forward. Not a memoByKey: such an entry is replaced, and a failed batch not re-asked.
 */
export class CyclePreparation {
  private readonly prepared = new Map<string, Promise<unknown>>();
  /** The batch each key went into (whether it is still waiting: `batches.has`). */
  private readonly batchOf = new Map<string, Gathering>();
  /** Keys whose batch must read the run ids back (a result waits on them). */
  private readonly loading = new Set<string>();
  /** Batches brought forward for a result (at most one every statusWithinMs). */
  private readonly soon = new WeakSet<Gathering>();
  /** Batches the end of the run waits for (each tracked once). */
  private readonly tracked = new WeakSet<Gathering>();
  private readonly batches: Batcher<string, unknown>;
  private wait: number;
  /** The run ended (see flush): a new batch goes at once. */
  private ended = false;
  /** When the last batch a result waited on went (clock time). */
  private lastSoon = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: PreparationOptions) {
    this.wait = o.clock.timing.prepareWaitMs;
    this.batches = new Batcher({ clock: o.clock, send: (keys) => this.send(keys), waitMs: this.wait });
  }

  /** Keys whose runs are prepared already (the planned tests at the start): `ready` when they are. */
  seed(keys: Iterable<string>, ready: Promise<unknown>): void {
    for (const k of keys) this.prepared.set(k, ready);
  }

  /** Resolves when the batch holding the key is done; `load` asks that batch to read the run ids back. */
  prepare(key: string, load = false): Promise<unknown> {
    const known = this.prepared.get(key);
    const before = this.batchOf.get(key);
    const waiting = before !== undefined && this.batches.has(before);
    if (known && !(load && waiting)) return known;
    if (this.o.target.mode !== 'cycle' || this.o.health.down) return Promise.resolve();
    if (load) this.loading.add(key);
    let batch = waiting ? before : undefined;
    let done = known;
    if (!batch || !done) {
      const asked = this.batches.load(key, this.ended ? 0 : this.wait);
      done = asked.answer;
      batch = asked.batch;
      if (batch) this.batchOf.set(key, batch);
      this.prepared.set(key, done);
      if (batch && !this.tracked.has(batch)) {
        this.tracked.add(batch);
        this.o.track(done);
      }
    }
    // A result waits on its run id (a failure's status is due within statusWithinMs): the batch goes shortly, at
    // most one such batch in that time (failures spread over a run share them; a burst's went with its bulk).
    if (load && batch && !this.ended && !this.soon.has(batch)) {
      this.soon.add(batch);
      const { clock } = this.o;
      const now = clock.now();
      this.batches.by(batch, Math.max(now + clock.timing.gatherMs, this.lastSoon + clock.timing.statusWithinMs));
    }
    return done;
  }

  /** The end of the run: the batch waiting goes now, and any later one at once. */
  flush(): void {
    this.ended = true;
    this.batches.flush();
  }

  /** A batch goes: the next timed one waits twice as long (one brought forward took a timed one's place). */
  private async send(keys: readonly string[]): Promise<unknown[]> {
    const load = keys.some((k) => this.loading.has(k));
    for (const k of keys) this.loading.delete(k);
    if (load) this.lastSoon = this.o.clock.now();
    this.wait *= 2;
    const out = this.o.health.down ? undefined : await this.o.runs.ensure(this.o.target, [...keys], load);
    return keys.map(() => out);
  }
}
