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

interface PrepareBatch {
  keys: Set<string>;
  load: boolean;
  /** Goes within TIMING.gatherMs: a result waits on it. */
  soon?: boolean;
  go: () => void;
  done: Promise<unknown>;
}

/**
 * Each key's run prepared in the cycle in batches (prepareWaitMs), so the run's end does not add every case at once.
 * Not a memoByKey: an entry is replaced when a result needs its run id at once, and a failed batch is not re-asked.
 */
export class CyclePreparation {
  private readonly prepared = new Map<string, Promise<unknown>>();
  private next?: PrepareBatch;
  private timer?: () => void;
  private wait: number;
  /** The run ended (see flush): a new batch goes at once. */
  private ended = false;
  /** When the last batch a result waited on went (clock time). */
  private lastSoon = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: PreparationOptions) {
    this.wait = o.clock.timing.prepareWaitMs;
  }

  /** Keys whose runs are prepared already (the planned tests at the start): `ready` when they are. */
  seed(keys: Iterable<string>, ready: Promise<unknown>): void {
    for (const k of keys) this.prepared.set(k, ready);
  }

  /** Resolves when the batch holding the key is done; `load` asks that batch to read the run ids back. */
  prepare(key: string, load = false): Promise<unknown> {
    const known = this.prepared.get(key);
    if (known && !(load && this.next?.keys.has(key))) return known;
    if (this.o.target.mode !== 'cycle' || this.o.health.down) return Promise.resolve();
    const batch = this.next ?? this.open();
    batch.keys.add(key);
    batch.load ||= load;
    // A result waits on its run id (a failure's status is due within statusWithinMs): the batch goes shortly, at
    // most one such batch in that time (failures spread over a run share them; a burst's went with its bulk).
    if (load && !this.ended && !batch.soon) {
      batch.soon = true;
      this.timer?.();
      const { clock } = this.o;
      const at = Math.max(clock.timing.gatherMs, this.lastSoon + clock.timing.statusWithinMs - clock.now());
      this.timer = clock.after(at, () => {
        this.timer = undefined;
        this.lastSoon = clock.now();
        // It took the place of a timed batch: the next one waits as long as that one's next would have.
        this.wait *= 2;
        batch.go();
      });
    }
    this.prepared.set(key, batch.done);
    return batch.done;
  }

  /** The end of the run: the batch waiting goes now, and any later one at once. */
  flush(): void {
    this.ended = true;
    this.timer?.();
    this.timer = undefined;
    this.next?.go();
  }

  private open(): PrepareBatch {
    let go: () => void = () => undefined;
    const start = new Promise<void>((r) => {
      go = r;
    });
    const b: PrepareBatch = { keys: new Set<string>(), load: false, go, done: Promise.resolve() };
    b.done = start.then(() => {
      if (this.next === b) this.next = undefined;
      return this.o.health.down ? undefined : this.o.runs.ensure(this.o.target, [...b.keys], b.load);
    });
    this.o.track(b.done);
    this.next = b;
    if (this.ended) b.go();
    else {
      this.timer = this.o.clock.after(this.wait, () => {
        this.timer = undefined;
        this.wait *= 2;
        b.go();
      });
    }
    return b;
  }
}
