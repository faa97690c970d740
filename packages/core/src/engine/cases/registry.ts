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
 * Test cases for unmapped tests (`autoCreate: true`), at the cost of one request per new case.
 *
 * Identity: a test is its mapping name (`<file> > <title path>`); its case carries the name's hash in the
 * description (`casebridge-id: <hash>`), which is matched exactly, never by text search (Jira's `~` is a fuzzy,
 * tokenised search: `parses` finds `parses dates`). Two tests with the same file and title path share a case.
 *
 * Cost: the project's casebridge-made cases are read once per run (search-index.ts: keyset paged by id, never deep
 * `startAt`, so a project of 20,000 cases on Jira's 10,000-result window reads whole: 20 requests at a page cap of
 * 1,000), then each missing case is created (one request). A case made by another machine at the same moment is
 * found by a re-read after the creates (one query per wave of creates; while creates go on, at most one per index-lag
 * window, 5 s, or per `recheckEveryMs` once another machine is seen), which reads only the cases created since the
 * window before the newest one seen. The oldest open case of a name wins on every
 * machine, so shards adopting one suite at once agree. A newer open case of a name this run uses, found by any read
 * (a lagging search let a machine create a second, in this run or an earlier one), is closed as a duplicate, or
 * labelled when the workflow offers no way to close it (duplicate.ts); from then on this run's results of the test go
 * to the survivor and the mapping file names it.
 *
 * When: as results come (Jest, Vitest), or at begin for Playwright, which names every test up front (`plan`): its
 * new cases are created while the tests run, and each result finds its case made.
 *
 * This file decides which case a test uses: the first read, the re-reads that decide this process's new cases
 * (scheduleRecheck, recheck), the duplicates and what replaces them. The creates themselves (the queue, batches, bulk
 * and one-by-one creates, the follower, the suites) are creates.ts's.
 */

export interface CaseRegistryOptions {
  /** In a dry run, wrapped by `withDryRun` (client/dry-run.ts). */
  tm: TestManagementClient;
  /**
   * A dry run: no case is looked up (a stand-in search finds nothing, and would show calls a dry run never made),
   * each test gets its create, and none counts as created.
   */
  dryRun?: boolean;
  project: string;
  /** The summary of a new case (the engine strips keys from the title). */
  summaryOf?: (t: TestResult) => string;
  /** Creates under way at once. Default 4. */
  concurrency?: number;
  /**
   * New cases per create request: more than 1 goes through Jira's bulk create (bulk-create.ts), 1 through the
   * add-on's create, one case per request. Default 50.
   */
  batchSize?: number;
  /**
   * Whether another machine reports into the same place and came first (it made the cycle): then this one lets it
   * create cases and takes what it made (creates.ts, pump). Asked once, before the first create.
   */
  second?: () => Promise<boolean>;
  signal?: AbortSignal;
  /** Least time between two re-reads while creates still go on. Default indexPollMs (250 ms once another machine is seen). */
  recheckEveryMs?: number;
  /** Something reached the service (a create, a read): the end of the run keeps waiting while this happens. */
  onProgress?: () => void;
  /**
   * How long a create may be missing from Jira's search (`jira.indexLagMs`, the clock's by default): re-reads
   * read back this far, and the read that decides whether a create is the oldest begins this long after it. A read
   * that shows the create decides it at once (recheck), so a first run's end waits about the real lag, at most this
   * long; a lag beyond it leaves a duplicate to the next read that shows it (closed then, this run or the next).
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
  /**
   * When the last re-read began: the next begins `recheckEveryMs` later at the earliest (from its beginning, not its
   * end: a read of many pages at 100 ms put the run's last read off by its own length). The first waits as long
   * after the start: a burst of creates, one read.
   */
  private lastRecheck: number;
  /** Cases this process created and kept (and the same as a set, for `isNew` on every result). */
  readonly created: string[] = [];
  private readonly createdSet = new Set<string>();
  /**
   * Cases found to be made twice (by this process, another machine or an earlier run) and closed or labelled by
   * this process, with the case used instead.
   */
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
  /**
   * The cases asked for at begin, from the plan (`plan`), by identity: a result that brings its own key (a runtime
   * annotation) gives its planned case up (`keyed`).
   */
  private readonly planned = new Map<string, Promise<string>>();
  /** Cases this process made from the plan, before any result: their steps come with the first result (`keyOf`). */
  private readonly stepless = new Set<string>();
  private readonly stepsAdded = new Map<string, Promise<void>>();
  private readonly stepFailures: string[] = [];
  private readonly every: number;
  /** `indexLagMs` (see the option). */
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
   * The case key of an unmapped test: found among the project's casebridge cases, or created. Concurrent calls for
   * one identity share one create. A key a later read found to be a duplicate gives way to its survivor. A case made
   * from the plan gets the steps of the first result with some before its key is answered (a run made from a case
   * copies its steps).
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
   * Playwright names every test at begin: the cases of those without a key are found or created now, while the
   * tests run, instead of as their results come (a first run of 1,000 new tests: Jira's 6 s of creates hidden behind
   * the suite's own time). Their results then take the same keys (`keyOf` shares one look-up per identity). Not in a
   * dry run: it shows the create of each result that needs one.
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

  /**
   * A planned test's result brought its own key (a runtime annotation or `caseKey`): the case made for it at begin
   * is not its case. It is closed as a duplicate of that key and left out of the mapping file.
   */
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

  /**
   * The cases of an identity this run uses: the first open one survives; any other open one was made twice (a
   * lagging search, two machines) and is closed as its duplicate, once. A key already answered that turns out to be
   * such a duplicate gives way to the survivor, in this run's later results and in the mapping file.
   */
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

  /**
   * One re-read for every create answered since the last: at once when no create is left, otherwise at most one
   * per index-lag window (`indexLagMs`, 3 s; `recheckEveryMs` once another machine is seen: a 1,400-case adoption
   * costs a handful of re-reads, not one per case), and never before the
   * oldest waiting create has settled (`indexLagMs`); once no create is left, when the newest has, or `recheckEveryMs`
   * after it (the index lag), whichever comes first. The timer follows the creates: set for the oldest to settle
   * while they go on (3 s), it is brought forward to the newest's index lag (1 s) when they end, and put back when
   * new ones start before it fires (a gap between two test files is not the end of the run: a read then would
   * read the run's new cases once more for nothing).
   */
  private scheduleRecheck(): void {
    if (this.rechecking || this.waiting.size === 0) return;
    const now = this.clock.now();
    const others = this.duplicates.length > 0 || this.creates.followerReady;
    const every = others ? Math.min(this.every, 250) : this.every;
    // While creates go on, a re-read reads back the index lag's window (search-index.ts, floor): two re-reads closer
    // than that read the same new cases again. One per window while this machine creates alone: each new case is
    // read about twice, not six times (a first run of 10,000 new Playwright tests: see the core README).
    const window = this.lag;
    const paced = this.creates.creating > 0 ? this.lastRecheck + (others ? every : Math.max(every, window)) - now : 0;
    let oldest = Number.POSITIVE_INFINITY;
    for (const list of this.waiting.values()) for (const w of list) oldest = Math.min(oldest, w.at);
    // While creates go on, a read decides what has settled. After the last one, a read every `every` (from the
    // newest create on) decides what it shows, and one once the newest has settled decides all the rest: on a Jira
    // whose index lags a second, the run ends about a second after its last create, not the whole `indexLagMs`.
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
      // A create this read shows is decided by it too: a search that shows a case shows every case made before it
      // (each node's index takes the cluster's changes in order), so an older one of its test would be here.
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
