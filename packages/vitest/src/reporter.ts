import type { Engine } from '@casebridge/core';
import { problemPrinter } from '@casebridge/core/adapter';
import type { CasebridgeOptions } from '@casebridge/core/runtime';
import { closeChannel, mergeRuntime, openChannel, readChannel } from '@casebridge/core/runtime';
import { RECORDED_META, runtimeName, titlePathOf, toTestResult, type VtTestCase } from './translate.js';

/** The part of Vitest's `Vitest` object (`onInit`) the reporter reads; 3.x, 4.x and 5.x all have it. */
interface VitestLike {
  version?: string;
  config: {
    root: string;
    watch?: boolean;
    shard?: { index: number; count: number };
    mergeReports?: string;
  };
}

interface TestModuleLike {
  children?: { allTests(): Iterable<VtTestCase> };
}

type Core = typeof import('@casebridge/core');

/**
 * The casebridge reporter for Vitest (3.x, 4.x and 5.x), through the current reporter API only:
 *
 * ```ts
 * reporters: ['default', ['@casebridge/vitest', { url: 'https://jira.example.com', projectKey: 'PROJ' }]]
 * // or: reporters: ['default', new CasebridgeReporter({ ... })]
 * ```
 *
 * Vitest awaits every hook and a rejected one fails the run, so the per-test hook only translates and enqueues
 * (`engine.add`) and every hook catches what it throws; `onTestRunEnd` awaits delivery, bounded by `flushTimeoutMs`.
 * The engine (zod, undici) is loaded in `onInit` with a dynamic import: test files that import the runtime API from
 * this package's main entry do not pay for it. In watch mode nothing is reported unless `watch: true`; then each
 * rerun gets its own engine and is reported once.
 */
export default class CasebridgeReporter {
  /** The options given to the constructor (`casebridge doctor` reads them from a Vitest config's reporter instance). */
  readonly options: Record<string, unknown>;
  private core: Core | undefined;
  private vitest: VitestLike | undefined;
  private engine: Engine | undefined;
  private channel: string | undefined;
  /** Watch mode without `watch: true`: the reporter stays silent for the whole session. */
  private off = false;
  private watching = false;
  /**
   * Tests handed over in this run, by Vitest's run-local id: a test seen twice (its result event, then the sweep at
   * the end) counts once. Not by our stable id: two tests of a file may share a title.
   */
  private readonly handed = new Set<unknown>();
  /** One line per distinct problem on stderr; the test run goes on. */
  private readonly problem = problemPrinter('Vitest');

  /** Options win over `CASEBRIDGE_*` variables and `casebridge.config.json`; credentials are best left to those. */
  constructor(options: CasebridgeOptions = {}) {
    this.options = options && typeof options === 'object' ? { ...options } : {};
  }

  async onInit(vitest: VitestLike): Promise<void> {
    try {
      this.vitest = vitest;
      this.watching = vitest.config.watch === true;
      const unsupported = nodeTooOld(vitest.version, process.versions.node);
      if (unsupported) process.stderr.write(`${unsupported}\n`);
      this.core = await import('@casebridge/core');
      const loaded = this.core.loadConfig(this.options, { cwd: this.root });
      if (this.watching && !(loaded.ok && loaded.config.watch)) {
        this.off = true;
        return;
      }
      // The channel is named in the environment now, before Vitest starts its workers. A merge runs no tests.
      if (loaded.ok && loaded.config.enabled && !vitest.config.mergeReports) this.channel = openChannel();
      if (this.channel && this.watching) {
        const dir = this.channel;
        process.once('exit', () => closeChannel(dir));
      }
    } catch (err) {
      this.problem('onInit', err);
    }
  }

  onTestRunStart(): void {
    try {
      this.handed.clear();
      this.engine = undefined;
      if (this.off || !this.core || !this.vitest) return;
      const shard = this.vitest.config.shard;
      this.engine = this.core.Engine.create(this.options, {
        cwd: this.root,
        runner: { name: 'vitest', ...(this.vitest.version ? { version: this.vitest.version } : {}) },
        ...(shard ? { shard: { current: shard.index, total: shard.count } } : {}),
      });
      // Vitest names no tests up front: an empty plan still lets the engine prepare the cycle while the tests run.
      if (this.engine.enabled) this.engine.begin({ tests: [] });
    } catch (err) {
      this.problem('onTestRunStart', err);
    }
  }

  onTestCaseResult(testCase: VtTestCase): void {
    try {
      this.handOver(testCase);
    } catch (err) {
      this.problem('onTestCaseResult', err);
    }
  }

  async onTestRunEnd(testModules: readonly TestModuleLike[] = []): Promise<void> {
    const engine = this.engine;
    this.engine = undefined;
    if (!engine) return;
    let failed: string | undefined;
    try {
      // Tests that got no result event (replays, a module that failed late): their final state is known now.
      for (const module of testModules) {
        for (const tc of module.children?.allTests() ?? []) {
          try {
            this.handOver(tc, engine);
          } catch (err) {
            this.problem('onTestRunEnd', err);
          }
        }
      }
      const r = await engine.end();
      if (r.failed) failed = r.reason ?? 'casebridge: failOnError fails the run';
    } catch (err) {
      this.problem('onTestRunEnd', err);
    } finally {
      if (this.channel && !this.watching) {
        closeChannel(this.channel);
        this.channel = undefined;
      }
    }
    // The opt-in `failOnError`: Vitest fails the run on a rejected reporter hook.
    if (failed) throw new Error(failed);
  }

  private get root(): string {
    return this.vitest?.config.root || process.cwd();
  }

  private handOver(tc: VtTestCase, engine = this.engine): void {
    if (!engine?.enabled) return;
    // A skipped test leaves its run as it is; Vitest also marks every test left out by `-t`, `--project` or `.only`
    // as skipped, and reporting those would list the whole suite as skipped (and unmapped) on every filtered run.
    // A test still pending when the run ends never finished (cancelled, `--bail`): nothing to say about it either.
    const state = tc.result().state;
    if (state === 'skipped' || state === 'pending') return;
    const seen = (tc as { id?: string }).id ?? tc;
    if (this.handed.has(seen)) return;
    this.handed.add(seen);
    let result = toTestResult(tc, this.root);
    if (this.channel && recorded(tc)) {
      const name = runtimeName(tc.project.name, titlePathOf(tc));
      // Consumed: in watch mode the next rerun of this test starts from an empty file.
      result = mergeRuntime(
        result,
        readChannel(this.channel, tc.module.moduleId, name, { consume: true }),
        this.channel,
      );
    }
    engine.add(result);
  }
}

/** Whether the test's worker wrote records to the channel for it (a meta without the mark: it did not). */
function recorded(tc: VtTestCase): boolean {
  const meta = tc.meta() as Record<string, unknown> | undefined;
  return !meta || meta[RECORDED_META] === true;
}

/**
 * Vitest 5 needs Node 22.12 or later. On older Node it starts, then fails inside itself (`Map.groupBy is not a
 * function` when it prints a failure): one line from us names the cause before that happens.
 */
export function nodeTooOld(vitestVersion: string | undefined, nodeVersion: string): string | undefined {
  const vitestMajor = Number(/^(\d+)\./.exec(vitestVersion ?? '')?.[1] ?? 0);
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  if (vitestMajor < 5 || major > 22 || (major === 22 && minor >= 12)) return undefined;
  return `casebridge: Vitest ${vitestVersion} needs Node 22.12 or later, and this is Node ${nodeVersion}: Vitest itself may fail (e.g. "Map.groupBy is not a function"). Run it with a newer Node (npx -p node@24 vitest run) or use Vitest 4, which runs on Node 20.`;
}
