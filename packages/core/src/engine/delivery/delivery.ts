import type { ContentRepositoryClient } from '../../client/repo.js';
import type { CasebridgeConfig } from '../config/schema.js';
import type { Verdict } from '../defects/classify.js';
import { groupOf } from '../defects/groups.js';
import type { QuarantineStats } from '../defects/quarantine.js';
import { attributeSet, describeSet } from '../kernel/attributes.js';
import { Batcher } from '../kernel/batcher.js';
import { PermanentProblem, RunNotFoundYet } from '../kernel/errors.js';
import { serialByKey } from '../kernel/keyed.js';
import { displayName, outcomeOf } from '../kernel/model.js';
import { jiraCheck } from '../kernel/problems.js';
import { splitBatch } from '../kernel/split.js';
import { type StatusRank, statusRanker, worseOf } from '../kernel/status-rank.js';
import { failureAt, pipelineMarker } from '../kernel/text.js';
import type { Classification, CycleInfo, RunnerInfo, RunSummary } from '../kernel/types.js';
import { runKeyOf, runStatusOf, type Target, topSteps, type WorkItem } from '../kernel/work.js';
import { AdhocRuns } from './adhoc.js';
import { type AttachmentStats, Attachments } from './attachments.js';
import { type BulkOutcome, BulkStatuses, type Sent, settleBulk } from './bulk-status.js';
import { commentFor } from './comment.js';
import type { DeliveryService } from './compose.js';
import { CycleRuns } from './cycle-runs.js';
import { Cycles } from './cycles.js';
import { type DefectNow, Failures } from './failures.js';
import { RunSteps } from './steps.js';

export type { BulkOutcome };

/** What a failure's run comment says is still to come: its verdict (Jira has not answered), or its defect (the cap's ranking). */
type Pending = 'verdict' | 'defect';

/** What delivery did in this run, for the summary: a snapshot, taken when asked. */
export interface DeliveryStats {
  /** The first cycle this run reported into. */
  cycle?: { name: string; id: number; plan: string };
  /** This run had to resume a cycle someone completed: `cycles.complete` completes it again. */
  resumedCycle: boolean;
  /** Keys the service refused as test cases. */
  badKeys: string[];
  /** Problems with the content repository (it is optional: the files went to the runs). */
  repoProblems: string[];
  /** Failures whose run has its status but not its verdict and defect (Jira failed), and why; kept in the journal. */
  undecided?: { keys: string[]; reason: string };
  /** `notFiled`: failures that got no defect because of `defects.maxPerRun`, with the reason. */
  defects: RunSummary['defects'];
  /** Defects Jira refused for their fields: one problem line per distinct refusal, with the count. */
  defectProblems: string[];
  attachments: AttachmentStats;
  /** The classification of each failing and flaky result, by work item id (option `history`). */
  classifications: ReadonlyMap<string, Classification>;
  /** What the quarantine did (option `quarantine`); absent when its set was never read. */
  quarantine?: QuarantineStats;
}

/** What a Delivery is made with (by the session). */
export interface DeliveryOptions {
  config: CasebridgeConfig;
  /** The service, decorated once (composeService): cycle reopen and optional routes are applied there. */
  svc: DeliveryService;
  repo?: ContentRepositoryClient;
  runner: RunnerInfo;
  /** Folders files may be uploaded from (real paths); empty: any. */
  roots?: readonly string[];
  /** Called when a request succeeded: the end of the run keeps waiting while delivery progresses. */
  onProgress?: () => void;
  /** This pipeline run (see pipelineId): a Passed of it never overwrites a Failed of it from another machine. */
  pipeline?: string;
  /** Work of the run besides the results' (a new defect read again later): the end of the run waits for it. */
  track?: (work: Promise<unknown>, what: string) => void;
  /** The project root's path in its repository (`web/`), for a failure's `At:` line; empty at the root. */
  repoPrefix?: string;
  /** This process is one shard of a run (`--shard=1/3`): the other shards report into its cycle too. */
  sharded?: boolean;
}

/** Failures coming in together that make a burst (Delivery.came). */
const BURST = 5;

/**
 * The pipeline's talk with the service: each case's run, status-only results in bulk, the others with their details,
 * each run's writes in order. It answers with outcomes; the pipeline alone marks an item done.
 */
export class Delivery {
  private readonly svc: DeliveryService;
  /** The cycles this run reports into (find or create, start, resume, complete). */
  readonly cycles: Cycles;
  /** Each case's run in a cycle (see CycleRuns.ensure); `markNew` for cases this run created. */
  readonly runs: CycleRuns;
  private readonly adhoc: AdhocRuns;
  private readonly steps: RunSteps;
  private readonly files: Attachments;
  /** Throws NotJiraError when the base URL does not answer as Jira (see jiraCheck). */
  readonly checkJira: () => Promise<void>;
  private readonly config: CasebridgeConfig;
  private readonly onProgress: () => void;
  private readonly pipeline?: string;
  private readonly repoPrefix: string;
  /** Keys the service refused as test cases (in a cycle or ad hoc). */
  private readonly badKeys = new Set<string>();
  /** Run ids of a dry run's cycles, where nothing is created. */
  private sequenceNo = 0;
  /** The failing and flaky results: their triage and their defects, the cap, the history, the quarantine. */
  readonly failures: Failures;
  /** Status this process wrote to each run, and the status writes of each run, one after the other (see bulk). */
  private readonly runStatus = new Map<number, string>();
  /** Runs this process sent a status to, answered or not: a status on one of them may be its own. */
  private readonly sentTo = new Set<number>();
  private readonly runOrder = serialByKey<number>();
  /** Failures whose run has its status while their verdict and defect failed, with why (the last failure). */
  private readonly undecided = new Map<WorkItem, string>();
  /** Failures whose status goes ahead of their verdict, gathering into one bulk per cycle (see statusAhead). */
  private readonly statusFirst = new Map<string, Batcher<WorkItem, boolean>>();
  /** The last failures that came in, and the statuses a burst of them sent ahead (see came). */
  private readonly recent: Array<{ at: number; item: WorkItem }> = [];
  private readonly early = new WeakMap<WorkItem, Promise<boolean>>();
  /** When each result of this run came in (see statusDue). */
  private readonly cameAt = new WeakMap<WorkItem, number>();
  /** The worse of two statuses wins on a run; a renamed or custom status ranks as the outcome mapped to it. */
  private readonly rank: StatusRank;
  /** The parts of the bulk status updates (split when the service fails one; per run where it has none). */
  private readonly statuses: BulkStatuses;
  /** In CI with a pipeline id the bulk reads the cycle's runs again (another job may have failed some) before it goes. */
  get readsRunsAtBulk(): boolean {
    return this.pipeline !== undefined && !this.svc.dryRun;
  }

  constructor(o: DeliveryOptions) {
    const { config, svc } = o;
    this.svc = svc;
    this.config = config;
    this.onProgress = o.onProgress ?? (() => undefined);
    if (o.pipeline) this.pipeline = o.pipeline;
    this.repoPrefix = o.repoPrefix ?? '';
    const signal = svc.o.signal ?? new AbortController().signal;
    this.checkJira = jiraCheck(svc.tm, config.url, signal);
    this.rank = statusRanker(config.statusMap);
    this.failures = new Failures({
      config,
      svc,
      runner: o.runner,
      pipeline: o.pipeline,
      wroteTo: (runId) => this.sentTo.has(runId),
      seen: (runId) => this.runs.now(runId)?.status,
      relink: (cycle, runId, key) => this.runOrder([runId], () => this.updateRun(cycle, runId, { bugs: [key] })),
      track: o.track ?? ((work) => void work.catch(() => undefined)),
    });
    const standInId = () => ++this.sequenceNo;
    const attributeNames = Object.keys(config.attributes ?? {});
    this.cycles = new Cycles(svc, this.checkJira, attributeNames.length > 0, !o.pipeline, o.sharded === true);
    this.runs = new CycleRuns(svc, this.cycles, this.badKeys, standInId, this.onProgress, attributeNames);
    this.adhoc = new AdhocRuns(svc, this.checkJira, this.badKeys);
    this.steps = new RunSteps(svc);
    this.files = new Attachments(config.attachments, svc, o.repo, o.roots ?? []);
    this.statuses = new BulkStatuses(
      svc,
      this.runStatus,
      (runId, status) => this.statusFor(runId, status),
      (cycle, runId, fields) => this.updateRun(cycle, runId, fields),
      this.onProgress,
    );
  }

  stats(): DeliveryStats {
    const cycle = this.cycles.first();
    const q = this.failures.quarantine?.stats();
    return {
      ...(cycle ? { cycle: { name: cycle.name, id: cycle.id, plan: cycle.plan } } : {}),
      resumedCycle: this.cycles.resumedAny(),
      badKeys: [...this.badKeys],
      repoProblems: this.files.problems(),
      ...this.failures.stats(this.config.mode === 'cycle'),
      attachments: this.files.stats(),
      ...(q ? { quarantine: q } : {}),
      ...this.undecidedStats(),
    };
  }

  /** One cycle's status-only results, a bulk per status, split to find a refused run; an outage's come back unsent. */
  async bulk(t: Target, items: WorkItem[], readAgain = this.readsRunsAtBulk): Promise<BulkOutcome> {
    const started = this.svc.clock.now();
    const byKey = new Map<string, string | undefined>();
    for (const item of items) {
      const key = runKeyOf(item);
      byKey.set(key, worseOf(this.rank, byKey.get(key), runStatusOf(item.test, this.config.statusMap)));
    }
    const runs = await this.runs.ensure(t, [...byKey.keys()]);
    const cycle = await this.cycles.ensure(t);
    // Other machines of this pipeline may have failed some of these runs since: read again so their Failed stays.
    if (readAgain) await this.runs.readSince(t, cycle, started);
    const wanted = new Map<number, string>();
    for (const [key, status] of byKey) {
      const runId = runs.get(key);
      if (runId !== undefined && status && !this.heldByPipeline(runId, status)) wanted.set(runId, status);
    }
    // In the runs' turn. `send` is bound, not an arrow: one frame fewer on the way to the socket.
    const sent: Sent = { sent: new Set(), refused: new Map(), problems: [] };
    await this.runOrder([...wanted.keys()], async () => {
      for (const [status, runIds] of this.statuses.toWrite(wanted, sent)) {
        for (const runId of runIds) this.sentTo.add(runId);
        const send = this.statuses.sendOne.bind(this.statuses, cycle, status);
        const split = await splitBatch(runIds, send, this.statuses.splitOptions);
        this.statuses.record(status, runIds, split, sent, started);
      }
    });
    return settleBulk(
      items,
      runs,
      wanted,
      sent,
      this.badKeys,
      (item) => runStatusOf(item.test, this.config.statusMap),
      (k) => this.runs.refusalOf(k),
    );
  }

  /**
   * Delivers one result from `item.progress`; a failure resolves once its run, steps and files are there, its status,
   * verdict and defect written outside the slot (`failure`). Throws when the run was not written.
   */
  async deliver(item: WorkItem, replaying: boolean): Promise<{ failure?: Promise<void> }> {
    const t = item.target;
    const p = item.progress;
    // Its facts read while the run is found or made, and before any write to it: the run's state is then the last one.
    const triaging = this.failures.triage(item);
    p.runId ??= t.mode === 'cycle' ? await this.cycleRun(item) : await this.adhoc.run(item, replaying);
    const cycle = t.mode === 'cycle' ? await this.cycles.ensure(t) : undefined;
    const runId = p.runId;
    let stepRunId: number | undefined;
    if (!p.steps) {
      stepRunId = await this.steps.write(cycle, runId, topSteps(item.test));
      p.steps = true;
    }
    const notes = await this.files.send(cycle, item, runId, replaying);
    const write = (verdict: Verdict | undefined, pending?: Pending) =>
      this.writeRun(item, { cycle, runId }, verdict, notes, pending);
    if (!triaging) {
      await write(undefined);
      return {};
    }
    // Verdict and defect run beside the status, outside the slot: the status goes by `statusDue` whatever Jira does.
    const deciding = triaging.then((triaged) =>
      this.failures.defectOf(item, triaged, {
        cycle,
        runId,
        stepRunId,
        dueAt: this.dueAt(item),
        ...(this.cameAt.has(item) ? { cameAt: this.cameAt.get(item) } : {}),
      }),
    );
    return { failure: this.finish(item, deciding, write) };
  }

  /** A failure's run update: one with everything if known by the due time, else the status first (docs/architecture.md). */
  private async finish(
    item: WorkItem,
    deciding: Promise<DefectNow>,
    write: (verdict: Verdict | undefined, pending?: Pending) => Promise<void>,
  ): Promise<void> {
    const p = item.progress;
    const due = new AbortController();
    // A burst of failures (a file's) had its statuses sent when they came (see came): no wait for the verdict.
    const early = this.early.get(item);
    let decided = early
      ? undefined
      : await Promise.race([deciding.catch(() => undefined), this.svc.clock.sleep(this.statusDue(item), due.signal)]);
    due.abort();
    if (!decided) {
      // Not answered in time: the status goes now, in a cycle in one bulk with the failures due at the same moment.
      if (!p.status && !(await (early ?? this.statusAhead(item)))) await write(undefined, 'verdict');
      p.status = true;
      try {
        decided = await deciding;
        this.undecided.delete(item);
      } catch (err) {
        this.undecided.set(item, err instanceof Error ? err.message : String(err));
        throw err;
      }
    }
    const { verdict, later } = decided;
    await write(verdict, later ? 'defect' : undefined);
    // A defect the ranking filed from this very run is linked to it already; one linked otherwise takes an update.
    if (later && (await later) && !item.progress.defectOnRun) await write(verdict);
  }

  /** A failure's status ahead of its verdict, in one bulk with those due within gatherMs; true when its run has it. */
  private statusAhead(item: WorkItem): Promise<boolean> {
    const t = item.target;
    if (t.mode !== 'cycle' || this.svc.dryRun) return Promise.resolve(false);
    const k = this.cycles.key(t);
    let batch = this.statusFirst.get(k);
    if (!batch) {
      batch = new Batcher<WorkItem, boolean>({
        clock: this.svc.clock,
        send: (items) => {
          const failedOnly = items.every((i) => outcomeOf(i.test) === 'failed');
          return this.bulk(t, [...items], !failedOnly && this.readsRunsAtBulk).then(
            (out) => items.map((i) => out.delivered.includes(i)),
            () => items.map(() => false),
          );
        },
        waitMs: this.svc.clock.timing.gatherMs,
        keepAlive: true,
      });
      this.statusFirst.set(k, batch);
    }
    return batch.load(item).answer;
  }

  /** The failures left with a status and no verdict or defect (see DeliveryStats.undecided). */
  private undecidedStats(): { undecided?: { keys: string[]; reason: string } } {
    const left = [...this.undecided].filter(([item]) => !item.progress.done);
    if (left.length === 0) return {};
    return { undecided: { keys: left.map(([item]) => item.key), reason: (left.at(-1) as [WorkItem, string])[1] } };
  }

  /** When a failure's status is due (clock time): statusWithinMs after it came in. */
  private dueAt(item: WorkItem): number {
    const { clock } = this.svc;
    return (this.cameAt.get(item) ?? clock.now()) + clock.timing.statusWithinMs;
  }

  /** How long a failure's run waits for its verdict and defect before its status goes alone (statusWithinMs). */
  private statusDue(item: WorkItem): number {
    // A failure that waited past it for its slot still gets statusGraceMs: one update, not two, when Jira answers.
    const { clock } = this.svc;
    return Math.max(clock.timing.statusGraceMs, this.dueAt(item) - clock.now());
  }

  /**
   * A result came in: its status is due statusWithinMs later. A burst of failures (a file's) gets its statuses at once
   * in one bulk: one request more, not a late status for many.
   */
  came(item: WorkItem): void {
    const { clock } = this.svc;
    const now = clock.now();
    this.cameAt.set(item, now);
    if (outcomeOf(item.test) !== 'failed' || item.target.mode !== 'cycle' || item.key === '' || this.svc.dryRun) return;
    this.recent.push({ at: now, item });
    if (this.recent.length > BURST * 20) this.recent.splice(0, this.recent.length - BURST * 20);
    const near = this.recent.filter((r) => now - r.at <= clock.timing.gatherMs);
    if (near.length < BURST) return;
    for (const r of near) if (!this.early.has(r.item)) this.early.set(r.item, this.statusAhead(r.item));
  }

  /** The run's status (never a downgrade), its comment and its defect, in the run's turn; `pending`: what follows. */
  private async writeRun(
    item: WorkItem,
    { cycle, runId }: { cycle: CycleInfo | undefined; runId: number },
    verdict: Verdict | undefined,
    notes: string[],
    pending: Pending | undefined,
  ): Promise<void> {
    const t = item.target;
    const defect = item.progress.defect;
    const bugs = defect ? [defect] : [];
    const comment = commentFor(item, [...notes, ...this.failures.notes(item, pending)], this.pipeline, {
      classification: verdict,
      signature: this.signatureOf(item),
      at: failureAt(item.test, this.repoPrefix),
    });
    const status = runStatusOf(item.test, this.config.statusMap);
    await this.runOrder([runId], async () => {
      // In a cycle, a case another test of this run already failed stays failed; an ad hoc run is this result's own.
      let result = t.mode === 'cycle' ? this.statusFor(runId, status) : status;
      if (result && t.mode === 'cycle' && this.heldByPipeline(runId, result)) result = undefined;
      if (result || comment || bugs.length > 0) {
        if (result) this.sentTo.add(runId);
        await this.updateRun(cycle, runId, {
          ...(result ? { result } : {}),
          ...(comment ? { comment } : {}),
          ...(bugs.length ? { bugs } : {}),
        });
        if (result) this.runStatus.set(runId, result);
      }
    });
    this.onProgress();
  }

  /** The case's run in the cycle (with option `attributes`: the run of its attribute set), added when missing. */
  private async cycleRun(item: WorkItem): Promise<number> {
    const t = item.target;
    const key = runKeyOf(item);
    const runId = (await this.runs.ensure(t, [key])).get(key);
    const refused = runId === undefined ? this.runs.refusalOf(key) : undefined;
    if (refused) throw refused;
    if (runId === undefined && key !== item.key && !this.badKeys.has(item.key)) {
      // An answer lost and a list that does not show the run yet: the result waits and asks again.
      throw new RunNotFoundYet(
        `${item.key} (${describeSet(attributeSet(item.attributes ?? {}))}): its run is not in the cycle's run list yet`,
      );
    }
    if (runId === undefined) {
      throw new PermanentProblem(
        `${item.key}: not a test case that can be added to test plan ${t.plan} (${displayName(item.test)})`,
      );
    }
    return runId;
  }

  /** The failure group's hash of a failed or flaky result (its signature in the run comment), else undefined. */
  private signatureOf(item: WorkItem): string | undefined {
    const outcome = outcomeOf(item.test);
    if (outcome !== 'failed' && outcome !== 'flaky') return undefined;
    return groupOf(item.test, this.config.defects.group).hash;
  }

  /** Whether another machine of this pipeline run wrote a worse status to the run (its comment names the pipeline). */
  private heldByPipeline(runId: number, status: string): boolean {
    const now = this.runs.now(runId);
    if (!this.pipeline || !now || this.runStatus.has(runId)) return false;
    return this.rank(now.status) > this.rank(status) && now.comment.includes(pipelineMarker(this.pipeline));
  }

  /** The worse of `status` and what this run wrote (undefined: unchanged): a bulk Passed never overwrites a Failed. */
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
    await this.svc.inCycle(cycle).runs.update({ runId, ...fields }, this.svc.o);
  }
}
