/**
 * Two cells of issue 14, both Jest in cycle mode at 20 ms:
 * - adoption: a team's first run of a suite whose tests have no case yet (`CASEBRIDGE_AUTO_CREATE=true`, defects on,
 *   a test plan without members), then its second run with the mapping file the first one wrote, into a new cycle;
 * - replay: 1,000 status-only results journaled by a run while the service was down, delivered by
 *   `casebridge replay` once it is back.
 * Each cell starts its own emulator and writes its own fixture under test/.fixtures.
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '@casebridge/emulator';
import { closedPort, PROJECT, ROOT, seedFor, versions, writeFixture } from './common.mjs';
import { jest, jestProjectFiles } from './jest.mjs';
import { baseEnv, casebridgeEnv, delivered, journalLeft, measure, requestsOf, timedRun } from './measure.mjs';
import { playwright, playwrightProjectFiles } from './playwright.mjs';
import { vitest, vitestProjectFiles } from './vitest.mjs';

/** BENCH_ADOPTION_LATENCY (ms, default 20) and BENCH_ADOPTION_RPS (a per-user rate limit, default none). */
const RPS = Number(process.env.BENCH_ADOPTION_RPS ?? 0);
/**
 * BENCH_ADOPTION_RUNNER=playwright runs the same keyless suite under Playwright (results one by one, as its
 * onTestEnd gives them; issue 25's "first run, 10,000 new tests" with BENCH_ADOPTION_TESTS=10000); =vitest under
 * Vitest (issue 25's first run of 1,400 new tests, "Jest and Vitest"). Default Jest.
 */
const RUNNER = ['playwright', 'vitest'].includes(process.env.BENCH_ADOPTION_RUNNER ?? '')
  ? process.env.BENCH_ADOPTION_RUNNER
  : 'jest';

export const ADOPTION = {
  runner: RUNNER,
  tests: Number(process.env.BENCH_ADOPTION_TESTS ?? 1400),
  perFile: 100,
  latency: Number(process.env.BENCH_ADOPTION_LATENCY ?? 20),
  rateLimit: RPS > 0 ? { requestsPerSecond: RPS, perUser: true } : undefined,
  /**
   * Reporter options of the casebridge runs (BENCH_ADOPTION_OPTIONS, JSON; e.g. `{"concurrency": 8}`), beside the
   * CASEBRIDGE_* variables.
   */
  options: JSON.parse(process.env.BENCH_ADOPTION_OPTIONS || '{}'),
  /** The engine's default concurrency: the wall budget counts the new cases' round trips divided by it. */
  concurrency: 4,
  /** The failing variant: every 100th test fails (1%). */
  failEvery: 100,
};

export const REPLAY = { tests: 1000, latency: 20 };

export const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');

/** Module names of the 14 files, and words the titles are made of (none looks like a case key). */
const MODULES = [
  'cart',
  'checkout',
  'auth',
  'search',
  'profile',
  'orders',
  'inventory',
  'billing',
  'shipping',
  'notifications',
  'reports',
  'settings',
  'catalog',
  'reviews',
];
const ASPECTS = ['validation', 'rendering', 'persistence', 'permissions', 'errors'];
const VERBS = ['creates', 'updates', 'removes', 'lists', 'rejects', 'formats', 'sorts', 'filters', 'caches', 'exports'];
const THINGS = ['the draft entry', 'a shared record', 'every pending item', 'the archived copy'];

export const adoptionFails = (variant, i) => variant === 'failing' && (i + 1) % ADOPTION.failEvery === 0;

/**
 * One test file of the adoption suite: `describe('<Module>')` > `describe('<aspect>')` > 20 tests each, titles like
 * "updates the draft entry (case 17)": no keys, distinct within their describe path, none a prefix of another (so
 * the figures measure what a first run costs, not how identity copes with look-alike titles, which test/ checks).
 */
function adoptionFile(module, from, to, variant) {
  const name = module[0].toUpperCase() + module.slice(1);
  const lines = [`describe('${name}', () => {`];
  const perAspect = Math.ceil((to - from) / ASPECTS.length);
  for (let a = 0; a < ASPECTS.length; a++) {
    const first = from + a * perAspect;
    const last = Math.min(to, first + perAspect);
    if (first >= last) break;
    lines.push(`  describe('${ASPECTS[a]}', () => {`);
    for (let i = first; i < last; i++) {
      const j = i - from;
      const title = `${VERBS[j % VERBS.length]} ${THINGS[Math.floor(j / VERBS.length) % THINGS.length]} (case ${j + 1})`;
      if (adoptionFails(variant, i))
        lines.push(`    test('${title}', () => {`, `      expect(${i + 1}).toBe(0);`, '    });');
      else lines.push(`    test('${title}', () => {});`);
    }
    lines.push('  });');
  }
  lines.push('});');
  return `${lines.join('\n')}\n`;
}

/** The runner slot of the cell (its command and the end hooks' probes). */
export const adoptionRunner = () => ({ playwright, vitest, jest })[ADOPTION.runner];

/**
 * The adoption suite: `ADOPTION.tests` tests without keys, `perFile` a file, in
 * `test/.fixtures/bench-adoption-<runner>-*` (Playwright: the same describes and titles, `describe` being
 * `test.describe`).
 */
export function adoptionSuite(variant) {
  const runner = ADOPTION.runner;
  const files = { playwright: playwrightProjectFiles, vitest: vitestProjectFiles, jest: jestProjectFiles }[runner]();
  const header = {
    playwright: "import { expect, test } from '@playwright/test';\n\nconst describe = test.describe;\n\n",
    vitest: "import { describe, expect, test } from 'vitest';\n\n",
    jest: '',
  }[runner];
  for (let from = 0, n = 0; from < ADOPTION.tests; from += ADOPTION.perFile, n++) {
    const module = MODULES[n % MODULES.length] + (n >= MODULES.length ? `-${Math.floor(n / MODULES.length)}` : '');
    const body = adoptionFile(module, from, Math.min(ADOPTION.tests, from + ADOPTION.perFile), variant);
    files[runner === 'jest' ? `tests/${module}.test.js` : `tests/${module}.spec.mjs`] = header + body;
  }
  return writeFixture(`bench-adoption-${ADOPTION.runner}-${ADOPTION.tests}-${variant}`, files);
}

/** The emulator's state that tells whether every test got exactly one case and one result. */
function tally(emu, cycle) {
  const s = emu.store;
  const project = s.projects.find((p) => p.key === PROJECT);
  const issues = s.issues.filter((i) => i.projectId === project?.id);
  const ids = new Set(s.cycles.filter((c) => c.name === cycle).map((c) => c.id));
  const runs = s.runs.filter((r) => ids.has(r.cycleId));
  const statuses = {};
  for (const r of runs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  return {
    cases: issues.filter((i) => i.type === 'Test Case').length,
    defects: issues.filter((i) => i.type === 'Bug').length,
    runs: runs.length,
    /** Distinct cases with a run in the cycle: fewer than the runs when one case has two runs. */
    casesInCycle: new Set(runs.map((r) => r.tcId)).size,
    statuses,
  };
}

function mappingEntries(dir) {
  try {
    return Object.keys(JSON.parse(readFileSync(join(dir, 'casebridge.keys.json'), 'utf8'))).length;
  } catch {
    return 0;
  }
}

/** The 1-minute load average, two decimals. */
const load = () => Math.round(loadavg()[0] * 100) / 100;

/** Drops what a report need not keep of a run: the request tail (thousands of lines here). */
const slim = ({ tail, timeline, ...run }) => run;

/**
 * The adoption cell: an unmeasured bare run (Jest's transform cache), the bare run (Jest's `summary` reporter only),
 * the first casebridge run into cycle "Adoption 1" from the seed (project and an empty plan, no cases), then the
 * second into "Adoption 2" with the emulator's state and the mapping file of the first. The second run starts with
 * an empty journal: what the first left there is its own figure, and replaying it would hide the steady-state cost.
 */
export async function runAdoption(variant, log) {
  const load0 = load();
  const rate = ADOPTION.rateLimit ? { rateLimit: ADOPTION.rateLimit } : {};
  const emu = await startEmulator({ port: 0, seed: seedFor(0), ...rate });
  try {
    const dir = adoptionSuite(variant);
    // The builds the fixture's copies of the packages come from (others rebuild packages/*/dist meanwhile).
    const { builds } = versions();
    const runner = adoptionRunner();
    const base = { runner, dir, mode: 'cycle', latency: ADOPTION.latency, emu, timeoutMs: 1_200_000 };
    await measure({ ...base, casebridge: false });
    const bare = await measure({ ...base, casebridge: false });
    log(`  bare       wall ${(bare.wallMs / 1000).toFixed(1)} s, ${bare.tests} tests, exit ${bare.code}`);
    const env = { CASEBRIDGE_AUTO_CREATE: 'true', CASEBRIDGE_DEFECTS: 'true' };
    const first = await measure({ ...base, casebridge: true, cycle: 'Adoption 1', env, options: ADOPTION.options });
    first.state = tally(emu, 'Adoption 1');
    first.mapped = mappingEntries(dir);
    log(`  first run  ${runLine(first)}`);
    if (first.timeline) log(timelineText(first.timeline));
    const casesBefore = first.state.cases;
    // The steady run as a CI job names its cycle: per run (`${build}`), created without looking first, with the
    // plan's runs preloaded (issue 25's steady run of 5 requests).
    const steady = {
      ...env,
      CASEBRIDGE_CYCLE: '${build}',
      CASEBRIDGE_BUILD: 'Adoption 2',
      CASEBRIDGE_PRELOAD_RUNS: 'true',
    };
    const second = await measure({
      ...base,
      casebridge: true,
      cycle: 'Adoption 2',
      env: steady,
      reset: false,
      options: ADOPTION.options,
    });
    second.state = tally(emu, 'Adoption 2');
    second.state.casesCreated = second.state.cases - casesBefore;
    second.mapped = mappingEntries(dir);
    log(`  second run ${runLine(second)}`);
    const failing = Array.from({ length: ADOPTION.tests }, (_, i) => adoptionFails(variant, i)).filter(Boolean).length;
    return {
      cell: 'adoption',
      runner: ADOPTION.runner,
      variant,
      tests: ADOPTION.tests,
      files: Math.ceil(ADOPTION.tests / ADOPTION.perFile),
      failing,
      latency: ADOPTION.latency,
      ...(ADOPTION.rateLimit ? { requestsPerSecond: ADOPTION.rateLimit.requestsPerSecond } : {}),
      load: [load0, load()],
      cores: cpus().length,
      builds,
      bare: slim(bare),
      first: slim(first),
      second: slim(second),
    };
  } finally {
    await emu.close();
  }
}

/** BENCH_TIMELINE=1: the first run's requests, one line each (start–end ms from the spawn, operation). */
function timelineText({ lastTestEnd, requests }) {
  const lines = requests.map(([a, b, op]) => `    ${String(a).padStart(6)}–${String(b).padEnd(6)} ${op}`);
  return [`  timeline (ms from spawn; last test ended at ${lastTestEnd}):`, ...lines].join('\n');
}

const journalText = (j) =>
  `${j.entries + j.claimed} entries${j.claimed ? ` (${j.claimed} claimed)` : ''}, ${j.wals} wal (${j.walResults} results)`;

function runLine(run) {
  return `wall ${(run.wallMs / 1000).toFixed(1)} s, ${run.requests} req, in cycle ${run.delivered}/${run.tests}, cases ${run.state.cases}, journal ${journalText(run.journal)}, exit ${run.code}`;
}

/**
 * The replay cell: the keyed Jest suite (test i → BENCH-(i+2)) runs while the service is down (CASEBRIDGE_URL on a
 * closed port), which journals its results as a user's run would; then `casebridge replay` (the repository's built
 * CLI, in the fixture folder, with the same CASEBRIDGE_* variables) delivers them to the emulator at 20 ms. The
 * replay is killed after `timeoutMs` (its figures then say so), so the cell stays within minutes.
 */
export async function runReplay(log, { timeoutMs = 150_000 } = {}) {
  const load0 = load();
  const emu = await startEmulator({ port: 0, seed: seedFor(REPLAY.tests) });
  try {
    const dir = jest.suite(REPLAY.tests, 'passing', `bench-replay-jest-${REPLAY.tests}`);
    const { builds } = versions();
    const cycle = 'Replay';
    const port = await closedPort();
    const down = await measure({
      runner: jest,
      dir,
      casebridge: true,
      mode: 'cycle',
      latency: 0,
      emu,
      cycle,
      env: { CASEBRIDGE_URL: `http://127.0.0.1:${port}` },
      timeoutMs: 300_000,
    });
    log(
      `  down run   wall ${(down.wallMs / 1000).toFixed(1)} s, ${down.tests} tests, journal ${journalText(down.journal)}, exit ${down.code}`,
    );
    await emu.reset();
    emu.faults.set([{ route: '**', latencyMs: REPLAY.latency }]);
    emu.clearRequests();
    const cpu0 = process.cpuUsage();
    const run = await timedRun(process.execPath, [CLI, 'replay'], {
      cwd: dir,
      env: { ...baseEnv(), FORCE_COLOR: '0', ...casebridgeEnv(emu, 'cycle', cycle) },
      timeoutMs,
      rejectOnTimeout: false,
    });
    const cpu = process.cpuUsage(cpu0);
    const { list, byOp, failed } = requestsOf(emu);
    const replay = {
      code: run.code,
      timedOut: run.timedOut,
      timeoutMs,
      wallMs: run.wallMs,
      requests: list.length,
      failedRequests: failed,
      byOp,
      delivered: delivered(emu, 'cycle', cycle),
      state: tally(emu, cycle),
      journal: journalLeft(join(dir, '.casebridge', 'journal')),
      emulatorCpuMs: (cpu.user + cpu.system) / 1000,
      /** What the command printed: its summary (stdout, without --json) and the end of its progress (stderr). */
      stdout: run.stdout.slice(-2000).trim(),
      stderr: run.stderr.slice(-1000).trim(),
    };
    log(
      `  replay     wall ${(replay.wallMs / 1000).toFixed(1)} s${run.timedOut ? ' (killed)' : ''}, ${replay.requests} req, in cycle ${replay.delivered}/${REPLAY.tests}, journal ${journalText(replay.journal)}, exit ${replay.code}`,
    );
    return {
      cell: 'replay',
      runner: 'jest',
      tests: REPLAY.tests,
      latency: REPLAY.latency,
      load: [load0, load()],
      cores: cpus().length,
      builds,
      command: `node packages/cli/dist/cli.js replay (cwd ${dir.slice(ROOT.length + 1)})`,
      down: slim(down),
      replay,
    };
  } finally {
    await emu.close();
  }
}
