#!/usr/bin/env node
/**
 * Reporter benchmark (`npm run bench`, after the emulator's throughput benchmark): what casebridge costs a real test
 * run. For each runner slot (Playwright; Vitest and Jest when their packages are built), suite size, injected
 * round-trip latency, mode (adhoc, cycle) and variant (all passing, 10% failing with screenshots), the real runner
 * runs a generated suite once with its built-in JUnit reporter only (baseline) and once with JUnit + casebridge,
 * against the in-process emulator seeded with one test case per test. Plus an attachment scenario (50 failing tests
 * with a file of 1 MB and of 20 MB each). Prints a markdown table and writes bench-results/reporters.md and .json.
 * Then the two cells of issue 14 (lib/adoption.mjs): a Jest suite of 1,400 tests adopted with autoCreate (first and
 * second run), and `casebridge replay` of 1,000 journaled results; written to bench-results/adoption.md and .json.
 *
 * Environment: BENCH_QUICK=1 (100 and 1,000 tests, 20 ms, 3 interleaved runs), BENCH_SIZES=100,1000,
 * BENCH_LATENCIES=0,20,100, BENCH_MODES=adhoc,cycle, BENCH_VARIANTS=passing,failing, BENCH_RUNNERS=playwright,vitest,
 * BENCH_REPS=7 (runs of the overhead cell), BENCH_FILES=0 (skip the attachment scenario), BENCH_FILE_MB=1,20,
 * BENCH_FULL_MATRIX=1 (every cell at 10,000 tests too), BENCH_OUT_NAME=reporters (output file stem),
 * BENCH_ONLY=matrix,adoption,replay,queries (the parts to run; `queries` is the cell of issue 39 in lib/queries.mjs:
 * reading back a 1,000-run cycle; `peers`, not by default, is the cell of issue 25 in lib/peers.mjs: casebridge
 * beside Qase's and testomat.io's reporters; `history`, not by default, the cell of issue 26 in lib/history.mjs:
 * history classification on vs off; `failing`, not by default, the cell in lib/failing.mjs: 300 Playwright tests, 30
 * failing each its own way, two nights with defects), BENCH_ADOPTION_VARIANTS=passing,failing,
 * BENCH_REPLAY_TIMEOUT_S=150. Builds nothing: `npm run build` first. See README.md here.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '@casebridge/emulator';
import { runAdoption, runReplay } from './lib/adoption.mjs';
import { adoptionTargets, renderAdoption } from './lib/adoption-report.mjs';
import { changedSince, median, OUT, ROOT, seedFor, versions } from './lib/common.mjs';
import { runFailing } from './lib/failing.mjs';
import { runHistory } from './lib/history.mjs';
import { jest } from './lib/jest.mjs';
import { measure, serveNiced, stopRunning } from './lib/measure.mjs';
import { runPeers } from './lib/peers.mjs';
import { playwright } from './lib/playwright.mjs';
import { runQueries } from './lib/queries.mjs';
import { render, summarizeCell, summarizeFiles, targets } from './lib/report.mjs';
import { vitest } from './lib/vitest.mjs';

const env = process.env;
const QUICK = env.BENCH_QUICK === '1';
const list = (name, fallback) =>
  env[name]
    ? env[name]
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : fallback;

const settings = {
  quick: QUICK,
  sizes: list('BENCH_SIZES', QUICK ? ['100', '1000'] : ['100', '1000', '10000']).map(Number),
  latencies: list('BENCH_LATENCIES', QUICK ? ['20'] : ['0', '20', '100']).map(Number),
  modes: list('BENCH_MODES', ['adhoc', 'cycle']),
  variants: list('BENCH_VARIANTS', ['passing', 'failing']),
  runners: list('BENCH_RUNNERS', ['playwright', 'vitest', 'jest']),
  /** Interleaved baseline/casebridge pairs of the overhead cell (1,000 passing tests, cycle mode, 20 ms). */
  reps: Number(env.BENCH_REPS ?? (QUICK ? 3 : 7)),
  overheadCell: { size: 1000, variant: 'passing', mode: 'cycle', latency: 20 },
  /**
   * How the matrix's cycle-mode runs name their cycle. `daily` (default): the fixed name `Bench`, looked for, then
   * created, and the run's cases added to it. `per-run`: a CI job's steady run (issue 25), a cycle named per run
   * (`${build}`, created without looking first) with the plan's runs preloaded (`preloadRuns`). `ci`: the same in a
   * CI job (a pipeline id, CASEBRIDGE_PIPELINE_ID), where the runs are read right before the bulk.
   */
  matrixCycle: env.BENCH_MATRIX_CYCLE ?? 'daily',
  /** Runners whose overhead cell runs BENCH_REPS pairs (the others one): Playwright by default, the slowest to vary. */
  overheadRunners: list('BENCH_OVERHEAD_RUNNERS', ['playwright']),
  files: env.BENCH_FILES !== '0',
  fileMb: list('BENCH_FILE_MB', ['1', '20']).map(Number),
  fileCount: 50,
  fullMatrix: env.BENCH_FULL_MATRIX === '1',
  /** Parts to run: the runner matrix (with the attachment scenario), the adoption cell, the replay cell. */
  only: list('BENCH_ONLY', ['matrix', 'adoption', 'replay', 'queries']),
  adoptionVariants: list('BENCH_ADOPTION_VARIANTS', ['passing', 'failing']),
  /** `casebridge replay` is killed after this long, so that the replay cell stays within minutes. */
  replayTimeoutMs: Number(env.BENCH_REPLAY_TIMEOUT_S ?? 150) * 1000,
  /** From this size on, unless BENCH_FULL_MATRIX=1: cycle mode only, failing at one latency, one shared baseline. */
  largeSize: 10_000,
};

const SLOTS = { playwright, vitest, jest };
/** BENCH_MATRIX_CYCLE=per-run: the cycle is named by the build (`Bench`, the name the delivered count reads). */
const PER_RUN_CYCLE = { CASEBRIDGE_CYCLE: '${build}', CASEBRIDGE_BUILD: 'Bench', CASEBRIDGE_PRELOAD_RUNS: 'true' };
/** BENCH_MATRIX_CYCLE=ci: the same, with a pipeline id as a CI job has one. */
const CYCLE_ENV = { daily: {}, 'per-run': PER_RUN_CYCLE, ci: { ...PER_RUN_CYCLE, CASEBRIDGE_PIPELINE_ID: 'bench' } };
/** Output file stem in bench-results/ (BENCH_OUT_NAME), so a partial run can be kept beside a full one. */
const NAME = env.BENCH_OUT_NAME || 'reporters';

const log = (line) => process.stderr.write(`${line}\n`);
const fmt = (r) =>
  r.casebridge
    ? `wall ${(r.wallMs / 1000).toFixed(1)} s, onEnd ${r.onEndMs?.toFixed(0)} ms, drain ${r.drainMs?.toFixed(0)} ms, ` +
      `${r.requests} req, RSS ${r.maxRssMb?.toFixed(1)} MB, delivered ${r.delivered}`
    : `wall ${(r.wallMs / 1000).toFixed(1)} s, onEnd ${r.onEndMs?.toFixed(0)} ms, drain ${r.drainMs?.toFixed(0)} ms, RSS ${r.maxRssMb?.toFixed(1)} MB`;

/**
 * The cells of one runner and size, in the order they run. Every size × latency × mode × variant with
 * BENCH_FULL_MATRIX=1; otherwise the matrix is trimmed where a cell would cost minutes and tell nothing new, because
 * Playwright restarts its worker after every failed test (about 1.5 s of CPU each here) and a 10,000-test run takes
 * minutes on a loaded 2-core machine:
 * - failing variant: at one latency (20 ms); both modes up to 100 tests, cycle mode above; none at 10,000 tests;
 * - 10,000 tests: cycle mode, all passing, 20 ms, and one baseline run shared by its cells.
 */
function plan(slot, size) {
  const full = settings.fullMatrix;
  const large = size >= settings.largeSize && !full;
  const oneLatency = settings.latencies.includes(20) ? 20 : settings.latencies[0];
  const oc = settings.overheadCell;
  const cells = [];
  for (const variant of settings.variants) {
    for (const mode of settings.modes) {
      for (const latency of settings.latencies) {
        if (!full && variant === 'failing') {
          if (large || latency !== oneLatency) continue;
          if (size > 100 && mode !== 'cycle') continue;
          if (settings.quick && size > 100) continue;
        }
        if (large && (mode !== 'cycle' || latency !== oneLatency)) continue;
        const overhead =
          size === oc.size &&
          variant === oc.variant &&
          mode === oc.mode &&
          latency === oc.latency &&
          settings.overheadRunners.includes(slot.name);
        cells.push({ runner: slot.name, size, variant, mode, latency, reps: overhead ? settings.reps : 1, overhead });
      }
    }
  }
  return { cells, sharedBaseline: large };
}

/**
 * What loading the reporter package costs a process by itself: RSS and heap after `import()` minus before, in a
 * fresh Node process (median of 3). A fixed part of the main-process memory figure, whatever the suite size.
 */
function importCost(pkg) {
  const code = `const a = process.memoryUsage(); import('${pkg}').then(() => { const b = process.memoryUsage(); console.log(JSON.stringify({ rss: (b.rss - a.rss) / 1048576, heap: (b.heapUsed - a.heapUsed) / 1048576 })); });`;
  const runs = [];
  for (let i = 0; i < 3; i++) {
    try {
      runs.push(JSON.parse(execFileSync(process.execPath, ['-e', code], { cwd: ROOT, encoding: 'utf8' }).trim()));
    } catch {
      return null;
    }
  }
  const med = (k) => Math.round(median(runs.map((r) => r[k])) * 10) / 10;
  return { package: pkg, rssMb: med('rss'), heapMb: med('heap') };
}

async function runSlot(slot, results) {
  const why = slot.unavailable();
  if (why) {
    log(`bench: ${slot.label} skipped: ${why}`);
    results.skipped.push({ runner: slot.name, reason: why });
    return;
  }
  results.importCost[slot.name] = importCost(`@casebridge/${slot.name}`);
  log(
    `bench: ${slot.label}: importing @casebridge/${slot.name} costs ${JSON.stringify(results.importCost[slot.name])}`,
  );
  for (const size of slot.sizes.filter((s) => settings.sizes.includes(s))) {
    const emu = await startEmulator({ port: 0, seed: seedFor(size) });
    try {
      const { cells, sharedBaseline } = plan(slot, size);
      const baselines = {};
      for (const cell of cells) {
        const dir = slot.suite(size, cell.variant);
        cell.baseline = [];
        cell.casebridge = [];
        log(`bench: ${slot.label} ${size} ${cell.variant} ${cell.mode} ${cell.latency} ms × ${cell.reps}`);
        for (let i = 0; i < cell.reps; i++) {
          const load = [loadavg()[0]];
          if (sharedBaseline && baselines[cell.variant]) cell.baseline.push(baselines[cell.variant]);
          else {
            const b = await measure({ runner: slot, dir, casebridge: false, mode: cell.mode, latency: 0, emu });
            log(`  baseline   ${fmt(b)}`);
            cell.baseline.push(b);
            baselines[cell.variant] = b;
          }
          const c = await measure({
            runner: slot,
            dir,
            casebridge: true,
            mode: cell.mode,
            latency: cell.latency,
            emu,
            env: CYCLE_ENV[settings.matrixCycle],
          });
          log(`  casebridge ${fmt(c)}`);
          cell.casebridge.push(c);
          load.push(loadavg()[0]);
          cell.load = [...(cell.load ?? []), ...load];
        }
        cell.sharedBaseline = sharedBaseline;
        cell.summary = summarizeCell(cell);
        results.cells.push(cell);
        writeOut(results, false);
      }
    } finally {
      await emu.close();
    }
  }
  if (settings.files && slot.filesSuite) await runFiles(slot, results);
}

/**
 * 50 tests each attaching a file of N MB, cycle mode, no added latency: upload MB/s and RSS growth. The tests pass
 * and casebridge uploads every screenshot (`attachments.screenshots: 'all'`): the same upload path as a failing
 * test's screenshot, without 50 Playwright worker restarts (one per failed test) that would dominate the timing.
 */
async function runFiles(slot, results) {
  const emu = await startEmulator({ port: 0, seed: seedFor(settings.fileCount) });
  try {
    for (const mb of settings.fileMb) {
      const dir = slot.filesSuite(settings.fileCount, mb);
      log(`bench: ${slot.label} attachments: ${settings.fileCount} files of ${mb} MB`);
      const opts = {
        runner: slot,
        dir,
        mode: 'cycle',
        latency: 0,
        emu,
        options: { attachments: { screenshots: 'all' } },
      };
      const b = await measure({ ...opts, casebridge: false });
      log(`  baseline   ${fmt(b)}`);
      const c = await measure({ ...opts, casebridge: true });
      log(`  casebridge ${fmt(c)}, uploads ${c.uploads?.count} in ${c.uploads?.spanMs?.toFixed(0)} ms`);
      const scenario = { runner: slot.name, files: settings.fileCount, mb, baseline: [b], casebridge: [c] };
      scenario.summary = summarizeFiles(scenario);
      results.files.push(scenario);
      writeOut(results, false);
    }
  } finally {
    await emu.close();
  }
}

function writeOut(results, final) {
  const json = { ...results, targets: targets(results, settings) };
  mkdirSync(OUT, { recursive: true });
  // Runs carry their raw figures; the outputs of runs that went well are left out to keep the file readable.
  writeFileSync(join(OUT, `${NAME}.json`), `${JSON.stringify(json, null, 2)}\n`);
  const md = render(json, settings);
  writeFileSync(join(OUT, `${NAME}.md`), md);
  if (final) process.stdout.write(`${md}\nWritten: bench-results/${NAME}.md, bench-results/${NAME}.json\n`);
}

function environment() {
  return {
    node: process.version,
    platform: `${platform()} ${release()}`,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
    root: ROOT,
  };
}

/** bench-results/adoption.md and .json (`<BENCH_OUT_NAME>-adoption` when that is set): the cells of issue 14. */
const ADOPTION_NAME = NAME === 'reporters' ? 'adoption' : `${NAME}-adoption`;

function writeAdoption(results, final) {
  const json = { ...results, targets: adoptionTargets(results) };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, `${ADOPTION_NAME}.json`), `${JSON.stringify(json, null, 2)}\n`);
  const md = renderAdoption(json);
  writeFileSync(join(OUT, `${ADOPTION_NAME}.md`), md);
  if (final) {
    process.stdout.write(`${md}\nWritten: bench-results/${ADOPTION_NAME}.md, bench-results/${ADOPTION_NAME}.json\n`);
  }
}

/**
 * The adoption cell (one per variant) and the replay cell of issue 14 (lib/adoption.mjs), each run once. A cell that
 * throws is recorded under "errors" and the next one runs.
 */
async function runIssue14() {
  const results = {
    at: new Date().toISOString(),
    env: environment(),
    versions: versions(),
    adoption: [],
    replay: [],
    errors: [],
  };
  const started = Date.now();
  const cells = [
    ...(settings.only.includes('adoption')
      ? settings.adoptionVariants.map((variant) => [`adoption ${variant}`, () => runAdoption(variant, log), 'adoption'])
      : []),
    ...(settings.only.includes('replay')
      ? [['replay', () => runReplay(log, { timeoutMs: settings.replayTimeoutMs }), 'replay']]
      : []),
  ];
  for (const [label, run, kind] of cells) {
    log(`bench: ${label}`);
    const t0 = Date.now();
    try {
      results[kind].push(await run());
    } catch (err) {
      log(`bench: ${label} failed: ${err.stack ?? err.message}`);
      results.errors.push({ cell: label, error: String(err.message ?? err).slice(0, 2000) });
    }
    log(`bench: ${label}: ${Math.round((Date.now() - t0) / 1000)} s`);
    writeAdoption(results, false);
  }
  results.env.loadAtEnd = loadavg().map((x) => Math.round(x * 100) / 100);
  const changed = changedSince(results.versions);
  if (changed) results.versions.changedDuringRun = changed;
  results.durationSeconds = Math.round((Date.now() - started) / 1000);
  writeAdoption(results, true);
}

async function runMatrix() {
  const results = {
    at: new Date().toISOString(),
    env: environment(),
    versions: versions(),
    settings,
    importCost: {},
    cells: [],
    files: [],
    skipped: [],
  };
  const started = Date.now();
  for (const name of settings.runners) {
    const slot = SLOTS[name];
    if (!slot) throw new Error(`BENCH_RUNNERS: unknown runner "${name}": expected playwright, vitest or jest`);
    await runSlot(slot, results);
  }
  results.env.loadAtEnd = loadavg().map((x) => Math.round(x * 100) / 100);
  const changed = changedSince(results.versions);
  if (changed) results.versions.changedDuringRun = changed;
  results.durationSeconds = Math.round((Date.now() - started) / 1000);
  writeOut(results, true);
}

async function main() {
  const parts = ['matrix', 'adoption', 'replay', 'peers', 'history', 'queries', 'failing'];
  const unknown = settings.only.filter((p) => !parts.includes(p));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown part "${unknown[0]}": expected ${parts.join(', ')}`);
  const variant = settings.adoptionVariants.find((v) => v !== 'passing' && v !== 'failing');
  if (!Object.hasOwn(CYCLE_ENV, settings.matrixCycle)) {
    throw new Error(`BENCH_MATRIX_CYCLE: unknown naming "${settings.matrixCycle}": expected daily, per-run, ci`);
  }
  if (variant) throw new Error(`BENCH_ADOPTION_VARIANTS: unknown variant "${variant}": expected passing, failing`);
  if (!(settings.replayTimeoutMs > 0)) {
    throw new Error(
      `BENCH_REPLAY_TIMEOUT_S: expected a number of seconds above 0, got "${env.BENCH_REPLAY_TIMEOUT_S}"`,
    );
  }
  serveNiced(log);
  if (settings.only.includes('matrix')) await runMatrix();
  if (settings.only.includes('adoption') || settings.only.includes('replay')) await runIssue14();
  // Issue 25: casebridge beside Qase's and testomat.io's reporters (lib/peers.mjs); installs them from npm.
  if (settings.only.includes('peers')) await runPeers({ log, environment: environment() });
  // Issue 26: the requests history classification adds, on vs off, two nights (lib/history.mjs).
  if (settings.only.includes('history')) await runHistory({ log, environment: environment() });
  // Issue 39: reading back at scale: a 1,000-run cycle's summary and failures (lib/queries.mjs).
  if (settings.only.includes('queries')) await runQueries({ log, environment: environment() });
  // A failing Playwright suite reported two nights running: requests and the end of the run (lib/failing.mjs).
  if (settings.only.includes('failing')) await runFailing({ log, environment: environment() });
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopRunning();
    process.exit(130);
  });
}

main().catch((err) => {
  process.stderr.write(`bench: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
