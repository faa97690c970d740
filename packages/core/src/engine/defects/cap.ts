import type { TestManagementClient } from '../../client/tm.js';
import type { CycleInfo } from '../kernel/types.js';

/**
 * The flood guard's count: at most `defects.maxPerRun` new defects per run, and in cycle mode per cycle, across the
 * machines (shards) that report into it. The cycle's defect list (`defects.ofCycle`) is the state they share: the
 * defects casebridge filed carry `[cb-<hash>]` in their summary, so the list says both how many new defects the
 * cycle already has and which group already has one (linked without a search).
 *
 * Costs: the list is read once per cycle and run (one request, lazily, at the first failure that needs a defect),
 * and again before each of the last `NEAR` defects under the cap, when another machine may have filed meanwhile:
 * at most 1 + NEAR reads per cycle, whatever the number of failures. Two machines that create at the very same
 * moment near the cap can still both pass it, by at most one defect each.
 *
 * The count includes defects of other machines that were linked (not created) into the cycle: the list cannot
 * tell the two apart, so the cap errs on the side of filing fewer. Those this process linked are left out.
 */

/** How close to the cap the cycle's list is read again before each new defect. */
const NEAR = 3;
/** `[cb-<16 hex>]` in a defect summary. */
const MARKER = /\[(cb-[0-9a-f]{16})\]/;

interface CycleDefects {
  /** Marker → defect key, from the last read of the list. */
  byMarker: Map<string, string>;
  /** Keys in the list that carry a marker. */
  marked: Set<string>;
  read?: Promise<void>;
}

export class DefectCap {
  /** Defects this process created, and those it linked as existing ones. */
  private readonly created = new Set<string>();
  private readonly linked = new Set<string>();
  /** Creates under way (a slot reserved, the key not known yet). */
  private pending = 0;
  private readonly cycles = new Map<number, CycleDefects>();
  private notFiledCount = 0;
  /** Reservations near the cap, one after the other; callers waiting for the creates under way to settle. */
  private near: Promise<unknown> = Promise.resolve();
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly max: number,
    private readonly tm: TestManagementClient,
    private readonly signal: AbortSignal,
  ) {}

  /** The defect with this marker already linked in the cycle, or undefined (ad hoc mode: always undefined). */
  async inCycle(cycle: CycleInfo | undefined, marker: string): Promise<string | undefined> {
    if (!cycle) return undefined;
    const c = await this.cycleState(cycle);
    return c.byMarker.get(marker);
  }

  /**
   * Takes a slot for one new defect, or answers false when the cap is reached (in cycle mode counted over the
   * cycle). A taken slot is given back with `settle`: the key that was created, or undefined when none was.
   */
  async reserve(cycle: CycleInfo | undefined): Promise<boolean> {
    if (this.max === 0) return false;
    if (!cycle) return this.take(undefined);
    const c = await this.cycleState(cycle);
    if (this.count(c) < this.max - NEAR) return this.take(c);
    // Near the cap another machine may have filed since the last read: read again (see the costs above). One
    // reservation at a time, once this process's creates have settled: a defect created here whose answer has not
    // arrived yet would be in the list without being known as ours, and be counted twice.
    const turn = this.near.then(async () => {
      await this.idle();
      if (this.count(c) < this.max) await this.refresh(cycle, c);
      return this.take(c);
    });
    this.near = turn.catch(() => undefined);
    return turn;
  }

  /** Gives back a slot taken by `reserve` as soon as the create answered: with its key, or undefined when it failed. */
  settle(createdKey: string | undefined): void {
    this.pending -= 1;
    if (createdKey) this.created.add(createdKey);
    if (this.pending === 0) for (const wake of this.waiting.splice(0)) wake();
  }

  /** A defect this process created and then closed as the duplicate of another machine's: not a new one. */
  duplicate(key: string): void {
    this.created.delete(key);
    this.linked.add(key);
  }

  /** A defect that existed and was linked (not counted towards the cap unless another machine created it). */
  noteLinked(key: string): void {
    if (!this.created.has(key)) this.linked.add(key);
  }

  /** One failure that got no defect because of the cap. */
  noteNotFiled(): void {
    this.notFiledCount += 1;
  }

  /** For the summary: failures not filed, and why. */
  notFiled(cycleMode: boolean): { notFiled?: number; notFiledReason?: string } {
    if (this.notFiledCount === 0) return {};
    const where = cycleMode ? ', counted across the machines reporting into the cycle' : '';
    return {
      notFiled: this.notFiledCount,
      notFiledReason: `the cap of ${this.max} new defects per run (defects.maxPerRun) was reached${where}`,
    };
  }

  /** The run comment's note for a failure that got no defect. */
  note(): string {
    return `Defect not filed: the run's cap of ${this.max} new defects was reached (defects.maxPerRun)`;
  }

  /** No await between the check and the increment: concurrent callers cannot both take the last slot. */
  private take(c: CycleDefects | undefined): boolean {
    if (this.count(c) >= this.max) return false;
    this.pending += 1;
    return true;
  }

  private idle(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise((wake) => this.waiting.push(wake));
  }

  private count(c: CycleDefects | undefined): number {
    const keys = new Set(this.created);
    if (c) for (const k of c.marked) if (!this.linked.has(k)) keys.add(k);
    return keys.size + this.pending;
  }

  private async cycleState(cycle: CycleInfo): Promise<CycleDefects> {
    let c = this.cycles.get(cycle.id);
    if (!c) {
      c = { byMarker: new Map(), marked: new Set() };
      this.cycles.set(cycle.id, c);
      c.read = this.read(cycle, c);
    }
    await c.read;
    return c;
  }

  private refresh(cycle: CycleInfo, c: CycleDefects): Promise<void> {
    c.read = this.read(cycle, c);
    return c.read;
  }

  private async read(cycle: CycleInfo, c: CycleDefects): Promise<void> {
    try {
      const list = await this.tm.defects.ofCycle(
        { testPlanIssueKey: cycle.plan, cycleId: cycle.id },
        { signal: this.signal },
      );
      for (const d of list) {
        const m = MARKER.exec(d.summary ?? '');
        if (!m?.[1]) continue;
        c.marked.add(d.key);
        if (!c.byMarker.has(m[1])) c.byMarker.set(m[1], d.key);
      }
    } catch {
      // The list is an optimisation and the cross-machine count: without it the cap holds for this process and the
      // search before each create still finds an existing defect.
    }
  }
}
