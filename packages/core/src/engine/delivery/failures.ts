import type { CasebridgeConfig } from '../config/schema.js';
import { DefectCap } from '../defects/cap.js';
import type { Verdict } from '../defects/classify.js';
import { type Decided, findOrFileDefect } from '../defects/defects.js';
import { groupOf } from '../defects/groups.js';
import { KnownFailures, resultOfStatus } from '../defects/history.js';
import { Quarantine } from '../defects/quarantine.js';
import { quarantineOptions } from '../defects/quarantine-manage.js';
import { DefectRefusals, type Refusal } from '../defects/refusals.js';
import { GroupSearch } from '../defects/search.js';
import { countsForCap, needsHistory, type Triage, triage } from '../defects/triage.js';
import { outcomeOf, type TestResult } from '../kernel/model.js';
import { pipelineMarker } from '../kernel/text.js';
import type { Classification, CycleInfo, RunnerInfo, RunSummary } from '../kernel/types.js';
import type { WorkItem } from '../kernel/work.js';
import type { DeliveryService } from './compose.js';

/** What Failures is made with (by Delivery). */
export interface FailuresOptions {
  config: CasebridgeConfig;
  svc: DeliveryService;
  runner: RunnerInfo;
  /** This pipeline run's id: a run another machine of it wrote is this run's, not the history's. */
  pipeline?: string | undefined;
  /** Whether this process sent a status to the run (its own result is not the case's history). */
  wroteTo: (runId: number) => boolean;
  /** The run's status as this process last read its cycle's run list (undefined: not read). */
  seen: (runId: number) => string | undefined;
  /** Links `key` to the run in the run's turn (a defect closed as a duplicate: its survivor). */
  relink: (cycle: CycleInfo | undefined, runId: number, key: string) => Promise<void>;
  /** Work besides the results' (a new defect read again later): the end of the run waits for it. */
  track: (work: Promise<unknown>, what: string) => void;
}

/** A failure's verdict and defect as Delivery writes them: the key now, or `later` when the cap's ranking decides. */
export interface DefectNow {
  verdict?: Verdict | undefined;
  later?: Promise<string | undefined>;
}

/**
 * A run's failing and flaky results, from the runner to their defect (docs/architecture.md), and their state: the
 * cap, the history, the quarantine, the refusals, the ledger.
 */
export class Failures {
  /** The flood guard: new defects per run, per cycle across machines (cap.ts). */
  private readonly cap: DefectCap;
  /** The quarantined cases (option `quarantine`; none in a dry run), read once per run (defects/quarantine.ts). */
  readonly quarantine?: Quarantine;
  /** The failing cases' execution history (option `history`; none in a dry run). */
  private readonly history?: KnownFailures;
  /** What a run status says of its result, under the config's statusMap. */
  private readonly resultOf: ReturnType<typeof resultOfStatus>;
  private readonly refusals: DefectRefusals;
  /** The groups' defect searches, batched (defects/search.ts). */
  private readonly searches: GroupSearch;
  private readonly refusedItems = new WeakMap<WorkItem, Refusal>();
  /** Failures that got no defect because of the cap (counted once each, even when their delivery is retried). */
  private readonly notFiled = new WeakSet<WorkItem>();
  /** The triage of each failing or flaky result, once (a delivery tried again has written to its run). */
  private readonly triaged = new WeakMap<WorkItem, Promise<Triage>>();
  private readonly classified = new Map<string, Classification>();
  /** Each failure's verdict, final before its action (a try again keeps it). */
  private readonly verdicts = new WeakMap<WorkItem, Verdict>();

  constructor(private readonly o: FailuresOptions) {
    const { config, svc } = o;
    const signal = svc.o.signal ?? new AbortController().signal;
    this.cap = new DefectCap(config.defects.maxPerRun, svc.tm, signal, svc.clock);
    this.refusals = new DefectRefusals(config.defects.fields);
    this.searches = new GroupSearch(svc.tm, signal, svc.clock);
    this.resultOf = resultOfStatus(config.statusMap);
    if (config.history && !svc.dryRun) this.history = new KnownFailures(svc.tm, config.statusMap, signal, svc.clock);
    if (config.quarantine.enabled && !svc.dryRun) {
      this.quarantine = new Quarantine({ ...quarantineOptions(config, svc.tm), signal });
    }
  }

  /** A result came in with its keys (none yet: its case is to be created): the quarantine and the cap learn of it. */
  came(result: TestResult, keys: readonly string[], counted = true): void {
    const outcome = outcomeOf(result);
    for (const key of keys) this.quarantine?.saw(key, outcome);
    if (!counted) return;
    const q = this.quarantine?.known;
    const quarantined = result.quarantined !== undefined || keys.some((k) => q?.cases.has(k));
    const d = this.o.config.defects;
    if (!countsForCap(outcome, d, quarantined)) return;
    const group = groupOf(result, d.group);
    this.cap.saw(group);
    // Its group's defects searched for now, with the other failures coming in (search.ts); not in a dry run.
    if (!this.o.svc.dryRun) this.searches.early(d.projectKey ?? this.o.config.projectKey, group.hash);
  }

  /** Every result is in: the cap ranks the groups, and the gathered defect searches wait no longer. */
  allIn(): void {
    this.cap.allIn();
    this.searches.allIn();
  }

  /** The run has ended: nothing of it is sent any more (a gathered defect search no failure took, search.ts). */
  close(): void {
    this.searches.close();
  }

  /**
   * A failing or flaky result's triage, once per item. Start it before the result's first write to its run, so the
   * history read shows the run's last state.
   */
  triage(item: WorkItem): Promise<Triage> | undefined {
    const outcome = outcomeOf(item.test);
    if (!item.key || (outcome !== 'failed' && outcome !== 'flaky')) return undefined;
    let t = this.triaged.get(item);
    if (!t) {
      t = this.facts(item, outcome).then(triage);
      this.triaged.set(item, t);
    }
    return t;
  }

  /** The facts of a failure, gathered at once: the quarantine set and the case's history, read side by side. */
  private async facts(item: WorkItem, outcome: 'failed' | 'flaky') {
    const { config, svc } = this.o;
    const settings = { ...config.defects, dryRun: svc.dryRun };
    const q = this.quarantine;
    const [history, quarantined] = await Promise.all([
      needsHistory(outcome, settings) ? this.historyOf(item, outcome) : undefined,
      item.test.quarantined ?? q?.why(item.key).catch(() => undefined),
    ]);
    if (quarantined !== undefined) q?.reported(item.key);
    return { outcome, settings, quarantined, history };
  }

  /** The verdict of the case's history (history.ts); undefined when it is off or could not be read. */
  private historyOf(item: WorkItem, outcome: 'failed' | 'flaky'): Promise<Verdict | undefined> {
    const { history } = this;
    if (!history) return Promise.resolve(undefined);
    const signature = groupOf(item.test, this.o.config.defects.group).hash;
    // A run this process or this pipeline run wrote to (an earlier try's included) is this run's, not the history's.
    const { pipeline } = this.o;
    const ours = (runId: number, comment: string) =>
      this.sentBy(item, runId) || (!!pipeline && comment.includes(pipelineMarker(pipeline)));
    return history.verdict(item.key, outcome, signature, ours).catch(() => undefined);
  }

  /** Whether this process (or an earlier try of the item, journaled) sent a status to the run. */
  private sentBy(item: WorkItem, runId: number): boolean {
    const p = item.progress;
    return (p.status === true && runId === p.runId) || this.o.wroteTo(runId);
  }

  /**
   * Whether the case's history shows another process's status on its run in the cycle: one this process did not send,
   * in a cycle it made any, in one it found one that changed since it read the cycle's run list.
   */
  private async ranElsewhere(item: WorkItem, cycle: CycleInfo): Promise<boolean> {
    if (!this.history) return false;
    const changed = (runId: number, result: string) => {
      const seen = this.o.seen(runId);
      return seen !== undefined && this.resultOf(seen) !== result;
    };
    const runs = await this.history.inCycle(item.key, cycle.id);
    return runs.some((e) => !this.sentBy(item, e.runId) && (cycle.created === true || changed(e.runId, e.result)));
  }

  /** The failure's final verdict and defect (`later`: the cap's ranking decides); once per item, kept on a retry. */
  async defectOf(
    item: WorkItem,
    t: Triage | undefined,
    at: {
      cycle: CycleInfo | undefined;
      runId: number;
      stepRunId?: number | undefined;
      dueAt?: number;
      cameAt?: number;
    },
  ): Promise<DefectNow> {
    const action = t?.action;
    if (item.progress.defect || !t || !action || action.kind === 'none') {
      this.record(item, at);
      return { verdict: this.judged(item, this.verdicts.get(item) ?? t?.verdict) };
    }
    const { cycle, runId } = at;
    const { config, svc, runner } = this.o;
    // sharedNow cannot tell that a job joined a cycle this process made, or one found started long ago: another
    // process's status on this case's run in it, in the history read for the verdict, says so.
    if (cycle && !cycle.shared && (await this.ranElsewhere(item, cycle))) cycle.shared = true;
    // Filing from a run is a run write: the cycle's client resumes a cycle completed meanwhile (composeService).
    const { verdict, defect: d } = await findOrFileDefect({
      tm: svc.inCycle(cycle),
      config,
      item,
      runId,
      stepRunId: at.stepRunId,
      triaged: t,
      ...(cycle ? { cycle } : {}),
      cap: this.cap,
      searches: this.searches,
      refusals: this.refusals,
      runner,
      signal: svc.o.signal ?? new AbortController().signal,
      clock: svc.clock,
      ...(at.dueAt !== undefined ? { dueAt: at.dueAt } : {}),
      ...(at.cameAt !== undefined ? { cameAt: at.cameAt } : {}),
      filed: (key, recheck) => this.o.track(this.settleDefect(key, recheck), 'reading a new defect again'),
    });
    this.judged(item, verdict);
    if ('later' in d) return { verdict, later: d.later.then((decided) => this.record(item, at, decided)) };
    this.record(item, at, d);
    return { verdict };
  }

  /** A failure's verdict, kept for a try again and counted for the summary. */
  private judged(item: WorkItem, verdict: Verdict | undefined): Verdict | undefined {
    if (!verdict) return undefined;
    this.verdicts.set(item, verdict);
    this.classified.set(item.id, verdict.classification);
    return verdict;
  }

  /** The run comment's lines on the failure's defect: why it has none, else what is still to come (`pending`). */
  notes(item: WorkItem, pending?: 'verdict' | 'defect'): string[] {
    const refused = this.refusedItems.get(item);
    if (refused) return [this.refusals.note(refused)];
    if (this.notFiled.has(item)) return [this.cap.note()];
    if (pending === 'verdict') return ['Classification and defect: to follow (waiting for Jira)'];
    return pending === 'defect' ? [this.cap.pendingNote()] : [];
  }

  /** For the summary (DeliveryStats). */
  stats(cycleMode: boolean): {
    defects: RunSummary['defects'];
    defectProblems: string[];
    classifications: ReadonlyMap<string, Classification>;
  } {
    const { ledger } = this.cap;
    return {
      defects: {
        created: [...ledger.created],
        linked: [...ledger.linked],
        ...this.cap.notFiled(cycleMode),
      },
      defectProblems: this.refusals.lines(),
      classifications: new Map(this.classified),
    };
  }

  /** What became of a failure's defect, on the item and in the run's counts; the key linked to its run, if any. */
  private record(
    item: WorkItem,
    { cycle, runId }: { cycle: CycleInfo | undefined; runId: number },
    d?: Decided,
  ): string | undefined {
    const p = item.progress;
    if (d?.key === undefined && d?.refusal) {
      if (!this.refusedItems.has(item)) this.refusals.noteNotFiled(d.refusal, item.key);
      this.refusedItems.set(item, d.refusal);
    } else if (d?.key === undefined && d) {
      if (!this.notFiled.has(item)) this.cap.noteNotFiled();
      this.notFiled.add(item);
    } else if (d) {
      p.defect = d.key;
      p.defectCreated = d.created;
      if (d.onRun) p.defectOnRun = true;
    }
    const { ledger } = this.cap;
    const survivor = p.defect && ledger.survivorOf.get(p.defect);
    if (survivor) {
      p.defect = survivor;
      p.defectCreated = false;
      delete p.defectOnRun;
    }
    if (p.defect) ledger.onRun(p.defect, p.defectCreated === true, { item, cycle, runId });
    return p.defect;
  }

  /** A defect this run filed turned out a duplicate (recheckLater): its runs are relinked to the survivor. */
  private async settleDefect(key: string, recheck: () => Promise<string | undefined>): Promise<void> {
    const survivor = await recheck();
    if (survivor === undefined) return;
    for (const { item, cycle, runId } of this.cap.ledger.takeRuns(key)) {
      item.progress.defect = survivor;
      item.progress.defectCreated = false;
      delete item.progress.defectOnRun;
      await this.o.relink(cycle, runId, survivor);
    }
  }
}
