import type { TestManagementClient } from '../../client/tm.js';
import { closeAsDuplicate, type DuplicateOutcome } from '../jira/duplicate.js';
import { type Clock, systemClock } from '../kernel/clock.js';
import { memoByKey } from '../kernel/keyed.js';
import type { TestResult } from '../kernel/model.js';
import { addCaseSteps, caseSteps } from './bulk-create.js';
import { Creates, type Waiting } from './creates.js';
import { caseIdentity, identityInDescription } from './identity.js';
import { mappingKey } from './mapping.js';
import { CaseIndex, type Found } from './search-index.js';

export { caseIdentity, caseSummary, identityInDescription, suitePathOf } from './identity.js';

/**
 * Which case an unmapped test uses (`autoCreate`): the first read, the re-reads that decide this process's new cases,
 * and the duplicates; the oldest open case of a name wins on every machine (docs/architecture.md).
 */

export interface CaseRegistryOptions {
  /** In a dry run, wrapped by `withDryRun` (client/dry-run.ts). */
  tm: TestManagementClient;
  /** A dry run: nothing is looked up, each test gets its create, and none counts as created. */
  dryRun?: boolean;
  project: string;
  /** The summary of a new case (the engine strips keys from the title). */
  summaryOf?: (t: TestResult) => string;
  /** Creates under way at once. Default 4. */
  concurrency?: number;
  /** New cases per create request: above 1 through Jira's bulk create (bulk-create.ts), 1 through the add-on's. */
  batchSize?: number;
  /** Whether another machine came first (it made the cycle): then it creates cases and this one takes them. */
  second?: () => Promise<boolean>;
  signal?: AbortSignal;
  /** Least time between two re-reads while creates still go on. Default indexPollMs (250 ms once another machine is seen). */
  recheckEveryMs?: number;
  /** Something reached the service (a create, a read): the end of the run keeps waiting while this happens. */
  onProgress?: () => void;
  /**
   * How long a create may be missing from Jira's search: re-reads read back this far, and the read deciding whether a
   * create is the oldest waits this long. A longer lag leaves a duplicate for later.
   */
  indexLagMs?: number;
  /** The run's clock (kernel/clock.ts); the system's by default. */
  clock?: Clock;
}

function newestWaiting(waiting: Map<string, Waiting[]>): number {
  let newest = 0;
  for (const list of waiting.values()) for (const w of list) newest = Math.max(newest, w.at);
  return newest;
}

export class CaseRegistry {
  /** The project's casebridge cases, read once and re-read for what changed. */
  readonly index: CaseIndex;
  /** The key per identity: concurrent calls share one look-up or create; a failure is asked again. */
  private readonly keys = memoByKey<string, string>();
  /** The creates of new cases: their queue, batches, suites, and the follower (creates.ts). */
  private readonly creates: Creates;
  /** Cases created by this process, waiting for the re-read that decides whether they are the oldest. */
  private waiting = new Map<string, Waiting[]>();
  private recheckTimer?: () => void;
  /** When the re-read's timer fires (scheduleRecheck moves it as creates start and end). */
  private recheckAt = 0;
  private rechecking = false;
  /** When the last re-read began; the next begins `recheckEveryMs` after that beginning, not after its end. */
  private lastRecheck: number;
  /** Cases this process created and kept (and the same as a set, for `isNew` on every result). */
  readonly created: string[] = [];
  private readonly createdSet = new Set<string>();
  /** Duplicate cases (by anyone) this process closed or labelled, with the case used instead. */
  readonly duplicates: Array<{ key: string; kept: string }> = [];
  /** What became of each duplicate's close (closed, labelled, failed), by key. */
  readonly duplicateOutcomes = new Map<string, DuplicateOutcome>();
  /** Identities this run asked for, with their mapping names: duplicates among their cases are closed. */
  private readonly touched = new Map<string, string>();
  /** The key each identity was answered with (before a later read may have found it a duplicate). */
  private readonly answered = new Map<string, string>();
  /** Keys found to be duplicates after they were answered, and the survivor to use instead. */
  private readonly superseded = new Map<string, string>();
  /** Duplicates being closed (or closed) by this process, and how many of those closes have settled. */
  private readonly closing = new Map<string, Promise<void>>();
  private settled = 0;
  /** Mapping names resolved since the last `takeResolved()`: the engine writes them to the mapping file. */
  private resolved: Record<string, string> = {};
  /** Cases asked for at begin from the plan, by identity; a result bringing its own key gives its one up (`keyed`). */
  private readonly planned = new Map<string, Promise<string>>();
  /** Cases this process made from the plan, before any result: their steps come with the first result (`keyOf`). */
  private readonly stepless = new Set<string>();
  private readonly stepsAdded = new Map<string, Promise<void>>();
  private readonly stepFailures: string[] = [];
  private readonly every: number;
  private readonly lag: number;
  private readonly clock: Clock;

  constructor(private readonly o: CaseRegistryOptions) {
    this.clock = o.clock ?? systemClock;
    this.lastRecheck = this.clock.now();
    this.every = o.recheckEveryMs ?? this.clock.timing.indexPollMs;
    this.lag = o.indexLagMs ?? this.clock.timing.indexLagMs;
    this.index = new CaseIndex({
      tm: o.tm,
      project: o.project,
      identityOf: identityInDescription,
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      indexLagMs: this.lag,
      clock: this.clock,
    });
    this.creates = new Creates({
      tm: o.tm,
      project: o.project,
      signal: o.signal,
      summaryOf: o.summaryOf,
      concurrency: o.concurrency,
      batchSize: o.batchSize,
      second: o.second,
      onProgress: o.onProgress,
      indexLagMs: this.lag,
      clock: this.clock,
      index: this.index,
      read: () => this.refresh(),
      made: (id, w) => {
        const list = this.waiting.get(id) ?? [];
        list.push(w);
        this.waiting.set(id, list);
      },
      ended: () => this.scheduleRecheck(),
    });
  }

  /** Steps and suites that did not go to cases created in bulk, named (the cases are used all the same). */
  get unfinished(): string[] {
    return [...this.creates.unfinished, ...this.stepFailures];
  }

  /** Whether this process created the case `key` (a new case is in no plan yet). */
  isNew(key: string): boolean {
    return this.createdSet.has(key);
  }

  /** Whether creates, re-reads or closes of duplicates are still under way. */
  get busy(): boolean {
    return this.creates.busy || this.waiting.size > 0 || this.rechecking || this.closing.size > this.settled;
  }

  /**
   * An unmapped test's case key, found or created once per identity (a duplicate gives way to its survivor); a case
   * made from the plan gets its first result's steps first.
   */
  async keyOf(test: TestResult): Promise<string> {
    const id = caseIdentity(test);
    this.touched.set(id, mappingKey(test));
    const planned = test.attempts.length === 0;
    const key = await this.keys(id, () => {
      const p = this.resolve(test, id);
      p.then(
        (k) => {
          this.answered.set(id, k);
          this.resolved[mappingKey(test)] = this.superseded.get(k) ?? k;
          if (planned && this.createdSet.has(k)) this.stepless.add(k);
        },
        () => undefined,
      );
      return p;
    });
    const kept = this.superseded.get(key) ?? key;
    if (this.stepless.has(kept) && caseSteps(test).length > 0) await this.addSteps(kept, test);
    return kept;
  }

  /**
   * Playwright names every test at begin: their cases are made while the tests run (hiding ~6 s of creates for 1,000
   * new tests), and their results take the same keys. Not in a dry run.
   */
  plan(tests: readonly TestResult[]): void {
    if (this.o.dryRun) return;
    for (const test of tests) {
      const id = caseIdentity(test);
      if (this.planned.has(id)) continue;
      const p = this.keyOf(test);
      // A failure is asked again by the test's result (the memo forgets it).
      p.catch(() => undefined);
      this.planned.set(id, p);
    }
  }

  /** A planned test's result brought its own key: the case made for it at begin is closed as its duplicate. */
  async keyed(test: TestResult, keys: readonly string[]): Promise<void> {
    const key = keys[0];
    if (key === undefined || this.planned.size === 0) return;
    const id = caseIdentity(test);
    const p = this.planned.get(id);
    if (!p) return;
    this.planned.delete(id);
    const made = await p.catch(() => undefined);
    if (made === undefined || made === key || !this.createdSet.delete(made)) return;
    this.created.splice(this.created.indexOf(made), 1);
    this.touched.delete(id);
    delete this.resolved[mappingKey(test)];
    this.closeDuplicate(made, key);
  }

  /** The steps of a case made from the plan, from its first result with steps: one request, shared. */
  private addSteps(key: string, test: TestResult): Promise<void> {
    let p = this.stepsAdded.get(key);
    if (!p) {
      p = addCaseSteps(this.o.tm, [{ key, test }], this.o.signal).then((failures) => {
        this.stepFailures.push(...failures);
        this.stepless.delete(key);
        this.o.onProgress?.();
      });
      this.stepsAdded.set(key, p);
    }
    return p;
  }

  /** Mapping names and keys resolved since the last call. */
  takeResolved(): Record<string, string> {
    const out = this.resolved;
    this.resolved = {};
    return out;
  }

  /** The first read (once), then the duplicates it shows among the cases this run uses. */
  private async lookup(): Promise<void> {
    await this.index.ready();
    this.reconcile();
  }

  /** A re-read of what changed, then the duplicates it shows. */
  private async refresh(): Promise<void> {
    await this.index.refresh();
    this.reconcile();
  }

  private survivor(id: string): Found | undefined {
    return this.index.casesOf(id)[0];
  }

  /** The first open case of an identity survives; any other is closed as its duplicate, once, and gives way. */
  private reconcile(): void {
    for (const [id, name] of this.touched) {
      const cases = this.index.casesOf(id);
      const first = cases[0];
      if (!first || first.closed) continue;
      const waiting = this.waiting.get(id) ?? [];
      for (const dup of cases.slice(1)) {
        if (dup.closed || this.closing.has(dup.key)) continue;
        // Still waiting for its own re-read (recheck decides it, and closes it then).
        if (waiting.some((w) => w.key === dup.key)) continue;
        this.closeDuplicate(dup.key, first.key);
      }
      const answered = this.answered.get(id);
      if (answered !== undefined && (this.superseded.get(answered) ?? answered) !== first.key) {
        this.superseded.set(answered, first.key);
        this.resolved[name] = first.key;
        if (this.createdSet.delete(answered)) this.created.splice(this.created.indexOf(answered), 1);
      }
    }
  }

  /** Closes (or labels) a duplicate in the background; the end of the run waits for it (`busy`). */
  private closeDuplicate(key: string, kept: string): void {
    const entry = { key, kept };
    this.duplicates.push(entry);
    this.index.closed(key, false);
    const p = closeAsDuplicate(this.o.tm, key, this.o.signal, kept).then((outcome) => {
      this.duplicateOutcomes.set(key, outcome);
      if (outcome === 'labelled') this.index.closed(key, true);
      // Closed before (a lagging search still showed it open): not one this run found.
      if (outcome === 'already') this.duplicates.splice(this.duplicates.indexOf(entry), 1);
      this.o.onProgress?.();
      this.settled += 1;
    });
    this.closing.set(key, p);
  }

  /** Every close of a duplicate started so far, settled. */
  async closed(): Promise<void> {
    await Promise.all(this.closing.values());
  }

  private async resolve(test: TestResult, id: string): Promise<string> {
    if (this.o.dryRun) return (await this.creates.create(test, id)).key;
    await this.lookup();
    const found = this.survivor(id);
    if (found) return found.key;
    return new Promise<string>((done, fail) => {
      this.creates.add(test, id, done, fail);
      // Creates start again: a re-read brought forward for their end waits for them (scheduleRecheck).
      if (this.creates.creating === 1) this.scheduleRecheck();
      this.creates.pump();
    });
  }

  /** Times one re-read for the creates answered since the last (schedule: docs/architecture.md). */
  private scheduleRecheck(): void {
    if (this.rechecking || this.waiting.size === 0) return;
    const now = this.clock.now();
    const others = this.duplicates.length > 0 || this.creates.followerReady;
    const every = others ? Math.min(this.every, 250) : this.every;
    // While creates go on, one re-read per index-lag window: closer ones would read the same new cases again.
    const window = this.lag;
    const paced = this.creates.creating > 0 ? this.lastRecheck + (others ? every : Math.max(every, window)) - now : 0;
    let oldest = Number.POSITIVE_INFINITY;
    for (const list of this.waiting.values()) for (const w of list) oldest = Math.min(oldest, w.at);
    // After the last create, a read once the newest has settled decides the rest: with a 1 s index lag the run ends
    // about a second after its last create, not the whole `indexLagMs`.
    const settle = this.lag;
    const newest = newestWaiting(this.waiting);
    const settled =
      this.creates.creating > 0
        ? oldest + settle - now
        : Math.min(newest + settle, Math.max(newest, this.lastRecheck) + every) - now;
    const at = now + Math.max(0, paced, settled);
    if (this.recheckTimer) {
      if (this.recheckAt === at) return;
      this.recheckTimer();
    }
    this.recheckAt = at;
    this.recheckTimer = this.clock.after(
      at - now,
      () => {
        this.recheckTimer = undefined;
        void this.recheck();
      },
      true,
    );
  }

  private async recheck(): Promise<void> {
    this.rechecking = true;
    const began = this.clock.now();
    this.lastRecheck = began;
    const settle = this.lag;
    // The creates this read decides: those answered `indexLagMs` before it began. Later ones wait for the next.
    const batch = new Map<string, Waiting[]>();
    for (const [id, list] of this.waiting) {
      const due = list.filter((w) => began - w.at >= settle);
      if (due.length === 0) continue;
      batch.set(id, due);
      const rest = list.filter((w) => began - w.at < settle);
      if (rest.length) this.waiting.set(id, rest);
      else this.waiting.delete(id);
    }
    try {
      await this.refresh();
      // A create this read shows is decided too: each node's index takes changes in order, so older cases show as well.
      for (const [id, list] of this.waiting) {
        const shown = list.filter((w) => this.index.shown(w.key));
        if (shown.length === 0) continue;
        batch.set(id, [...(batch.get(id) ?? []), ...shown]);
        const rest = list.filter((w) => !this.index.shown(w.key));
        if (rest.length) this.waiting.set(id, rest);
        else this.waiting.delete(id);
      }
      for (const [id, list] of batch) {
        const kept = this.survivor(id)?.key;
        for (const w of list) {
          if (kept === undefined || kept === w.key) {
            this.created.push(w.key);
            this.createdSet.add(w.key);
            w.done(w.key);
          } else {
            // Another machine (or a lagging search) made the same test's case first: that one is used.
            if (!this.closing.has(w.key)) this.closeDuplicate(w.key, kept);
            w.done(kept);
          }
        }
      }
      // Duplicates among the cases of tests answered earlier (a case that appeared late, below ones seen).
      this.reconcile();
    } catch (err) {
      for (const list of batch.values()) for (const w of list) w.fail(err);
    } finally {
      this.rechecking = false;
      // The creates are over: what waits is filed in its suites.
      if (this.creates.creating === 0) this.creates.fileInSuites();
      this.scheduleRecheck();
    }
  }
}
