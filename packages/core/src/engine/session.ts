import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { type DryRunClients, withDryRun } from '../client/dry-run.js';
import type { ContentRepositoryClient } from '../client/repo.js';
import { redact } from '../client/secrets.js';
import type { TestManagementClient } from '../client/tm.js';
import { keyPattern, type MappingFile, readMappingFile, titleWithoutKeys, writeMapping } from './cases/mapping.js';
import { CaseRegistry, caseSummary } from './cases/registry.js';
import { clientsFor, cycleNameFor, cycleNamePerRun } from './clients.js';
import type { CasebridgeConfig } from './config/schema.js';
import { composeService } from './delivery/compose.js';
import { Delivery } from './delivery/delivery.js';
import { type RunHealth, withHealth } from './delivery/health.js';
import { DeliveryPipeline } from './delivery/pipeline.js';
import { Journaling } from './journal/journaling.js';
import { Journal } from './journal/store.js';
import type { Clock } from './kernel/clock.js';
import type { Problems } from './kernel/problems.js';
import { pipelineId } from './kernel/text.js';
import type { EngineContext } from './kernel/types.js';
import type { Target } from './kernel/work.js';
import { repoPrefixOf } from './publish/commit.js';

/** Made once when the configuration is valid and reporting is on, so nothing downstream asks whether a part exists. */
export interface Session {
  readonly config: CasebridgeConfig;
  /** The clients; in a dry run wrapped by `withDryRun` (client/dry-run.ts), which records and sends nothing. */
  readonly tm: TestManagementClient;
  readonly repo?: ContentRepositoryClient;
  /** A dry run: the calls the wrapped clients were asked for. */
  readonly dry?: DryRunClients;
  readonly delivery: Delivery;
  /** Every result's way to the service: batching, cycle preparation, the deliveries under way, tries again. */
  readonly pipeline: DeliveryPipeline;
  /** The write-ahead log and the journal (a dry run reads and writes neither). */
  readonly journaling: Journaling;
  /** Test cases for unmapped tests (`autoCreate`). */
  readonly cases?: CaseRegistry;
  /** Where this run's results go. */
  readonly target: Target;
  /** Case keys in titles, and the mapping file's keys by test name. */
  readonly keyRe: RegExp;
  readonly mapping: MappingFile;
}

export interface SessionHooks {
  out: (text: string) => void;
  /** Aborted when the end of the run gives up waiting. */
  signal: AbortSignal;
  /** The run's problems (the mapping file's go there). */
  problems: Problems;
  /** Every call's outcome goes there (see withHealth): whether the service answers is decided on them. */
  health: RunHealth;
  /** The run's one clock. */
  clock: Clock;
}

/** Makes the session of a run: clients, delivery, journal, case registry, target, key pattern and mapping. */
export function openSession(c: CasebridgeConfig, ctx: EngineContext, hooks: SessionHooks): Session {
  const env = ctx.env ?? process.env;
  const debug = c.debug || env.CASEBRIDGE_DEBUG === '1' || env.CASEBRIDGE_DEBUG === 'true';
  const logger = debug ? (level: string, message: string) => hooks.out(`casebridge ${level}: ${message}`) : undefined;
  const real = clientsFor(c, logger, { sleep: hooks.clock.sleep });
  const dry =
    c.dryRun !== false
      ? withDryRun(real, (line) => {
          if (debug) hooks.out(`casebridge: ${line}`);
        })
      : undefined;
  const { health } = hooks;
  const tm = dry?.tm ?? withHealth(real.tm, health);
  const repo = dry ? dry.repo : real.repo;
  const roots = [
    ctx.cwd,
    tmpdir(),
    resolve(ctx.cwd, c.journalDir),
    ...c.attachments.roots.map((r) => resolve(ctx.cwd, r)),
    ...(ctx.attachmentRoots ?? []),
  ];
  // The service's rules (a cycle someone completed is resumed, the older variant's missing routes) wrap the client
  // once, here, as undici composes interceptors: delivery's call sites call the service directly.
  const svc = composeService({
    tm,
    dryRun: dry !== undefined,
    o: { signal: hooks.signal },
    answeredSince: (since: number) => health.answeredSince(since),
    clock: hooks.clock,
  });
  const pipelineRun = pipelineId(env);
  const delivery = new Delivery({
    config: c,
    svc,
    ...(repo ? { repo } : {}),
    runner: ctx.runner,
    roots: roots.map(realPath),
    // A request succeeded: the end of the run keeps waiting while this happens.
    onProgress: () => pipeline.progress(),
    ...(pipelineRun ? { pipeline: pipelineRun } : {}),
    track: (work, what) => pipeline.track(work, what),
    repoPrefix: repoPrefixOf(ctx.cwd),
    sharded: (ctx.shard?.total ?? 1) > 1,
  });
  const journal = new Journal(resolve(ctx.cwd, c.journalDir));
  const journaling = new Journaling(
    journal,
    dry ? undefined : journal.openWal(),
    hooks.problems,
    hooks.out,
    ctx.onReplay,
  );
  const keyRe = keyPattern(c.keyPattern ? { pattern: c.keyPattern } : { projectKeys: [c.projectKey] });
  const mapping = loadMapping(c, ctx.cwd, keyRe, hooks.problems);
  const target: Target = {
    mode: c.mode,
    projectKey: c.projectKey,
    ...(c.mode === 'cycle'
      ? {
          plan: c.testPlan as string,
          cycleName: cycleNameFor(c, env),
          preloadRuns: c.preloadRuns,
          ...(cycleNamePerRun(c, env) ? { perRunCycle: true } : {}),
        }
      : {}),
    ...(c.environment ? { environment: c.environment } : {}),
    ...(c.build ? { build: c.build } : {}),
  };
  const cases = c.autoCreate
    ? new CaseRegistry({
        tm,
        dryRun: dry !== undefined,
        project: c.projectKey,
        summaryOf: (t) => caseSummary(t, titleWithoutKeys(t.titlePath[t.titlePath.length - 1] ?? '', keyRe)),
        concurrency: c.concurrency,
        batchSize: c.createBatchSize,
        // A machine that found the cycle made by another one (shards adopting one suite at once) lets that one
        // create the cases and takes them, instead of racing it on every test.
        second: async () => {
          // Shards of one run hold different tests: each creates its own cases at once.
          if (target.mode !== 'cycle' || ctx.shard) return false;
          await delivery.cycles.ensure(target);
          return delivery.cycles.madeElsewhere();
        },
        signal: hooks.signal,
        onProgress: () => pipeline.progress(),
        clock: hooks.clock,
      })
    : undefined;
  const pipeline: DeliveryPipeline = new DeliveryPipeline({
    config: c,
    target,
    delivery,
    journaling,
    ...(cases ? { cases } : {}),
    health,
    problems: hooks.problems,
    signal: hooks.signal,
    clock: hooks.clock,
  });
  return {
    config: c,
    tm,
    ...(repo ? { repo } : {}),
    ...(dry ? { dry } : {}),
    delivery,
    pipeline,
    journaling,
    ...(cases ? { cases } : {}),
    target,
    keyRe,
    mapping,
  };
}

/** Keys of cases found or created in this run go into the mapping file, in one write (not in a dry run). */
export function saveMapping(s: Session, cwd: string, problems: Problems): void {
  if (!s.cases || s.dry) return;
  const added = s.cases.takeResolved();
  if (Object.keys(added).length === 0) return;
  try {
    writeMapping(resolve(cwd, s.config.mappingFile), added);
  } catch (err) {
    problems.add('mapping', `could not write ${s.config.mappingFile}: ${redact(String(err))}`);
  }
}

function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

function loadMapping(c: CasebridgeConfig, cwd: string, keyRe: RegExp, problems: Problems): MappingFile {
  const read = readMappingFile(resolve(cwd, c.mappingFile), keyRe);
  for (const p of read.problems) problems.add('mapping', `${c.mappingFile}: ${p}`);
  return read.mapping;
}
