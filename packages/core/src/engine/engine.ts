import { randomUUID } from 'node:crypto';
import { NotFoundError } from '../client/errors.js';
import { redact } from '../client/secrets.js';
import { resolveKeys } from './cases/mapping.js';
import type { CaseRegistry } from './cases/registry.js';
import { type CasebridgeConfig, describeSearched, loadConfig } from './config/schema.js';
import { Bulk, CyclePreparation, deliveryLimit } from './delivery/batching.js';
import { RunHealth, refusedAlone } from './delivery/health.js';
import { Pending } from './drain.js';
import { displayName, outcomeOf, type TestResult } from './kernel/model.js';
import { answerOf } from './kernel/split.js';
import type { EndResult, EngineContext, PlannedTest, RunSummary } from './kernel/types.js';
import { appendTo, needsDetails, statusOnly, type WorkItem } from './kernel/work.js';
import { Later, RefusedResults } from './later.js';
import { assembleSummary, failReason, invalidConfigLine, printSummary, progressLine } from './report/run-summary.js';
import { openSession, type Session, saveMapping } from './session.js';

/**
 * The reporting engine: what every adapter hands its results to. `add` only enqueues, so a runner's per-test hook
 * never waits on the network; results are delivered while the suite runs; `end` drains what is left within
 * `flushTimeoutMs` of no progress and writes anything undelivered to the journal. No method throws and `end` never rejects: a
 * problem becomes a line of the summary, and the test run's exit code is only touched when `failOnError` asks.
 *
 * What a run works with (clients, delivery, journal, case registry, target) is its `Session`, made when reporting is
 * on; status-only results wait in the `Bulk`, cycle runs are prepared by `CyclePreparation` (batching.ts), the
 * journal is `Journaling`'s, the summary `assembleSummary`'s. The engine keeps the run's results and their order.
 */
export class Engine {
  /** False when the config is invalid or `enabled: false`: every method is then a no-op. */
  readonly enabled: boolean;
  private readonly out: (text: string) => void;
  private readonly config?: CasebridgeConfig;
  /** Made by `create` when reporting is on; none when it is off. */
  private session?: Session;
  private readonly abort = new AbortController();
  private readonly health: RunHealth;
  private readonly items: WorkItem[] = [];
  /** The work under way, and when a request last succeeded. */
  private readonly pending = new Pending((err, what) => this.health.classify(err, what));
  private readonly bulk: Bulk;
  private readonly prep: CyclePreparation;
  /** Results waiting for another try within the run (after a failure, or while the service is down). */
  private readonly later: Later;
  private readonly refused = new RefusedResults();
  /** Deliveries under way at once (see deliveryLimit: not the transport's request limit). */
  private readonly limited: <T>(fn: () => Promise<T>) => Promise<T>;
  private ended = false;
  /** The configuration is invalid and asked for `failOnError`. */
  private failInvalid = false;
  /** The options the runner gave (recorded beside journaled results for `casebridge replay`). */
  private inline: Record<string, unknown> = {};
  private readonly unmapped: string[] = [];
  private readonly byStatus: Record<string, number> = {};
  private results = 0;
  /** Tests named by `begin` (0: unknown). */
  private planned = 0;
  /** Item ids are this token and a sequence number: unique across runs, cheap to keep. */
  private readonly runToken = randomUUID();
  private itemSeq = 0;

  private constructor(
    private readonly ctx: EngineContext,
    config: CasebridgeConfig | undefined,
    problems: string[],
  ) {
    this.out = ctx.out ?? ((text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`));
    this.config = config;
    this.health = new RunHealth(this.abort.signal, this.out);
    this.health.problems.push(...problems);
    this.enabled = config?.enabled === true;
    this.limited = deliveryLimit(config?.concurrency ?? 4);
    this.later = new Later({
      health: this.health,
      signal: this.abort.signal,
      track: (p) => this.pending.track(p),
      again: (items) => this.again(items),
    });
    this.bulk = new Bulk({
      windingDown: () => this.ended || this.allPlannedIn(),
      creating: () => this.session?.cases?.busy === true,
      stopped: () => this.health.down !== undefined,
      // Held while the service is down: armed again when it answers.
      held: () => this.later.onUp(() => this.bulk.arm()),
      send: (items) => this.sendBulk(items),
    });
    this.prep = new CyclePreparation({
      active: () => this.session?.target.mode === 'cycle' && !this.health.down,
      ended: () => this.ended,
      run: (keys, load) => {
        const s = this.session;
        return this.health.down || !s ? undefined : s.delivery.ensureRuns(s.target, keys, load);
      },
      track: (done) => this.pending.track(done, 'adding cases to the cycle'),
    });
  }

  /** Whether to report in watch mode (`watch`, from options, `CASEBRIDGE_WATCH` or the config file). */
  get watch(): boolean {
    return this.config?.watch === true;
  }

  /** Reads and checks the configuration. Never throws: an invalid config prints its problems and disables the engine. */
  static create(options: unknown, ctx: EngineContext): Engine {
    try {
      const inline = options && typeof options === 'object' ? (options as Record<string, unknown>) : {};
      const loaded = loadConfig(inline, {
        env: ctx.env ?? process.env,
        cwd: ctx.cwd,
        ...(ctx.optionsSource ? { inlineSource: ctx.optionsSource } : {}),
        ...(ctx.baseOptions ? { base: ctx.baseOptions } : {}),
      });
      if (!loaded.ok) {
        const engine = new Engine(ctx, undefined, loaded.problems);
        engine.failInvalid = loaded.failOnError;
        engine.out(
          invalidConfigLine(ctx, loaded.failOnError, loaded.problems, describeSearched(ctx.cwd, loaded.searched)),
        );
        return engine;
      }
      const engine = new Engine(ctx, loaded.config, []);
      engine.inline = inline;
      if (engine.enabled) {
        engine.session = openSession(loaded.config, ctx, {
          out: engine.out,
          signal: engine.abort.signal,
          progress: () => engine.pending.progress(),
          problems: engine.health.problems,
          health: engine.health,
        });
      }
      return engine;
    } catch (err) {
      const engine = new Engine(ctx, undefined, [String(err)]);
      engine.out(`casebridge: reporting is off for this run: ${redact(String(err))}`);
      return engine;
    }
  }

  /**
   * The run starts. With the planned tests, the cycle and its runs are prepared at once (a few requests for the
   * whole suite). Results left in the journal by an earlier run are delivered first. Never blocks, never throws.
   */
  begin(plan: { tests?: readonly PlannedTest[] } = {}): void {
    const s = this.session;
    if (!s) return;
    const { target, delivery } = s;
    this.planned = plan.tests?.length ?? 0;
    let unmappedPlanned = false;
    if (target.mode === 'cycle') {
      const keys = new Set<string>();
      for (const t of plan.tests ?? []) {
        const own = resolveKeys({ ...t, attempts: [] }, s.keyRe, s.mapping);
        if (own.length === 0) unmappedPlanned = true;
        for (const k of own) keys.add(k);
      }
      if (keys.size > 0) {
        const ready = delivery.ensureRuns(target, [...keys]);
        this.prep.seed(keys, ready);
        this.pending.track(ready, 'preparing the cycle');
      } else if (plan.tests) {
        // A test run whose runner names no tests up front (Jest, Vitest): find or create and start the cycle now,
        // while the tests run, not when the first results are already waiting. A replay (`begin()` with no plan)
        // does not: it must not leave an empty cycle of today's default name behind.
        this.pending.track(delivery.ensureCycle(target), 'preparing the cycle');
      }
    } else if (!s.dry) {
      // An early check of the project (a dry run has no answer to check).
      this.pending.track(
        s.tm.jira.project({ projectIdOrKey: target.projectKey }, { signal: this.abort.signal }).catch(async (err) => {
          if (err instanceof NotFoundError) await delivery.checkJira();
          throw err;
        }),
        `checking project ${target.projectKey}`,
      );
    }
    // Planned tests without a key: read the project's casebridge cases now, while the first tests run.
    if (unmappedPlanned) s.cases?.warmUp();
    // A dry run reads and writes nothing on disk: no replay.
    if (!s.dry) this.pending.track(this.replayJournal(s));
  }

  /** A test is finished (all its attempts): map it and queue its delivery. Never blocks, never throws. */
  add(result: TestResult): void {
    const s = this.session;
    if (!s || this.ended) return;
    try {
      this.results += 1;
      const outcome = outcomeOf(result);
      this.byStatus[outcome] = (this.byStatus[outcome] ?? 0) + 1;
      const keys = resolveKeys(result, s.keyRe, s.mapping);
      if (keys.length === 0) {
        // Taken in (and logged) at once, without a key yet: a run killed or cut off before its case exists still
        // has the result on disk, and the next run creates the case and delivers it.
        if (s.cases) this.pending.track(this.autoCreate(s, s.cases, this.take(s, result, '')));
        else this.unmapped.push(displayName(result));
        this.lastPlanned();
        return;
      }
      for (const key of keys) this.schedule(s, this.take(s, result, key));
      this.lastPlanned();
    } catch (err) {
      this.health.problems.push(`internal error while adding a result: ${redact(String(err))}`);
    }
  }

  /** A result for one key (empty: its case is still to be found or created), kept until delivered and logged. */
  private take(s: Session, result: TestResult, key: string): WorkItem {
    // `run-n`, not a UUID per result: a UUID string is a tree of pieces (about 500 bytes kept per result).
    this.itemSeq += 1;
    const id = `${this.runToken}-${this.itemSeq}`;
    const item: WorkItem = { id, key, test: result, target: s.target, progress: {} };
    this.items.push(item);
    s.journaling.taken(item);
    return item;
  }

  /**
   * Finds or creates the test case of an unmapped test, then reports the result to it. When the service is down,
   * the result stays without a key and goes to the journal with the others.
   */
  private async autoCreate(s: Session, cases: CaseRegistry, item: WorkItem): Promise<void> {
    if (this.health.down) return this.later.park([item]);
    try {
      const key = await cases.keyOf(item.test);
      if (cases.isNew(key)) s.delivery.markNew([key]);
      item.key = key;
      this.schedule(s, item);
    } catch (err) {
      if (this.health.classify(err, `creating a test case for ${displayName(item.test)}`) === 'permanent') {
        this.unmapped.push(displayName(item.test));
        await this.drop(s, item);
      } else this.later.retry([item]);
    }
  }

  /** Items whose turn came again (see Later): a new test's case first, then its delivery like any other. */
  private again(items: WorkItem[]): void {
    const s = this.session;
    if (!s) return;
    for (const item of items) {
      if (item.progress.done) continue;
      if (item.key === '' && s.cases) this.pending.track(this.autoCreate(s, s.cases, item));
      else if (item.key !== '') this.schedule(s, item);
    }
  }

  /** A result nothing can take (a permanent problem): dropped, named in the summary, never journaled. */
  private async drop(s: Session, item: WorkItem): Promise<void> {
    item.progress.done = true;
    item.progress.dropped = true;
    await s.journaling.settled(item);
  }

  private schedule(s: Session, item: WorkItem): void {
    if (this.health.down) {
      this.later.park([item]);
      return;
    }
    // Tried before (journaled, or again in this run): its run or files may exist already.
    const replayed = s.journaling.has(item) || this.later.triesOf(item) > 0;
    if (item.target.mode === 'cycle' && item.progress.runId === undefined && !needsDetails(item, s.config)) {
      // Only its status goes (the write-ahead log has the whole result): what the run printed and files that are
      // not uploaded are not kept in memory until the bulk, which waits for the last test.
      item.test = statusOnly(item.test);
      this.bulk.push(item);
      // While tests still run, its case joins the cycle in the next batch; after that the bulk adds what is left.
      if (!replayed && !this.ended && !this.allPlannedIn()) this.prep.prepare(item.key);
      this.bulk.schedule();
      return;
    }
    // A result with details in a cycle waits for the batch that adds its case to the cycle and reads the run ids:
    // results arriving together share its two requests instead of paying them each.
    const ready =
      item.target.mode === 'cycle' && item.progress.runId === undefined && !replayed
        ? this.prep.prepare(item.key, true)
        : Promise.resolve();
    this.pending.track(ready.catch(() => undefined).then(() => this.limited(() => this.deliverOne(s, item, replayed))));
  }

  /** Sends the status-only results that waited: one bulk per cycle. */
  private sendBulk(batch: WorkItem[]): void {
    const s = this.session;
    if (!s) return;
    const byCycle = new Map<string, WorkItem[]>();
    for (const item of batch) appendTo(byCycle, s.delivery.cycleKey(item.target), item);
    for (const items of byCycle.values()) {
      this.pending.track(
        this.limited(async () => {
          if (this.health.down) return this.later.park(items);
          try {
            const out = await s.delivery.bulk((items[0] as WorkItem).target, items);
            for (const item of items) if (item.progress.done) await s.journaling.settled(item);
            this.health.problems.push(...out.problems);
            for (const r of out.refused) this.refused.mark(r.item, r.answer);
            this.later.retry(out.unsent);
          } catch (err) {
            if (this.health.classify(err, `sending ${items.length} result(s) in bulk`) === 'permanent') {
              for (const item of items) await this.drop(s, item);
            } else this.later.retry(items);
          }
        }),
      );
    }
  }

  /** Whether every planned test has reported (false when the runner named none up front). */
  private allPlannedIn(): boolean {
    return this.planned > 0 && this.results >= this.planned;
  }

  /** After each result: when the last planned test has reported, the bulk goes now, while the runner winds down. */
  private lastPlanned(): void {
    if (this.allPlannedIn() && this.bulk.size > 0) this.bulk.flush();
  }

  private async deliverOne(s: Session, item: WorkItem, replaying: boolean): Promise<void> {
    if (item.progress.done) return;
    if (this.health.down) return this.later.park([item]);
    try {
      await s.delivery.deliver(item, replaying);
    } catch (err) {
      if (this.health.classify(err, `${item.key} (${displayName(item.test)})`) === 'permanent') {
        item.progress.done = true;
        item.progress.dropped = true;
      } else if (this.later.retry([item]).length > 0 && refusedAlone(err, this.health)) {
        // Its tries are spent, the service answered 500 each time while it answered others: a refusal.
        this.refused.mark(item, answerOf(err));
      }
    }
    if (item.progress.done) await s.journaling.settled(item);
  }

  /**
   * Status-only results of a cycle join the bulk like this run's own: 1,000 of them cost a few requests. They are all
   * claimed before the bulk goes, so that a slow disk does not cut them into many small bulks.
   */
  private async replayJournal(s: Session): Promise<void> {
    const listed = await s.journaling.list();
    if (!listed) return;
    this.bulk.holding = true;
    try {
      await s.journaling.claim(
        listed,
        (item) => this.replay(s, item),
        () => this.health.down !== undefined,
      );
    } finally {
      this.bulk.holding = false;
    }
    this.bulk.arm();
  }

  /** A result of an earlier run, claimed from the journal. */
  private replay(s: Session, item: WorkItem): void {
    this.items.push(item);
    if (item.key !== '' || s.cases) this.again([item]);
    else {
      // Its case was to be created, but autoCreate is off now: nothing can take it.
      this.unmapped.push(displayName(item.test));
      this.pending.track(this.drop(s, item));
    }
  }

  /**
   * The run ended: sends what is left, waits while delivery progresses, writes the rest to the journal, completes the
   * cycle when asked, prints the summary. Never rejects.
   */
  async end(): Promise<EndResult> {
    const s = this.session;
    if (!s) {
      if (this.failInvalid) {
        const reason =
          'casebridge: the configuration has problems (listed at the start), and failOnError fails the run';
        return { failed: true, reason, summary: this.summary() };
      }
      return { failed: false, summary: this.summary() };
    }
    this.ended = true;
    const c = s.config;
    const problems = this.health.problems;
    try {
      this.prep.flush();
      this.bulk.flush();
      const settled = await this.pending.drain({
        config: c,
        bulk: this.bulk,
        cases: s.cases,
        stopped: () => this.health.gaveUp(c.flushTimeoutMs),
        paused: () => this.health.down !== undefined,
        out: this.out,
        progressLine: () => progressLine(this.items, s.cases?.created.length ?? 0),
      });
      if (!settled) {
        this.abort.abort();
        await this.pending.settle(2_000);
      }
      saveMapping(s, this.ctx.cwd, problems);
      const undelivered = this.items.filter((i) => !i.progress.done);
      const allDelivered = undelivered.length === 0 && !this.health.down;
      if (allDelivered || s.delivery.stats().resumedCycle) {
        try {
          if (!this.abort.signal.aborted) await s.delivery.completeCycles(c.completeCycle && allDelivered);
        } catch (err) {
          problems.push(`completing the cycle: ${redact(String(err))}`);
        }
      }
      const journaled = s.dry ? 0 : await s.journaling.write(undelivered, this.inline, this.ctx.runner.name);
      if (journaled === undelivered.length) await s.journaling.discardWal();
      const summary = this.summary(journaled);
      printSummary(summary, {
        out: this.out,
        env: this.ctx.env ?? process.env,
        cwd: this.ctx.cwd,
        annotations: c.annotations,
        ...(typeof c.dryRun === 'string' ? { dryRunFile: c.dryRun } : {}),
      });
      const failed = c.failOnError && (journaled > 0 || problems.length > 0);
      return failed ? { failed, reason: failReason(journaled, summary), summary } : { failed, summary };
    } catch (err) {
      this.out(`casebridge: internal error at the end of the run: ${redact(String(err))}`);
      const reason = 'casebridge: an internal error at the end of the run (above), and failOnError fails the run';
      return { failed: c.failOnError, ...(c.failOnError ? { reason } : {}), summary: this.summary() };
    } finally {
      await Promise.allSettled([s.tm.close(), s.repo?.close()]);
    }
  }

  private summary(journaled = 0): RunSummary {
    const s = this.session;
    return assembleSummary({
      enabled: this.enabled,
      ...(this.config ? { mode: this.config.mode, mappingFile: this.config.mappingFile, url: this.config.url } : {}),
      ...(this.ctx.shard ? { shard: this.ctx.shard } : {}),
      problems: [...this.health.problems, ...this.refused.lines()],
      ...(s ? { delivery: s.delivery.stats(), journalDir: s.journaling.journal.dir } : {}),
      ...(s?.target.plan ? { plan: s.target.plan } : {}),
      byStatus: this.byStatus,
      results: this.results,
      items: this.items,
      unmapped: this.unmapped,
      ...(s?.cases ? { cases: s.cases } : {}),
      journaled,
      ...(s?.dry ? { calls: s.dry.calls } : {}),
      replayed: s?.journaling.replayed ?? 0,
      ...(this.health.down ? { down: this.health.down } : {}),
    });
  }
}
