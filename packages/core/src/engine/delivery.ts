import { realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, extname, sep } from 'node:path';
import {
  AbortedError,
  AmbiguousError,
  CasebridgeError,
  ForbiddenError,
  NotFoundError,
  ResponseShapeError,
  ValidationError,
} from '../client/errors.js';
import type { FileInput } from '../client/multipart.js';
import type { ContentRepositoryClient } from '../client/repo.js';
import { redact } from '../client/secrets.js';
import type { TestManagementClient } from '../client/tm.js';
import type { CasebridgeConfig } from './config.js';
import { findOrFileDefect } from './defects.js';
import { displayName, lastAttempt, outcomeOf, type ResultAttachment, type ResultStep } from './model.js';
import { ciBuildUrl, pipelineMarker, truncate } from './text.js';
import type { RunnerInfo } from './types.js';
import {
  appendTo,
  isWorse,
  type Progress,
  runStatusOf,
  selectedAttachments,
  type Target,
  topSteps,
  type WorkItem,
  worseStatus,
} from './work.js';

/** Runs calls for real, or (dry run) records what would be sent and answers with a stand-in. */
export interface Caller {
  readonly dryRun: boolean;
  readonly calls: string[];
  call<T>(name: string, input: unknown, send: () => Promise<T>, standIn: () => T): Promise<T>;
}

export function caller(dryRun: boolean, log: (line: string) => void): Caller {
  const calls: string[] = [];
  return {
    dryRun,
    calls,
    async call(name, input, send, standIn) {
      if (!dryRun) return send();
      const line = `${name} ${JSON.stringify(input, (k, v) => (k === 'data' ? '<bytes>' : v))}`;
      calls.push(line);
      log(`dry run: ${line}`);
      return standIn();
    },
  };
}

interface CycleInfo {
  id: number;
  name: string;
  plan: string;
  status: string;
  /** We resumed it (it was completed or aborted by someone else): complete it again at the end. */
  resumed?: boolean;
  /** This run created it. */
  created?: boolean;
}

interface RunStepInfo {
  id: number;
  step: string;
}

/**
 * Calls of `run` coalesced by key: keys asked for while a batch is under way go together into the next batch, and
 * every caller gets the answer of the batch that held its keys.
 */
export class KeyBatcher<T> {
  private next?: { keys: Set<string>; flag: boolean; promise: Promise<T> };
  private current: Promise<unknown> = Promise.resolve();

  constructor(private readonly run: (keys: string[], flag: boolean) => Promise<T>) {}

  /** `flag` is or-ed over the batch's callers (here: whether the batch must read the run ids back). */
  request(keys: Iterable<string>, flag = false): Promise<T> {
    let batch = this.next;
    if (!batch) {
      const b: { keys: Set<string>; flag: boolean; promise: Promise<T> } = {
        keys: new Set<string>(),
        flag: false,
        promise: Promise.resolve() as Promise<T>,
      };
      b.promise = this.current
        .catch(() => undefined)
        .then(() => {
          if (this.next === b) this.next = undefined;
          return this.run([...b.keys], b.flag);
        });
      batch = b;
      this.current = b.promise;
      this.next = b;
    }
    for (const k of keys) batch.keys.add(k);
    batch.flag ||= flag;
    return batch.promise;
  }
}

/** The URL does not answer as Jira: nothing of this run can be delivered there, but the results are kept. */
export class NotJiraError extends Error {}

/** A problem that will not go away by sending again: named in the summary, the item is not journaled. */
export class PermanentProblem extends Error {}

/**
 * Talks to the service for the engine: finds or creates the cycle, makes sure each case has a run in it, sends
 * status-only results in bulk and the others with their comment, steps, files and defects. Look-ups are fetched
 * once and cached; concurrent callers share one request.
 */
export class Delivery {
  private cycles = new Map<string, Promise<CycleInfo>>();
  private members = new Map<string, Promise<Set<string>>>();
  private runs = new Map<string, Map<string, number>>();
  /** When each cycle's run list was last read, and each run's status and comment as read then. */
  private readonly runsReadAt = new Map<string, number>();
  private readonly runNow = new Map<number, { status: string; comment: string }>();
  private runSteps = new Map<number, Promise<RunStepInfo[]>>();
  private readonly ensureBatches = new Map<string, KeyBatcher<Map<string, number>>>();
  /** Keys this run added to each cycle (their run ids may not be read back yet). */
  private readonly addedToCycle = new Map<string, Set<string>>();
  /** Cases created by this run, and cases this run added to the plan. */
  private readonly newCases = new Set<string>();
  private readonly inPlan = new Set<string>();
  /** Ad hoc run creation per case key, one after the other (see adhocRun). */
  private adhocChain = new Map<string, Promise<unknown>>();
  /** Ad hoc runs this process created or adopted: never adopted again. */
  private readonly adhocClaimed = new Set<number>();
  private bulkUnsupported = false;
  /** The older service variant has no attachment operations (404 on the route): files are named in the comment. */
  private uploadsUnsupported = false;
  /** Status this process wrote to each run, and the status write under way per run (see inRunOrder). */
  private readonly runStatus = new Map<number, string>();
  private readonly runChain = new Map<number, Promise<unknown>>();
  /** Why the content repository is not used any more in this run (it refused a file). */
  private repoUnavailable?: string;
  /** Problems with the content repository, for the summary (it is optional: results still arrive). */
  readonly repoProblems = new Set<string>();
  private sequenceNo = 0;
  readonly cycleSeen: CycleInfo[] = [];
  readonly defects = { created: new Set<string>(), linked: new Set<string>() };
  /** Defects found or filed by this run, by fingerprint (see findOrFileDefect). */
  private readonly knownDefects = new Map<string, string>();
  readonly files = { uploaded: 0, skipped: [] as string[], stored: [] as string[] };
  readonly badKeys = new Set<string>();

  constructor(
    private readonly config: CasebridgeConfig,
    private readonly tm: TestManagementClient,
    private readonly repo: ContentRepositoryClient | undefined,
    private readonly api: Caller,
    private readonly runner: RunnerInfo,
    private readonly signal: AbortSignal,
    /** Folders files may be uploaded from (real paths); empty: any. */
    private readonly roots: readonly string[] = [],
    /** Called when a request succeeded: the end of the run keeps waiting while delivery progresses. */
    private readonly onProgress: () => void = () => undefined,
    /** This pipeline run (see pipelineId): a Passed of it never overwrites a Failed of it from another machine. */
    private readonly pipeline?: string,
  ) {}

  /** Whether a file lies in one of the allowed folders, symlinks resolved. */
  private allowed(path: string): boolean {
    if (this.roots.length === 0) return true;
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return true; // missing: reported as "file not found" by the caller
    }
    return this.roots.some((root) => real === root || real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`));
  }

  private get o() {
    return { signal: this.signal };
  }

  // ---- cycle mode ----

  cycleKey(t: Target): string {
    return `${t.plan}\u0000${t.cycleName}`;
  }

  /** Finds the cycle by name or creates it; starts it when it is a Draft; resumes it when someone completed it. */
  ensureCycle(t: Target): Promise<CycleInfo> {
    const k = this.cycleKey(t);
    let p = this.cycles.get(k);
    if (!p) {
      p = this.findOrCreateCycle(t);
      // A permanent answer (no such plan) is kept: every result of the run would get the same one.
      p.catch((err) => {
        if (!(err instanceof PermanentProblem)) this.cycles.delete(k);
      });
      this.cycles.set(k, p);
    }
    return p;
  }

  private async listCycle(t: Target): Promise<CycleInfo | undefined> {
    const plan = t.plan as string;
    const all = await this.api.call(
      'plans.cycles',
      { testPlanIssueKey: plan },
      () => this.tm.plans.cycles({ testPlanIssueKey: plan }, this.o),
      () => [],
    );
    const c = all.find((x) => x.name === t.cycleName);
    return c ? { id: c.id, name: c.name, plan, status: c.status ?? 'Draft' } : undefined;
  }

  private async findOrCreateCycle(t: Target): Promise<CycleInfo> {
    const plan = t.plan as string;
    const name = t.cycleName as string;
    let cycle: CycleInfo | undefined;
    try {
      cycle = await this.listCycle(t);
    } catch (err) {
      if (err instanceof NotFoundError) {
        // Every path answers 404 when the URL is not Jira's (a wrong context path such as /jira): say so, and keep
        // the results for when the URL is right, instead of calling the plan missing.
        await this.checkJira();
        throw new PermanentProblem(
          `test plan ${plan} was not found (HTTP 404): check testPlan (CASEBRIDGE_TEST_PLAN); no result of this run can go to a cycle`,
        );
      }
      throw err;
    }
    if (!cycle) {
      const input = {
        testPlanIssueKey: plan,
        name,
        ...(t.environment ? { environment: t.environment } : {}),
        ...(t.build ? { build: t.build } : {}),
      };
      let made = false;
      try {
        await this.api.call(
          'plans.addCycle',
          input,
          () => this.tm.plans.addCycle(input, this.o),
          () => undefined,
        );
        made = true;
      } catch (err) {
        // Another shard created it first (500 "already exists"), or the answer was lost: read again.
        if (!(err instanceof ValidationError || err instanceof AmbiguousError)) throw err;
      }
      cycle = this.api.dryRun ? { id: 0, name, plan, status: 'Draft' } : await this.listCycle(t);
      if (!cycle) throw new PermanentProblem(`cycle "${name}" could not be created in test plan ${plan}`);
      cycle.created = made;
    }
    if (cycle.status === 'Draft') await this.workflow(cycle, 'Start');
    else if (cycle.status === 'Completed' || cycle.status === 'Aborted') {
      await this.workflow(cycle, 'Resume');
      cycle.resumed = true;
    }
    this.cycleSeen.push(cycle);
    return cycle;
  }

  private jiraChecked?: Promise<void>;

  /**
   * Throws NotJiraError when the base URL does not answer as Jira (`/rest/api/2/myself` is not found or answers
   * something that is not Jira's), so a 404 elsewhere means the URL, not the plan or the case.
   */
  checkJira(): Promise<void> {
    this.jiraChecked ??= this.tm.jira.myself({}, this.o).then(
      () => undefined,
      (err) => {
        if (err instanceof NotFoundError || err instanceof ResponseShapeError) {
          throw new NotJiraError(
            `${this.config.url} does not answer as Jira (GET /rest/api/2/myself: ${err instanceof NotFoundError ? 'not found' : 'not a Jira answer'}): check url (CASEBRIDGE_URL), including its context path; the results are kept on disk`,
          );
        }
        this.jiraChecked = undefined;
        throw err;
      },
    );
    return this.jiraChecked;
  }

  private async workflow(cycle: CycleInfo, action: 'Start' | 'Resume' | 'Complete'): Promise<void> {
    const input = { testPlanIssueKey: cycle.plan, cycleName: cycle.name, action };
    try {
      await this.api.call(
        'cycles.workflow',
        input,
        () => this.tm.cycles.workflow(input, this.o),
        () => undefined,
      );
      cycle.status = action === 'Complete' ? 'Completed' : 'Active';
    } catch (err) {
      // A concurrent shard moved it already (500: not allowed from this state): check what it is now.
      if (!(err instanceof ValidationError || err instanceof AmbiguousError)) throw err;
      const now = await this.listCycle({ mode: 'cycle', projectKey: '', plan: cycle.plan, cycleName: cycle.name });
      const want = action === 'Complete' ? 'Completed' : 'Active';
      if (now?.status !== want) throw err;
      cycle.status = want;
    }
  }

  /** Whether this run reports into a cycle that another process created (a shard that came second). */
  cycleMadeElsewhere(): boolean {
    return this.cycleSeen.some((c) => !c.created);
  }

  /** Completes the cycles this run reported into (option `completeCycle`, or cycles we had to resume). */
  async completeCycles(all: boolean): Promise<void> {
    for (const c of this.cycleSeen) {
      if ((all || c.resumed) && c.status === 'Active') await this.workflow(c, 'Complete');
    }
  }

  private planMembers(plan: string): Promise<Set<string>> {
    let p = this.members.get(plan);
    if (!p) {
      p = this.api
        .call(
          'plans.members',
          { testPlanIssueKey: plan },
          () => this.tm.plans.members({ testPlanIssueKey: plan }, this.o),
          () => [],
        )
        .then((list) => new Set(list.map((m) => m.testCaseKey)));
      p.catch(() => this.members.delete(plan));
      this.members.set(plan, p);
    }
    return p;
  }

  private async loadRuns(t: Target, cycle: CycleInfo): Promise<Map<string, number>> {
    const input = { testPlanIssueKey: cycle.plan, cycleId: cycle.id };
    const list = await this.api.call(
      'cycles.testRunsByCycleId',
      input,
      () => this.tm.cycles.testRunsByCycleId(input, this.o),
      () => [],
    );
    const k = this.cycleKey(t);
    const map = this.runs.get(k) ?? new Map<string, number>();
    for (const r of list) {
      if (!map.has(r.testCaseKey)) map.set(r.testCaseKey, r.id);
      this.runNow.set(r.id, { status: r.status, comment: r.comment ?? '' });
    }
    this.runs.set(k, map);
    this.runsReadAt.set(k, Date.now());
    this.onProgress();
    return map;
  }

  /** Test cases this run created: not members of any plan yet, so they are added to the plan without asking. */
  markNew(keys: Iterable<string>): void {
    for (const key of keys) this.newCases.add(key);
  }

  /**
   * Makes sure each key has a run in the cycle (adding it to the plan and to the cycle when missing) and returns the
   * run ids. Calls for one cycle are batched: keys asked for while a batch is under way go together in the next
   * one, so a thousand results arriving one by one cost a few batches of three requests, never one per result, and
   * never add a case twice.
   */
  ensureRuns(t: Target, keys: readonly string[], load = true): Promise<Map<string, number>> {
    const k = this.cycleKey(t);
    let b = this.ensureBatches.get(k);
    if (!b) {
      b = new KeyBatcher((batch, flag) => this.ensureRunsNow(t, batch, flag));
      this.ensureBatches.set(k, b);
    }
    return b.request(keys, load);
  }

  /**
   * `load: false` adds the cases to the cycle without reading the run ids back (one request instead of two): what
   * a run of Jest or Vitest does while tests still run; the bulk at the end reads them once for all.
   */
  private async ensureRunsNow(t: Target, keys: readonly string[], load: boolean): Promise<Map<string, number>> {
    const cycle = await this.ensureCycle(t);
    const ck = this.cycleKey(t);
    let runs = this.runs.get(ck);
    // A cycle this run just created has no runs yet: no need to ask.
    if (!runs) runs = cycle.created ? new Map<string, number>() : await this.loadRuns(t, cycle);
    this.runs.set(ck, runs);
    let added = this.addedToCycle.get(ck);
    if (!added) {
      added = new Set<string>();
      this.addedToCycle.set(ck, added);
    }
    const wanted = [...new Set(keys)].filter((key) => !runs?.has(key) && !this.badKeys.has(key));
    const missing = wanted.filter((key) => !added.has(key));
    if (missing.length === 0) {
      if (wanted.length > 0 && load && !this.api.dryRun) return this.loadRuns(t, cycle);
      return runs;
    }
    // New cases go to the plan first: the cycle would refuse them (one failed request per batch otherwise).
    const fresh = missing.filter((key) => this.newCases.has(key) && !this.inPlan.has(key));
    if (fresh.length > 0) await this.addPlanMembers(cycle.plan, fresh, this.inPlan);
    const first = missing.filter((key) => !this.badKeys.has(key));
    try {
      if (first.length > 0) await this.addToCycle(cycle, first);
    } catch (err) {
      // 500: a case is not a member of the plan yet (or a key is bad). Add what is missing to the plan, then retry.
      if (!(err instanceof ValidationError || err instanceof NotFoundError)) throw err;
      const members = await this.planMembers(cycle.plan);
      const notMembers = first.filter((key) => !members.has(key) && !this.inPlan.has(key));
      if (notMembers.length > 0) await this.addPlanMembers(cycle.plan, notMembers, members);
      const add = first.filter((key) => !this.badKeys.has(key));
      try {
        if (add.length > 0) await this.addToCycle(cycle, add);
      } catch (again) {
        if (!(again instanceof ValidationError || again instanceof NotFoundError)) throw again;
        // Still refused: a key the plan holds but the cycle will not take (not a test case). One by one, so the
        // others still get their runs and the culprit is named.
        for (const key of add) {
          try {
            await this.addToCycle(cycle, [key]);
          } catch (e) {
            if (!(e instanceof ValidationError || e instanceof NotFoundError)) throw e;
            this.badKeys.add(key);
          }
        }
      }
    }
    for (const key of missing) added.add(key);
    if (this.api.dryRun) for (const key of missing) runs.set(key, ++this.sequenceNo);
    else if (load) {
      runs = await this.loadRuns(t, cycle);
      // An add whose answer was lost and did not happen: the next batch adds it again.
      for (const key of missing) if (!runs.has(key)) added.delete(key);
    }
    return runs;
  }

  private async addToCycle(cycle: CycleInfo, keys: string[]): Promise<void> {
    const input = { testPlanIssueKey: cycle.plan, testCycleId: cycle.id, addTestCaseKeys: keys };
    try {
      await this.withCycleOpen(cycle, () =>
        this.api.call(
          'cycles.addMembersToTestCycle',
          input,
          () => this.tm.cycles.addMembersToTestCycle(input, this.o),
          () => undefined,
        ),
      );
    } catch (err) {
      // The answer was lost: the runs list read next shows what happened; a missing run is added on the next batch.
      if (!(err instanceof AmbiguousError)) throw err;
    }
  }

  private async addPlanMembers(plan: string, keys: string[], members: Set<string>): Promise<void> {
    const send = async (list: string[]) => {
      const input = { testPlanIssueKey: plan, testCaseKeys: list };
      await this.api.call(
        'plans.addMembers',
        input,
        () => this.tm.plans.addMembers(input, this.o),
        () => undefined,
      );
      for (const key of list) members.add(key);
    };
    try {
      await send(keys);
    } catch (err) {
      if (!(err instanceof NotFoundError || err instanceof ValidationError) || keys.length === 0) throw err;
      // One bad key refuses the whole call: add them one by one to find it, so the others still report.
      for (const key of keys) {
        try {
          await send([key]);
        } catch (e) {
          if (!(e instanceof NotFoundError || e instanceof ValidationError)) throw e;
          this.badKeys.add(key);
        }
      }
    }
  }

  /** Sends status-only results of one cycle: one bulk update per status. */
  async bulk(t: Target, items: WorkItem[]): Promise<void> {
    const started = Date.now();
    const byKey = new Map<string, string | undefined>();
    for (const item of items) {
      byKey.set(item.key, worseStatus(byKey.get(item.key), runStatusOf(outcomeOf(item.test))));
    }
    const runs = await this.ensureRuns(t, [...byKey.keys()]);
    const cycle = await this.ensureCycle(t);
    // In CI, other machines of this pipeline may have failed some of these runs since the list was read: read it
    // again (one request) so that their Failed stays (see heldByPipeline).
    if (this.pipeline && !this.api.dryRun && (this.runsReadAt.get(this.cycleKey(t)) ?? 0) < started) {
      await this.loadRuns(t, cycle);
    }
    const wanted = new Map<number, string>();
    for (const [key, status] of byKey) {
      const runId = runs.get(key);
      if (runId !== undefined && status && !this.heldByPipeline(runId, status)) wanted.set(runId, status);
    }
    await this.inRunOrder([...wanted.keys()], () => this.sendBulk(cycle, wanted));
    for (const item of items) {
      // Delivered, or nothing to deliver (a skipped test), or a key the plan refused (named in the summary).
      item.progress.runId = runs.get(item.key);
      item.progress.done = true;
      if (item.progress.runId === undefined && this.badKeys.has(item.key)) item.progress.dropped = true;
    }
  }

  /**
   * Status writes of one run, one after the other and never downgrading: when several tests report one case, the
   * worse status stays (a Failed is not overwritten by a later bulk Passed), whatever order the deliveries finish in.
   */
  private inRunOrder<T>(runIds: readonly number[], fn: () => Promise<T>): Promise<T> {
    const before = Promise.all(runIds.map((id) => this.runChain.get(id)?.catch(() => undefined)));
    const p = before.then(fn);
    for (const id of runIds) this.runChain.set(id, p);
    const clean = () => {
      for (const id of runIds) if (this.runChain.get(id) === p) this.runChain.delete(id);
    };
    p.then(clean, clean);
    return p;
  }

  /**
   * Whether another machine of this pipeline run wrote a worse status to the run (its comment names the pipeline):
   * then a better one from here does not overwrite it. A new pipeline run (or attempt) has another id and may.
   */
  private heldByPipeline(runId: number, status: string): boolean {
    const now = this.runNow.get(runId);
    if (!this.pipeline || !now || this.runStatus.has(runId)) return false;
    return isWorse(now.status, status) && now.comment.includes(pipelineMarker(this.pipeline));
  }

  /** The status to write to a run: the worse of `status` and what this run wrote there; undefined when unchanged. */
  private statusFor(runId: number, status: string | undefined): string | undefined {
    const written = this.runStatus.get(runId);
    const worse = worseStatus(written, status);
    return worse === written ? undefined : worse;
  }

  private async sendBulk(cycle: CycleInfo, wanted: Map<number, string>): Promise<void> {
    const byStatus = new Map<string, number[]>();
    for (const [runId, status] of wanted) {
      const s = this.statusFor(runId, status);
      if (s) appendTo(byStatus, s, runId);
    }
    for (const [status, runIds] of byStatus) {
      if (!this.bulkUnsupported) {
        const input = { testPlanIssueKey: cycle.plan, testCycleId: cycle.id, status, runIds };
        try {
          await this.withCycleOpen(cycle, () =>
            this.api.call(
              'runs.bulkStatusUpdate',
              input,
              () => this.tm.runs.bulkStatusUpdate(input, this.o),
              () => undefined,
            ),
          );
          this.onProgress();
          continue;
        } catch (err) {
          // The older service variant has no bulk update (404 on the route): one update per run from now on.
          if (!(err instanceof NotFoundError)) throw err;
          this.bulkUnsupported = true;
        }
      }
      for (const runId of runIds) await this.updateRun(cycle, runId, { result: status });
    }
    for (const [status, runIds] of byStatus) for (const runId of runIds) this.runStatus.set(runId, status);
  }

  /** Runs `fn`; when the cycle was completed by someone else meanwhile (403), resumes it once and runs `fn` again. */
  private async withCycleOpen<T>(cycle: CycleInfo | undefined, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ForbiddenError) || !cycle) throw err;
      const now = await this.listCycle({ mode: 'cycle', projectKey: '', plan: cycle.plan, cycleName: cycle.name });
      if (!now || now.status === 'Active') throw err;
      await this.workflow(cycle, 'Resume');
      cycle.resumed = true;
      return fn();
    }
  }

  private async updateRun(
    cycle: CycleInfo | undefined,
    runId: number,
    fields: { result?: string; comment?: string; bugs?: string[] },
  ): Promise<void> {
    const input = { runId, ...fields };
    await this.withCycleOpen(cycle, () =>
      this.api.call(
        'runs.update',
        input,
        () => this.tm.runs.update(input, this.o),
        () => undefined,
      ),
    );
  }

  // ---- ad hoc mode ----

  /**
   * The ad hoc run of a result: created, or adopted (after a lost answer, or in a replay the run a crashed process
   * created). Creates for one case run one after the other, and a run this process created or adopted is never
   * adopted again: the untouched run found after a lost answer is the one that create made, not the run of another
   * result for the same case that is about to be written.
   */
  private adhocRun(item: WorkItem, replaying: boolean): Promise<number> {
    const prev = this.adhocChain.get(item.key) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(() => this.adhocRunNow(item, replaying));
    this.adhocChain.set(item.key, next);
    return next;
  }

  private async adhocRunNow(item: WorkItem, replaying: boolean): Promise<number> {
    // A replay after a crash may find the run it created last time: adopt it instead of creating another.
    const adopted = replaying && !this.api.dryRun ? await this.untouchedAdhocRun(item.key) : undefined;
    if (adopted !== undefined) return adopted;
    const input = { testCaseIssueKey: item.key };
    try {
      const run = await this.api.call(
        'runs.adhocCreate',
        input,
        () => this.tm.runs.adhocCreate(input, this.o),
        () => ({ id: ++this.sequenceNo }) as { id: number },
      );
      this.adhocClaimed.add(run.id);
      return run.id;
    } catch (err) {
      if (err instanceof NotFoundError) {
        await this.checkJira();
        this.badKeys.add(item.key);
        throw new PermanentProblem(`${item.key}: no such test case (${displayName(item.test)})`);
      }
      if (!(err instanceof AmbiguousError)) throw err;
      // The create may have happened: adopt the newest untouched ad hoc run of the case, or create again.
      const found = await this.untouchedAdhocRun(item.key);
      if (found !== undefined) return found;
      const run = await this.tm.runs.adhocCreate(input, this.o);
      this.adhocClaimed.add(run.id);
      return run.id;
    }
  }

  /** The newest untouched ad hoc run of the case that this process has not taken yet; taken by this call. */
  private async untouchedAdhocRun(key: string): Promise<number | undefined> {
    const runs = await this.tm.runs.adhocTestRuns({ testCaseIssueKey: key }, this.o);
    const fresh = runs.filter(
      (r) => r.status === 'Not Tested' && !r.executedBy && !r.comment && !this.adhocClaimed.has(r.id),
    );
    const id = fresh.sort((a, b) => b.id - a.id)[0]?.id;
    if (id !== undefined) this.adhocClaimed.add(id);
    return id;
  }

  // ---- one result with details ----

  /** Delivers one result with its steps, files, defect and comment; resumes from `item.progress`. */
  async deliver(item: WorkItem, replaying: boolean): Promise<void> {
    const t = item.target;
    const p = item.progress;
    let cycle: CycleInfo | undefined;
    if (p.runId === undefined) {
      if (t.mode === 'cycle') {
        const runs = await this.ensureRuns(t, [item.key]);
        cycle = await this.ensureCycle(t);
        const runId = runs.get(item.key);
        if (runId === undefined) {
          throw new PermanentProblem(
            `${item.key}: not a test case that can be added to test plan ${t.plan} (${displayName(item.test)})`,
          );
        }
        p.runId = runId;
      } else {
        p.runId = await this.adhocRun(item, replaying);
      }
    } else if (t.mode === 'cycle') {
      cycle = await this.ensureCycle(t);
    }
    const runId = p.runId;
    const outcome = outcomeOf(item.test);
    const status = runStatusOf(outcome);

    let failedStepId: number | undefined;
    if (!p.steps) {
      failedStepId = await this.writeSteps(cycle, runId, topSteps(item.test));
      p.steps = true;
    }
    const notes = await this.sendFiles(cycle, item, runId, replaying);

    const bugs: string[] = [];
    const wantsDefect =
      this.config.defects.enabled &&
      (outcome === 'failed' || (outcome === 'flaky' && this.config.defects.onFlaky)) &&
      !this.api.dryRun;
    if (wantsDefect && !p.defect) {
      // Filing from a run is a run write: refused (403) when someone completed the cycle meanwhile.
      const d = await this.withCycleOpen(cycle, () =>
        findOrFileDefect({
          tm: this.tm,
          config: this.config,
          item,
          runId,
          stepRunId: failedStepId,
          known: this.knownDefects,
          runner: this.runner,
          signal: this.signal,
        }),
      );
      p.defect = d.key;
      p.defectCreated = d.created;
    }
    if (p.defect) {
      bugs.push(p.defect);
      (p.defectCreated ? this.defects.created : this.defects.linked).add(p.defect);
    }
    const comment = commentFor(item, notes, this.pipeline);
    await this.inRunOrder([runId], async () => {
      // In a cycle, a case another test of this run already failed stays failed; an ad hoc run is this result's own.
      let result = t.mode === 'cycle' ? this.statusFor(runId, status) : status;
      if (result && t.mode === 'cycle' && this.heldByPipeline(runId, result)) result = undefined;
      if (!result && !comment && bugs.length === 0) return;
      await this.updateRun(cycle, runId, {
        ...(result ? { result } : {}),
        ...(comment ? { comment } : {}),
        ...(bugs.length ? { bugs } : {}),
      });
      if (result) this.runStatus.set(runId, result);
    });
    p.done = true;
    this.onProgress();
  }

  private stepsOf(runId: number): Promise<RunStepInfo[]> {
    let s = this.runSteps.get(runId);
    if (!s) {
      s = this.api
        .call(
          'runs.get',
          { runID: runId },
          () => this.tm.runs.get({ runID: runId }, this.o),
          () => ({ testRunDetails: { testRunSteps: [] } }) as never,
        )
        .then((run) =>
          ((run.testRunDetails?.testRunSteps ?? []) as Array<Record<string, unknown>>).map((r) => ({
            id: Number(r.id),
            step: String(r.step ?? ''),
          })),
        );
      s.catch(() => this.runSteps.delete(runId));
      this.runSteps.set(runId, s);
    }
    return s;
  }

  /** Writes step results onto the run's steps; returns the run step id of the first failed step. */
  private async writeSteps(
    cycle: CycleInfo | undefined,
    runId: number,
    steps: ResultStep[],
  ): Promise<number | undefined> {
    if (steps.length === 0) return undefined;
    const runSteps = await this.stepsOf(runId);
    const pairs = matchSteps(steps, runSteps);
    let failed: number | undefined;
    for (const [step, runStep] of pairs) {
      const result = step.status === 'passed' ? 'Passed' : step.status === 'failed' ? 'Failed' : 'Not Tested';
      const input = {
        runStepId: runStep.id,
        result,
        ...(step.error ? { actualResult: truncate(step.error.message, 2000) } : {}),
      };
      await this.withCycleOpen(cycle, () =>
        this.api.call(
          'runs.updateStep',
          input,
          () => this.tm.runs.updateStep(input, this.o),
          () => undefined,
        ),
      );
      if (result === 'Failed' && failed === undefined) failed = runStep.id;
    }
    return failed;
  }

  /** Uploads the selected files; large ones go to the content repository when configured. Returns comment lines. */
  private async sendFiles(
    cycle: CycleInfo | undefined,
    item: WorkItem,
    runId: number,
    replaying: boolean,
  ): Promise<string[]> {
    const p: Progress = item.progress;
    p.uploaded ??= [];
    p.stored ??= {};
    const notes: string[] = [];
    const chosen = selectedAttachments(item.test, this.config.attachments);
    if (chosen.length === 0) return notes;
    let existing: Set<string> | undefined;
    if (replaying && !this.api.dryRun && !this.uploadsUnsupported) {
      try {
        const list = await this.tm.attachments.getAttachmentDetails({ runId }, this.o);
        existing = new Set(list.map((f) => f.fileName));
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
        this.uploadsUnsupported = true;
      }
    }
    const names = new Set<string>();
    for (const { attachment, step } of chosen) {
      const fileName = uniqueName(fileNameOf(attachment), names);
      const size = attachment.body ? attachment.body.byteLength : await sizeOf(attachment.path);
      if (size === undefined) {
        notes.push(`${fileName}: file not found (${attachment.path})`);
        continue;
      }
      if (attachment.path && !this.allowed(attachment.path)) {
        notes.push(
          `${fileName} not uploaded: ${attachment.path} is outside the project folder (allow its folder with attachments.roots)`,
        );
        this.files.skipped.push(fileName);
        continue;
      }
      const storedLink = p.stored[fileName];
      if (storedLink) {
        notes.push(`${fileName}: ${storedLink}`);
        continue;
      }
      if (p.uploaded.includes(fileName) || existing?.has(fileName)) continue;
      const file: FileInput = attachment.body
        ? { data: Buffer.from(attachment.body), fileName, contentType: attachment.contentType }
        : { path: attachment.path as string, fileName, contentType: attachment.contentType };
      // Large files go to the content repository when one is configured, from disk or from memory alike.
      if (this.repo && !this.repoUnavailable && size >= this.config.attachments.repositoryMinBytes) {
        try {
          const node = await this.api.call(
            'repository.storeFile',
            { path: attachment.path ?? '(in memory)', name: fileName },
            () => (this.repo as ContentRepositoryClient).storeFile(file, { name: fileName }),
            () => ({ downloadUrl: `(dry run) ${fileName}` }) as never,
          );
          const link = String((node as { downloadUrl?: string }).downloadUrl ?? '');
          p.stored[fileName] = link;
          this.files.stored.push(fileName);
          notes.push(`${fileName}: ${link}`);
          continue;
        } catch (err) {
          if (err instanceof AbortedError) throw err;
          // The content repository is optional: when it refuses (quota 503, rights, down), the file goes to the run
          // like any other (below), and the repository is not asked again in this run.
          this.repoUnavailable = redact(err instanceof Error ? err.message : String(err));
          this.repoProblems.add(
            `the content repository refused files (${this.repoUnavailable}): they went to the runs`,
          );
        }
      }
      if (size > this.config.attachments.maxBytes) {
        notes.push(
          `${fileName} not uploaded: ${mb(size)} is over attachments.maxBytes (${mb(this.config.attachments.maxBytes)})`,
        );
        this.files.skipped.push(fileName);
        continue;
      }
      if (this.uploadsUnsupported) {
        notes.push(`${fileName} not uploaded: the service has no attachment upload`);
        continue;
      }
      const upload = () =>
        step === undefined
          ? this.tm.attachments.addToRun({ runId, file }, this.o)
          : this.tm.attachments.addToRunStep({ runId, stepno: step, file }, this.o);
      try {
        try {
          await this.withCycleOpen(cycle, () =>
            this.api.call(
              step === undefined ? 'attachments.addToRun' : 'attachments.addToRunStep',
              { runId, ...(step === undefined ? {} : { stepno: step }), fileName, bytes: size },
              upload,
              () => undefined,
            ),
          );
        } catch (err) {
          if (!(err instanceof AmbiguousError)) {
            // A step number the run does not have: attach to the run instead.
            if (step !== undefined && err instanceof CasebridgeError && (err.status === 404 || err.status === 500)) {
              await this.tm.attachments.addToRun({ runId, file }, this.o);
            } else throw err;
          } else {
            const list = await this.tm.attachments.getAttachmentDetails({ runId }, this.o);
            if (!list.some((f) => f.fileName === fileName)) await upload();
          }
        }
      } catch (err) {
        // Even uploading to the run is not found: the older service variant (a missing run fails the update next).
        if (!(err instanceof NotFoundError)) throw err;
        this.uploadsUnsupported = true;
        notes.push(`${fileName} not uploaded: the service has no attachment upload`);
        continue;
      }
      p.uploaded.push(fileName);
      this.files.uploaded += 1;
    }
    return notes;
  }
}

/** Pairs test steps with run steps: by text when one matches, otherwise by position among the rest. */
export function matchSteps<S extends { title: string }, R extends { step: string }>(
  steps: readonly S[],
  runSteps: readonly R[],
): Array<[S, R]> {
  const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();
  const used = new Set<number>();
  const pairs: Array<[S, R | undefined]> = steps.map((s) => {
    const i = runSteps.findIndex((r, j) => !used.has(j) && norm(r.step) === norm(s.title));
    if (i >= 0) used.add(i);
    return [s, i >= 0 ? runSteps[i] : undefined];
  });
  return pairs
    .map(([s, r], index): [S, R | undefined] => {
      if (r) return [s, r];
      const j = index < runSteps.length && !used.has(index) ? index : -1;
      if (j >= 0) used.add(j);
      return [s, j >= 0 ? runSteps[j] : undefined];
    })
    .filter((pair): pair is [S, R] => pair[1] !== undefined);
}

/** The run comment: what failed and where, flaky attempts, files that were not uploaded or were stored elsewhere. */
export function commentFor(item: WorkItem, notes: string[], pipeline?: string): string {
  const t = item.test;
  const outcome = outcomeOf(t);
  const lines: string[] = [];
  const where = [t.project ? `[${t.project}]` : '', displayName(t)].filter(Boolean).join(' ');
  if (outcome === 'failed' || outcome === 'interrupted') {
    const err = lastAttempt(t)?.errors[0];
    lines.push(`${outcome === 'failed' ? 'Failed' : 'Interrupted'}: ${where}`);
    if (err) lines.push(truncate(err.message, 4000));
    if (t.attempts.length > 1) lines.push(`Attempts: ${t.attempts.length} (all failed)`);
  } else if (outcome === 'flaky') {
    const failedTries = t.attempts.filter((a) => a.status === 'failed' || a.status === 'timedOut');
    const first = failedTries[0]?.errors[0];
    lines.push(
      `Flaky: passed on attempt ${t.attempts.length} after ${failedTries.length} failed attempt(s) (retry ${failedTries
        .map((a) => a.retry)
        .join(', ')}): ${where}`,
    );
    if (first) lines.push(`First failure: ${truncate(first.message, 2000)}`);
  }
  lines.push(...notes);
  const ci = ciBuildUrl(process.env);
  if (lines.length > 0 && ci) lines.push(`CI: ${ci}`);
  if (lines.length > 0 && pipeline) lines.push(pipelineMarker(pipeline));
  return lines.join('\n');
}

const EXT: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'video/webm': '.webm',
  'application/zip': '.zip',
  'text/plain': '.txt',
  'application/json': '.json',
};

function fileNameOf(a: ResultAttachment): string {
  const fromPath = a.path ? basename(a.path) : '';
  const ext = extname(fromPath) || EXT[a.contentType] || '';
  const base = a.name.replace(/[\\/:*?"<>|\s]+/g, '-').slice(0, 100) || 'attachment';
  return base.endsWith(ext) ? base : `${base}${ext}`;
}

function uniqueName(name: string, taken: Set<string>): string {
  let out = name;
  const ext = extname(name);
  for (let i = 2; taken.has(out); i++) out = `${name.slice(0, name.length - ext.length)}-${i}${ext}`;
  taken.add(out);
  return out;
}

async function sizeOf(path: string | undefined): Promise<number | undefined> {
  if (!path) return undefined;
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

function mb(n: number): string {
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
