import { TIMING } from '../kernel/timing.js';
import type { WorkItem } from '../kernel/work.js';
import type { RunHealth } from './health.js';

/** Waits before an item that failed is tried again in the run, then journaled: 10 s in all, within flushTimeoutMs. */
export const RETRY_AFTER_MS = TIMING.retryAfterMs;

/** Results waiting for another try within the run (at most RETRY_AFTER_MS.length); the rest go to the journal. */
export class Later {
  private readonly tries = new WeakMap<WorkItem, number>();

  constructor(
    private readonly o: {
      health: RunHealth;
      signal: AbortSignal;
      /** Work under way: the end of the run waits for it (bounded by flushTimeoutMs / flushMaxMs). */
      track: (p: Promise<unknown>) => void;
      /** Delivers the items again (the bulk for status-only results, one delivery each for the others). */
      again: (items: WorkItem[]) => void;
    },
  ) {}

  /** How many times the item was tried again. */
  triesOf(item: WorkItem): number {
    return this.tries.get(item) ?? 0;
  }

  /** Items that failed: tried again after the next wait. Returns those with no try left, for the journal. */
  retry(items: WorkItem[]): WorkItem[] {
    const again: WorkItem[] = [];
    const spent: WorkItem[] = [];
    let wait = 0;
    for (const item of items) {
      const n = this.triesOf(item);
      const waits = this.o.health.clock.timing.retryAfterMs;
      if (n >= waits.length || this.o.health.stopped) spent.push(item);
      else {
        this.tries.set(item, n + 1);
        wait = Math.max(wait, waits[n] ?? 0);
        again.push(item);
      }
    }
    if (again.length > 0) this.o.track(this.after(wait, again));
    return spent;
  }

  /** Runs `fn` once the service answers again (never when sending stopped for good). */
  onUp(fn: () => void): void {
    if (this.o.health.stopped) return;
    void this.o.health.whenUp().then(() => {
      if (this.o.health.down === undefined) fn();
    });
  }

  /** Items that were not tried because the service is down: sent when it answers again (no try is spent). */
  park(items: WorkItem[]): void {
    if (items.length === 0 || this.o.health.stopped) return;
    this.o.track(this.after(0, items));
  }

  private async after(ms: number, items: WorkItem[]): Promise<void> {
    if (ms > 0) await this.o.health.clock.sleep(ms, this.o.signal);
    await this.o.health.whenUp();
    if (this.o.health.down !== undefined || this.o.signal.aborted) return;
    this.o.again(items);
  }
}
