import PQueue from 'p-queue';
import type { TestManagementClient } from '../../client/tm.js';
import { type Clock, systemClock } from '../kernel/clock.js';
import type { CycleInfo } from '../kernel/types.js';
import type { FailureGroup } from './groups.js';
import { DefectLedger } from './ledger.js';

/**
 * The flood guard: at most `defects.maxPerRun` new defects per run, in a cycle across its machines, counted from the
 * cycle's defect list. Half the slots stream, the rest go by blast radius once all is in (docs/architecture.md).
 */

/** How close to the cap the cycle's list is read again, once, before the next new defect. */
const NEAR = 3;
/** `[cb-<16 hex>]` in a defect summary. */
const MARKER = /\[(cb-[0-9a-f]{16})\]/;

/** A slot under the cap now, none, or decided `later` by the run's ranking (see DefectCap.reserve). */
export type Slot = boolean | { later: Promise<boolean> };

/** A group of failures as the cap ranks it. */
interface Demand {
  /** Failing tests of the group seen in this run. */
  tests: number;
  environment: boolean;
  /** Order of first sight: the last tie-break. */
  order: number;
  /** What the summary calls it. */
  label: string;
}

/** A failure group the cap did not file, for the summary: what it is and how many failing tests it had. */
export interface NotFiledGroup {
  label: string;
  tests: number;
}

interface CycleDefects {
  /** Marker → defect key, from the last read of the list. */
  byMarker: Map<string, string>;
  /** Keys in the list that carry a marker. */
  marked: Set<string>;
  read?: Promise<void>;
  /** When the last read was sent (clock time). */
  readAt?: number;
  /** Read again near the cap (once: then this process counts its own creates). */
  reread?: boolean;
}

export class DefectCap {
  /** Creates under way (a slot reserved, the key not known yet). */
  private pending = 0;
  private readonly cycles = new Map<number, CycleDefects>();
  private notFiledCount = 0;
  /** Reservations near the cap, one after the other; callers waiting for the creates under way to settle. */
  private readonly near = new PQueue({ concurrency: 1 });
  private readonly waiting: Array<() => void> = [];
  /** Failure groups by hash: the blast radius of each (see `saw`). */
  private readonly demand = new Map<string, Demand>();
  /** Groups that took a slot, and groups that linked an existing defect: never ranked. */
  private readonly served = new Set<string>();
  /** Groups that wait for `allIn` to know whether they get a slot. */
  private readonly queued = new Map<string, Array<(ranked: boolean) => void>>();
  /** Set by `allIn`: the groups ranked into the slots left (undefined: results are still coming in). */
  private ranked?: Set<string>;
  /** The groups `allIn` ranked (those outside its slots among them are refused), and their order. */
  private rankedFrom = new Set<string>();
  private rankOrder: string[] = [];
  /** Groups ranked out that wait (at most `standbyMs`) for a slot a ranked group leaves unused. */
  private readonly standby = new Map<string, (granted: boolean) => void>();
  /** Groups the cap left without a defect. */
  private readonly refused = new Set<string>();

  constructor(
    readonly max: number,
    private readonly tm: TestManagementClient,
    private readonly signal: AbortSignal,
    private readonly clock: Clock = systemClock,
    /** The run's defects filed and linked (shared with defects.ts and the summary). */
    readonly ledger = new DefectLedger(),
  ) {}

  /**
   * The defect with this marker already linked in the cycle, or undefined (ad hoc mode: always undefined). `since`:
   * from a read of the list sent at that clock time or later (the list has no index lag: another machine's defect
   * filed from a run of the cycle shows at once).
   */
  async inCycle(cycle: CycleInfo | undefined, marker: string, since?: number): Promise<string | undefined> {
    if (!cycle) return undefined;
    const c = await this.cycleState(cycle);
    if (since !== undefined && (c.readAt ?? Number.NEGATIVE_INFINITY) < since) await this.refresh(cycle, c);
    return c.byMarker.get(marker);
  }

  /** A failing test of this group came in (before its delivery): its blast radius grows by one. */
  saw(group: FailureGroup): void {
    const d = this.demand.get(group.hash);
    if (d) d.tests += 1;
    else
      this.demand.set(group.hash, {
        tests: 1,
        environment: !!group.environment,
        order: this.demand.size,
        label: labelOf(group),
      });
  }

  /** Every result is in: the groups not served are ranked by blast radius and the slots left go to the top. Once. */
  allIn(cycle?: CycleInfo): void {
    if (this.ranked) return;
    const left = Math.max(0, this.max - this.count(cycle ? this.cycles.get(cycle.id) : this.anyCycle()));
    const order = [...this.demand.entries()]
      .filter(([hash]) => !this.served.has(hash))
      .sort(([, a], [, b]) => b.tests - a.tests || Number(b.environment) - Number(a.environment) || a.order - b.order);
    this.rankOrder = order.map(([hash]) => hash);
    this.rankedFrom = new Set(this.rankOrder);
    this.ranked = new Set(order.slice(0, left).map(([hash]) => hash));
    // Those ranked out stand by for a slot a ranked group may leave unused (ranksIn).
    for (const [hash, wakes] of this.queued) {
      for (const wake of wakes) void Promise.resolve(this.ranksIn(undefined, hash)).then(wake);
    }
    this.queued.clear();
  }

  /**
   * A slot for one new defect of the group: `true`, `false`, or `{ later }` when the run's ranking decides (the caller
   * writes its run now). Never waits for other results; a taken slot is given back with `settle`.
   */
  async reserve(cycle: CycleInfo | undefined, group?: FailureGroup): Promise<Slot> {
    if (this.max === 0) return this.refuse(group);
    if (group && !this.demand.has(group.hash)) this.saw(group);
    const c = cycle ? await this.cycleState(cycle) : undefined;
    if (group) {
      // No await between this check and the take while the streaming half is free: callers cannot all pass it.
      const streams = !this.ranked && this.count(c) < Math.floor(this.max / 2);
      if (!streams) {
        const ranks = this.ranksIn(c, group.hash);
        if (typeof ranks !== 'boolean') {
          const hash = group.hash;
          return { later: ranks.then((ok) => (ok ? this.granted(cycle, c, hash) : this.refuse(group))) };
        }
        if (!ranks) return this.refuse(group);
      }
      this.serve(group.hash);
    }
    return this.slot(cycle, c);
  }

  /** The ranking gave the group a slot: taken now (see `slot`). */
  private granted(cycle: CycleInfo | undefined, c: CycleDefects | undefined, hash: string): Promise<boolean> {
    this.serve(hash);
    return Promise.resolve(this.slot(cycle, c));
  }

  /**
   * Near the cap, one create at a time once ours settled (one still answering would be counted twice), the first
   * after one more read of the cycle's list: one read, not one a create.
   */
  private slot(cycle: CycleInfo | undefined, c: CycleDefects | undefined): boolean | Promise<boolean> {
    if (!cycle || !c) return this.take(undefined);
    if (this.count(c) < this.max - NEAR) return this.take(c);
    return this.near.add(async () => {
      await this.idle();
      if (!c.reread && this.count(c) < this.max) {
        c.reread = true;
        await this.refresh(cycle, c);
      }
      return this.take(c);
    });
  }

  /** Gives back a slot taken by `reserve` as soon as the create answered: with its key, or undefined when it failed. */
  settle(createdKey: string | undefined): void {
    this.pending -= 1;
    if (createdKey) this.ledger.filed(createdKey);
    if (this.pending === 0) for (const wake of this.waiting.splice(0)) wake();
  }

  /** A defect that existed and was linked (not counted towards the cap unless another machine created it). */
  noteLinked(key: string, group?: FailureGroup): void {
    this.ledger.link(key);
    if (!group) return;
    const h = group.hash;
    if (this.ranked?.has(h) && !this.served.has(h)) {
      // Ranked in, and it needed no slot: the next group of the ranking not yet decided gets it.
      this.ranked.delete(h);
      this.served.add(h);
      const next = this.rankOrder.find((n) => !this.ranked?.has(n) && !this.served.has(n) && !this.refused.has(n));
      if (next) {
        this.ranked.add(next);
        const wake = this.standby.get(next);
        this.standby.delete(next);
        wake?.(true);
      }
    }
    this.serve(h);
  }

  /** A group took its slot or linked: once every ranked group has, no slot can free up for those standing by. */
  private serve(hash: string): void {
    this.served.add(hash);
    if (this.standby.size === 0 || !this.ranked) return;
    for (const h of this.ranked) if (!this.served.has(h)) return;
    for (const wake of this.standby.values()) wake(false);
    this.standby.clear();
  }

  /** One failure that got no defect because of the cap. */
  noteNotFiled(): void {
    this.notFiledCount += 1;
  }

  /** For the summary: failures not filed, and why, and the groups left without a defect, largest first. */
  notFiled(cycleMode: boolean): { notFiled?: number; notFiledReason?: string; notFiledGroups?: NotFiledGroup[] } {
    if (this.notFiledCount === 0) return {};
    const where = cycleMode ? ', counted across the machines reporting into the cycle' : '';
    const groups = [...this.refused]
      .map((hash) => this.demand.get(hash))
      .filter((d): d is Demand => d !== undefined)
      .sort((a, b) => b.tests - a.tests || a.order - b.order)
      .map((d) => ({ label: d.label, tests: d.tests }));
    return {
      notFiled: this.notFiledCount,
      notFiledReason: `the cap of ${this.max} new defects per run (defects.maxPerRun) was reached${where}`,
      ...(groups.length ? { notFiledGroups: groups } : {}),
    };
  }

  /** The run comment's note for a failure that got no defect. */
  note(): string {
    return `Defect not filed: the run's cap of ${this.max} new defects was reached (defects.maxPerRun)`;
  }

  /** The run comment's note for a failure whose defect the ranking decides once every result is in. */
  pendingNote(): string {
    return `Defect: the run's cap of ${this.max} new defects (defects.maxPerRun) goes to the failure groups that hit the most tests, once every result is in; no defect linked to this run means the cap was reached before this failure's group`;
  }

  /**
   * Whether the group may take a slot past the streaming half (a promise until `allIn`); a group `allIn` did not know
   * (a replayed result) takes what no ranked group still needs.
   */
  private ranksIn(c: CycleDefects | undefined, hash: string): Promise<boolean> | boolean {
    if (!this.ranked) {
      return new Promise((wake) => {
        const list = this.queued.get(hash) ?? [];
        list.push(wake);
        this.queued.set(hash, list);
      });
    }
    if (this.ranked.has(hash)) return true;
    if (this.rankedFrom.has(hash)) {
      const undecided = [...this.ranked].some((h) => !this.served.has(h));
      if (!undecided) return false;
      return new Promise((wake) => {
        const cancel = this.clock.after(this.clock.timing.standbyMs, () => {
          this.standby.delete(hash);
          wake(false);
        });
        this.standby.set(hash, (granted) => {
          cancel();
          wake(granted);
        });
      });
    }
    const owed = [...this.ranked].filter((h) => !this.served.has(h)).length;
    return this.count(c) + owed < this.max;
  }

  private refuse(group: FailureGroup | undefined): false {
    if (group) this.refused.add(group.hash);
    return false;
  }

  /** The state of the cycle read first (the count `allIn` ranks against, when it is not told the cycle). */
  private anyCycle(): CycleDefects | undefined {
    return this.cycles.values().next().value;
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
    const keys = new Set(this.ledger.created);
    if (c) for (const k of c.marked) if (!this.ledger.ours(k)) keys.add(k);
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
    c.readAt = this.clock.now();
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
      // Without the list the cap holds for this process, and the search before each create still finds a defect.
    }
  }
}

/** What the summary calls a group: its environment kind, or its error type and first message line. */
function labelOf(group: FailureGroup): string {
  const first = group.normalisedMessage.split('\n')[0]?.trim() ?? '';
  const text = group.environment ? `Environment error (${group.environment}): ${first}` : `${group.type}: ${first}`;
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}
