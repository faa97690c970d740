import { AmbiguousError, NotFoundError, ValidationError } from '../../client/errors.js';
import type { TestManagementClient } from '../../client/tm.js';
import { closeAsDuplicate, type DuplicateOutcome } from '../jira/duplicate.js';
import { memoByKey } from '../kernel/keyed.js';
import type { TestResult } from '../kernel/model.js';
import {
  addCaseSteps,
  type BulkOutcome,
  batchRefused,
  bulkCreate,
  caseFields,
  caseSteps,
  noBulkRoute,
  SuiteLinks,
} from './bulk-create.js';
import { caseIdentity, caseSummary, identityInDescription, suitePathOf } from './identity.js';
import { mappingKey } from './mapping.js';
import { CaseIndex, type Found, INDEX_LAG_MS } from './search-index.js';

export { caseIdentity, caseSummary, identityInDescription, suitePathOf } from './identity.js';

/**
 * Test cases for unmapped tests (`autoCreate: true`), at the cost of one request per new case.
 *
 * Identity: a test is its mapping name (`<file> > <title path>`); its case carries the name's hash in the
 * description (`casebridge-id: <hash>`), which is matched exactly, never by text search (Jira's `~` is a fuzzy,
 * tokenised search: `parses` finds `parses dates`). Two tests with the same file and title path share a case.
 *
 * Cost: the project's casebridge-made cases are read once per run (case-index.ts: keyset paged by id, never deep
 * `startAt`, so a project of 20,000 cases on Jira's 10,000-result window reads whole: 20 requests at a page cap of
 * 1,000), then each missing case is created (one request). A case made by another machine at the same moment is
 * found by a re-read after the creates (one query per wave of creates; while creates go on, at most one per index-lag
 * window, 5 s, or per `recheckEveryMs` once another machine is seen), which reads only the cases created since the
 * window before the newest one seen. The oldest open case of a name wins on every
 * machine, so shards adopting one suite at once agree. A newer open case of a name this run uses, found by any read
 * (a lagging search let a machine create a second, in this run or an earlier one), is closed as a duplicate, or
 * labelled when the workflow offers no way to close it (duplicate.ts); from then on this run's results of the test go
 * to the survivor and the mapping file names it.
 */

/** A machine that came second re-reads this often while the first one creates cases, and waits at most this long. */
const FOLLOWER_READ_EVERY_MS = 1_000;
const FOLLOWER_WAIT_MAX_MS = 60_000;

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
   * create cases and takes what it made (see pump). Asked once, before the first create.
   */
  second?: () => Promise<boolean>;
  signal?: AbortSignal;
  /** Least time between two re-reads while creates still go on. Default 1 s (250 ms once another machine is seen). */
  recheckEveryMs?: number;
  /** Something reached the service (a create, a read): the end of the run keeps waiting while this happens. */
  onProgress?: () => void;
  /** How long a create may be missing from searches (INDEX_LAG_MS by default): re-reads start below it. */
  indexLagMs?: number;
  /** How long after a create the read that decides whether it is the oldest begins (SETTLE_MS by default). */
  settleMs?: number;
}

/** A test waiting for its case to be created. */
interface Job {
  test: TestResult;
  id: string;
  done: (key: string) => void;
  fail: (e: unknown) => void;
  /** When it joined the queue (GATHER_MAX_MS). */
  queuedAt: number;
}

/** A case this process created, waiting for a read that shows whether an older one of its test exists. */
interface Waiting {
  key: string;
  /** When its create was answered: only a read that begins `settleMs` later decides it. */
  at: number;
  done: (key: string) => void;
  fail: (e: unknown) => void;
}

/**
 * How long after a create a read decides it even when it does not show it. Jira's index lags a create by about a
 * second on a Data Center cluster (each node polls for changes): a read that does not show this create may not show
 * a case another machine made a moment before it either, and both would keep their own. A read that shows the create
 * decides it at once (recheck). So a first run's end waits about the index lag, at most this long; a lag beyond it
 * leaves a duplicate to the next read that shows it (closed then, this run or the next).
 */
const SETTLE_MS = 3_000;

/**
 * A batch that is not full goes once no new test has come for GATHER_MS (the tests paused, or the run ended), or once
 * its oldest test has waited GATHER_MAX_MS. Playwright reports tests one by one (onTestEnd), 60 a second in the
 * bench: a batch sent whenever a create ended held about 10 (10,000 new tests: 1,023 creates), gathered it holds 50.
 * No step needs a new case before the run's end, and the end waits only GATHER_MS after the last test for it.
 */
const GATHER_MS = 100;
const GATHER_MAX_MS = 2_000;

/** A suite path whose file is still being created is filed anyway once this many batches' worth of cases wait. */
const LINK_MAX_BATCHES = 4;

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
  /** Creates asked for and not yet answered (queued or under way). */
  private creating = 0;
  /** Tests waiting for a create, and how many creates are under way. */
  private queue: Job[] = [];
  private running = 0;
  private followerReady = false;
  private isSecond?: boolean;
  private role?: Promise<void>;
  private followerTimer?: NodeJS.Timeout;
  private followerSince?: number;
  private followerCount = -1;
  /** When the follower last saw the count of cases grow (the other machine still creating). */
  private followerGrewAt?: number;
  /** Cases created by this process, waiting for the re-read that decides whether they are the oldest. */
  private waiting = new Map<string, Waiting[]>();
  private recheckTimer?: NodeJS.Timeout;
  /** When the re-read's timer fires (scheduleRecheck moves it as creates start and end). */
  private recheckAt = 0;
  private rechecking = false;
  /**
   * When the last re-read began: the next begins `recheckEveryMs` later at the earliest (from its beginning, not its
   * end: a read of many pages at 100 ms put the run's last read off by its own length). The first waits as long
   * after the start: a burst of creates, one read.
   */
  private lastRecheck = Date.now();
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
  private readonly every: number;
  /** A batch that is not full waits for more tests until this fires (GATHER_MS), and when the last test came. */
  private gatherTimer?: NodeJS.Timeout;
  private lastQueued = 0;
  /** Cases per bulk create: halved for the rest of the run when the server refuses a batch (bulk-create.ts). */
  private batchSize: number;
  /** Jira answers the bulk create (false after a 404 or 405: the add-on's create, one by one). */
  private bulkRoute = true;
  /** Steps that did not go to cases this run created in bulk (the cases are used all the same). */
  private readonly stepFailures: string[] = [];
  /** Cases created in bulk, waiting to be filed in their suites (fileInSuites). */
  private readonly links: SuiteLinks;
  /** The batches whose creates are under way: the suite paths they belong to are not filed yet (fileInSuites). */
  private readonly underWay = new Set<Job[]>();

  constructor(private readonly o: CaseRegistryOptions) {
    this.every = o.recheckEveryMs ?? 1000;
    this.batchSize = o.batchSize ?? 50;
    this.links = new SuiteLinks(o.tm, o.project, o.signal);
    this.index = new CaseIndex({
      tm: o.tm,
      project: o.project,
      identityOf: identityInDescription,
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      ...(o.indexLagMs !== undefined ? { indexLagMs: o.indexLagMs } : {}),
    });
  }

  /** Steps and suites that did not go to cases created in bulk, named (the cases are used all the same). */
  get unfinished(): string[] {
    return [...this.stepFailures, ...this.links.failures];
  }

  /** Whether this process created the case `key` (a new case is in no plan yet). */
  isNew(key: string): boolean {
    return this.createdSet.has(key);
  }

  /** Whether creates, re-reads or closes of duplicates are still under way. */
  get busy(): boolean {
    return (
      this.creating > 0 ||
      this.waiting.size > 0 ||
      this.rechecking ||
      this.closing.size > this.settled ||
      this.links.busy
    );
  }

  /**
   * The case key of an unmapped test: found among the project's casebridge cases, or created. Concurrent calls for
   * one identity share one create. A key a later read found to be a duplicate gives way to its survivor.
   */
  async keyOf(test: TestResult): Promise<string> {
    const id = caseIdentity(test);
    this.touched.set(id, mappingKey(test));
    const key = await this.keys(id, () => {
      const p = this.resolve(test, id);
      p.then(
        (k) => {
          this.answered.set(id, k);
          this.resolved[mappingKey(test)] = this.superseded.get(k) ?? k;
        },
        () => undefined,
      );
      return p;
    });
    return this.superseded.get(key) ?? key;
  }

  /** Starts the first read now (the run knows it will need it), so the first unmapped result does not wait for it. */
  warmUp(): void {
    if (!this.o.dryRun) this.index.ready().catch(() => undefined);
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
    if (this.o.dryRun) return (await this.create(test, id)).key;
    await this.lookup();
    const found = this.survivor(id);
    if (found) return found.key;
    return new Promise<string>((done, fail) => {
      this.creating += 1;
      this.lastQueued = Date.now();
      this.queue.push({ test, id, done, fail, queuedAt: this.lastQueued });
      // Creates start again: a re-read brought forward for their end waits for them (scheduleRecheck).
      if (this.creating === 1) this.scheduleRecheck();
      this.pump();
    });
  }

  /**
   * Starts creates while fewer than `concurrency` are under way. A machine that came second (another machine made
   * the cycle) first lets the other create: it re-reads the project's cases every
   * FOLLOWER_READ_EVERY_MS and takes what appeared, until the count has not grown for `settleMs` (the index lags
   * creates: one read without growth proves nothing) or FOLLOWER_WAIT_MAX_MS has passed, then
   * creates only what is still missing, from the end of its list.
   */
  private pump(): void {
    if (this.queue.length === 0) return;
    if (this.isSecond === undefined) {
      this.role ??= (this.o.second?.() ?? Promise.resolve(false))
        .catch(() => false)
        .then((second) => {
          this.isSecond = second;
          this.pump();
        });
      return;
    }
    if (!this.followerReady && this.isSecond) {
      this.followerSince ??= Date.now();
      this.followerTimer ??= setTimeout(() => void this.followerRead(), FOLLOWER_READ_EVERY_MS);
      return;
    }
    const max = this.o.concurrency ?? 4;
    const n = this.bulkRoute && this.batchSize > 1 ? this.batchSize : 1;
    // A full batch goes at once; one that is not full while tests keep coming waits for them (GATHER_MS).
    if (n > 1 && this.queue.length < n) {
      const now = Date.now();
      const due = Math.min(this.lastQueued + GATHER_MS, (this.queue[0] as Job).queuedAt + GATHER_MAX_MS);
      if (now < due) {
        this.gatherTimer ??= setTimeout(() => {
          this.gatherTimer = undefined;
          this.pump();
        }, due - now);
        return;
      }
    }
    while (this.running < max && this.queue.length > 0) {
      const jobs = this.isSecond ? this.queue.splice(-n, n).reverse() : this.queue.splice(0, n);
      this.running += 1;
      this.underWay.add(jobs);
      void (jobs.length > 1 ? this.createMany(jobs) : this.createOne(jobs[0] as Job)).finally(() => {
        this.running -= 1;
        this.creating -= jobs.length;
        this.underWay.delete(jobs);
        this.pump();
        this.fileInSuites();
        this.scheduleRecheck();
      });
    }
  }

  /**
   * Creates a batch of cases in one bulk create, then their steps and suites (before any waits for its re-read: a
   * run made from a case copies its steps). Elements Jira refused go alone through the add-on; a refused batch is
   * halved (bulk-create.ts).
   */
  private async createMany(jobs: Job[]): Promise<void> {
    const { tm, project, signal } = this.o;
    // Another machine may have made some since: the newest read says so, at no cost.
    const todo = jobs.filter((job) => {
      const found = this.survivor(job.id);
      if (found) job.done(found.key);
      return !found;
    });
    if (todo.length === 0) return;
    if (!this.bulkRoute || todo.length === 1) {
      await Promise.all(todo.map((job) => this.createOne(job)));
      return;
    }
    let outcome: BulkOutcome;
    try {
      const batch = todo.map((j) => ({ test: j.test, id: j.id, summary: this.summaryOf(j.test) }));
      outcome = await bulkCreate(tm, project, batch, signal);
    } catch (err) {
      if (noBulkRoute(err)) {
        this.bulkRoute = false;
        await Promise.all(todo.map((job) => this.createOne(job)));
      } else if (batchRefused(err)) {
        this.batchSize = Math.min(this.batchSize, Math.max(1, Math.floor(todo.length / 2)));
        for (let i = 0; i < todo.length; i += this.batchSize) await this.createMany(todo.slice(i, i + this.batchSize));
      } else if (err instanceof AmbiguousError || (err instanceof ValidationError && err.mayHaveApplied)) {
        // The answer was lost: some may have been created. A fresh read says which; the others are tried again.
        await this.refresh().catch(() => undefined);
        for (const job of todo) {
          const found = this.survivor(job.id);
          if (found) job.done(found.key);
          else job.fail(err);
        }
      } else for (const job of todo) job.fail(err);
      return;
    }
    this.o.onProgress?.();
    const made: Array<{ job: Job; key: string }> = [];
    for (const [i, { key, id }] of outcome.created) {
      const job = todo[i] as Job;
      // Known before a (lagging) search shows it: it takes its place among the cases of its test at once.
      this.index.add(job.id, key, id);
      made.push({ job, key });
    }
    const failures = await addCaseSteps(
      tm,
      made.map((m) => ({ key: m.key, test: m.job.test })),
      signal,
    );
    this.stepFailures.push(...failures);
    for (const m of made) this.links.add(m.key, m.job.test);
    const at = Date.now();
    for (const { job, key } of made) {
      const list = this.waiting.get(job.id) ?? [];
      list.push({ key, at, done: job.done, fail: job.fail });
      this.waiting.set(job.id, list);
    }
    await Promise.all(outcome.refused.map((i) => this.createOne(todo[i] as Job)));
  }

  /**
   * Files the cases that wait in their suites, one request per suite path: every path once no create is left; while
   * creates go on and a batch's worth waits, the paths that no queued or running create belongs to (the run has
   * moved past their file: one link for a file's cases instead of one per batch, 14 instead of 28 for 1,400 tests
   * in 14 files), and a path with LINK_MAX_BATCHES batches' worth (a file of thousands of tests). A run cut short
   * leaves unfiled only the cases of the files its last creates were for (their cases are used all the same).
   */
  private fileInSuites(): void {
    if (this.links.size === 0) return;
    let which: ((path: string, count: number) => boolean) | undefined;
    if (this.creating > 0) {
      if (this.links.size < this.batchSize) return;
      const active = new Set<string>();
      for (const job of this.queue) active.add(suitePathOf(job.test.file));
      for (const jobs of this.underWay) for (const job of jobs) active.add(suitePathOf(job.test.file));
      const most = LINK_MAX_BATCHES * this.batchSize;
      which = (path, count) => !active.has(path) || count >= most;
    }
    void this.links.flush(which).then(() => this.o.onProgress?.());
  }

  private summaryOf(test: TestResult): string {
    return this.o.summaryOf ? this.o.summaryOf(test) : caseSummary(test);
  }

  private async followerRead(): Promise<void> {
    let failed = false;
    try {
      await this.refresh();
      const count = this.index.size;
      if (count > this.followerCount && this.followerCount >= 0) this.followerGrewAt = Date.now();
      this.followerCount = count;
      this.queue = this.queue.filter((job) => {
        const found = this.survivor(job.id);
        if (!found) return true;
        this.creating -= 1;
        job.done(found.key);
        return false;
      });
    } catch {
      failed = true;
    }
    this.followerTimer = undefined;
    // The other machine's cases show in the search about a second after their creates (index lag): it has stopped
    // only when nothing new has shown for longer than that.
    const now = Date.now();
    const quiet = now - (this.followerGrewAt ?? this.followerSince ?? now) > (this.o.settleMs ?? SETTLE_MS);
    if (failed || quiet || now - (this.followerSince ?? 0) > FOLLOWER_WAIT_MAX_MS) this.followerReady = true;
    this.pump();
  }

  private async createOne(job: Job): Promise<void> {
    try {
      // Another machine may have made it since: the newest read says so, at no cost.
      const found = this.survivor(job.id);
      if (found) {
        job.done(found.key);
        return;
      }
      const { key, id } = await this.create(job.test, job.id);
      this.o.onProgress?.();
      // Known before a (lagging) search shows it: it takes its place among the cases of its test at once.
      this.index.add(job.id, key, id);
      const list = this.waiting.get(job.id) ?? [];
      list.push({ key, at: Date.now(), done: job.done, fail: job.fail });
      this.waiting.set(job.id, list);
    } catch (err) {
      job.fail(err);
    }
  }

  /** Creates one case through the add-on: its key, and its id when the answer says it (a re-read slices by ids). */
  private async create(test: TestResult, id: string): Promise<{ key: string; id?: number }> {
    const { tm, project } = this.o;
    const fields = caseFields(project, this.summaryOf(test), test, id);
    const testcasesteps = caseSteps(test);
    const input = {
      fields,
      testcasesteps,
      linkToTestSuite: { testSuitePath: suitePathOf(test.file), projectKey: project },
    };
    const signal = this.o.signal ? { signal: this.o.signal } : undefined;
    try {
      // A dry run's stand-in answers the key alone.
      const made: { testCaseKey: string; createdTestCase?: { id: number | string } } =
        await tm.cases.createTestCaseInSuite(input, signal);
      return { key: made.testCaseKey, id: Number(made.createdTestCase?.id) };
    } catch (err) {
      if (err instanceof AmbiguousError) {
        // The answer was lost: the create may have happened. Read again (a fresh read, not the cached one).
        await this.refresh();
        const again = this.survivor(id);
        if (again) return { key: again.key };
        throw err;
      }
      // The older service variant has no suite creation: a plain test case.
      if (!(err instanceof NotFoundError)) throw err;
      const made = await tm.cases.createTestCase({ fields, testcasesteps }, signal);
      return { key: made.key, id: Number(made.id) };
    }
  }

  /**
   * One re-read for every create answered since the last: at once when no create is left, otherwise at most one
   * per index-lag window (`indexLagMs`, 5 s; `recheckEveryMs` once another machine is seen: a 1,400-case adoption
   * costs a handful of re-reads, not one per case), and never before the
   * oldest waiting create has settled (`settleMs`); once no create is left, when the newest has, or `recheckEveryMs`
   * after it (the index lag), whichever comes first. The timer follows the creates: set for the oldest to settle
   * while they go on (3 s), it is brought forward to the newest's index lag (1 s) when they end, and put back when
   * new ones start before it fires (a gap between two test files is not the end of the run: a read then would
   * read the run's new cases once more for nothing).
   */
  private scheduleRecheck(): void {
    if (this.rechecking || this.waiting.size === 0) return;
    const now = Date.now();
    const others = this.duplicates.length > 0 || this.followerReady;
    const every = others ? Math.min(this.every, 250) : this.every;
    // While creates go on, a re-read reads back the index lag's window (search-index.ts, floor): two re-reads closer
    // than that read the same new cases again. One per window while this machine creates alone: each new case is
    // read about twice, not six times (a first run of 10,000 new Playwright tests: see the core README).
    const window = this.o.indexLagMs ?? INDEX_LAG_MS;
    const paced = this.creating > 0 ? this.lastRecheck + (others ? every : Math.max(every, window)) - now : 0;
    let oldest = Number.POSITIVE_INFINITY;
    for (const list of this.waiting.values()) for (const w of list) oldest = Math.min(oldest, w.at);
    // While creates go on, a read decides what has settled. After the last one, a read every `every` (from the
    // newest create on) decides what it shows, and one once the newest has settled decides all the rest: on a Jira
    // whose index lags a second, the run ends about a second after its last create, not SETTLE_MS.
    const settle = this.o.settleMs ?? SETTLE_MS;
    const newest = newestWaiting(this.waiting);
    const settled =
      this.creating > 0
        ? oldest + settle - now
        : Math.min(newest + settle, Math.max(newest, this.lastRecheck) + every) - now;
    const at = now + Math.max(0, paced, settled);
    if (this.recheckTimer) {
      if (this.recheckAt === at) return;
      clearTimeout(this.recheckTimer);
    }
    this.recheckAt = at;
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = undefined;
      void this.recheck();
    }, at - now);
  }

  private async recheck(): Promise<void> {
    this.rechecking = true;
    const began = Date.now();
    this.lastRecheck = began;
    const settle = this.o.settleMs ?? SETTLE_MS;
    // The creates this read decides: those answered `settleMs` before it began. Later ones wait for the next.
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
      if (this.creating === 0) this.fileInSuites();
      this.scheduleRecheck();
    }
  }
}
