import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import {
  AbortedError,
  CasebridgeError,
  InputError,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
} from '../client/errors.js';
import type { ContentRepositoryClient } from '../client/repo.js';
import { redact } from '../client/secrets.js';
import type { TestManagementClient } from '../client/tm.js';
import { type Caller, caller } from './caller.js';
import { CaseRegistry, caseSummary } from './cases.js';
import { clientsFor, cycleNameFor } from './clients.js';
import { type CasebridgeConfig, describeSearched, loadConfig } from './config.js';
import { Delivery } from './delivery.js';
import { Journal, type WriteAheadLog } from './journal.js';
import { keyPattern, type MappingFile, mappingProblems, resolveKeys, titleWithoutKeys } from './mapping.js';
import { writeMapping } from './mapping-file.js';
import { displayName, outcomeOf, type ResultAttachment, type ResultStep, type TestResult } from './model.js';
import { NotJiraError, PermanentProblem } from './problems.js';
import { ciWarning, formatSummary, markdownSummary, REPLAY } from './summary.js';
import { pipelineId } from './text.js';
import type { EndResult, EngineContext, PlannedTest, RunSummary } from './types.js';
import { appendTo, needsDetails, statusOnly, type Target, type WorkItem } from './work.js';

/**
 * Status-only results wait at most this long, or until this many have gathered, or until every planned test has
 * reported, before a bulk update. Waiting costs nothing in safety: each result is in the write-ahead log already.
 * Long enough that a suite of thousands of tests costs a handful of updates; short enough that a long suite's
 * results show up while it runs. Each wait that runs out doubles the next one (30 s, 60 s, 120 s, ... up to
 * BULK_WAIT_MAX_MS): a run of 90 s makes one timed update, a run of an hour about ten.
 */
const BULK_WAIT_MS = 30_000;
const BULK_WAIT_MAX_MS = 300_000;
const BULK_MAX = 10_000;
/**
 * Runners that name no tests up front (Jest, Vitest): the cycle's runs for the keys seen so far are prepared this
 * long after the first one, then after twice as long, and so on (2 s, 4 s, 8 s...). The end of the run then only
 * adds the last keys. A few batches of two requests, whatever the suite's size.
 */
const PREPARE_WAIT_MS = 2_000;
/** After the last planned test (or the end), results wait this long for others to join them in one bulk update. */
const SOON_MS = 20;
/**
 * ... and this long while test cases are still being created, so that a first run sends a few bulks, not hundreds
 * (each reads the cycle's growing run list). The last one goes as soon as the creates are done.
 */
const SOON_WHILE_CREATING_MS = 2_000;
/** The end of the run prints a progress line when it has taken this long, then every PROGRESS_EVERY_MS. */
const PROGRESS_AFTER_MS = 3_000;
const PROGRESS_EVERY_MS = 5_000;

/**
 * The reporting engine: what every adapter hands its results to. `add` only enqueues, so a runner's per-test hook
 * never waits on the network; results are delivered while the suite runs; `end` drains what is left within
 * `flushTimeoutMs` of no progress and writes anything undelivered to the journal. No method throws and `end` never rejects: a
 * problem becomes a line of the summary, and the test run's exit code is only touched when `failOnError` asks.
 */
export class Engine {
  /** False when the config is invalid or `enabled: false`: every method is then a no-op. */
  readonly enabled: boolean;
  private readonly out: (text: string) => void;
  private readonly config?: CasebridgeConfig;
  private tm?: TestManagementClient;
  private repo?: ContentRepositoryClient;
  private delivery?: Delivery;
  private api?: Caller;
  private journal?: Journal;
  private wal?: WriteAheadLog;
  private keyRe = keyPattern();
  private mapping: MappingFile = {};
  private target?: Target;
  private readonly abort = new AbortController();
  private readonly items: WorkItem[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private bulkBuffer: WorkItem[] = [];
  private bulkTimer?: NodeJS.Timeout;
  private bulkWait = BULK_WAIT_MS;
  private soonTimer?: NodeJS.Timeout;
  /**
   * Per key, the preparation of its run in the cycle (done, under way, or waiting for the next batch). The batch
   * waiting to go gathers keys; `load` when a result waiting for it needs its run id at once (one with details).
   */
  private readonly prepared = new Map<string, Promise<unknown>>();
  private nextPrepare?: { keys: Set<string>; load: boolean; go: () => void; done: Promise<unknown> };
  private prepareTimer?: NodeJS.Timeout;
  private prepareWait = PREPARE_WAIT_MS;
  private cases?: CaseRegistry;
  /** When a request last succeeded: the end of the run waits while this moves. */
  private progressAt = Date.now();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Set when the service stopped answering: the rest goes to the journal without more attempts. */
  private down?: string;
  private ended = false;
  private readonly problems: string[] = [];
  /** The configuration is invalid and asked for `failOnError`. */
  private failInvalid = false;
  /** The options the runner gave (recorded beside journaled results for `casebridge replay`). */
  private inline: Record<string, unknown> = {};
  private readonly unmapped: string[] = [];
  private readonly byStatus: Record<string, number> = {};
  private results = 0;
  /** Tests named by `begin` (0: unknown). */
  private planned = 0;
  private replayed = 0;
  private readonly journalIds = new Map<WorkItem, string>();
  private replayTick?: (key: string, ok: boolean) => void;
  /** The journal is being read: its results wait in the bulk buffer until all are claimed. */
  private replaying = false;
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
    this.problems.push(...problems);
    this.enabled = config?.enabled === true;
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
        // `junit` is the CLI (replay, JUnit import): no tests run there.
        const then =
          ctx.runner.name === 'junit'
            ? 'nothing is sent'
            : loaded.failOnError
              ? 'the tests still run; failOnError fails the run at its end'
              : 'the tests still run';
        engine.out(
          `casebridge: reporting is off for this run: the configuration has problems (${then}):\n${loaded.problems
            .map((p) => `  - ${p}`)
            .join('\n')}\n  (looked in: ${describeSearched(ctx.cwd, loaded.searched)})`,
        );
        return engine;
      }
      const engine = new Engine(ctx, loaded.config, []);
      engine.inline = inline;
      if (engine.enabled) engine.setUp();
      return engine;
    } catch (err) {
      const engine = new Engine(ctx, undefined, [String(err)]);
      engine.out(`casebridge: reporting is off for this run: ${redact(String(err))}`);
      return engine;
    }
  }

  private setUp(): void {
    const c = this.config as CasebridgeConfig;
    const env = this.ctx.env ?? process.env;
    const debug = c.debug || env.CASEBRIDGE_DEBUG === '1' || env.CASEBRIDGE_DEBUG === 'true';
    const logger = debug ? (level: string, message: string) => this.out(`casebridge ${level}: ${message}`) : undefined;
    const clients = clientsFor(c, logger);
    this.tm = clients.tm;
    this.repo = clients.repo;
    this.api = caller(c.dryRun !== false, (line) => {
      if (debug) this.out(`casebridge: ${line}`);
    });
    const real = (p: string) => {
      try {
        return realpathSync(p);
      } catch {
        return resolve(p);
      }
    };
    const roots = [
      this.ctx.cwd,
      tmpdir(),
      resolve(this.ctx.cwd, c.journalDir),
      ...c.attachments.roots.map((r) => resolve(this.ctx.cwd, r)),
      ...(this.ctx.attachmentRoots ?? []),
    ];
    const progress = () => {
      this.progressAt = Date.now();
    };
    this.delivery = new Delivery(
      c,
      this.tm,
      this.repo,
      this.api,
      this.ctx.runner,
      this.abort.signal,
      roots.map(real),
      progress,
      pipelineId(env),
    );
    this.journal = new Journal(resolve(this.ctx.cwd, c.journalDir));
    if (!this.api.dryRun) this.wal = this.journal.openWal();
    this.keyRe = keyPattern(c.keyPattern ? { pattern: c.keyPattern } : { projectKeys: [c.projectKey] });
    this.mapping = this.loadMapping(c);
    if (c.autoCreate) {
      const re = this.keyRe;
      this.cases = new CaseRegistry({
        tm: this.tm,
        api: this.api,
        project: c.projectKey,
        summaryOf: (t) => caseSummary(t, titleWithoutKeys(t.titlePath[t.titlePath.length - 1] ?? '', re)),
        concurrency: c.concurrency,
        // A machine that found the cycle made by another one (shards adopting one suite at once) lets that one
        // create the cases and takes them, instead of racing it on every test.
        second: async () => {
          // Shards of one run hold different tests: each creates its own cases at once.
          if (!this.delivery || this.target?.mode !== 'cycle' || this.ctx.shard) return false;
          await this.delivery.ensureCycle(this.target);
          return this.delivery.cycleMadeElsewhere();
        },
        signal: this.abort.signal,
        onProgress: progress,
      });
    }
    this.target = {
      mode: c.mode,
      projectKey: c.projectKey,
      ...(c.mode === 'cycle' ? { plan: c.testPlan as string, cycleName: cycleNameFor(c, env) } : {}),
      ...(c.environment ? { environment: c.environment } : {}),
      ...(c.build ? { build: c.build } : {}),
    };
  }

  private loadMapping(c: CasebridgeConfig): MappingFile {
    const file = resolve(this.ctx.cwd, c.mappingFile);
    if (!existsSync(file)) return {};
    try {
      const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
      const problems = mappingProblems(value, this.keyRe);
      this.problems.push(...problems.map((p) => `${c.mappingFile}: ${p}`));
      return problems.length === 0 ? (value as MappingFile) : {};
    } catch (err) {
      this.problems.push(`${c.mappingFile}: not valid JSON (${(err as Error).message})`);
      return {};
    }
  }

  /**
   * The run starts. With the planned tests, the cycle and its runs are prepared at once (a few requests for the
   * whole suite). Results left in the journal by an earlier run are delivered first. Never blocks, never throws.
   */
  begin(plan: { tests?: readonly PlannedTest[] } = {}): void {
    if (!this.enabled || !this.target || !this.delivery) return;
    const target = this.target;
    const delivery = this.delivery;
    this.planned = plan.tests?.length ?? 0;
    let unmappedPlanned = false;
    if (target.mode === 'cycle') {
      const keys = new Set<string>();
      for (const t of plan.tests ?? []) {
        const own = resolveKeys({ ...t, attempts: [] }, this.keyRe, this.mapping);
        if (own.length === 0) unmappedPlanned = true;
        for (const k of own) keys.add(k);
      }
      if (keys.size > 0) {
        const ready = delivery.ensureRuns(target, [...keys]);
        for (const k of keys) this.prepared.set(k, ready);
        this.track(ready.catch((err) => this.failed(err, 'preparing the cycle')));
      } else if (plan.tests) {
        // A test run whose runner names no tests up front (Jest, Vitest): find or create and start the cycle now,
        // while the tests run, not when the first results are already waiting. A replay (`begin()` with no plan)
        // does not: it must not leave an empty cycle of today's default name behind.
        this.track(delivery.ensureCycle(target).catch((err) => this.failed(err, 'preparing the cycle')));
      }
    } else if (!this.api?.dryRun) {
      this.track(
        (this.tm as TestManagementClient).jira
          .project({ projectIdOrKey: target.projectKey }, { signal: this.abort.signal })
          .catch(async (err) => {
            if (err instanceof NotFoundError) await (this.delivery as Delivery).checkJira();
            throw err;
          })
          .catch((err) => this.failed(err, `checking project ${target.projectKey}`)),
      );
    }
    // Planned tests without a key: read the project's casebridge cases now, while the first tests run.
    if (unmappedPlanned) this.cases?.warmUp();
    if (!this.api?.dryRun) this.track(this.replayJournal());
  }

  /** A test is finished (all its attempts): map it and queue its delivery. Never blocks, never throws. */
  add(result: TestResult): void {
    if (!this.enabled || !this.target || this.ended) return;
    try {
      this.results += 1;
      const outcome = outcomeOf(result);
      this.byStatus[outcome] = (this.byStatus[outcome] ?? 0) + 1;
      const keys = resolveKeys(result, this.keyRe, this.mapping);
      if (keys.length === 0) {
        // Taken in (and logged) at once, without a key yet: a run killed or cut off before its case exists still
        // has the result on disk, and the next run creates the case and delivers it.
        if (this.cases) this.track(this.autoCreate(this.cases, this.take(result, '')));
        else this.unmapped.push(displayName(result));
        this.lastPlanned();
        return;
      }
      for (const key of keys) this.enqueue(result, key);
      this.lastPlanned();
    } catch (err) {
      this.problems.push(`internal error while adding a result: ${redact(String(err))}`);
    }
  }

  private enqueue(result: TestResult, key: string): void {
    this.schedule(this.take(result, key));
  }

  /** A result for one key (empty: its case is still to be found or created), kept until delivered and logged. */
  private take(result: TestResult, key: string): WorkItem {
    // `run-n`, not a UUID per result: a UUID string is a tree of pieces (about 500 bytes kept per result).
    this.itemSeq += 1;
    const id = `${this.runToken}-${this.itemSeq}`;
    const item: WorkItem = { id, key, test: result, target: this.target as Target, progress: {} };
    this.items.push(item);
    this.wal?.taken(item);
    return item;
  }

  /**
   * A key whose run the cycle will need: added to the cycle with the others in the next batch (see
   * PREPARE_WAIT_MS), so that the end of the run does not add every case to the cycle at once. Resolves when the
   * batch holding the key is done; `load` asks that batch to read the run ids back.
   */
  private prepare(key: string, load = false): Promise<unknown> {
    const known = this.prepared.get(key);
    if (known && !(load && this.nextPrepare?.keys.has(key))) return known;
    if (this.target?.mode !== 'cycle' || this.down || !this.delivery) return Promise.resolve();
    let batch = this.nextPrepare;
    if (!batch) {
      let go: () => void = () => undefined;
      const start = new Promise<void>((r) => {
        go = r;
      });
      const b = { keys: new Set<string>(), load: false, go, done: Promise.resolve() as Promise<unknown> };
      const delivery = this.delivery;
      const target = this.target;
      b.done = start.then(() => {
        if (this.nextPrepare === b) this.nextPrepare = undefined;
        if (this.down) return undefined;
        return delivery.ensureRuns(target, [...b.keys], b.load);
      });
      this.track(b.done.catch((err) => this.failed(err, 'adding cases to the cycle')));
      batch = b;
      this.nextPrepare = b;
      if (this.ended) b.go();
      else {
        this.prepareTimer = setTimeout(() => {
          this.prepareTimer = undefined;
          this.prepareWait *= 2;
          b.go();
        }, this.prepareWait);
        this.prepareTimer.unref();
      }
    }
    batch.keys.add(key);
    batch.load ||= load;
    this.prepared.set(key, batch.done);
    return batch.done;
  }

  /**
   * Finds or creates the test case of an unmapped test, then reports the result to it. When the service is down,
   * the result stays without a key and goes to the journal with the others.
   */
  private async autoCreate(cases: CaseRegistry, item: WorkItem): Promise<void> {
    if (this.down) return;
    try {
      const key = await cases.keyOf(item.test);
      if (cases.isNew(key)) this.delivery?.markNew([key]);
      item.key = key;
      this.schedule(item);
    } catch (err) {
      if (this.failed(err, `creating a test case for ${displayName(item.test)}`) === 'permanent') {
        this.unmapped.push(displayName(item.test));
        item.progress.done = true;
        item.progress.dropped = true;
        await this.settled(item);
      }
    }
  }

  private schedule(item: WorkItem): void {
    const c = this.config as CasebridgeConfig;
    if (this.down) return;
    if (item.target.mode === 'cycle' && item.progress.runId === undefined && !needsDetails(item, c)) {
      // Only its status goes (the write-ahead log has the whole result): what the run printed and files that are
      // not uploaded are not kept in memory until the bulk, which waits for the last test.
      item.test = statusOnly(item.test);
      this.bulkBuffer.push(item);
      // While tests still run, its case joins the cycle in the next batch; after that the bulk adds what is left.
      if (!this.journalIds.has(item) && !this.ended && !this.allPlannedIn()) this.prepare(item.key);
      if (this.bulkBuffer.length >= BULK_MAX) this.flushBulk();
      else if (!this.replaying) this.armBulk();
      return;
    }
    // A result with details in a cycle waits for the batch that adds its case to the cycle and reads the run ids:
    // results arriving together share its two requests instead of paying them each.
    const ready =
      item.target.mode === 'cycle' && item.progress.runId === undefined && !this.journalIds.has(item)
        ? this.prepare(item.key, true)
        : Promise.resolve();
    this.track(
      ready.catch(() => undefined).then(() => this.limited(() => this.deliverOne(item, this.journalIds.has(item)))),
    );
  }

  /** Results wait in the bulk buffer: soon when the run is winding down, otherwise at the latest after `bulkWait`. */
  private armBulk(): void {
    if (this.bulkBuffer.length === 0) return;
    if (this.ended || this.allPlannedIn()) this.flushSoon();
    else if (!this.bulkTimer) {
      this.bulkTimer = setTimeout(() => {
        this.bulkWait = Math.min(this.bulkWait * 2, BULK_WAIT_MAX_MS);
        this.flushBulk();
      }, this.bulkWait);
      this.bulkTimer.unref();
    }
  }

  /**
   * A bulk soon: results that arrive together (the tail of a run, cases created one after the other) go together.
   * While cases are still being created, at most one bulk every SOON_WHILE_CREATING_MS.
   */
  private flushSoon(): void {
    if (this.soonTimer) return;
    const wait = this.cases?.busy ? SOON_WHILE_CREATING_MS : SOON_MS;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      this.flushBulk();
    }, wait);
  }

  private flushBulk(): void {
    if (this.bulkTimer) clearTimeout(this.bulkTimer);
    this.bulkTimer = undefined;
    if (this.soonTimer) clearTimeout(this.soonTimer);
    this.soonTimer = undefined;
    const batch = this.bulkBuffer;
    this.bulkBuffer = [];
    if (batch.length === 0 || this.down) return;
    const byCycle = new Map<string, WorkItem[]>();
    for (const item of batch) appendTo(byCycle, (this.delivery as Delivery).cycleKey(item.target), item);
    for (const items of byCycle.values()) {
      this.track(
        this.limited(async () => {
          if (this.down) return;
          try {
            await (this.delivery as Delivery).bulk(items[0]?.target as Target, items);
            for (const item of items) if (item.progress.done) await this.settled(item);
          } catch (err) {
            if (this.failed(err, `sending ${items.length} result(s) in bulk`) === 'permanent') {
              for (const item of items) {
                item.progress.done = true;
                item.progress.dropped = true;
                await this.settled(item);
              }
            }
          }
        }),
      );
    }
  }

  /** An item is delivered (or dropped): marked in the write-ahead log, or, from the journal, removed from it. */
  private async settled(item: WorkItem): Promise<void> {
    const journalId = this.journalIds.get(item);
    if (journalId === undefined) {
      this.wal?.delivered(item.id);
      return;
    }
    await this.journal?.remove(journalId);
    this.replayTick?.(item.key, !item.progress.dropped);
  }

  /** Runs `fn` when fewer than `concurrency` deliveries are under way. */
  private async limited<T>(fn: () => Promise<T>): Promise<T | undefined> {
    const max = (this.config as CasebridgeConfig).concurrency;
    if (this.running >= max) await new Promise<void>((r) => this.waiting.push(r));
    this.running += 1;
    try {
      return await fn();
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }

  /** Whether every planned test has reported (false when the runner named none up front). */
  private allPlannedIn(): boolean {
    return this.planned > 0 && this.results >= this.planned;
  }

  /** After each result: when the last planned test has reported, the bulk goes now, while the runner winds down. */
  private lastPlanned(): void {
    if (this.allPlannedIn() && this.bulkBuffer.length > 0) this.flushBulk();
  }

  private async deliverOne(item: WorkItem, replaying: boolean): Promise<void> {
    if (this.down || item.progress.done) return;
    try {
      await (this.delivery as Delivery).deliver(item, replaying);
    } catch (err) {
      if (this.failed(err, `${item.key} (${displayName(item.test)})`) === 'permanent') {
        item.progress.done = true;
        item.progress.dropped = true;
      }
    }
    if (item.progress.done) await this.settled(item);
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((err) => this.failed(err, 'delivery'));
    this.pending.add(q);
    void q.finally(() => this.pending.delete(q));
  }

  /**
   * Classifies a failure: a permanent one (bad key, refused input) becomes a problem line and the result is dropped;
   * anything that may work later (network, timeouts, 429/5xx after retries, lost answers, rejected credentials)
   * stops further attempts for this run and leaves the results for the journal.
   */
  private failed(err: unknown, what: string): 'permanent' | 'later' {
    if (err instanceof AbortedError || this.abort.signal.aborted) return 'later';
    if (err instanceof NotJiraError) {
      if (!this.down) {
        this.down = err.message;
        this.out(`casebridge: ${err.message}`);
      }
      return 'later';
    }
    const message = redact(err instanceof Error ? err.message : String(err));
    if (
      err instanceof PermanentProblem ||
      err instanceof InputError ||
      err instanceof ValidationError ||
      err instanceof NotFoundError
    ) {
      this.problems.push(err instanceof PermanentProblem ? message : `${what}: ${message}`);
      return 'permanent';
    }
    if (err instanceof CasebridgeError || (err instanceof Error && /fetch|socket|ECONN/i.test(err.message))) {
      if (!this.down) {
        this.down =
          err instanceof UnauthorizedError
            ? `the service refused the credentials (HTTP 401): check token (CASEBRIDGE_TOKEN) or user and password (CASEBRIDGE_USER, CASEBRIDGE_PASSWORD)`
            : `${what}: ${message}`;
        this.out(`casebridge: the service is not answering as it should (${this.down}); results are kept on disk`);
      }
      return 'later';
    }
    this.problems.push(`${what}: internal error: ${message}`);
    return 'later';
  }

  private async replayJournal(): Promise<void> {
    const journal = this.journal as Journal;
    let listed: { entries: Array<{ id: string; kind: string; payload: WorkItem }>; corrupt: string[] };
    try {
      // Results of runs that were killed before their end wait in their write-ahead logs: journal them first.
      const recovered = await journal.recoverWals();
      if (recovered > 0) this.out(`casebridge: ${recovered} result(s) of a run that was killed were recovered`);
      listed = await journal.list<WorkItem>();
    } catch (err) {
      this.problems.push(`journal ${journal.dir}: ${redact(String(err))}`);
      return;
    }
    for (const path of listed.corrupt) this.problems.push(`journal entry ${path} is unreadable: moved aside`);
    const total = listed.entries.filter((e) => e.kind === 'result').length;
    let settled = 0;
    this.replayTick = (key: string, ok: boolean) => {
      settled += 1;
      try {
        this.ctx.onReplay?.({ done: settled, total, key, ok });
      } catch {
        // A progress display must not stop the replay.
      }
    };
    // Status-only results of a cycle join the bulk like this run's own: 1,000 of them cost a few requests. They
    // are all claimed before the bulk goes, so that a slow disk does not cut them into many small bulks.
    this.replaying = true;
    try {
      for (const entry of listed.entries) {
        if (entry.kind !== 'result' || this.down) continue;
        if (!(await journal.claim(entry.id))) continue;
        const item = entry.payload;
        this.journalIds.set(item, entry.id);
        this.items.push(item);
        this.replayed += 1;
        if (item.key !== '') this.schedule(item);
        else if (this.cases) this.track(this.autoCreate(this.cases, item));
        else {
          // Its case was to be created, but autoCreate is off now: nothing can take it.
          this.unmapped.push(displayName(item.test));
          item.progress.done = true;
          item.progress.dropped = true;
          this.track(this.settled(item));
        }
      }
    } finally {
      this.replaying = false;
    }
    this.armBulk();
  }

  /**
   * Waits for delivery to finish. It goes on while requests succeed, up to `flushMaxMs`; it gives up when nothing
   * has succeeded for `flushTimeoutMs`. True when everything settled.
   */
  private async drain(c: CasebridgeConfig): Promise<boolean> {
    const started = Date.now();
    this.progressAt = started;
    let lastLine = started;
    for (;;) {
      // The bulk waiting for more created cases goes at once when no create is left.
      const idle = !this.soonTimer || !this.cases?.busy;
      if (this.bulkBuffer.length > 0 && !this.down && idle && !this.replaying) this.flushBulk();
      if (this.pending.size === 0 && !this.soonTimer && (this.bulkBuffer.length === 0 || this.down)) return true;
      const now = Date.now();
      if (now - this.progressAt > c.flushTimeoutMs) {
        this.out(`casebridge: delivery made no progress for flushTimeoutMs (${c.flushTimeoutMs} ms): stopping`);
        return false;
      }
      if (now - started > c.flushMaxMs) {
        this.out(`casebridge: delivery did not finish within flushMaxMs (${c.flushMaxMs} ms): stopping`);
        return false;
      }
      if (now - started >= PROGRESS_AFTER_MS && now - lastLine >= PROGRESS_EVERY_MS) {
        lastLine = now;
        this.out(`casebridge: delivering... ${this.progressLine()} (${Math.round((now - started) / 1000)} s)`);
      }
      // A timer, not only the pending work: with nothing pending but a bulk about to go (its timer set), racing an
      // empty allSettled would spin on microtasks and never let that timer fire.
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<void>((r) => {
        timer = setTimeout(r, this.pending.size > 0 ? 250 : SOON_MS);
      });
      await (this.pending.size > 0 ? Promise.race([Promise.allSettled([...this.pending]), tick]) : tick);
      clearTimeout(timer);
    }
  }

  private progressLine(): string {
    const done = this.items.filter((i) => i.progress.done).length;
    const created = this.cases?.created.length ?? 0;
    return `${done} of ${this.items.length} result(s) delivered${created ? `, ${created} test case(s) created` : ''}`;
  }

  /**
   * The run ended: sends what is left, waits while delivery progresses, writes the rest to the journal, completes the
   * cycle when asked, prints the summary. Never rejects.
   */
  async end(): Promise<EndResult> {
    if (!this.enabled || !this.config) {
      if (this.failInvalid) {
        const reason =
          'casebridge: the configuration has problems (listed at the start), and failOnError fails the run';
        return { failed: true, reason, summary: this.summary() };
      }
      return { failed: false, summary: this.summary() };
    }
    this.ended = true;
    const c = this.config;
    try {
      if (this.prepareTimer) clearTimeout(this.prepareTimer);
      this.prepareTimer = undefined;
      this.nextPrepare?.go();
      this.flushBulk();
      const settled = await this.drain(c);
      if (!settled) {
        this.abort.abort();
        await Promise.race([Promise.allSettled([...this.pending]), new Promise((r) => setTimeout(r, 2_000))]);
      }
      this.saveMapping(c);
      const undelivered = this.items.filter((i) => !i.progress.done);
      const allDelivered = undelivered.length === 0 && !this.down;
      if (allDelivered || this.delivery?.stats().resumedCycle) {
        try {
          if (!this.abort.signal.aborted) await this.delivery?.completeCycles(c.completeCycle && allDelivered);
        } catch (err) {
          this.problems.push(`completing the cycle: ${redact(String(err))}`);
        }
      }
      const journaled = await this.writeJournal(undelivered);
      // Everything left is in the journal now: the write-ahead log (kept for a run that dies) is not needed.
      if (journaled === undelivered.length) await this.wal?.discard().catch(() => undefined);
      const summary = this.summary(journaled);
      this.print(summary);
      const failed = c.failOnError && (journaled > 0 || this.problems.length > 0);
      if (!failed) return { failed, summary };
      const reason =
        journaled > 0
          ? `casebridge: ${journaled} result(s) were not delivered (kept in the journal; \`${REPLAY}\` delivers them), and failOnError fails the run`
          : `casebridge: ${summary.problems.length} problem(s) while reporting (listed above), and failOnError fails the run`;
      return { failed, reason, summary };
    } catch (err) {
      this.out(`casebridge: internal error at the end of the run: ${redact(String(err))}`);
      const reason = 'casebridge: an internal error at the end of the run (above), and failOnError fails the run';
      return { failed: c.failOnError, ...(c.failOnError ? { reason } : {}), summary: this.summary() };
    } finally {
      await Promise.allSettled([this.tm?.close(), this.repo?.close()]);
    }
  }

  /** Keys of cases found or created in this run go into the mapping file, in one write. */
  private saveMapping(c: CasebridgeConfig): void {
    if (!this.cases || this.api?.dryRun) return;
    const added = this.cases.takeResolved();
    if (Object.keys(added).length === 0) return;
    try {
      writeMapping(resolve(this.ctx.cwd, c.mappingFile), added);
    } catch (err) {
      this.problems.push(`could not write ${c.mappingFile}: ${redact(String(err))}`);
    }
  }

  private async writeJournal(items: WorkItem[]): Promise<number> {
    if (items.length === 0 || this.api?.dryRun) return 0;
    const journal = this.journal as Journal;
    let n = 0;
    for (const item of items) {
      try {
        // In-memory files (of the attempts and of their steps) become blobs beside the entries: JSON has no bytes.
        const toBlob = async (f: ResultAttachment): Promise<ResultAttachment> =>
          f.body ? { name: f.name, contentType: f.contentType, path: await journal.putBlob(f.body) } : f;
        const steps = (list: ResultStep[]): Promise<ResultStep[]> =>
          Promise.all(
            list.map(async (st) => ({
              ...st,
              attachments: await Promise.all(st.attachments.map(toBlob)),
              steps: await steps(st.steps),
            })),
          );
        const test: TestResult = {
          ...item.test,
          attempts: await Promise.all(
            item.test.attempts.map(async (a) => ({
              ...a,
              attachments: await Promise.all(a.attachments.map(toBlob)),
              steps: await steps(a.steps),
            })),
          ),
        };
        const old = this.journalIds.get(item);
        await journal.add('result', { ...item, test });
        if (old) await journal.remove(old);
        n += 1;
      } catch (err) {
        this.problems.push(`could not write ${item.key} to the journal: ${redact(String(err))}`);
      }
    }
    if (n > 0) {
      await journal.saveRunOptions(this.inline, this.ctx.runner.name).catch((err: unknown) => {
        this.problems.push(`could not record the run's options in ${journal.dir}: ${redact(String(err))}`);
      });
    }
    return n;
  }

  private summary(journaled = 0): RunSummary {
    const d = this.delivery?.stats();
    // Keys the service refused in a bulk of status-only results: name each once, as a result with details would.
    for (const key of d?.badKeys ?? []) {
      if (this.problems.some((p) => p.startsWith(`${key}:`))) continue;
      const plan = this.target?.plan;
      this.problems.push(
        `${key}: not a test case${plan ? ` that can be added to test plan ${plan}` : ''}: check the key in the test's title or the mapping file`,
      );
    }
    for (const p of d?.repoProblems ?? []) if (!this.problems.includes(p)) this.problems.push(p);
    const cycle = d?.cycle;
    return {
      enabled: this.enabled,
      mode: this.config?.mode ?? 'adhoc',
      dryRun: this.api?.dryRun ?? false,
      ...(this.ctx.shard ? { shard: this.ctx.shard } : {}),
      byStatus: { ...this.byStatus },
      results: this.results,
      delivered: this.items.filter((i) => i.progress.done && !i.progress.dropped).length,
      ...(cycle ? { cycle } : {}),
      defects: d?.defects ?? { created: [], linked: [] },
      attachments: d?.attachments ?? { uploaded: 0, skipped: [], stored: [] },
      unmapped: [...this.unmapped],
      createdCases: [...(this.cases?.created ?? [])],
      ...(this.cases?.duplicates.length ? { duplicateCases: [...this.cases.duplicates] } : {}),
      ...(this.config ? { mappingFile: this.config.mappingFile } : {}),
      problems: [...new Set(this.problems)],
      journaled,
      ...(this.journal ? { journalDir: this.journal.dir } : {}),
      ...(this.api?.dryRun ? { calls: [...this.api.calls] } : {}),
      ...(this.replayed ? { replayed: this.replayed } : {}),
      ...(this.down ? { serviceDown: this.down } : {}),
    };
  }

  private print(summary: RunSummary): void {
    this.out(formatSummary(summary));
    const env = this.ctx.env ?? process.env;
    const warning = ciWarning(summary, env);
    if (warning) this.out(warning);
    const stepSummary = env.GITHUB_STEP_SUMMARY;
    if (stepSummary) {
      try {
        appendFileSync(stepSummary, `${markdownSummary(summary)}\n`);
      } catch {
        // The step summary is a convenience; the console summary above has the same content.
      }
    }
    const c = this.config;
    if (c && typeof c.dryRun === 'string' && summary.calls) {
      try {
        writeFileSync(resolve(this.ctx.cwd, c.dryRun), `${JSON.stringify({ calls: summary.calls }, null, 2)}\n`);
      } catch (err) {
        this.out(`casebridge: could not write the dry-run file: ${redact(String(err))}`);
      }
    }
  }
}
