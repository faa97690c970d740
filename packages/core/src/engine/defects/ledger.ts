import type { CycleInfo } from '../kernel/types.js';
import type { WorkItem } from '../kernel/work.js';
import type { Refusal } from './refusals.js';

/** What became of a failure's defect; `regressionOf` names the newest of the group's defects, all closed. */
export type DefectOutcome = Decided | Later;

/** A defect found, filed, or none (the cap, a refused create). */
export type Decided =
  | { key: string; created: boolean; regressionOf?: string; onRun?: true }
  | { key?: undefined; notFiled: true; refusal?: Refusal | undefined; regressionOf?: string };

/** The cap's ranking decides the defect once every result is in: the run is written now, `later` answers it. */
export interface Later {
  key?: undefined;
  later: Promise<Decided>;
  regressionOf?: string;
}

/** A run this process linked to a defect it filed: linked again to the survivor if that defect turns out a duplicate. */
export interface RunLink {
  item: WorkItem;
  cycle: CycleInfo | undefined;
  runId: number;
}

/** The run's one record of its defects: what each group got, what was filed and linked, what closed as duplicate. */
export class DefectLedger {
  /** What became of each failure group, by `project:hash` (defects.ts). */
  readonly groups = new Map<string, DefectOutcome>();
  readonly created = new Set<string>();
  /** Existing defects linked (never one this run created). */
  readonly linked = new Set<string>();
  /** Defects this run filed, then closed as the duplicate of an older one: the survivor. */
  readonly survivorOf = new Map<string, string>();
  private readonly runsOf = new Map<string, RunLink[]>();

  filed(key: string): void {
    this.created.add(key);
  }

  link(key: string): void {
    if (!this.created.has(key)) this.linked.add(key);
  }

  /** A defect this run filed was closed as the duplicate of `survivor`: not a new one. */
  duplicate(key: string, survivor: string): void {
    this.created.delete(key);
    this.survivorOf.set(key, survivor);
    this.link(survivor);
  }

  /** The runs linked to a defect closed as a duplicate, to link to its survivor (once). */
  takeRuns(key: string): RunLink[] {
    const runs = this.runsOf.get(key) ?? [];
    this.runsOf.delete(key);
    return runs;
  }

  /** Whether this process filed, linked or closed the key (the cap leaves those out of the cycle's other defects). */
  ours(key: string): boolean {
    return this.created.has(key) || this.linked.has(key) || this.survivorOf.has(key);
  }

  /** A failure's run now carries `key`: recorded, and remembered for a relink when this run filed it. */
  onRun(key: string, created: boolean, run: RunLink): void {
    if (created) this.filed(key);
    else this.link(key);
    if (!this.created.has(key)) return;
    const runs = this.runsOf.get(key) ?? [];
    runs.push(run);
    this.runsOf.set(key, runs);
  }
}
