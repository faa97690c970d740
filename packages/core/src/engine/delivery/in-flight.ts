import type { Clock } from '../kernel/clock.js';
import type { Ledger } from './ledger.js';

/** The batch of status-only results, as the end of the run sees it (DeliveryPipeline). */
export interface WaitingBatch {
  /** Results waiting. */
  readonly size: number;
  /** A bulk is about to go (see TIMING.soonMs). */
  readonly due: boolean;
  /** The journal is being read: its results wait until all are claimed. */
  readonly holding: boolean;
  flush(): void;
}

/** How long the end of the run waits, and what it looks at. */
export interface DrainOptions {
  /** Stop when nothing succeeded for this long (option `flushTimeoutMs`). */
  flushTimeoutMs: number;
  /** Stop after this long in all (option `flushMaxMs`). */
  flushMaxMs: number;
  batch: WaitingBatch;
  /** Test cases are still being created (the bulk waiting for them goes once they are done). */
  creating: () => boolean;
  /** Give up waiting: sending stopped for good, or the service has been down too long (RunHealth.gaveUp). */
  stopped: () => boolean;
  /** The service is down for now (probed again): the bulk waits. */
  paused: () => boolean;
  out: (text: string) => void;
  progressLine: () => string;
}

/** The work under way in a run, and when a request last succeeded: the run's end waits while that moves. */
export class InFlight {
  private readonly work = new Set<Promise<unknown>>();
  /** When a request last succeeded. */
  progressAt: number;

  /** `failed` handles what a tracked promise throws (it never rejects into the runner). */
  constructor(
    private readonly failed: (err: unknown, what: string) => unknown,
    private readonly clock: Clock,
  ) {
    this.progressAt = clock.now();
  }

  get size(): number {
    return this.work.size;
  }

  /** A request succeeded: the end of the run keeps waiting. */
  progress(): void {
    this.progressAt = this.clock.now();
  }

  /** Work under way; what it throws is a failure of `what`. */
  track(p: Promise<unknown>, what = 'delivery'): void {
    const q = p.catch((err) => this.failed(err, what));
    this.work.add(q);
    void q.finally(() => this.work.delete(q));
  }

  /** Waits for what is under way, at most `ms` (after an abort: the requests end soon). */
  async settle(ms: number): Promise<void> {
    const done = new AbortController();
    await Promise.race([Promise.allSettled([...this.work]), this.clock.sleep(ms, done.signal)]);
    done.abort();
  }

  /** Waits for delivery while requests succeed, up to `flushMaxMs`, or `flushTimeoutMs` without one; true when done. */
  async drain(o: DrainOptions): Promise<boolean> {
    const { batch } = o;
    const { clock } = this;
    const { progressAfterMs, progressEveryMs, soonMs } = clock.timing;
    const started = clock.now();
    this.progressAt = started;
    let lastLine = started;
    for (;;) {
      const down = o.stopped();
      // The bulk waiting for more created cases goes at once when no create is left.
      const idle = !batch.due || !o.creating();
      if (batch.size > 0 && !down && !o.paused() && idle && !batch.holding) batch.flush();
      if (this.work.size === 0 && !batch.due && (batch.size === 0 || down)) return true;
      // What is left waits for a service that will not answer in time (results parked until it does): journaled.
      if (down) return false;
      const now = clock.now();
      if (now - this.progressAt > o.flushTimeoutMs) {
        o.out(`casebridge: delivery made no progress for flushTimeoutMs (${o.flushTimeoutMs} ms): stopping`);
        return false;
      }
      if (now - started > o.flushMaxMs) {
        o.out(`casebridge: delivery did not finish within flushMaxMs (${o.flushMaxMs} ms): stopping`);
        return false;
      }
      if (now - started >= progressAfterMs && now - lastLine >= progressEveryMs) {
        lastLine = now;
        o.out(`casebridge: delivering... ${o.progressLine()} (${Math.round((now - started) / 1000)} s)`);
      }
      // A timer too: racing an empty allSettled would spin on microtasks and never let the bulk's timer fire.
      const ticked = new AbortController();
      const tick = clock.sleep(this.work.size > 0 ? 250 : soonMs, ticked.signal);
      await (this.work.size > 0 ? Promise.race([Promise.allSettled([...this.work]), tick]) : tick);
      ticked.abort();
    }
  }
}

/** The progress line the end of the run prints while it waits. */
export function progressLine(ledger: Pick<Ledger, 'done' | 'total'>, created: number): string {
  return `${ledger.done} of ${ledger.total} result(s) delivered${created ? `, ${created} test case(s) created` : ''}`;
}
