import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Engine } from '@casebridge/core';
import { problemPrinter } from '@casebridge/core/adapter';
import type { CasebridgeOptions } from '@casebridge/core/runtime';
import { closeChannel, listChannel, mergeRuntime, openChannel, readChannel } from '@casebridge/core/runtime';
import { caseKeyOf, type JestAssertion, projectName, toTestResult } from './translate.js';

/** The parts of Jest's `GlobalConfig` the reporter reads (Jest 29.7 and 30.x). */
export interface JestGlobalConfig {
  rootDir: string;
  watch?: boolean;
  watchAll?: boolean;
  shard?: { shardIndex: number; shardCount: number } | null;
  /** `-t` / `--testNamePattern`: the tests it leaves out are reported by Jest as `pending`, like `test.skip`. */
  testNamePattern?: string | null;
}

/** The parts of Jest's `Test` (the file being run) the reporter reads. */
export interface JestTest {
  path: string;
  context?: { config?: { rootDir?: string; displayName?: unknown } };
}

export interface JestFileResult {
  testFilePath: string;
  testResults: JestAssertion[];
}

/**
 * The casebridge reporter for Jest 29 and 30:
 *
 * ```js
 * reporters: ['default', ['@casebridge/jest', { url: 'https://jira.example.com', projectKey: 'PROJ' }]]
 * ```
 *
 * It only translates: each test of a finished file (all its attempts, and what the test recorded with `step`,
 * `attach` and `caseKey`) goes to the engine, which maps keys, delivers in the background and journals what it could
 * not send. Jest awaits `onRunStart`, `onTestFileResult` and `onRunComplete`; `onTestCaseResult` is not awaited and
 * only records. Nothing thrown here reaches Jest: each hook catches and prints one line. The run fails because of
 * casebridge only with `failOnError` (through `getLastError`).
 *
 * The engine is loaded in `onRunStart`, not with this module: test files import this module for the runtime API,
 * and Jest evaluates it once per test file.
 */
export default class CasebridgeReporter {
  private readonly options: Record<string, unknown>;
  private readonly globalConfig: JestGlobalConfig;
  private engine: Engine | undefined;
  private channel: string | undefined;
  /** Per-attempt events by file and full name, until the file's result hands the test over. */
  private readonly events = new Map<string, JestAssertion[]>();
  private lastError: Error | undefined;
  /** One line per distinct problem on stderr; the test run goes on. */
  private readonly problem = problemPrinter('Jest');

  constructor(globalConfig: JestGlobalConfig, options?: CasebridgeOptions, _context?: unknown) {
    this.globalConfig = globalConfig ?? { rootDir: process.cwd() };
    this.options = options && typeof options === 'object' ? { ...options } : {};
  }

  async onRunStart(): Promise<void> {
    try {
      const g = this.globalConfig;
      const root = g.rootDir || process.cwd();
      const { Engine } = await import('@casebridge/core');
      const engine = Engine.create(this.options, {
        cwd: root,
        runner: { name: 'jest', ...versionOf(root) },
        ...(g.shard ? { shard: { current: g.shard.shardIndex, total: g.shard.shardCount } } : {}),
      });
      if (!engine.enabled) return;
      // Jest builds new reporters for every run of watch mode: report each run only when asked to (`watch: true`).
      if ((g.watch || g.watchAll) && !engine.watch) return;
      this.engine = engine;
      // Before any worker starts, so they inherit CASEBRIDGE_RUNTIME_DIR (in band, the test environment copies it).
      this.channel = openChannel();
      // Jest names no tests before they run: the engine prepares the cycle's runs as results come.
      engine.begin({ tests: [] });
    } catch (err) {
      this.problem('onRunStart', err);
    }
  }

  onTestCaseResult(test: JestTest, result: JestAssertion): void {
    try {
      if (!this.engine) return;
      const key = caseKeyOf(test.path, result.fullName);
      const list = this.events.get(key) ?? [];
      list.push(result);
      this.events.set(key, list);
    } catch (err) {
      this.problem('onTestCaseResult', err);
    }
  }

  async onTestFileResult(test: JestTest, fileResult: JestFileResult): Promise<void> {
    const engine = this.engine;
    if (!engine) return;
    const path = fileResult?.testFilePath || test.path;
    const file = {
      path,
      root: this.globalConfig.rootDir || test.context?.config?.rootDir || process.cwd(),
      project: projectName(test.context?.config?.displayName),
    };
    // The file's tests have ended: their records are all in the channel, listed once for the file.
    const listed = this.channel ? listChannel(this.channel) : undefined;
    for (const assertion of fileResult?.testResults ?? []) {
      try {
        // With -t, a pending test was most likely filtered out rather than skipped: it did not run in this run.
        if (this.globalConfig.testNamePattern && assertion.status === 'pending') continue;
        const key = caseKeyOf(path, assertion.fullName);
        const events = this.events.get(key) ?? [];
        this.events.delete(key);
        let result = toTestResult(assertion, events, file);
        if (this.channel)
          result = mergeRuntime(
            result,
            // Consumed: a rerun in watch mode starts from an empty file, and the folder stays small to list.
            readChannel(this.channel, path, assertion.fullName, { consume: true, listed }),
            this.channel,
          );
        engine.add(result);
      } catch (err) {
        this.problem('onTestFileResult', err);
      }
    }
  }

  async onRunComplete(): Promise<void> {
    try {
      const engine = this.engine;
      if (!engine) return;
      const r = await engine.end();
      if (r.failed) {
        // Jest fails the run on this error without printing it: say why the exit code changed.
        this.lastError = new Error(r.reason ?? 'casebridge: failOnError fails the run');
        process.stderr.write(`${this.lastError.message}\n`);
      }
    } catch (err) {
      this.problem('onRunComplete', err);
    } finally {
      if (this.channel) closeChannel(this.channel);
      this.channel = undefined;
    }
  }

  /** An error only when `failOnError` is set and delivery failed: Jest then fails the run. */
  getLastError(): Error | undefined {
    return this.lastError;
  }
}

/** The version of the Jest the project uses, for the run's description; left out when it cannot be read. */
function versionOf(root: string): { version?: string } {
  try {
    const version = (createRequire(join(root, 'package.json'))('jest/package.json') as { version?: unknown }).version;
    return typeof version === 'string' ? { version } : {};
  } catch {
    return {};
  }
}
