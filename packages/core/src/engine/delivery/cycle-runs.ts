import { AmbiguousError } from '../../client/errors.js';
import { parseRunKey, runKey } from '../kernel/attributes.js';
import { Batcher } from '../kernel/batcher.js';
import type { AttributeSetRefused } from '../kernel/errors.js';
import { memoByKey } from '../kernel/keyed.js';
import { splitBatch, splittable } from '../kernel/split.js';
import type { CycleInfo } from '../kernel/types.js';
import type { Target } from '../kernel/work.js';
import { AttributedRuns } from './attributed-runs.js';
import type { DeliveryService } from './compose.js';
import type { Cycles, ListedRuns } from './cycles.js';

/** What a run in a cycle held when its list was last read. */
export interface RunNow {
  status: string;
  comment: string;
}

/**
 * Which run key (runKeyOf) has which run in each cycle, adding cases to the plan and the cycle when they have none.
 * The cycle's run list is read once, and again only after adding cases.
 */
export class CycleRuns {
  /** Run id per run key, per cycle (see Cycles.key). */
  private readonly runs = new Map<string, Map<string, number>>();
  /** When each cycle's run list was last read, and each run's status and comment as read then. */
  private readonly readAt = new Map<string, number>();
  private readonly runNow = new Map<number, RunNow>();
  /** Per cycle: keys asked for while its batch runs go together into the next (`load` is or-ed over them). */
  private readonly batches = new Map<string, Batcher<{ key?: string; load: boolean }, Map<string, number>>>();
  /** Keys this run added to each cycle (their run ids may not be read back yet). */
  private readonly added = new Map<string, Set<string>>();
  /** Cases created by this run, and cases this run added to the plan. */
  private readonly newCases = new Set<string>();
  private readonly inPlan = new Set<string>();
  private readonly members = memoByKey<string, Set<string>>();
  /** The runs of attribute sets (option `attributes`, or results journaled with it). */
  private readonly attributed: AttributedRuns;

  constructor(
    private readonly svc: DeliveryService,
    private readonly cycles: Cycles,
    /** Keys the service refused as test cases: never asked for again, named in the summary. */
    private readonly badKeys: Set<string>,
    /** A run id for a dry run, where nothing is created. */
    private readonly standInId: () => number,
    private readonly onProgress: () => void,
    /** The names of option `attributes` (empty: none). */
    attributeNames: readonly string[] = [],
  ) {
    // Also without the option: a result journaled with attributes goes to its set's run, never to a plain one.
    const addToPlan = async (plan: string, keys: string[]) =>
      this.addPlanMembers(plan, keys, await this.planMembers(plan));
    this.attributed = new AttributedRuns(svc, attributeNames, badKeys, addToPlan);
  }

  /** Why the run of a run key cannot be made: its attribute set was refused (undefined: it can, or has none). */
  refusalOf(key: string): AttributeSetRefused | undefined {
    return this.attributed.refusalOf(key);
  }

  /** Test cases this run created: not members of any plan yet, so they are added to the plan without asking. */
  markNew(keys: Iterable<string>): void {
    for (const key of keys) this.newCases.add(key);
  }

  /** The status and comment of a run as last read (undefined: not read, or not in a cycle). */
  now(runId: number): RunNow | undefined {
    return this.runNow.get(runId);
  }

  /**
   * Makes sure each key has a run in the cycle and returns the run ids. Batched per cycle: a thousand results one by
   * one cost a few batches of three requests, never one per result, and never add a case twice.
   */
  ensure(t: Target, keys: readonly string[], load = true): Promise<Map<string, number>> {
    const k = this.cycles.key(t);
    let b = this.batches.get(k);
    if (!b) {
      b = new Batcher({
        clock: this.svc.clock,
        // Due at once (no timer): the next batch is held only while one is answered.
        waitMs: 0,
        serial: true,
        send: async (asks) => {
          const keys = [...new Set(asks.flatMap((a) => (a.key === undefined ? [] : [a.key])))];
          const runs = await this.ensureNow(
            t,
            keys,
            asks.some((a) => a.load),
          );
          return asks.map(() => runs);
        },
      });
      this.batches.set(k, b);
    }
    const batch = b;
    // No keys still makes sure of the cycle.
    const asks = keys.length === 0 ? [{ load }] : keys.map((key) => ({ key, load }));
    return Promise.all(asks.map((a) => batch.load(a).answer)).then((answers) => answers[0] as Map<string, number>);
  }

  /** Reads the cycle's run list again unless it was read at `since` or later (one request). */
  async readSince(t: Target, cycle: CycleInfo, since: number): Promise<void> {
    if ((this.readAt.get(this.cycles.key(t)) ?? 0) < since) await this.read(t, cycle);
  }

  /** `load: false` adds the cases without reading the run ids back (one request, not two); the final bulk reads them. */
  private async ensureNow(t: Target, all: readonly string[], load: boolean): Promise<Map<string, number>> {
    const cycle = await this.cycles.ensure(t);
    const ck = this.cycles.key(t);
    let runs = this.runs.get(ck);
    // A cycle this run just created empty has no runs; a preloaded one's list was read as it was created, or is now.
    if (!runs) {
      runs =
        cycle.created && !cycle.preloaded
          ? new Map<string, number>()
          : await this.read(t, cycle, this.cycles.takeListed(t));
    }
    this.runs.set(ck, runs);
    const withSets = all.filter((key) => parseRunKey(key).set);
    // createTestRuns answers the ids of the runs it made: the list is read again only for runs that existed.
    if (withSets.length > 0 && (await this.attributed.create(cycle, runs, withSets))) {
      if (!this.svc.dryRun) runs = await this.read(t, cycle);
    }
    const keys = withSets.length > 0 ? all.filter((key) => !parseRunKey(key).set) : all;
    let added = this.added.get(ck);
    if (!added) {
      added = new Set<string>();
      this.added.set(ck, added);
    }
    const wanted = [...new Set(keys)].filter((key) => !runs?.has(key) && !this.badKeys.has(key));
    const missing = wanted.filter((key) => !added.has(key));
    if (missing.length === 0) {
      if (wanted.length > 0 && load && !this.svc.dryRun) return this.read(t, cycle);
      return runs;
    }
    // New cases go to the plan first: the cycle would refuse them (one failed request per batch otherwise).
    const fresh = missing.filter((key) => this.newCases.has(key) && !this.inPlan.has(key));
    if (fresh.length > 0) await this.addPlanMembers(cycle.plan, fresh, this.inPlan);
    await this.join(
      cycle,
      missing.filter((key) => !this.badKeys.has(key)),
    );
    for (const key of missing) added.add(key);
    // A dry run's read would find no runs: made-up ids stand for the runs the add would have made.
    if (this.svc.dryRun) for (const key of missing) runs.set(key, this.standInId());
    else if (load) {
      runs = await this.read(t, cycle);
      // An add whose answer was lost and did not happen: the next batch adds it again.
      for (const key of missing) if (!runs.has(key)) added.delete(key);
    }
    return runs;
  }

  /** Reads the cycle's run list (one request), or takes the one `listed` when the cycle was created (none). */
  private async read(t: Target, cycle: CycleInfo, listed?: ListedRuns): Promise<Map<string, number>> {
    const input = { testPlanIssueKey: cycle.plan, cycleId: cycle.id };
    const list = listed?.runs ?? (await this.svc.tm.cycles.testRunsByCycleId(input, this.svc.o));
    const k = this.cycles.key(t);
    const map = this.runs.get(k) ?? new Map<string, number>();
    for (const r of list) {
      // A run of an advanced cycle is known by its case and attribute set (the list names the set, see runKey).
      const attrs = r.attributeValues && Object.keys(r.attributeValues).length > 0 ? r.attributeValues : undefined;
      const key = attrs ? runKey(r.testCaseKey, attrs) : r.testCaseKey;
      if (!map.has(key)) map.set(key, r.id);
      this.runNow.set(r.id, { status: r.status, comment: r.comment ?? '' });
    }
    this.runs.set(k, map);
    this.readAt.set(k, listed?.at ?? this.svc.clock.now());
    this.onProgress();
    return map;
  }

  /**
   * Adds the keys to the cycle; refused, adds the missing ones to the plan and splits the keys (splitBatch) so the
   * others get their runs. An outage calls nothing bad: the error goes up and the results wait.
   */
  private async join(cycle: CycleInfo, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    try {
      await this.addToCycle(cycle, keys);
      return;
    } catch (err) {
      if (!splittable(err)) throw err;
    }
    const members = await this.planMembers(cycle.plan);
    const notMembers = keys.filter((key) => !members.has(key) && !this.inPlan.has(key));
    if (notMembers.length > 0) await this.addPlanMembers(cycle.plan, notMembers, members);
    const add = keys.filter((key) => !this.badKeys.has(key));
    await this.splitting(add, (part) => this.addToCycle(cycle, part));
  }

  /** Sends the keys in parts until the refused ones are found (named bad keys); an outage is thrown. */
  private async splitting(keys: string[], send: (part: string[]) => Promise<void>): Promise<void> {
    if (keys.length === 0) return;
    const out = await splitBatch(keys, send, {
      ...(this.svc.answeredSince ? { answeredSince: this.svc.answeredSince } : {}),
    });
    for (const r of out.refused) this.badKeys.add(r.item);
    if (out.unsent.length > 0) throw out.error;
  }

  private async addToCycle(cycle: CycleInfo, keys: string[]): Promise<void> {
    const input = { testPlanIssueKey: cycle.plan, testCycleId: cycle.id, addTestCaseKeys: keys };
    try {
      await this.svc.inCycle(cycle).cycles.addMembersToTestCycle(input, this.svc.o);
    } catch (err) {
      // The answer was lost: the runs list read next shows what happened; a missing run is added on the next batch.
      if (!(err instanceof AmbiguousError)) throw err;
    }
  }

  private planMembers(plan: string): Promise<Set<string>> {
    return this.members(plan, async () => {
      const list = await this.svc.tm.plans.members({ testPlanIssueKey: plan }, this.svc.o);
      return new Set(list.map((m) => m.testCaseKey));
    });
  }

  /** Adds the keys to the plan; one bad key refuses the whole call: then in parts, so the others still report. */
  private async addPlanMembers(plan: string, keys: string[], members: Set<string>): Promise<void> {
    await this.splitting(keys, async (list) => {
      const input = { testPlanIssueKey: plan, testCaseKeys: list };
      await this.svc.tm.plans.addMembers(input, this.svc.o);
      for (const key of list) members.add(key);
    });
  }
}
