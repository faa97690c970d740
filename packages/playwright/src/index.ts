import { dirname } from 'node:path';
import { Engine } from '@casebridge/core';
import { problemPrinter } from '@casebridge/core/adapter';
import type { CasebridgeOptions } from '@casebridge/core/runtime';
import type { FullConfig, FullResult, Reporter, Suite, TestCase, TestResult } from '@playwright/test/reporter';
import { modeOf } from './mode.js';
import { isFinal, type Paths, toPlanned, toTestResult } from './translate.js';

/** The part of Playwright 1.62's `TestRun` this reporter uses (declared here: older versions' types lack it). */
interface PreprocessTestRun {
  fail(test: TestCase, reason?: string): void;
  exclude(test: TestCase): void;
}

/**
 * The casebridge reporter for Playwright Test:
 *
 * ```ts
 * reporter: [['list'], ['@casebridge/playwright', { url: 'https://jira.example.com', projectKey: 'PROJ' }]]
 * ```
 *
 * The options are casebridge's (see `@casebridge/core`); they can also come from `CASEBRIDGE_*` variables and
 * `casebridge.config.json` beside the Playwright config. The reporter only translates: each finished test (all its
 * attempts) goes to the engine, which maps keys, delivers in the background and journals what it could not send.
 *
 * Nothing thrown here reaches Playwright (from 1.62 a reporter error fails the run): every hook catches and prints
 * one line. The run fails because of casebridge only with `failOnError`.
 */
export type { CasebridgeOptions } from '@casebridge/core/runtime';
export { defineCasebridgeConfig } from '@casebridge/core/runtime';

export default class CasebridgeReporter implements Reporter {
  private readonly options: Record<string, unknown> = {};
  private readonly configDir: string | undefined;
  /** What Playwright is doing (modeOf): only `test` runs tests; `list` reaches no service. */
  private readonly mode = modeOf(process.argv);
  private engine: Engine | undefined;
  private paths: Paths = { root: process.cwd() };
  /** Tests with an attempt that were not handed over yet: a retry may follow. */
  private readonly waiting = new Set<TestCase>();
  /** Tests `preprocess` ran expected-to-fail because their case is quarantined in the tool, by `test.id`: why. */
  private readonly quarantined = new Map<string, string>();
  /** `preprocess` ran (Playwright 1.62+): `select` could be applied. */
  private preprocessed = false;
  /** One line per distinct problem on stderr; the test run goes on. */
  private readonly problem = problemPrinter('Playwright');

  constructor(options: CasebridgeOptions & { configDir?: string } = {}) {
    let configDir: unknown;
    try {
      const { configDir: dir, ...rest } = (options ?? {}) as Record<string, unknown>;
      configDir = dir;
      // Playwright adds private keys (`_mode`, `_commandHash`) to every reporter's options: they are not ours, and
      // nothing here reads them (a private key may change in any release).
      this.options = Object.fromEntries(Object.entries(rest).filter(([key]) => !key.startsWith('_')));
    } catch (err) {
      this.problem('reading the options', err);
    }
    this.configDir = typeof configDir === 'string' ? configDir : undefined;
  }

  printsToStdio(): boolean {
    return false;
  }

  /**
   * Playwright 1.62+, before the run, on the whole un-sharded suite (Playwright shards what is left afterwards):
   * - option `select`: only the tests of the cycle's selected cases run; the others are excluded (`testRun.exclude`:
   *   not run, reported nowhere). Two requests, at most 10 s; unread, every test runs (one line says why).
   * - option `quarantine`: the selected tests whose case is quarantined in the tool run expected-to-fail
   *   (`testRun.fail`), so a known failure keeps the run green and a pass is reported. One search, at most 10 s.
   * Older versions never call this: `onBegin` says `select` is not applied, and quarantined failures are reported
   * classified as such instead.
   */
  async preprocess(params: { config: FullConfig; suite: Suite; testRun: PreprocessTestRun }): Promise<void> {
    try {
      this.preprocessed = true;
      if (this.mode === 'list') return;
      const engine = this.open(params.config);
      if (!engine.enabled) return;
      // Each test planned once (identity, tags, annotations): the selection, the quarantine and its marks share it.
      const all = params.suite.allTests().map((t) => ({ t, planned: toPlanned(t, this.paths) }));
      const ids = await engine.selected(all.map((x) => x.planned));
      const kept = all.filter((x) => !ids || ids.has(x.planned.id) || !this.exclude(params.testRun, x.t));
      // A test already expected to fail, skipped or fixme'd is left as its author wrote it.
      const tests = kept.filter((x) => x.t.expectedStatus === 'passed');
      const marks = await engine.quarantined(tests.map((x) => x.planned));
      if (marks.size === 0) return;
      for (const { t, planned } of tests) {
        const mark = marks.get(planned.id);
        if (mark === undefined) continue;
        params.testRun.fail(t, `casebridge: ${mark.key} is quarantined (${mark.why})`);
        this.quarantined.set(t.id, mark.why);
      }
    } catch (err) {
      this.problem('preprocess', err);
    }
  }

  /**
   * Leaves `test` out of the run; false when Playwright refuses (a setup or dependency project's test is read-only:
   * it runs, as the selected tests need it).
   */
  private exclude(testRun: PreprocessTestRun, test: TestCase): boolean {
    try {
      testRun.exclude(test);
      return true;
    } catch {
      return false;
    }
  }

  onBegin(config: FullConfig, suite: Suite): void {
    try {
      // `playwright test --list` runs nothing: nothing to report, and no reason to reach the service.
      if (this.mode === 'list') return;
      const engine = this.open(config);
      // A merged report replays runs that were selected (or not) when they ran.
      if (!this.preprocessed && this.mode !== 'merge') {
        engine.selectNotApplied(`it needs Playwright 1.62+ (this is ${config.version})`);
      }
      if (engine.enabled) engine.begin({ tests: suite.allTests().map((t) => toPlanned(t, this.paths)) });
    } catch (err) {
      this.problem('onBegin', err);
    }
  }

  /** The run's engine, made once: by `preprocess` (1.62+) or by `onBegin`. */
  private open(config: FullConfig): Engine {
    if (this.engine) return this.engine;
    // The project root is the config's folder: the mapping file, casebridge.config.json and the journal live
    // there, and test files are named relative to it (`tests/login.spec.ts`). Playwright's `config.rootDir` is
    // the testDir.
    const root =
      this.configDir || (config.configFile ? dirname(config.configFile) : '') || config.rootDir || process.cwd();
    this.paths = { root, testDir: config.rootDir || undefined };
    this.engine = Engine.create(this.options, {
      cwd: root,
      runner: { name: 'playwright', version: config.version },
      ...(config.shard ? { shard: { current: config.shard.current, total: config.shard.total } } : {}),
    });
    return this.engine;
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    try {
      if (!this.engine?.enabled) return;
      this.waiting.add(test);
      // A merged report replays every event at once: handing each test over at the end loses nothing and is right
      // even for serial groups, whose mode a merged report does not carry.
      if (this.mode !== 'merge' && isFinal(test, result)) this.handOver(test);
    } catch (err) {
      this.problem('onTestEnd', err);
    }
  }

  async onEnd(_result: FullResult): Promise<{ status?: FullResult['status'] } | undefined> {
    try {
      const engine = this.engine;
      if (!engine) return undefined;
      // Tests whose retry never came: the run stopped (max failures, interruption) or Playwright did not retry.
      for (const test of [...this.waiting]) {
        try {
          this.handOver(test);
        } catch (err) {
          this.problem('onEnd', err);
        }
      }
      const r = await engine.end();
      if (r.failed) {
        // Playwright turns the run red without a word: say why the exit code changed.
        process.stderr.write(`${r.reason ?? 'casebridge: failOnError fails the run'}\n`);
        return { status: 'failed' };
      }
    } catch (err) {
      this.problem('onEnd', err);
    }
    return undefined;
  }

  private handOver(test: TestCase): void {
    this.waiting.delete(test);
    if (test.results.length === 0) return;
    const result = toTestResult(test, test.results, this.paths);
    // Expected to fail because of the quarantine, not its author: reported as it ended, classified quarantined.
    const why = this.quarantined.get(test.id);
    if (why !== undefined) {
      result.quarantined = why;
      result.expectedToFail = false;
    }
    this.engine?.add(result);
  }
}

export { attach, caseKey, param, requirement, step } from './runtime.js';
