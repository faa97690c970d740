/**
 * Shared pieces of the reporter benchmark: paths, the generated emulator seed, the timing reporter's output format and
 * small statistics. Plain Node ESM, no build step.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const FIXTURES = join(ROOT, 'test', '.fixtures');
export const OUT = join(ROOT, 'bench-results');
export const BIN = join(ROOT, 'node_modules', '.bin');

/** Project of the generated cases; test i (0-based) is keyed to case BENCH-(i+2); the plan is BENCH-1. */
export const PROJECT = 'BENCH';
export const PLAN = `${PROJECT}-1`;
export const TOKEN = 'bench-token';
export const keyOf = (i) => `${PROJECT}-${i + 2}`;

/** A 1×1 PNG: the "screenshot" of a failing test. */
export const PNG_HEX =
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d1a30000000049454e44ae426082';

/** Every tenth test fails (tests 10, 20, ...), in the "10% failing with screenshots" variant. */
export const fails = (variant, i) => variant === 'failing' && (i + 1) % 10 === 0;

/**
 * The emulator seed of a suite of `size` tests: one admin with a token, project BENCH, test plan BENCH-1 whose
 * members are the `size` test cases BENCH-2..BENCH-(size+1). Cycle mode then has one run per test.
 */
export function seedFor(size) {
  const cases = Array.from({ length: size }, (_, i) => ({ type: 'Test Case', summary: `Bench case ${i + 1}` }));
  return {
    users: [{ name: 'admin', displayName: 'Admin', password: 'admin', tokens: [TOKEN], admin: true }],
    projects: [
      {
        key: PROJECT,
        name: 'Reporter benchmark',
        issues: [
          { type: 'Test Plan', summary: `Bench plan of ${size} cases`, members: cases.map((_, i) => keyOf(i)) },
          ...cases,
        ],
      },
    ],
  };
}

/** The packages a user installs, copied into a fixture's node_modules by writeFixture. */
const INSTALLED = ['core', 'playwright', 'vitest', 'jest'];

/**
 * Creates (or empties) a fixture folder under test/.fixtures and writes its files, then installs the built
 * casebridge packages into its node_modules as copies (package.json and dist), as `npm install` puts them in a
 * user's project. Not links to packages/*: a link resolves to a path outside node_modules, and Vitest then runs the
 * reporter and the core through Vite's transform pipeline instead of Node's loader, which cost its main process
 * +85 MB RSS and +0.6 s CPU here and is not what a user gets. The runners themselves and the casebridge packages'
 * own dependencies resolve from the repository's node_modules above.
 */
export function writeFixture(name, files) {
  const dir = join(FIXTURES, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  for (const name of INSTALLED) {
    const from = join(ROOT, 'packages', name);
    const to = join(dir, 'node_modules', '@casebridge', name);
    mkdirSync(to, { recursive: true });
    cpSync(join(from, 'package.json'), join(to, 'package.json'));
    cpSync(join(from, 'dist'), join(to, 'dist'), { recursive: true });
  }
  return dir;
}

/**
 * The timing probe every fixture loads (as a reporter of its runner). It appends JSON lines to BENCH_TIMING_FILE:
 * `{probe, event: 'end', lastTestEnd, tests, at}` from the runner's end hook, and `{event: 'exit', maxRssKb, at}`
 * from the process's `exit` event, the last moment the process runs JavaScript, with the CPU time the process used (and,
 * with BENCH_LIVE_HEAP_MS, `maxLiveMb`: the largest heap after a forced full GC). Times are epoch milliseconds with
 * fractions (`performance.timeOrigin + performance.now()`), comparable with the parent's.
 */
export function probeSource(format = 'esm') {
  const esm = format === 'esm';
  return `
${esm ? "import { appendFileSync } from 'node:fs';" : "const { appendFileSync } = require('node:fs');"}
${esm ? "import { setFlagsFromString } from 'node:v8';" : "const { setFlagsFromString } = require('node:v8');"}
${esm ? "import { runInNewContext } from 'node:vm';" : "const { runInNewContext } = require('node:vm');"}
const file = process.env.BENCH_TIMING_FILE;
const liveEvery = Number(process.env.BENCH_LIVE_HEAP_MS || 0);
const now = () => performance.timeOrigin + performance.now();
const write = (o) => { if (file) appendFileSync(file, JSON.stringify(o) + '\\n'); };
let exitHooked = false;
${esm ? 'export ' : ''}function probe(name) {
  let lastTestEnd = 0;
  let tests = 0;
  if (name === 'post' && !exitHooked) {
    exitHooked = true;
    // BENCH_LIVE_HEAP_MS: a full GC every that many ms, and the largest heap left after one (what the process holds,
    // without the garbage V8 has not collected yet). It costs the run CPU: wall and CPU of such runs are not comparable.
    let maxLive = 0;
    if (liveEvery > 0) {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc');
      setInterval(() => {
        gc();
        maxLive = Math.max(maxLive, process.memoryUsage().heapUsed);
      }, liveEvery).unref();
    }
    process.on('exit', () => {
      const u = process.resourceUsage();
      write({ probe: name, event: 'exit', maxRssKb: u.maxRSS, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, ...(maxLive ? { maxLiveMb: maxLive / 1e6 } : {}), at: now() });
    });
  }
  return {
    testEnded() { lastTestEnd = now(); tests += 1; },
    ended() { write({ probe: name, event: 'end', lastTestEnd, tests, at: now() }); },
  };
}
${esm ? '' : 'module.exports = { probe };'}
`;
}

/** The ESM probe module. */
export const PROBE_CORE = probeSource('esm');

export const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export const round = (n, d = 1) => (Number.isFinite(n) ? Math.round(n * 10 ** d) / 10 ** d : null);

/**
 * What was measured: the commit and the build times of the packages the runs load. Other people rebuild while a
 * long run goes on; a build that changes mid-run is named in the output, since its cells measured two versions.
 */
export function versions() {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    // Not a git checkout: the build times below still say which build ran.
  }
  const builds = {};
  for (const pkg of ['core', 'emulator', 'playwright', 'vitest', 'jest', 'cli']) {
    try {
      builds[pkg] = statSync(
        join(ROOT, 'packages', pkg, 'dist', pkg === 'cli' ? 'cli.js' : 'index.js'),
      ).mtime.toISOString();
    } catch {
      builds[pkg] = null;
    }
  }
  return { commit, builds };
}

/** `versions()` again at the end: the packages rebuilt (or the commit moved) since `before`, or undefined. */
export function changedSince(before) {
  const after = versions();
  const rebuilt = Object.keys(after.builds).filter((k) => after.builds[k] !== before.builds[k]);
  return rebuilt.length > 0 || after.commit !== before.commit ? { ...after, rebuilt } : undefined;
}

/**
 * A local port nothing listens on (bound, then closed): a service that is down answers connection refused at once,
 * as in test/support/runner.ts.
 */
export function closedPort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** A cell's results, closed: the load at the end, the builds that changed while it ran, how long it took. */
export function closeResults(results, started) {
  results.env = { ...results.env, loadAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) };
  const changed = changedSince(results.versions);
  if (changed) results.versions.changedDuringRun = changed;
  results.durationSeconds = Math.round((Date.now() - started) / 1000);
}
