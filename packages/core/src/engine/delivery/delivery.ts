import type { ContentRepositoryClient } from '../../client/repo.js';
import { TEST_CASE_TYPE } from '../cases/bulk-create.js';
import type { CasebridgeConfig } from '../config/schema.js';
import { DefectCap } from '../defects/cap.js';
import type { Verdict } from '../defects/classify.js';
import { type Decided, type DefectOutcome, findOrFileDefect } from '../defects/defects.js';
import { groupOf } from '../defects/groups.js';
import { KnownFailures } from '../defects/history.js';
import { Quarantine, type QuarantineStats } from '../defects/quarantine.js';
import { DefectRefusals, type Refusal } from '../defects/refusals.js';
import { attributeSet, describeSet } from '../kernel/attributes.js';
import { PermanentProblem, RunNotFoundYet } from '../kernel/errors.js';
import { displayName, outcomeOf } from '../kernel/model.js';
import { jiraCheck } from '../kernel/problems.js';
import { splitBatch } from '../kernel/split.js';
import { type StatusRank, statusRanker, worseOf } from '../kernel/status-rank.js';
import { pipelineMarker } from '../kernel/text.js';
import type { Classification, CycleInfo, RunnerInfo, RunSummary } from '../kernel/types.js';
import { appendTo, runKeyOf, runStatusOf, type Target, topSteps, type WorkItem } from '../kernel/work.js';
import { AdhocRuns } from './adhoc.js';
import { type AttachmentStats, Attachments } from './attachments.js';
import { type BulkOutcome, BulkStatuses, type Sent, settleBulk } from './bulk-status.js';
import { commentFor } from './comment.js';
import type { DeliveryService } from './compose.js';
import { CycleRuns } from './cycle-runs.js';
import { Cycles } from './cycles.js';
import { RunSteps } from './steps.js';

export type { BulkOutcome };

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
}

/**
 * Talks to the service for the pipeline: makes sure each case has a run (in the cycle, see Cycles and CycleRuns, or
 * ad hoc, see AdhocRuns), sends status-only results in bulk and the others with their steps, files, defect and
 * comment, and keeps the status writes of each run in order. Look-ups are fetched once and cached; concurrent
 * callers share one request.
 *
 * It answers with outcomes and never marks an item done: `deliver` resolves when the result is delivered, `bulk`
 * says which items were delivered, dropped, refused or left unsent; the pipeline (pipeline.ts) owns `done`.
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
  private readonly runner: RunnerInfo;
  private readonly onProgress: () => void;
  private readonly pipeline?: string;
  /** Keys the service refused as test cases (in a cycle or ad hoc). */
  private readonly badKeys = new Set<string>();
  /** Run ids of a dry run's cycles, where nothing is created. */
  private sequenceNo = 0;
  private readonly defects = { created: new Set<string>(), linked: new Set<string>() };
  /** Defects found or filed by this run, by failure group (see findOrFileDefect). */
  private readonly knownDefects = new Map<string, DefectOutcome>();
  /** The runs (and their results) this run linked to each defect it filed: relinked when it turns out a duplicate. */
  private readonly filedLinks = new Map<string, { item: WorkItem; cycle: CycleInfo | undefined; runId: number }[]>();
  /** Defects this run filed and then closed as the duplicate of an older one, with the older one (settleDefect). */
  private readonly survivorOf = new Map<string, string>();
  private readonly track: (work: Promise<unknown>, what: string) => void;
  /** The flood guard: new defects per run, per cycle across machines (see DefectCap). */
  /** The flood guard: the engine tells it each failing test's group and when every result is in (cap.ts). */
  readonly defectCap: DefectCap;
  /** Failures that got no defect because of the cap (counted once each, even when their delivery is retried). */
  private readonly notFiled = new WeakSet<WorkItem>();
  /** Creates Jira refused for their fields, and the failures each left without a defect (see DefectRefusals). */
  private readonly refusals: DefectRefusals;
  private readonly refusedItems = new WeakMap<WorkItem, Refusal>();
  /** Status this process wrote to each run, and the status writes of each run, one after the other (see bulk). */
  private readonly runStatus = new Map<number, string>();
  private readonly runOrder = new RunOrder();
  /** The worse of two statuses wins on a run; a renamed or custom status ranks as the outcome mapped to it. */
  private readonly rank: StatusRank;
  /** The parts of the bulk status updates (split when the service fails one; per run where it has none). */
  private readonly statuses: BulkStatuses;
  /** The failing cases' execution history (option `history`; none in a dry run): known bugs and classifications. */
  private readonly history?: KnownFailures;
  /** The verdict on each failing or flaky result, decided once (a delivery tried again has written to its run). */
  private readonly verdicts = new WeakMap<WorkItem, Promise<Verdict | undefined>>();
  private readonly classified = new Map<string, Classification>();
  /** Failures whose group's defects the defect search found all closed: the newest (see DefectOutcome). */
  private readonly regressions = new WeakMap<WorkItem, string>();
  /** The quarantined cases (option `quarantine`; none in a dry run), read once per run (defects/quarantine.ts). */
  readonly quarantine?: Quarantine;

  /**
   * The bulk reads the cycle's runs again right before it goes (CI, a pipeline id: another job may have failed some
   * of them since): a read of the list before then is a request the bulk repeats.
   */
  get readsRunsAtBulk(): boolean {
    return this.pipeline !== undefined && !this.svc.dryRun;
  }

  constructor(o: DeliveryOptions) {
    const { config, svc } = o;
    this.svc = svc;
    this.config = config;
    this.runner = o.runner;
    this.onProgress = o.onProgress ?? (() => undefined);
    if (o.pipeline) this.pipeline = o.pipeline;
    this.track = o.track ?? ((work) => void work.catch(() => undefined));
    const signal = svc.o.signal ?? new AbortController().signal;
    this.checkJira = jiraCheck(svc.tm, config.url, signal);
    this.rank = statusRanker(config.statusMap);
    this.defectCap = new DefectCap(config.defects.maxPerRun, svc.tm, signal);
    this.refusals = new DefectRefusals(config.defects.fields);
    if (config.history && !svc.dryRun) this.history = new KnownFailures(svc.tm, config.statusMap, signal);
    if (config.quarantine.enabled && !svc.dryRun) {
      const { label } = config.quarantine;
      this.quarantine = new Quarantine({
        tm: svc.tm,
        projectKey: config.projectKey,
        label,
        caseType: TEST_CASE_TYPE,
        signal,
      });
    }
    const standInId = () => ++this.sequenceNo;
    const attributeNames = Object.keys(config.attributes ?? {});
    this.cycles = new Cycles(svc, this.checkJira, attributeNames.length > 0, !o.pipeline);
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
    const q = this.quarantine?.stats();
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
      classifications: new Map(this.classified),
      ...(q ? { quarantine: q } : {}),
    };
  }

  /**
   * Sends status-only results of one cycle: one bulk update per status. A bulk the service fails is split to find
   * the runs it refuses (see splitBatch): the others are delivered, the refused ones come back in `refused`, and
   * those of an outage in `unsent` (kept for later); `delivered` holds those whose run got its status (or that had
   * nothing to write), `dropped` those whose key the plan refused.
   */
  async bulk(t: Target, items: WorkItem[]): Promise<BulkOutcome> {
    const started = Date.now();
    const byKey = new Map<string, string | undefined>();
    for (const item of items) {
      const key = runKeyOf(item);
      byKey.set(key, worseOf(this.rank, byKey.get(key), runStatusOf(item.test, this.config.statusMap)));
    }
    const runs = await this.runs.ensure(t, [...byKey.keys()]);
    const cycle = await this.cycles.ensure(t);
    // In CI, other machines of this pipeline may have failed some of these runs since the list was read: read it
    // again (one request) so that their Failed stays (see heldByPipeline).
    if (this.readsRunsAtBulk) await this.runs.readSince(t, cycle, started);
    const wanted = new Map<number, string>();
    for (const [key, status] of byKey) {
      const runId = runs.get(key);
      if (runId !== undefined && status && !this.heldByPipeline(runId, status)) wanted.set(runId, status);
    }
    // In the runs' turn, after the status writes queued before on them (see statusFor): one bulk per status, split
    // when the service fails it (see splitBatch). The split's `send` is sendOne bound, not an arrow forwarding to it
    // (one frame fewer on the way to the socket, as bindGroup's methods).
    const sent: Sent = { sent: new Set(), refused: new Map(), problems: [] };
    const turn = this.runOrder.turn([...wanted.keys()]);
    try {
      await turn.ready;
      for (const [status, runIds] of this.statuses.toWrite(wanted, sent)) {
        const send = this.statuses.sendOne.bind(this.statuses, cycle, status);
        const split = await splitBatch(runIds, send, this.statuses.splitOptions);
        this.statuses.record(status, runIds, split, sent, started);
      }
    } finally {
      turn.done();
    }
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
   * Delivers one result with its steps, files, defect and comment; resumes from `item.progress`. Resolves when its run
   * has its status and comment (the pipeline then marks it done, or waits for `defectLater` first); throws when not.
   * `defectLater`: the cap's ranking decides the failure's defect once every result is in (defects/cap.ts); it
   * resolves when the run is linked to it (one run update) or the ranking left it without one. Nothing here waits
   * for other results.
   */
  async deliver(item: WorkItem, replaying: boolean): Promise<{ defectLater?: Promise<void> }> {
    const t = item.target;
    const p = item.progress;
    // Read while the run is found or made, and before any write to it: the run's state is then the last one.
    const verdicting = this.verdictOf(item);
    p.runId ??= t.mode === 'cycle' ? await this.cycleRun(item) : await this.adhoc.run(item, replaying);
    const cycle = t.mode === 'cycle' ? await this.cycles.ensure(t) : undefined;
    const runId = p.runId;
    const verdict = await verdicting;
    if (verdict) this.classified.set(item.id, verdict.classification);
    let failedStepId: number | undefined;
    if (!p.steps) {
      failedStepId = await this.steps.write(cycle, runId, topSteps(item.test));
      p.steps = true;
    }
    const notes = await this.files.send(cycle, item, runId, replaying);
    const defect = await this.defectOf(item, cycle, runId, failedStepId, verdict);
    const at = { cycle, runId };
    const write = (pendingNote: string[]) =>
      this.writeRun(item, at, this.verdictAfter(item, verdict), notes, pendingNote);
    if (defect.later === undefined) {
      await write([]);
      return {};
    }
    // Its status and comment now; the defect, if the ranking gives it one, by one more run update later.
    await write([this.defectCap.pendingNote()]);
    const later = defect.later.then(async (key) => {
      if (key) await write([]);
    });
    return { defectLater: later };
  }

  /**
   * The verdict as the run comment gives it: the case's known bugs were its group's own defects, and the defect
   * search found them all closed: a regression.
   */
  private verdictAfter(item: WorkItem, verdict: Verdict | undefined): Verdict | undefined {
    const closed = this.regressions.get(item);
    if (closed && verdict?.ownDefects && !['regression', 'flaky', 'quarantined'].includes(verdict.classification)) {
      this.classified.set(item.id, 'regression');
      return { classification: 'regression', reason: `its known bug ${closed} is closed`, regressionOf: closed };
    }
    return verdict;
  }

  /** The run's status (never a downgrade), its comment and its defect, in the run's turn; `extra` notes appended. */
  private async writeRun(
    item: WorkItem,
    { cycle, runId }: { cycle: CycleInfo | undefined; runId: number },
    verdict: Verdict | undefined,
    notes: string[],
    extra: string[],
  ): Promise<void> {
    const t = item.target;
    const defect = item.progress.defect;
    const bugs = defect ? [defect] : [];
    const refused = this.refusedItems.get(item);
    const why = refused ? [this.refusals.note(refused)] : this.notFiled.has(item) ? [this.defectCap.note()] : extra;
    const comment = commentFor(item, [...notes, ...why], this.pipeline, {
      classification: verdict,
      signature: this.signatureOf(item),
    });
    const status = runStatusOf(item.test, this.config.statusMap);
    const turn = this.runOrder.turn([runId]);
    try {
      await turn.ready;
      // In a cycle, a case another test of this run already failed stays failed; an ad hoc run is this result's own.
      let result = t.mode === 'cycle' ? this.statusFor(runId, status) : status;
      if (result && t.mode === 'cycle' && this.heldByPipeline(runId, result)) result = undefined;
      if (result || comment || bugs.length > 0) {
        await this.updateRun(cycle, runId, {
          ...(result ? { result } : {}),
          ...(comment ? { comment } : {}),
          ...(bugs.length ? { bugs } : {}),
        });
        if (result) this.runStatus.set(runId, result);
      }
    } finally {
      turn.done();
    }
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

  /**
   * The verdict on a failing or flaky result, once per item; undefined when it is neither, or neither the quarantine
   * nor the history says anything. A quarantined case's failure is `quarantined` (its known bug, when the history
   * names one, is still linked); otherwise the case's history decides (historyVerdict).
   */
  private verdictOf(item: WorkItem): Promise<Verdict | undefined> {
    const outcome = outcomeOf(item.test);
    if (!item.key || (outcome !== 'failed' && outcome !== 'flaky')) return Promise.resolve(undefined);
    let v = this.verdicts.get(item);
    if (!v) {
      v = this.judge(item, outcome);
      this.verdicts.set(item, v);
    }
    return v;
  }

  private async judge(item: WorkItem, outcome: 'failed' | 'flaky'): Promise<Verdict | undefined> {
    const q = this.quarantine;
    const [fromHistory, quarantined] = await Promise.all([
      this.historyVerdict(item, outcome),
      item.test.quarantined !== undefined
        ? item.test.quarantined
        : q
          ? q.why(item.key).catch(() => undefined)
          : undefined,
    ]);
    if (quarantined === undefined) return fromHistory;
    q?.reported(item.key);
    return {
      classification: 'quarantined',
      reason: `quarantined: ${quarantined}`,
      ...(fromHistory?.knownBug ? { knownBug: fromHistory.knownBug } : {}),
    };
  }

  /**
   * The verdict from the case's history (defects/history.ts); undefined when the history is off or could not be read.
   * A flaky result is flaky whatever its history: the history is read for it only when flaky tests get defects
   * (`defects.onFlaky`), for its known bug.
   */
  private historyVerdict(item: WorkItem, outcome: 'failed' | 'flaky'): Promise<Verdict | undefined> {
    const history = this.history;
    if (!history) return Promise.resolve(undefined);
    const d = this.config.defects;
    if (outcome === 'flaky' && !(d.enabled && d.onFlaky)) {
      return Promise.resolve({ classification: 'flaky', reason: 'passed on retry' });
    }
    const signature = groupOf(item.test, d.group).hash;
    // A run this process wrote to, or another machine of this pipeline run (its comment names the pipeline), is
    // this run's, not the history's.
    const ours = (runId: number, comment: string) =>
      this.runStatus.has(runId) || (!!this.pipeline && comment.includes(pipelineMarker(this.pipeline)));
    return history.verdict(item.key, outcome, signature, ours).catch(() => undefined);
  }

  /**
   * The defect of a failure (option `defects`): found by its fingerprint or filed, once per item; `later` when the
   * cap's ranking decides it once every result is in (it answers the defect key, or undefined).
   */
  private async defectOf(
    item: WorkItem,
    cycle: CycleInfo | undefined,
    runId: number,
    stepRunId: number | undefined,
    verdict: Verdict | undefined,
  ): Promise<{ later?: Promise<string | undefined> }> {
    const p = item.progress;
    // On the outcome, not on the status `statusMap` writes: a failure mapped to Blocked still gets its defect, a
    // skipped test mapped to Failed none (it has no error to file).
    const outcome = outcomeOf(item.test);
    // A quarantined failure is known: its known bug is linked, nothing new is filed.
    const quarantinedWithoutBug = verdict?.classification === 'quarantined' && !verdict.knownBug;
    const wanted =
      this.config.defects.enabled &&
      (outcome === 'failed' || (outcome === 'flaky' && this.config.defects.onFlaky)) &&
      !quarantinedWithoutBug &&
      !this.svc.dryRun;
    if (wanted && !p.defect) {
      // Filing from a run is a run write: refused (403) when someone completed the cycle meanwhile (the cycle's
      // client resumes it, see composeService).
      const d = await findOrFileDefect({
        tm: this.svc.inCycle(cycle),
        config: this.config,
        item,
        runId,
        stepRunId,
        known: this.knownDefects,
        knownBug: verdict?.knownBug,
        regressionOf: verdict?.regressionOf,
        ...(cycle ? { cycle } : {}),
        cap: this.defectCap,
        refusals: this.refusals,
        runner: this.runner,
        signal: this.svc.o.signal ?? new AbortController().signal,
        filed: (key, recheck) => this.track(this.settleDefect(key, recheck), 'reading a new defect again'),
      });
      if (d.regressionOf) this.regressions.set(item, d.regressionOf);
      if ('later' in d) return { later: d.later.then((decided) => this.record(item, cycle, runId, decided)) };
      this.record(item, cycle, runId, d);
      return {};
    }
    this.record(item, cycle, runId);
    return {};
  }

  /** What became of a failure's defect, on the item and in the run's counts; the key linked to its run, if any. */
  private record(item: WorkItem, cycle: CycleInfo | undefined, runId: number, d?: Decided): string | undefined {
    const p = item.progress;
    if (d?.key === undefined && d?.refusal) {
      if (!this.refusedItems.has(item)) this.refusals.noteNotFiled(d.refusal, item.key);
      this.refusedItems.set(item, d.refusal);
    } else if (d?.key === undefined && d) {
      if (!this.notFiled.has(item)) this.defectCap.noteNotFiled();
      this.notFiled.add(item);
    } else if (d) {
      p.defect = d.key;
      p.defectCreated = d.created;
    }
    const survivor = p.defect && this.survivorOf.get(p.defect);
    if (survivor) {
      p.defect = survivor;
      p.defectCreated = false;
    }
    if (p.defect) (p.defectCreated ? this.defects.created : this.defects.linked).add(p.defect);
    if (p.defect && this.defects.created.has(p.defect)) appendTo(this.filedLinks, p.defect, { item, cycle, runId });
    return p.defect;
  }

  /**
   * A defect this run filed, read again once the index caught up (recheckLater): when an older open one turned up
   * (another run filed it a moment before), this one was closed as its duplicate; the runs linked to it get the
   * survivor too, and the summary counts the survivor as linked, not this one as created.
   */
  private async settleDefect(key: string, recheck: () => Promise<string | undefined>): Promise<void> {
    const survivor = await recheck();
    if (survivor === undefined) return;
    this.survivorOf.set(key, survivor);
    this.defects.created.delete(key);
    this.defects.linked.add(survivor);
    for (const { item, cycle, runId } of this.filedLinks.get(key) ?? []) {
      item.progress.defect = survivor;
      item.progress.defectCreated = false;
      const turn = this.runOrder.turn([runId]);
      try {
        await turn.ready;
        await this.updateRun(cycle, runId, { bugs: [survivor] });
      } finally {
        turn.done();
      }
    }
    this.filedLinks.delete(key);
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
   * With the writes of a run in order (RunOrder), when several tests report one case the worse status stays (a
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
    await this.svc.inCycle(cycle).runs.update({ runId, ...fields }, this.svc.o);
  }
}

const NOTHING_BEFORE: Promise<unknown> = Promise.resolve();

/**
 * The status writes of each run, one after the other: `turn(runIds)` is ready once the writes queued before on any
 * of them have settled (whether they failed or not), and the next ones wait until `done()` (call it in a `finally`).
 * A turn taken by the writer, not a wrapper that calls it back: the writes are sent by Delivery's own methods, one
 * frame fewer on the way to the socket (bench/frames.mjs). A run that went quiet is forgotten.
 */
class RunOrder {
  private readonly last = new Map<number, Promise<void>>();

  turn(runIds: readonly number[]): { ready: Promise<unknown>; done: () => void } {
    // The turns before never reject: each is settled by its `done()`. Only the distinct ones are waited for: a bulk
    // of 10,000 runs no other write touches waits for nothing, not for 10,000 resolved promises (each promise costs
    // the async hooks of whoever enabled them: Jest's runner in band pays per promise and per test file loaded).
    const before = new Set<Promise<void>>();
    for (const id of runIds) {
      const p = this.last.get(id);
      if (p) before.add(p);
    }
    const ready = before.size === 0 ? NOTHING_BEFORE : Promise.all(before);
    let done: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    for (const id of runIds) this.last.set(id, mine);
    void mine.then(() => {
      for (const id of runIds) if (this.last.get(id) === mine) this.last.delete(id);
    });
    return { ready, done };
  }
}
