import type { ContentRepositoryClient } from '../../client/repo.js';
import type { TestManagementClient } from '../../client/tm.js';
import type { CasebridgeConfig } from '../config/schema.js';
import { DefectCap } from '../defects/cap.js';
import { type DefectOutcome, findOrFileDefect } from '../defects/defects.js';
import { DefectRefusals, type Refusal } from '../defects/refusals.js';
import { PermanentProblem } from '../kernel/errors.js';
import { serialByKey } from '../kernel/keyed.js';
import { displayName, outcomeOf } from '../kernel/model.js';
import { jiraCheck } from '../kernel/problems.js';
import type { Service } from '../kernel/service.js';
import { type StatusRank, statusRanker, worseOf } from '../kernel/status-rank.js';
import { pipelineMarker } from '../kernel/text.js';
import type { CycleInfo, RunnerInfo } from '../kernel/types.js';
import { runStatusOf, type Target, topSteps, type WorkItem } from '../kernel/work.js';
import { AdhocRuns } from './adhoc.js';
import { type AttachmentStats, Attachments } from './attachments.js';
import { type BulkOutcome, BulkStatuses, settleBulk } from './bulk-status.js';
import { commentFor } from './comment.js';
import { CycleRuns } from './cycle-runs.js';
import { Cycles, withCycleOpen } from './cycles.js';
import { RunSteps } from './steps.js';

export type { BulkOutcome };

/** What delivery did in this run, for the summary: a snapshot, taken when asked. */
export interface DeliveryStats {
  /** The first cycle this run reported into. */
  cycle?: { name: string; id: number; plan: string };
  /** This run had to resume a cycle someone completed: `completeCycles` completes it again. */
  resumedCycle: boolean;
  /** Keys the service refused as test cases. */
  badKeys: string[];
  /** Problems with the content repository (it is optional: the files went to the runs). */
  repoProblems: string[];
  /** `notFiled`: failures that got no defect because of `defects.maxPerRun`, with the reason. */
  defects: { created: string[]; linked: string[]; notFiled?: number; notFiledReason?: string };
  /** Defects Jira refused for their fields: one problem line per distinct refusal, with the count. */
  defectProblems: string[];
  attachments: AttachmentStats;
}

/**
 * Talks to the service for the engine: makes sure each case has a run (in the cycle, see Cycles and CycleRuns, or ad
 * hoc, see AdhocRuns), sends status-only results in bulk and the others with their steps, files, defect and comment,
 * and keeps the status writes of each run in order. Look-ups are fetched once and cached; concurrent callers share
 * one request.
 *
 * `progress.done` has two owners: Delivery sets it when it delivered an item, the engine when it gives one up
 * (with `dropped`: a permanent problem, see RunHealth.classify).
 */
export class Delivery {
  private readonly svc: Service;
  private readonly cycles: Cycles;
  private readonly runs: CycleRuns;
  private readonly adhoc: AdhocRuns;
  private readonly steps: RunSteps;
  private readonly files: Attachments;
  /** Throws NotJiraError when the base URL does not answer as Jira (see jiraCheck). */
  readonly checkJira: () => Promise<void>;
  /** Keys the service refused as test cases (in a cycle or ad hoc). */
  private readonly badKeys = new Set<string>();
  /** Run ids of a dry run's cycles, where nothing is created. */
  private sequenceNo = 0;
  private readonly defects = { created: new Set<string>(), linked: new Set<string>() };
  /** Defects found or filed by this run, by failure group (see findOrFileDefect). */
  private readonly knownDefects = new Map<string, DefectOutcome>();
  /** The flood guard: new defects per run, per cycle across machines (see DefectCap). */
  private readonly defectCap: DefectCap;
  /** Failures that got no defect because of the cap (counted once each, even when their delivery is retried). */
  private readonly notFiled = new WeakSet<WorkItem>();
  /** Creates Jira refused for their fields, and the failures each left without a defect (see DefectRefusals). */
  private readonly refusals: DefectRefusals;
  private readonly refusedItems = new WeakMap<WorkItem, Refusal>();
  /** Status this process wrote to each run, and the status writes of each run, one after the other (see bulk). */
  private readonly runStatus = new Map<number, string>();
  private readonly inRunOrder = serialByKey<number>();
  /** The worse of two statuses wins on a run; a renamed or custom status ranks as the outcome mapped to it. */
  private readonly rank: StatusRank;
  /** The bulk status updates (split when the service fails one; per run where it has none). */
  private readonly statuses: BulkStatuses;

  constructor(
    private readonly config: CasebridgeConfig,
    tm: TestManagementClient,
    repo: ContentRepositoryClient | undefined,
    /** A dry run: `tm` and `repo` are wrapped by `withDryRun`. */
    dryRun: boolean,
    private readonly runner: RunnerInfo,
    private readonly signal: AbortSignal,
    /** Folders files may be uploaded from (real paths); empty: any. */
    roots: readonly string[] = [],
    /** Called when a request succeeded: the end of the run keeps waiting while delivery progresses. */
    private readonly onProgress: () => void = () => undefined,
    /** This pipeline run (see pipelineId): a Passed of it never overwrites a Failed of it from another machine. */
    private readonly pipeline?: string,
    /** Whether the service answered a request since a time (see RunHealth): tells a refusal from an outage. */
    answeredSince?: (since: number) => boolean,
  ) {
    this.svc = { tm, dryRun, o: { signal }, ...(answeredSince ? { answeredSince } : {}) };
    this.checkJira = jiraCheck(tm, config.url, signal);
    this.rank = statusRanker(config.statusMap);
    this.defectCap = new DefectCap(config.defects.maxPerRun, tm, signal);
    this.refusals = new DefectRefusals(config.defects.fields);
    const standInId = () => ++this.sequenceNo;
    this.cycles = new Cycles(this.svc, this.checkJira);
    this.runs = new CycleRuns(this.svc, this.cycles, this.badKeys, standInId, onProgress);
    this.adhoc = new AdhocRuns(this.svc, this.checkJira, this.badKeys);
    this.steps = new RunSteps(this.svc);
    this.files = new Attachments(config.attachments, this.svc, repo, roots);
    this.statuses = new BulkStatuses(
      this.svc,
      this.runStatus,
      (runId, status) => this.statusFor(runId, status),
      (cycle, runId, fields) => this.updateRun(cycle, runId, fields),
      onProgress,
    );
  }

  /** Results with the same key go to the same cycle (one bulk per cycle). */
  cycleKey(t: Target): string {
    return this.cycles.key(t);
  }

  /** Finds the cycle by name or creates it; starts it when it is a Draft; resumes it when someone completed it. */
  ensureCycle(t: Target): Promise<CycleInfo> {
    return this.cycles.ensure(t);
  }

  /** Whether this run reports into a cycle that another process created (a shard that came second). */
  cycleMadeElsewhere(): boolean {
    return this.cycles.madeElsewhere();
  }

  /** Completes the cycles this run reported into (option `completeCycle`, or cycles we had to resume). */
  completeCycles(all: boolean): Promise<void> {
    return this.cycles.complete(all);
  }

  /** Makes sure each key has a run in the cycle and returns the run ids (see CycleRuns.ensure). */
  ensureRuns(t: Target, keys: readonly string[], load = true): Promise<Map<string, number>> {
    return this.runs.ensure(t, keys, load);
  }

  /** Test cases this run created: not members of any plan yet, so they are added to the plan without asking. */
  markNew(keys: Iterable<string>): void {
    this.runs.markNew(keys);
  }

  stats(): DeliveryStats {
    const cycle = this.cycles.first();
    return {
      ...(cycle ? { cycle: { name: cycle.name, id: cycle.id, plan: cycle.plan } } : {}),
      resumedCycle: this.cycles.resumedAny(),
      badKeys: [...this.badKeys],
      repoProblems: this.files.problems(),
      defects: {
        created: [...this.defects.created],
        linked: [...this.defects.linked],
        ...this.defectCap.notFiled(this.config.mode === 'cycle'),
      },
      defectProblems: this.refusals.lines(),
      attachments: this.files.stats(),
    };
  }

  /**
   * Sends status-only results of one cycle: one bulk update per status. A bulk the service fails is split to find
   * the runs it refuses (see splitBatch): the others are delivered, the refused ones come back in `refused`, and
   * those of an outage in `unsent` (kept for later). Only the delivered ones (and those with nothing to deliver)
   * are marked done.
   */
  async bulk(t: Target, items: WorkItem[]): Promise<BulkOutcome> {
    const started = Date.now();
    const byKey = new Map<string, string | undefined>();
    for (const item of items) {
      byKey.set(item.key, worseOf(this.rank, byKey.get(item.key), runStatusOf(item.test, this.config.statusMap)));
    }
    const runs = await this.ensureRuns(t, [...byKey.keys()]);
    const cycle = await this.cycles.ensure(t);
    // In CI, other machines of this pipeline may have failed some of these runs since the list was read: read it
    // again (one request) so that their Failed stays (see heldByPipeline).
    if (this.pipeline && !this.svc.dryRun) await this.runs.readSince(t, cycle, started);
    const wanted = new Map<number, string>();
    for (const [key, status] of byKey) {
      const runId = runs.get(key);
      if (runId !== undefined && status && !this.heldByPipeline(runId, status)) wanted.set(runId, status);
    }
    const sent = await this.inRunOrder([...wanted.keys()], () => this.statuses.send(cycle, wanted, started));
    return settleBulk(items, runs, wanted, sent, this.badKeys, (item) => runStatusOf(item.test, this.config.statusMap));
  }

  /** Delivers one result with its steps, files, defect and comment; resumes from `item.progress`. */
  async deliver(item: WorkItem, replaying: boolean): Promise<void> {
    const t = item.target;
    const p = item.progress;
    p.runId ??= t.mode === 'cycle' ? await this.cycleRun(item) : await this.adhoc.run(item, replaying);
    const cycle = t.mode === 'cycle' ? await this.cycles.ensure(t) : undefined;
    const runId = p.runId;
    let failedStepId: number | undefined;
    if (!p.steps) {
      failedStepId = await this.steps.write(cycle, runId, topSteps(item.test));
      p.steps = true;
    }
    const notes = await this.files.send(cycle, item, runId, replaying);
    const defect = await this.defectOf(item, cycle, runId, failedStepId);
    const bugs = defect ? [defect] : [];
    const refused = this.refusedItems.get(item);
    const why = refused ? [this.refusals.note(refused)] : this.notFiled.has(item) ? [this.defectCap.note()] : [];
    const comment = commentFor(item, [...notes, ...why], this.pipeline);
    const status = runStatusOf(item.test, this.config.statusMap);
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

  /** The case's run in the cycle, added when missing. */
  private async cycleRun(item: WorkItem): Promise<number> {
    const t = item.target;
    const runId = (await this.runs.ensure(t, [item.key])).get(item.key);
    if (runId === undefined) {
      throw new PermanentProblem(
        `${item.key}: not a test case that can be added to test plan ${t.plan} (${displayName(item.test)})`,
      );
    }
    return runId;
  }

  /** The defect of a failure (option `defects`): found by its fingerprint or filed, once per item. */
  private async defectOf(
    item: WorkItem,
    cycle: CycleInfo | undefined,
    runId: number,
    stepRunId: number | undefined,
  ): Promise<string | undefined> {
    const p = item.progress;
    // On the outcome, not on the status `statusMap` writes: a failure mapped to Blocked still gets its defect, a
    // skipped test mapped to Failed none (it has no error to file).
    const outcome = outcomeOf(item.test);
    const wanted =
      this.config.defects.enabled &&
      (outcome === 'failed' || (outcome === 'flaky' && this.config.defects.onFlaky)) &&
      !this.svc.dryRun;
    if (wanted && !p.defect) {
      // Filing from a run is a run write: refused (403) when someone completed the cycle meanwhile.
      const d = await withCycleOpen(this.svc, cycle, () =>
        findOrFileDefect({
          tm: this.svc.tm,
          config: this.config,
          item,
          runId,
          stepRunId,
          known: this.knownDefects,
          ...(cycle ? { cycle } : {}),
          cap: this.defectCap,
          refusals: this.refusals,
          runner: this.runner,
          signal: this.signal,
        }),
      );
      if (d.key === undefined && d.refusal) {
        if (!this.refusedItems.has(item)) this.refusals.noteNotFiled(d.refusal, item.key);
        this.refusedItems.set(item, d.refusal);
      } else if (d.key === undefined) {
        if (!this.notFiled.has(item)) this.defectCap.noteNotFiled();
        this.notFiled.add(item);
      } else {
        p.defect = d.key;
        p.defectCreated = d.created;
      }
    }
    if (p.defect) (p.defectCreated ? this.defects.created : this.defects.linked).add(p.defect);
    return p.defect;
  }

  /**
   * Whether another machine of this pipeline run wrote a worse status to the run (its comment names the pipeline):
   * then a better one from here does not overwrite it. A new pipeline run (or attempt) has another id and may.
   */
  private heldByPipeline(runId: number, status: string): boolean {
    const now = this.runs.now(runId);
    if (!this.pipeline || !now || this.runStatus.has(runId)) return false;
    return this.rank(now.status) > this.rank(status) && now.comment.includes(pipelineMarker(this.pipeline));
  }

  /**
   * The status to write to a run: the worse of `status` and what this run wrote there; undefined when unchanged.
   * With the writes of a run in order (inRunOrder), when several tests report one case the worse status stays (a
   * Failed is not overwritten by a later bulk Passed), whatever order the deliveries finish in.
   */
  private statusFor(runId: number, status: string | undefined): string | undefined {
    const written = this.runStatus.get(runId);
    const worse = worseOf(this.rank, written, status);
    return worse === written ? undefined : worse;
  }

  private async updateRun(
    cycle: CycleInfo | undefined,
    runId: number,
    fields: { result?: string; comment?: string; bugs?: string[] },
  ): Promise<void> {
    await withCycleOpen(this.svc, cycle, () => this.svc.tm.runs.update({ runId, ...fields }, this.svc.o));
  }
}
