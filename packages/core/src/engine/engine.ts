import { setMaxListeners } from 'node:events';
import { NotFoundError } from '../client/errors.js';
import { redact } from '../client/secrets.js';
import { caseIdentity } from './cases/identity.js';
import { resolveKeys } from './cases/mapping.js';
import { describeSearched, loadConfig } from './config/load.js';
import type { CasebridgeConfig } from './config/schema.js';
import { plannedSet } from './delivery/attributed-runs.js';
import { RunHealth } from './delivery/health.js';
import { runKey } from './kernel/attributes.js';
import { type Clock, clockOf } from './kernel/clock.js';
import { outcomeOf, type TestResult } from './kernel/model.js';
import { Problems } from './kernel/problems.js';
import type { EndResult, EngineContext, PlannedTest, RunSummary } from './kernel/types.js';
import { publishAtEnd } from './publish/publish.js';
import { assembleSummary, failReason, invalidConfigLine, printSummary } from './report/run-summary.js';
import { cycleKeysInstead, NO_CYCLE, type SelectionSummary, selectTests } from './selection.js';
import { openSession, type Session, saveMapping } from './session.js';

/**
 * The engine every adapter hands its results to, a façade over the run's `Session`. `add` never waits on the
 * network; no method throws and `end` never rejects: a problem is a summary line (exit code only if `failOnError`).
 */
export class Engine {
  /** False when the config is invalid or `enabled: false`: every method is then a no-op. */
  readonly enabled: boolean;
  private readonly out: (text: string) => void;
  private readonly config?: CasebridgeConfig;
  /** Made by `create` when reporting is on; none when it is off. */
  private session?: Session;
  private readonly abort = runAbort();
  /** The run's problems, passed down to every part that finds one. */
  private readonly problems = new Problems();
  private readonly health: RunHealth;
  /** The run's one clock (kernel/clock.ts). */
  private readonly clock: Clock;
  private ended = false;
  private readonly startedAt: number;
  /** The configuration is invalid and asked for `failOnError`. */
  private failInvalid = false;
  /** The options the runner gave (recorded beside journaled results for `casebridge replay`). */
  private inline: Record<string, unknown> = {};
  private readonly byStatus: Record<string, number> = {};
  private results = 0;
  /** Tests named by `begin` (0: unknown). */
  private planned = 0;
  /** What `selected` did (option `select`); undefined before it was asked, or without the option. */
  private selection?: SelectionSummary;
  private selectAsked = false;

  private constructor(
    private readonly ctx: EngineContext,
    config: CasebridgeConfig | undefined,
    problems: readonly string[],
  ) {
    this.out = ctx.out ?? ((text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`));
    this.config = config;
    for (const p of problems) this.problems.add('config', p);
    const settings = config ? { indexLagMs: config.jira.indexLagMs, bulkWaitMs: config.bulkWaitMs } : {};
    this.clock = clockOf({ ...settings, ...ctx.timing }, ctx.timeScale);
    this.startedAt = this.clock.now();
    this.health = new RunHealth(this.abort.signal, this.out, this.clock, this.problems);
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
          problems: engine.problems,
          health: engine.health,
          clock: engine.clock,
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
   * The run starts: with planned tests the cycle and its runs are prepared at once, and an earlier run's journal is
   * delivered first. Never blocks, never throws.
   */
  begin(plan: { tests?: readonly PlannedTest[] } = {}): void {
    const s = this.session;
    if (!s) return;
    const { target, delivery, pipeline } = s;
    this.planned = plan.tests?.length ?? 0;
    const runner = this.ctx.runner.name;
    if (runner === 'jest' || runner === 'vitest') this.selectNotApplied('it needs Playwright 1.62+');
    const planned = (plan.tests ?? []).map((t) => ({
      t,
      own: resolveKeys({ ...t, attempts: [] }, s.keyRe, s.mapping),
    }));
    if (target.mode === 'cycle') {
      const templates = s.config.attributes;
      const keys = new Set<string>();
      // With run attributes: the (case, attribute set) runs the plan makes known (see plannedSet).
      const runKeys = new Set<string>();
      for (const { t, own } of planned) {
        const set = templates ? plannedSet(t, templates) : undefined;
        for (const k of own) {
          keys.add(k);
          if (set) runKeys.add(runKey(k, set));
        }
      }
      if (!templates && keys.size > 0) pipeline.prepare(keys);
      else if (runKeys.size > 0) {
        // The whole matrix before the first result, one createTestRuns per 100 cases, not one per project.
        pipeline.track(delivery.runs.ensure(target, [...runKeys]), 'preparing the cycle');
      } else if (plan.tests) {
        // No tests named up front (Jest, Vitest): the cycle is made now, while the tests run. Not in a replay
        // (`begin()` with no plan): it must not leave an empty cycle of today's default name behind.
        pipeline.track(delivery.cycles.ensure(target), 'preparing the cycle');
      }
    } else if (!s.dry) {
      // An early check of the project (a dry run has no answer to check).
      pipeline.track(
        s.tm.jira.project({ projectIdOrKey: target.projectKey }, { signal: this.abort.signal }).catch(async (err) => {
          if (err instanceof NotFoundError) await delivery.checkJira();
          throw err;
        }),
        `checking project ${target.projectKey}`,
      );
    }
    // Planned tests without a key: their cases are found or created while the tests run (CaseRegistry.plan).
    const unmapped = planned.filter((p) => p.own.length === 0).map((p): TestResult => ({ ...p.t, attempts: [] }));
    if (unmapped.length > 0) s.cases?.plan(unmapped);
    // A dry run reads and writes nothing on disk: no replay.
    if (!s.dry) pipeline.replay();
  }

  /**
   * The planned tests whose case is quarantined, with why (Playwright 1.62+), within `timeoutMs`: without an answer
   * the run starts without quarantine. Never throws; empty when off or unread.
   */
  async quarantined(
    tests: readonly PlannedTest[],
    o: { timeoutMs?: number } = {},
  ): Promise<Map<string, { key: string; why: string }>> {
    const out = new Map<string, { key: string; why: string }>();
    const s = this.session;
    const q = s?.delivery.failures.quarantine;
    if (!s || !q) return out;
    try {
      const timeoutMs = o.timeoutMs ?? 10_000;
      const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(timeoutMs)]);
      const set = await q.read(signal);
      if (!set) {
        this.out(
          `casebridge: the quarantined cases (label ${q.label}) could not be read within ${timeoutMs / 1000} s; the tests run without quarantine (${q.stats()?.problem ?? 'no answer'})`,
        );
        return out;
      }
      if (set.cases.size === 0) return out;
      for (const t of tests) {
        const keys = resolveKeys({ ...t, attempts: [] }, s.keyRe, s.mapping);
        const key = keys.length ? keys.find((k) => set.cases.has(k)) : set.identities.get(caseIdentity(t));
        const why = key === undefined ? undefined : set.cases.get(key);
        if (key !== undefined && why !== undefined) out.set(t.id, { key, why });
      }
      q.markedBefore(out.size);
    } catch (err) {
      this.problems.add('internal', `internal error while reading the quarantine: ${redact(String(err))}`);
    }
    return out;
  }

  /**
   * The ids of the planned tests option `select` keeps (Playwright 1.62+), two requests within `timeoutMs`.
   * Undefined: every test runs (one line says why). Never throws.
   */
  async selected(tests: readonly PlannedTest[], o: { timeoutMs?: number } = {}): Promise<Set<string> | undefined> {
    const s = this.session;
    if (!s?.config.select || this.selectAsked) return undefined;
    this.selectAsked = true;
    try {
      const timeoutMs = o.timeoutMs ?? 10_000;
      const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(timeoutMs)]);
      const r = await selectTests(s, tests, { signal, timeoutMs, out: this.out });
      this.selection = r.summary;
      return r.ids;
    } catch (err) {
      this.problems.add('internal', `internal error while selecting the tests: ${redact(String(err))}`);
      return undefined;
    }
  }

  /** The runner cannot apply `select`: one line says `why` and what selects instead (`casebridge cycle keys`). */
  selectNotApplied(why: string): void {
    const sel = this.config?.select;
    if (!sel || this.selectAsked || !this.enabled) return;
    this.selectAsked = true;
    if (!sel.cycle) {
      this.out(`casebridge: select: ${NO_CYCLE}; every test runs`);
      return;
    }
    const instead = cycleKeysInstead(
      { ...sel, cycle: sel.cycle },
      sel.plan ?? this.config?.testPlan,
      this.ctx.runner.name,
    );
    const problem = `not applied: ${why}; ${instead}`;
    this.out(`casebridge: select (cycle "${sel.cycle}") is ${problem}; every test runs`);
    this.selection = {
      plan: sel.plan ?? this.config?.testPlan ?? '',
      cycle: sel.cycle,
      filters: [],
      cases: 0,
      tests: 0,
      selected: 0,
      uncovered: [],
      problem,
    };
  }

  /** A test is finished (all its attempts): map it and hand it to the pipeline. Never blocks, never throws. */
  add(result: TestResult): void {
    const s = this.session;
    if (!s || this.ended) return;
    try {
      const { pipeline } = s;
      this.results += 1;
      const outcome = outcomeOf(result);
      this.byStatus[outcome] = (this.byStatus[outcome] ?? 0) + 1;
      // The last planned test: what waits goes soon, while the runner winds down.
      const last = this.planned > 0 && this.results >= this.planned;
      pipeline.add(result, resolveKeys(result, s.keyRe, s.mapping), last);
    } catch (err) {
      this.problems.add('internal', `internal error while adding a result: ${redact(String(err))}`);
    }
  }

  /** Sends what is left, journals the rest, completes the cycle if asked, prints the summary. Never rejects. */
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
    try {
      if (!(await s.pipeline.drain(this.out))) {
        this.abort.abort();
        await s.pipeline.settle(2_000);
      }
      saveMapping(s, this.ctx.cwd, this.problems);
      const undelivered = s.pipeline.ledger.undelivered();
      const allDelivered = undelivered.length === 0 && !this.health.down;
      if (allDelivered || s.delivery.stats().resumedCycle) {
        try {
          if (!this.abort.signal.aborted) await s.delivery.cycles.complete(c.completeCycle && allDelivered);
        } catch (err) {
          this.problems.add('cycle', `completing the cycle: ${redact(String(err))}`);
        }
      }
      const journaled = s.dry ? 0 : await s.journaling.write(undelivered, this.inline, this.ctx.runner.name);
      if (journaled === undelivered.length) await s.journaling.discardWal();
      // After the results, never before: a requirement that cannot be linked loses no result.
      const requirements = this.abort.signal.aborted
        ? undefined
        : await s.pipeline.requirements.link(s.tm, this.abort.signal).catch(() => undefined);
      let summary = this.summary(journaled);
      if (requirements) summary = { ...summary, requirements };
      if (!this.abort.signal.aborted) {
        const published = await publishAtEnd({
          config: c,
          tm: s.tm,
          cycle: summary.cycle,
          dry: !!s.dry,
          env: this.ctx.env ?? process.env,
          cwd: this.ctx.cwd,
          signal: this.abort.signal,
          durationMs: this.clock.now() - this.startedAt,
        });
        if (published.length) summary = { ...summary, published };
      }
      printSummary(summary, {
        out: this.out,
        env: this.ctx.env ?? process.env,
        cwd: this.ctx.cwd,
        annotations: c.annotations,
        ...(typeof c.dryRun === 'string' ? { dryRunFile: c.dryRun } : {}),
      });
      // The refusals of single results fail the run through the journal (they are kept there), not as problems.
      const problems = this.problems.all().some((p) => p.kind !== 'refused');
      const failed = c.failOnError && (journaled > 0 || problems);
      return failed ? { failed, reason: failReason(journaled, summary), summary } : { failed, summary };
    } catch (err) {
      this.out(`casebridge: internal error at the end of the run: ${redact(String(err))}`);
      const reason = 'casebridge: an internal error at the end of the run (above), and failOnError fails the run';
      return { failed: c.failOnError, ...(c.failOnError ? { reason } : {}), summary: this.summary() };
    } finally {
      s.delivery.failures.close();
      await Promise.allSettled([s.tm.close(), s.repo?.close()]);
    }
  }

  private summary(journaled = 0): RunSummary {
    const s = this.session;
    const summary = assembleSummary({
      enabled: this.enabled,
      ...(this.config ? { mode: this.config.mode, mappingFile: this.config.mappingFile, url: this.config.url } : {}),
      ...(this.ctx.shard ? { shard: this.ctx.shard } : {}),
      problems: this.problems.all(),
      ...(s ? { delivery: s.delivery.stats(), journalDir: s.journaling.journal.dir } : {}),
      ...(s?.target.plan ? { plan: s.target.plan } : {}),
      byStatus: this.byStatus,
      results: this.results,
      items: s?.pipeline.ledger.items ?? [],
      delivered: s?.pipeline.ledger.delivered ?? 0,
      unmapped: s?.pipeline.unmapped ?? [],
      ...(s?.cases ? { cases: s.cases } : {}),
      journaled,
      ...(s?.dry ? { calls: s.dry.calls } : {}),
      replayed: s?.journaling.replayed ?? 0,
      ...(this.health.down ? { down: this.health.down } : {}),
    });
    return this.selection ? { ...summary, selection: this.selection } : summary;
  }
}

/**
 * Each queued request listens on the run's signal; Node warns past 10 listeners in the user's CI log, so the limit
 * is raised for this signal only.
 */
function runAbort(): AbortController {
  const abort = new AbortController();
  setMaxListeners(100_000, abort.signal);
  return abort;
}
