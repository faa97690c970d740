import type { Target } from '../kernel/work.js';
import type { CycleRuns } from './cycle-runs.js';
import type { RunHealth } from './health.js';

/**
 * Status-only results wait at most this long, or until this many have gathered, or until every planned test has
 * reported, before a bulk update. Waiting costs nothing in safety: each result is in the write-ahead log already.
 * Long enough that a suite of thousands of tests costs a handful of updates; short enough that a long suite's
 * results show up while it runs. Each wait that runs out doubles the next one (30 s, 60 s, 120 s, ... up to
 * BULK_WAIT_MAX_MS): a run of 90 s makes one timed update, a run of an hour about ten.
 */
export const BULK_WAIT_MS = 30_000;
export const BULK_WAIT_MAX_MS = 300_000;
export const BULK_MAX = 10_000;
/**
 * Runners that name no tests up front (Jest, Vitest): the cycle's runs for the keys seen so far are prepared this
 * long after the first one, then after twice as long, and so on (2 s, 4 s, 8 s...). The end of the run then only
 * adds the last keys. A few batches of two requests, whatever the suite's size.
 */
const PREPARE_WAIT_MS = 2_000;
/** After the last planned test (or the end), results wait this long for others to join them in one bulk update. */
export const SOON_MS = 20;
/**
 * ... and this long while test cases are still being created, so that a first run sends a few bulks, not hundreds
 * (each reads the cycle's growing run list). The last one goes as soon as the creates are done.
 */
export const SOON_WHILE_CREATING_MS = 2_000;

export interface PreparationOptions {
  /** Where the run reports: runs are prepared only in a cycle. */
  target: Target;
  /** Adds the keys' cases to the cycle (`load`: and reads the run ids back). */
  runs: Pick<CycleRuns, 'ensure'>;
  /** Nothing is prepared while the service is judged down. */
  health: Pick<RunHealth, 'down'>;
  /** Each new batch, from when it is made: the end of the run waits for it, its failure is classified. */
  track: (done: Promise<unknown>) => void;
}

interface PrepareBatch {
  keys: Set<string>;
  load: boolean;
  go: () => void;
  done: Promise<unknown>;
}

/**
 * The preparation of each key's run in the cycle: a key whose run the cycle will need is added with the others in
 * the next batch (see PREPARE_WAIT_MS), so that the end of the run does not add every case to the cycle at once.
 *
 * Not a memoByKey: a key's entry is replaced when a result needs its run id at once and the batch waiting to go
 * holds the key (that batch must then read the run ids back), and a failed batch is not asked again per key.
 */
export class CyclePreparation {
  private readonly prepared = new Map<string, Promise<unknown>>();
  private next?: PrepareBatch;
  private timer?: NodeJS.Timeout;
  private wait = PREPARE_WAIT_MS;
  /** The run ended (see flush): a new batch goes at once. */
  private ended = false;

  constructor(private readonly o: PreparationOptions) {}

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
    this.prepared.set(key, batch.done);
    return batch.done;
  }

  /** The end of the run: the batch waiting goes now, and any later one at once. */
  flush(): void {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
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
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.wait *= 2;
        b.go();
      }, this.wait);
      this.timer.unref();
    }
    return b;
  }
}
