import { AmbiguousError, NotFoundError, ValidationError } from '../../client/errors.js';
import type { TestManagementClient } from '../../client/tm.js';
import type { Clock } from '../kernel/clock.js';
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
import { caseSummary, suitePathOf } from './identity.js';
import type { CaseIndex, Found } from './search-index.js';

/**
 * autoCreate's creates: batches, bulk and single creates, following a machine that came first, suite filing. Which
 * case survives is the registry's; its moments (`made`, `ended`, `read`) are inputs, as their timing decides.
 */

/** A suite path whose file is still being created is filed anyway once this many batches' worth of cases wait. */
const LINK_MAX_BATCHES = 4;

/** A test waiting for its case to be created. */
interface Job {
  test: TestResult;
  id: string;
  done: (key: string) => void;
  fail: (e: unknown) => void;
  /** When it joined the queue (TIMING.gatherMaxMs). */
  queuedAt: number;
}

/** A case this process created, waiting for a read that shows whether an older one of its test exists. */
export interface Waiting {
  key: string;
  /** When its create was answered: only a read that begins `indexLagMs` later decides it. */
  at: number;
  done: (key: string) => void;
  fail: (e: unknown) => void;
}

export interface CreatesOptions {
  tm: TestManagementClient;
  project: string;
  signal?: AbortSignal;
  /** The summary of a new case (caseSummary by default). */
  summaryOf?: (t: TestResult) => string;
  /** Creates under way at once. Default 4. */
  concurrency?: number;
  /** New cases per create request (bulk-create.ts when more than 1). Default 50. */
  batchSize?: number;
  /** Whether another machine reports into the same place and came first (see pump). */
  second?: () => Promise<boolean>;
  onProgress?: () => void;
  /** How long the other machine's count of cases must stay still before a follower creates (followerRead). */
  indexLagMs: number;
  clock: Clock;
  /** The project's casebridge cases: what another machine made is found here before a create. */
  index: CaseIndex;
  /** A fresh read of the project's cases (the registry's: it closes the duplicates the read shows). */
  read: () => Promise<void>;
  /** A case this process made, handed to the registry to wait for the re-read that decides it. */
  made: (id: string, waiting: Waiting) => void;
  /** A batch of creates has ended: the registry moves its re-read (scheduleRecheck). */
  ended: () => void;
}

/**
 * Whether the machine creating the suite's cases has stopped, paced by this runner: while tests still come here, a
 * pause in what shows is the other's load, not its end (docs/architecture.md).
 */
export function leaderStopped(w: {
  now: number;
  /** When the count of cases last grew (or the wait began). */
  grewAt: number;
  /** When this runner last handed over a test that needs a case. */
  lastQueued: number;
  /** The longest the count went without growing, so far. */
  longestGapMs: number;
  indexLagMs: number;
  followerWaitMaxMs: number;
}): boolean {
  const patience = Math.max(w.indexLagMs, 2 * w.longestGapMs);
  return w.now - Math.max(w.grewAt, w.lastQueued) > patience || w.now - w.grewAt > w.followerWaitMaxMs;
}

export class Creates {
  /** Creates asked for and not yet answered (queued or under way). */
  private creatingCount = 0;
  /** Tests waiting for a create, and how many creates are under way. */
  private queue: Job[] = [];
  private running = 0;
  private followerDone = false;
  private isSecond?: boolean;
  private role?: Promise<void>;
  private followerTimer?: () => void;
  private followerCount = -1;
  /** When the follower last saw the count of cases grow, or began to wait (the other machine still creating). */
  private followerGrewAt?: number;
  /** The longest the count went without growing while the other machine was creating. */
  private followerLongestGap = 0;
  /** A batch that is not full waits for more tests until this fires (TIMING.gatherMs), and when the last test came. */
  private gatherTimer?: () => void;
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

  constructor(private readonly o: CreatesOptions) {
    this.batchSize = o.batchSize ?? 50;
    this.links = new SuiteLinks(o.tm, o.project, o.signal);
  }

  /** Creates asked for and not yet answered (queued or under way). */
  get creating(): number {
    return this.creatingCount;
  }

  /** Whether this machine came second and has stopped waiting for the other one's creates. */
  get followerReady(): boolean {
    return this.followerDone;
  }

  /** Whether creates are asked for and not answered, or new cases wait to be filed in their suites. */
  get busy(): boolean {
    return this.creatingCount > 0 || this.links.busy;
  }

  /** Steps and suites that did not go to cases created in bulk, named (the cases are used all the same). */
  get unfinished(): string[] {
    return [...this.stepFailures, ...this.links.failures];
  }

  /** Queues a test for a create; `pump` starts it. */
  add(test: TestResult, id: string, done: (key: string) => void, fail: (e: unknown) => void): void {
    this.creatingCount += 1;
    this.lastQueued = this.o.clock.now();
    this.queue.push({ test, id, done, fail, queuedAt: this.lastQueued });
  }

  private survivor(id: string): Found | undefined {
    return this.o.index.casesOf(id)[0];
  }

  /**
   * Starts creates while fewer than `concurrency` run. A machine that came second first lets the other create until
   * `leaderStopped`, then creates what is missing from the end of its list.
   */
  pump(): void {
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
    if (!this.followerDone && this.isSecond) {
      this.followerGrewAt ??= this.o.clock.now();
      this.followerTimer ??= this.o.clock.after(this.o.clock.timing.indexPollMs, () => void this.followerRead(), true);
      return;
    }
    const max = this.o.concurrency ?? 4;
    const n = this.bulkRoute && this.batchSize > 1 ? this.batchSize : 1;
    // A batch not full waits while tests keep coming (ungathered, 10,000 Playwright tests took 1,023 creates).
    if (n > 1 && this.queue.length < n) {
      const { clock } = this.o;
      const now = clock.now();
      const { gatherMs, gatherMaxMs } = clock.timing;
      const due = Math.min(this.lastQueued + gatherMs, (this.queue[0] as Job).queuedAt + gatherMaxMs);
      if (now < due) {
        this.gatherTimer ??= clock.after(
          due - now,
          () => {
            this.gatherTimer = undefined;
            this.pump();
          },
          true,
        );
        return;
      }
    }
    while (this.running < max && this.queue.length > 0) {
      const jobs = this.isSecond ? this.queue.splice(-n, n).reverse() : this.queue.splice(0, n);
      this.running += 1;
      this.underWay.add(jobs);
      void (jobs.length > 1 ? this.createMany(jobs) : this.createOne(jobs[0] as Job)).finally(() => {
        this.running -= 1;
        this.creatingCount -= jobs.length;
        this.underWay.delete(jobs);
        this.pump();
        this.fileInSuites();
        this.o.ended();
      });
    }
  }

  /** One bulk create, then the cases' steps (a run copies them) and suites; a refused element goes alone. */
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
        await this.o.read().catch(() => undefined);
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
      this.o.index.add(job.id, key, id);
      made.push({ job, key });
    }
    const failures = await addCaseSteps(
      tm,
      made.map((m) => ({ key: m.key, test: m.job.test })),
      signal,
    );
    this.stepFailures.push(...failures);
    for (const m of made) this.links.add(m.key, m.job.test);
    const at = this.o.clock.now();
    for (const { job, key } of made) this.o.made(job.id, { key, at, done: job.done, fail: job.fail });
    await Promise.all(outcome.refused.map((i) => this.createOne(todo[i] as Job)));
  }

  /**
   * Files waiting cases in their suites, one request per path: all once no create is left; before that, paths no
   * waiting create belongs to (one link per file, not per batch) and paths with LINK_MAX_BATCHES' worth.
   */
  fileInSuites(): void {
    if (this.links.size === 0) return;
    let which: ((path: string, count: number) => boolean) | undefined;
    if (this.creatingCount > 0) {
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
      await this.o.read();
      const count = this.o.index.size;
      if (count > this.followerCount && this.followerCount >= 0) {
        const now = this.o.clock.now();
        this.followerLongestGap = Math.max(this.followerLongestGap, now - (this.followerGrewAt ?? now));
        this.followerGrewAt = now;
      }
      this.followerCount = count;
      this.queue = this.queue.filter((job) => {
        const found = this.survivor(job.id);
        if (!found) return true;
        this.creatingCount -= 1;
        job.done(found.key);
        return false;
      });
    } catch {
      failed = true;
    }
    this.followerTimer = undefined;
    const now = this.o.clock.now();
    const stopped = leaderStopped({
      now,
      grewAt: this.followerGrewAt ?? now,
      lastQueued: this.lastQueued,
      longestGapMs: this.followerLongestGap,
      indexLagMs: this.o.indexLagMs,
      followerWaitMaxMs: this.o.clock.timing.followerWaitMaxMs,
    });
    if (failed || stopped) this.followerDone = true;
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
      this.o.index.add(job.id, key, id);
      this.o.made(job.id, { key, at: this.o.clock.now(), done: job.done, fail: job.fail });
    } catch (err) {
      job.fail(err);
    }
  }

  /** Creates one case through the add-on: its key, and its id when the answer says it (a re-read slices by ids). */
  async create(test: TestResult, id: string): Promise<{ key: string; id?: number }> {
    const { tm, project } = this.o;
    const fields = caseFields(project, this.summaryOf(test), test, id);
    const testcasesteps = caseSteps(test);
    const input = {
      fields,
      testcasesteps,
      linkToTestSuite: { testSuitePath: suitePathOf(test.file), projectKey: project },
    };
    // In the background, as bulk creates (bulk-create.ts): other requests go first.
    const options = { ...(this.o.signal ? { signal: this.o.signal } : {}), background: true };
    try {
      // A dry run's stand-in answers the key alone.
      const made: { testCaseKey: string; createdTestCase?: { id: number | string } } =
        await tm.cases.createTestCaseInSuite(input, options);
      return { key: made.testCaseKey, id: Number(made.createdTestCase?.id) };
    } catch (err) {
      if (err instanceof AmbiguousError) {
        // The answer was lost: the create may have happened. Read again (a fresh read, not the cached one).
        await this.o.read();
        const again = this.survivor(id);
        if (again) return { key: again.key };
        throw err;
      }
      // The older service variant has no suite creation: a plain test case.
      if (!(err instanceof NotFoundError)) throw err;
      const made = await tm.cases.createTestCase({ fields, testcasesteps }, options);
      return { key: made.key, id: Number(made.id) };
    }
  }
}
