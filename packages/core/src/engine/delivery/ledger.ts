import { outcomeOf } from '../kernel/model.js';
import type { WorkItem } from '../kernel/work.js';

/** The results a run took in; a delivered result that did not fail is let go, not kept (~1 KB each) to the end. */
export class Ledger {
  /** In the order taken: the undelivered, the dropped and the failed ones (see `settled`). */
  private readonly kept = new Set<WorkItem>();
  /** Results delivered and let go. */
  private released = 0;

  /** Results taken in (this run's and those replayed from the journal). */
  get total(): number {
    return this.kept.size + this.released;
  }

  /** The results kept: those not (yet) delivered, the dropped and the failed ones, in the order taken. */
  get items(): WorkItem[] {
    return [...this.kept];
  }

  add(item: WorkItem): void {
    this.kept.add(item);
  }

  /** A result is settled (delivered or dropped): let go when delivered and not failed. */
  settled(item: WorkItem): void {
    const p = item.progress;
    if (!p.done || p.dropped || outcomeOf(item.test) === 'failed') return;
    if (this.kept.delete(item)) this.released += 1;
  }

  /** Results delivered (not dropped): their run has its status, what follows it (a defect) included or not. */
  get delivered(): number {
    return this.released + this.countKept((p) => (p.done === true && !p.dropped) || (!p.done && p.status === true));
  }

  /** Results done with: delivered or dropped. */
  get done(): number {
    return this.released + this.countKept((p) => p.done === true);
  }

  /** Results still to deliver: the journal's at the end. */
  undelivered(): WorkItem[] {
    const out: WorkItem[] = [];
    for (const i of this.kept) if (!i.progress.done) out.push(i);
    return out;
  }

  private countKept(match: (p: WorkItem['progress']) => boolean): number {
    let n = 0;
    for (const i of this.kept) if (match(i.progress)) n += 1;
    return n;
  }
}
