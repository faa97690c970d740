import { randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
import type { CaseRegistry } from '../cases/registry.js';
import { RequirementLinks } from '../cases/requirements.js';
import type { CasebridgeConfig } from '../config/schema.js';
import type { Journaling } from '../journal/journaling.js';
import { attributeValuesOf } from '../kernel/attributes.js';
import type { Clock } from '../kernel/clock.js';
import { AttributeSetRefused } from '../kernel/errors.js';
import { displayName, type TestResult } from '../kernel/model.js';
import type { Problems } from '../kernel/problems.js';
import { answerOf } from '../kernel/split.js';
import { appendTo, needsDetails, runKeyOf, statusOnly, type Target, type WorkItem } from '../kernel/work.js';
import { attributeProblems } from './attributed-runs.js';
import { BULK_MAX, CyclePreparation } from './batching.js';
import type { Delivery } from './delivery.js';
import { type RunHealth, refusedAlone } from './health.js';
import { InFlight, progressLine, type WaitingBatch } from './in-flight.js';
import { Later } from './later.js';
import { Ledger } from './ledger.js';

/** What a pipeline is made with: the session's parts. */
export interface PipelineOptions {
  config: CasebridgeConfig;
  target: Target;
  delivery: Delivery;
  journaling: Journaling;
  /** Test cases for unmapped tests (`autoCreate`). */
  cases?: CaseRegistry;
  health: RunHealth;
  /** The run's problem records (see Problems). */
  problems: Problems;
  signal: AbortSignal;
  clock: Clock;
}

/**
 * The one owner of every result's way from `submit` to the service (as OpenTelemetry's batch processor): items, the
 * status-only batch and its timers, deliveries, tries again. The engine hands results over and `drain`s.
 */
export class DeliveryPipeline implements WaitingBatch {
  /** Every result taken in (this run's and those replayed from the journal); the delivered passing ones as a count. */
  readonly ledger = new Ledger();
  /** Tests that got no case: no key and no autoCreate, or their create was refused. */
  readonly unmapped: string[] = [];
  /** The requirements each delivered result's test names: linked to its case at the end (cases/requirements.ts). */
  readonly requirements = new RequirementLinks();
  /** The journal is being read: its results wait in the batch until all are claimed (one bulk, not many). */
  holding = false;
  private readonly inFlight: InFlight;
  private readonly later: Later;
  private readonly prep: CyclePreparation;
  /** Deliveries under way, at most `concurrency`: its own queue, as sharing the transport's would deadlock. */
  private readonly deliveries: PQueue;
  private buffer: WorkItem[] = [];
  /** The timed bulk's and the soon bulk's timers (their cancels). */
  private timer?: () => void;
  private wait: number;
  private soonTimer?: () => void;
  /** Every planned test reported (`add` of the last), or the run ended (drain): what waits goes soon. */
  private allIn = false;
  /** Item ids are this token and a sequence number: unique across runs, cheap to keep. */
  private readonly runToken = randomUUID();
  private seq = 0;
  /** Attribute sets the service refused, named once each in the summary (see AttributeSetRefused). */
  private readonly namedSets = new Set<string>();

  constructor(private readonly o: PipelineOptions) {
    const { health, signal, target, delivery } = o;
    this.inFlight = new InFlight((err, what) => health.classify(err, what), o.clock);
    this.deliveries = new PQueue({ concurrency: o.config.concurrency });
    this.wait = o.config.bulkWaitMs;
    this.later = new Later({
      health,
      signal,
      track: (p) => this.inFlight.track(p),
      again: (items) => {
        for (const item of items) if (!item.progress.done) this.submit(item);
      },
    });
    this.prep = new CyclePreparation({
      target,
      runs: delivery.runs,
      health,
      clock: o.clock,
      track: (done) => this.inFlight.track(done, 'adding cases to the cycle'),
    });
    for (const line of attributeProblems(o.config, target)) o.problems.add('config', line);
  }

  /** Results waiting for a bulk update. */
  get size(): number {
    return this.buffer.length;
  }

  /** A bulk is about to go (see soonMs, kernel/timing.ts). */
  get due(): boolean {
    return this.soonTimer !== undefined;
  }

  /** A request succeeded: the end of the run keeps waiting while this happens. */
  progress(): void {
    this.inFlight.progress();
  }

  /** Work of the run besides the results' (preparing the cycle, checking the project): the end waits for it. */
  track(work: Promise<unknown>, what?: string): void {
    this.inFlight.track(work, what);
  }

  /** The planned tests' keys (no run attributes: Engine.begin): their runs in the cycle are prepared at once. */
  prepare(keys: ReadonlySet<string>): void {
    const { delivery, target } = this.o;
    // A preloaded cycle's runs are read by the bulk in CI anyway (readsRunsAtBulk): only the cycle is made now.
    const ready =
      target.preloadRuns && delivery.readsRunsAtBulk
        ? delivery.cycles.ensure(target)
        : delivery.runs.ensure(target, [...keys]);
    this.prep.seed(keys, ready);
    this.inFlight.track(ready, 'preparing the cycle');
  }

  /** A result for one key (empty: its case is still to be found or created), kept until delivered and logged. */
  take(test: TestResult, key: string): WorkItem {
    // `run-n`, not a UUID per result: a UUID string is a tree of pieces (about 500 bytes kept per result).
    this.seq += 1;
    const item: WorkItem = { id: `${this.runToken}-${this.seq}`, key, test, target: this.o.target, progress: {} };
    const templates = this.o.config.attributes;
    if (templates && this.o.target.mode === 'cycle') item.attributes = attributeValuesOf(test, templates);
    this.ledger.add(item);
    this.o.journaling.taken(item);
    this.o.delivery.came(item);
    return item;
  }

  /** Logs a result and sets it on its way, one item per key (none: a case to create); `last` sends what waits soon. */
  add(result: TestResult, keys: readonly string[], last = false): void {
    if (last) this.allIn = true;
    const { cases, delivery } = this.o;
    // Logged at once without a key: a run killed before its case exists still has the result on disk.
    if (keys.length === 0 && cases) this.submit(this.take(result, ''));
    else if (keys.length === 0) this.unmapped.push(displayName(result));
    for (const key of keys) this.submit(this.take(result, key));
    if (cases) this.inFlight.track(cases.keyed(result, keys)); // its own key: the case made at begin is not its case
    delivery.failures.came(result, keys, keys.length > 0 || cases !== undefined);
    if (last) {
      delivery.failures.allIn();
      this.flush();
    }
  }

  /** A result on its way: its case is created first when it has no key (autoCreate), then it is delivered. */
  submit(item: WorkItem): void {
    if (item.key !== '') this.schedule(item);
    else if (this.o.cases) this.inFlight.track(this.createCase(this.o.cases, item));
  }

  /** Results an earlier run left in the journal: claimed, then sent like this run's (see replayJournal). */
  replay(): void {
    this.inFlight.track(this.replayJournal());
  }

  /** Sends the batch now, one bulk per cycle; kept while the service is down, or it would miss every later bulk. */
  flush(): void {
    this.timer?.();
    this.timer = undefined;
    this.soonTimer?.();
    this.soonTimer = undefined;
    if (this.buffer.length === 0) return;
    if (this.o.health.down !== undefined) {
      this.later.onUp(() => this.arm());
      return;
    }
    const byCycle = new Map<string, WorkItem[]>();
    for (const item of this.buffer) appendTo(byCycle, this.o.delivery.cycles.key(item.target), item);
    this.buffer = [];
    for (const items of byCycle.values()) this.inFlight.track(this.deliveries.add(() => this.sendBulk(items)));
  }

  /** The run ended: the batches go now, and the end waits while delivery progresses. False: gave up (abort, `settle`). */
  drain(out: (text: string) => void): Promise<boolean> {
    const { config: c, health, cases } = this.o;
    this.allIn = true;
    this.o.delivery.failures.allIn(); // every result is in: the cap ranks; a gathered defect search waits no longer
    this.prep.flush();
    this.flush();
    return this.inFlight.drain({
      flushTimeoutMs: c.flushTimeoutMs,
      flushMaxMs: c.flushMaxMs,
      batch: this,
      creating: () => cases?.busy === true,
      stopped: () => health.gaveUp(c.flushTimeoutMs),
      paused: () => health.down !== undefined,
      out,
      progressLine: () => progressLine(this.ledger, cases?.created.length ?? 0),
    });
  }

  /** Waits for the work under way, at most `ms` (after an abort: the requests end soon). */
  settle(ms: number): Promise<void> {
    return this.inFlight.settle(ms);
  }

  private schedule(item: WorkItem): void {
    this.requirements.saw(item.key, item.test);
    if (this.o.health.down) {
      this.later.park([item]);
      return;
    }
    // Tried before (journaled, or again in this run): its run or files may exist already.
    const replayed = this.o.journaling.has(item) || this.later.triesOf(item) > 0;
    const cycleRun = item.target.mode === 'cycle' && item.progress.runId === undefined;
    if (cycleRun && !needsDetails(item, this.o.config)) {
      // Only its status is kept in memory until the bulk (the write-ahead log has the whole result).
      item.test = statusOnly(item.test);
      this.buffer.push(item);
      // While tests still run, its case joins the cycle in the next batch; after that the bulk adds what is left.
      if (!replayed && !this.allIn) this.prep.prepare(runKeyOf(item));
      if (this.buffer.length >= BULK_MAX) this.flush();
      else if (!this.holding) this.arm();
      return;
    }
    // A failure's facts (its case's history, the quarantine set) are read from now, beside its way to a delivery slot.
    this.o.delivery.failures.triage(item);
    // It waits for the batch adding its case to the cycle: results arriving together share its two requests.
    const ready = cycleRun && !replayed ? this.prep.prepare(runKeyOf(item), true) : Promise.resolve();
    this.inFlight.track(
      ready.catch(() => undefined).then(() => this.deliveries.add(() => this.deliverOne(item, replayed))),
    );
  }

  /** Results wait in the batch: soon when the run is winding down, otherwise at the latest after `wait`. */
  private arm(): void {
    if (this.buffer.length === 0) return;
    if (this.allIn) this.soon();
    else if (!this.timer) {
      this.timer = this.o.clock.after(this.wait, () => {
        this.wait = Math.min(this.wait * 2, this.o.clock.timing.bulkWaitMaxMs);
        this.flush();
      });
    }
  }

  /** A bulk soon, so results arriving together go together; while cases are created, one per soonWhileCreatingMs. */
  private soon(): void {
    if (this.soonTimer) return;
    const { soonWhileCreatingMs, soonMs } = this.o.clock.timing;
    const wait = this.o.cases?.busy === true ? soonWhileCreatingMs : soonMs;
    this.soonTimer = this.o.clock.after(
      wait,
      () => {
        this.soonTimer = undefined;
        this.flush();
      },
      true,
    );
  }

  /** The status-only results of one cycle, in one bulk; what became of each comes back from Delivery.bulk. */
  private async sendBulk(items: WorkItem[]): Promise<void> {
    try {
      if (this.o.health.down) return this.later.park(items);
      const out = await this.o.delivery.bulk((items[0] as WorkItem).target, items);
      for (const item of out.delivered) item.progress.done = true;
      for (const item of out.dropped) this.markDropped(item);
      for (const item of items) {
        // One at a time for journal entries (their removals), none at all for this run's results.
        const removing = item.progress.done ? this.settled(item) : undefined;
        if (removing) await removing;
      }
      for (const line of out.problems) this.o.problems.add('delivery', line);
      for (const r of out.refused) {
        if (r.line) this.refuseSet(r.item, r.answer, r.line);
        else this.refuse(r.item, r.answer);
      }
      this.later.retry(out.unsent);
    } catch (err) {
      if (this.o.health.classify(err, `sending ${items.length} result(s) in bulk`) === 'permanent') {
        for (const item of items) await this.drop(item);
      } else this.later.retry(items);
    }
  }

  /**
   * One result with its details, under the limit. A failure gives its slot back once its run, steps and files are
   * there, so no slot waits on Jira for its verdict and defect.
   */
  private async deliverOne(item: WorkItem, replaying: boolean): Promise<void> {
    if (item.progress.done) return;
    if (this.o.health.down) return this.later.park([item]);
    try {
      const { failure } = await this.o.delivery.deliver(item, replaying);
      if (failure) {
        this.inFlight.track(this.afterFailure(item, failure), "writing failures' verdicts and defects");
        return;
      }
      item.progress.done = true;
    } catch (err) {
      this.notDelivered(item, err);
    }
    if (item.progress.done) await this.settled(item);
  }

  /** A failure, once its status, verdict and defect are written (see deliverOne). */
  private async afterFailure(item: WorkItem, failure: Promise<void>): Promise<void> {
    try {
      await failure;
      item.progress.done = true;
    } catch (err) {
      this.notDelivered(item, err);
    }
    if (item.progress.done) await this.settled(item);
  }

  /** A delivery failed: dropped when nothing can take it, else tried again (and refused when it alone fails). */
  private notDelivered(item: WorkItem, err: unknown): void {
    if (err instanceof AttributeSetRefused) this.refuseSet(item, err.answer, err.line);
    else if (this.o.health.classify(err, `${item.key} (${displayName(item.test)})`) === 'permanent') {
      this.markDropped(item);
    } else if (this.later.retry([item]).length > 0 && refusedAlone(err, this.o.health)) {
      // Its tries are spent, the service answered 500 each time while it answered others: a refusal.
      this.refuse(item, answerOf(err));
    }
  }

  /** Finds or creates an unmapped test's case, then reports to it; while the service is down it goes to the journal. */
  private async createCase(cases: CaseRegistry, item: WorkItem): Promise<void> {
    if (this.o.health.down) return this.later.park([item]);
    try {
      const key = await cases.keyOf(item.test);
      if (cases.isNew(key)) this.o.delivery.runs.markNew([key]);
      item.key = key;
      // A result of this run: the quarantine learns its outcome by key now, as `add` tells it for keyed tests.
      if (item.id.startsWith(`${this.runToken}-`)) this.o.delivery.failures.came(item.test, [key], false);
      this.schedule(item);
    } catch (err) {
      if (this.o.health.classify(err, `creating a test case for ${displayName(item.test)}`) === 'permanent') {
        this.unmapped.push(displayName(item.test));
        await this.drop(item);
      } else this.later.retry([item]);
    }
  }

  /** Journaled results join the batch, all claimed before it goes: a slow disk does not cut it into many bulks. */
  private async replayJournal(): Promise<void> {
    const { journaling, health, cases } = this.o;
    const listed = await journaling.list();
    if (!listed) return;
    this.holding = true;
    try {
      await journaling.claim(
        listed,
        (item) => {
          this.ledger.add(item);
          // Journaled before `attributes` was set: an advanced cycle has no run without attributes.
          const templates = this.o.config.attributes;
          if (templates && item.target.mode === 'cycle' && !item.attributes) {
            item.attributes = attributeValuesOf(item.test, templates);
          }
          if (item.key !== '' || cases) {
            if (!item.progress.done) this.submit(item);
          } else {
            // Its case was to be created, but autoCreate is off now: nothing can take it.
            this.unmapped.push(displayName(item.test));
            this.inFlight.track(this.drop(item));
          }
        },
        () => health.down !== undefined,
      );
    } finally {
      this.holding = false;
    }
    this.arm();
  }

  /** Refused on its own, repeatedly, while others went: journaled with the mark, named once per answer. */
  private refuse(item: WorkItem, answer: string): void {
    this.markRefused(item, answer);
    this.o.problems.refused(item.key, displayName(item.test), answer);
  }

  /** Its run attribute set was refused: journaled with the mark, the set named once in the summary. */
  private refuseSet(item: WorkItem, answer: string, line: string): void {
    this.markRefused(item, answer);
    if (this.namedSets.has(line)) return;
    this.namedSets.add(line);
    this.o.problems.add('delivery', line);
  }

  /** The refusal's mark, kept in its journal entry: what was answered, when, how many times. */
  private markRefused(item: WorkItem, answer: string): void {
    const at = new Date(this.o.clock.now()).toISOString();
    item.refused = { answer, at, times: (item.refused?.times ?? 0) + 1 };
  }

  /** A permanent problem stopped it (a bad key, a missing plan): named in the summary, never journaled. */
  private markDropped(item: WorkItem): void {
    item.progress.done = true;
    item.progress.dropped = true;
  }

  /** A result nothing can take: dropped, and its write-ahead-log line settled. */
  private async drop(item: WorkItem): Promise<void> {
    this.markDropped(item);
    await this.settled(item);
  }

  /** Delivered or dropped: its log line or journal entry settled, the ledger told; a promise only for a removal. */
  private settled(item: WorkItem): Promise<void> | undefined {
    const removing = this.o.journaling.settled(item);
    if (removing === undefined) {
      this.ledger.settled(item);
      return undefined;
    }
    return removing.then(() => this.ledger.settled(item));
  }
}
