import DataLoader from 'dataloader';
import type { Clock } from './clock.js';

/** A batch not sent yet: it goes at `due`, or sooner when `send` is called. */
export interface Gathering {
  due: number;
  /** Something waits for its answer (an ask may be only a head start no one takes: see GroupSearch). */
  needed: boolean;
  send(): void;
}

export interface BatcherOptions<K, V> {
  clock: Clock;
  /** Answers a batch: one answer per key, in order. */
  send: (keys: readonly K[]) => Promise<V[]>;
  /** How long an ask waits for others to join its batch, unless it says otherwise. */
  waitMs: number;
  /** Keys per batch: once one is full the next ask starts another (each goes at its own due time). */
  maxSize?: number;
  /** Whether a batch's timer keeps the process alive (work waits on it), or not (a head start nobody may take). */
  keepAlive?: boolean;
  /**
   * One batch answered at a time: one due while another is in flight keeps gathering asks and goes when that ends
   * (a write whose answer the next batch must see, such as adding cases to a cycle).
   */
  serial?: boolean;
}

type Batch = Gathering & { cancel?: () => void };

/**
 * The one keyed batcher: asks close together share one request, sent when its most impatient ask is due. DataLoader
 * gathers the keys and splits full batches; this schedules them on the run's clock. No cache: every ask is answered
 * by the batch it joined (a caller that wants one answer per run keeps it).
 */
export class Batcher<K, V> {
  private readonly loader: DataLoader<K, V, K>;
  /** The batch asks join now (a full or sent one is replaced by the next). */
  private open?: Batch;
  /** Every batch not sent yet. */
  private readonly waiting = new Set<Batch>();
  /** `serial`: a batch is being answered, and the batches due meanwhile, in order (each goes when the one before ends). */
  private busy = false;
  private held: Batch[] = [];
  /** How long the ask being made may wait: read when the ask starts a new batch. */
  private patience = 0;

  constructor(private readonly o: BatcherOptions<K, V>) {
    this.loader = new DataLoader((keys) => (o.serial ? this.inTurn(keys) : o.send(keys)), {
      cache: false,
      ...(o.maxSize ? { maxBatchSize: o.maxSize } : {}),
      batchScheduleFn: (go) => {
        const batch: Batch = {
          due: Number.POSITIVE_INFINITY,
          needed: false,
          send: () => {
            batch.cancel?.();
            if (!this.waiting.has(batch)) return;
            if (this.busy) {
              // Held open: asks keep joining it, and no timer moves it (it goes when the batch in flight ends).
              batch.due = Number.NEGATIVE_INFINITY;
              if (!this.held.includes(batch)) this.held.push(batch);
              return;
            }
            this.waiting.delete(batch);
            if (this.open === batch) this.open = undefined;
            go();
          },
        };
        this.waiting.add(batch);
        this.open = batch;
        this.by(batch, o.clock.now() + this.patience);
      },
    });
  }

  /** The key's answer, from a batch that goes at most `within` ms from now (sooner if another ask is due sooner). */
  load(key: K, within = this.o.waitMs): { answer: Promise<V>; batch: Gathering | undefined } {
    const before = this.open;
    this.patience = within;
    const answer = this.loader.load(key);
    // A failed batch rejects every ask; one nobody awaits (a head start, a run preparation not waited on) must not
    // become an unhandled rejection, which would end the runner's process.
    answer.catch(() => undefined);
    const batch = this.open;
    // Joined a batch already gathering: it goes no later than this ask may wait.
    if (batch && batch === before) this.by(batch, this.o.clock.now() + within);
    return { answer, batch };
  }

  private async inTurn(keys: readonly K[]): Promise<V[]> {
    this.busy = true;
    try {
      return await this.o.send(keys);
    } finally {
      this.busy = false;
      this.held.shift()?.send();
    }
  }

  /** Whether the batch has not been sent yet. */
  has(batch: Gathering): boolean {
    return this.waiting.has(batch as Batch);
  }

  /** The batch goes at `at` (clock time) if that is sooner than its due time; never later. */
  by(batch: Gathering, at: number): void {
    const b = batch as Batch;
    if (!this.waiting.has(b) || at >= b.due) return;
    b.cancel?.();
    b.due = at;
    const ms = at - this.o.clock.now();
    if (ms > 0) {
      b.cancel = this.o.clock.after(ms, b.send, this.o.keepAlive ?? false);
      return;
    }
    // Due now: after the asks of this job have joined (DataLoader's own schedule), not a timer's turn later.
    let cancelled = false;
    b.cancel = () => {
      cancelled = true;
    };
    queueMicrotask(() => {
      if (!cancelled) b.send();
    });
  }

  /** Sends now every batch not sent yet (those `which` picks). */
  flush(which: (batch: Gathering) => boolean = () => true): void {
    for (const batch of [...this.waiting]) if (which(batch)) batch.send();
  }

  /** The run has ended: a batch not sent yet never is (its asks stay unanswered: nobody waits for them). */
  close(): void {
    for (const batch of this.waiting) batch.cancel?.();
    this.waiting.clear();
    this.open = undefined;
    this.held = [];
  }
}
