/**
 * The peers cell of issue 25: casebridge beside Qase's and testomat.io's Playwright reporters in one run, on one
 * fixture (test/.fixtures/bench-peers/): 1,000 passing keyless tests, 2 workers. casebridge talks to the in-process
 * emulator, the peers to the stand-ins of lib/peers-standins.mjs, all with the same latency on every answer. Per
 * latency: one first run each (casebridge from a project with an empty plan and no case, `CASEBRIDGE_AUTO_CREATE`;
 * the peers' first run is a run like any other, since their servers create cases and the stand-ins keep nothing),
 * then interleaved steady rounds (junit, casebridge into a new cycle with the first run's mapping, Qase,
 * testomat.io), each wall divided by the junit run of its round. Then the same under a rate limit.
 * Writes bench-results/peers.md and .json (lib/peers-report.mjs) after every run, so an interrupted run keeps what it
 * measured.
 */
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmulator } from '@casebridge/emulator';
import { BIN, closeResults, FIXTURES, OUT, PROBE_CORE, PROJECT, ROOT, seedFor, versions } from './common.mjs';
import { delivered, measure } from './measure.mjs';
import { renderPeers } from './peers-report.mjs';
import { countOf, startQase, startTestomatio } from './peers-standins.mjs';
import { TIMING_REPORTER } from './playwright.mjs';

const env = process.env;
const list = (name, fallback) => (env[name] ? env[name].split(',').map((s) => s.trim()) : fallback);

export const PEERS = {
  tests: 1000,
  perFile: 100,
  latencies: list('BENCH_PEERS_LATENCIES', ['20', '100']).map(Number),
  /** Steady rounds per latency (each: junit, casebridge, Qase, testomat.io). */
  rounds: Number(env.BENCH_PEERS_ROUNDS ?? 3),
  /** The rate-limited part: requests a second (0 = skip it), at this latency, this many steady rounds. */
  rps: Number(env.BENCH_PEERS_RPS ?? 10),
  rpsLatency: 20,
  rpsRounds: 1,
  /**
   * Failing tests among the 1,000 (`BENCH_PEERS_FAILING`, 0 by default): every (1,000 / n)th test fails its own way
   * (its own message and line: a failure group each), as issue 38's "100 distinct failures among 1,000 mapped tests".
   */
  failing: Number(env.BENCH_PEERS_FAILING ?? 0),
  /**
   * Each test waits this long (`BENCH_PEERS_TEST_MS`, 0 by default), as real tests do: 10 ms makes the 1,000-test
   * suite about 12 s on 2 workers, where a first run's creates (6.25 s of Jira's time at 4 at once) fit inside it.
   */
  testMs: Number(env.BENCH_PEERS_TEST_MS ?? 0),
  /** The reporters measured (`BENCH_PEERS_WHO=junit,casebridge` to try a change of casebridge alone). */
  who: list('BENCH_PEERS_WHO', ['junit', 'casebridge', 'qase', 'testomatio']),
  /** A file that gets every request casebridge's runs made (when, operation, status), one JSON line per run. */
  dump: env.BENCH_PEERS_DUMP,
  /** npm specs installed into the fixture at bench time (never into the repository's lockfile). */
  packages: {
    'playwright-qase-reporter': env.BENCH_PEERS_QASE ?? '^2.7.0',
    '@testomatio/reporter': env.BENCH_PEERS_TESTOMATIO ?? '^2.17.0',
  },
};

const NAME = 'bench-peers';
const DIR = join(FIXTURES, NAME);
const TOKEN_QASE = 'bench-qase-token';
const TOKEN_TESTOMATIO = 'bench-testomatio-key';

/** BENCH_PEER picks the reporter beside junit; each peer is the one line its docs tell a user to add. */
const CONFIG = `
import { defineConfig } from '@playwright/test';

const peer = process.env.BENCH_PEER || 'junit';
const added = {
  junit: [],
  casebridge: [['@casebridge/playwright', {}]],
  qase: [['playwright-qase-reporter', {}]],
  testomatio: [['@testomatio/reporter/playwright', {}]],
}[peer];
if (!added) throw new Error('BENCH_PEER: unknown reporter ' + peer);
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  workers: 2,
  fullyParallel: true,
  retries: 0,
  reporter: [
    ['./timing-reporter.mjs', { probe: 'pre' }],
    ['junit', { outputFile: 'junit.xml' }],
    ...added,
    ['./timing-reporter.mjs', { probe: 'post' }],
  ],
});
`;

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
  'reports',
];
const VERBS = ['creates', 'updates', 'removes', 'lists', 'rejects', 'formats', 'sorts', 'filters', 'caches', 'exports'];
const THINGS = ['the draft entry', 'a shared record', 'every pending item', 'the archived copy'];

/**
 * One spec file: `test.describe('<Module>')` with 100 passing tests titled like "updates the draft entry (case 17)":
 * no case key (casebridge's first run creates the cases, the peers' servers do it from the titles), distinct, none a
 * prefix of another.
 */
function specFile(module, from, to) {
  const name = module[0].toUpperCase() + module.slice(1);
  const lines = ["import { test, expect } from '@playwright/test';", '', `test.describe('${name}', () => {`];
  const every = PEERS.failing > 0 ? Math.floor(PEERS.tests / PEERS.failing) : 0;
  for (let i = from; i < to; i++) {
    const j = i - from;
    const title = `${VERBS[j % VERBS.length]} ${THINGS[Math.floor(j / VERBS.length) % THINGS.length]} (case ${j + 1})`;
    const wait = PEERS.testMs > 0 ? `await new Promise((r) => setTimeout(r, ${PEERS.testMs}));` : '';
    const body = every && i % every === 0 ? `expect('status ${i}').toBe('status 200');` : '';
    lines.push(`  test('${title}', ${wait ? 'async ' : ''}() => {${wait}${body}});`);
  }
  lines.push('});');
  return `${lines.join('\n')}\n`;
}

const installedVersion = (pkg) => {
  try {
    return JSON.parse(readFileSync(join(DIR, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
};

/**
 * Writes the fixture and installs the peers from the npm registry into its own node_modules (`npm install` in the
 * fixture, no lockfile; the node_modules folder is kept between benchmarks, so a rerun only checks the registry).
 * Peer dependencies are not installed (`--legacy-peer-deps`): Playwright must come from the repository's
 * node_modules, as in the other cells, and a second copy of @playwright/test in the fixture would make the config
 * load two Playwrights. Then copies the built casebridge packages in (after npm, which removes what its
 * package.json does not name). Returns `{ dir, peers }`, `peers` naming each peer's version or why it is missing.
 */
export function peersFixture(log) {
  mkdirSync(DIR, { recursive: true });
  for (const name of readdirSync(DIR)) if (name !== 'node_modules') rmSync(join(DIR, name), { recursive: true });
  const files = {
    'package.json': `${JSON.stringify({ name: NAME, private: true, dependencies: PEERS.packages }, null, 2)}\n`,
    'playwright.config.mjs': CONFIG,
    'probe.mjs': PROBE_CORE,
    'timing-reporter.mjs': TIMING_REPORTER,
  };
  for (let from = 0, n = 0; from < PEERS.tests; from += PEERS.perFile, n++) {
    const module = MODULES[n % MODULES.length] + (n >= MODULES.length ? `-${Math.floor(n / MODULES.length)}` : '');
    files[`tests/${module}.spec.mjs`] = specFile(module, from, Math.min(PEERS.tests, from + PEERS.perFile));
  }
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(DIR, path)), { recursive: true });
    writeFileSync(join(DIR, path), text);
  }
  let installError = null;
  const t0 = Date.now();
  try {
    execFileSync(
      'npm',
      ['install', '--no-package-lock', '--legacy-peer-deps', '--no-audit', '--no-fund', '--loglevel=error'],
      { cwd: DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 },
    );
  } catch (err) {
    installError = `npm install in ${DIR.slice(ROOT.length + 1)} failed: ${String(err.stderr || err.message)
      .trim()
      .replace(/\s*\n\s*/g, ' ')
      .slice(-600)}`;
  }
  log(
    `  npm install of the peers: ${Math.round((Date.now() - t0) / 1000)} s${installError ? ` (${installError})` : ''}`,
  );
  if (existsSync(join(DIR, 'node_modules', '@playwright', 'test'))) {
    rmSync(join(DIR, 'node_modules', '@playwright'), { recursive: true });
  }
  for (const name of ['core', 'playwright']) {
    const to = join(DIR, 'node_modules', '@casebridge', name);
    rmSync(to, { recursive: true, force: true });
    mkdirSync(to, { recursive: true });
    cpSync(join(ROOT, 'packages', name, 'package.json'), join(to, 'package.json'));
    cpSync(join(ROOT, 'packages', name, 'dist'), join(to, 'dist'), { recursive: true });
  }
  // A failed install leaves an earlier one in place; that one is not what was asked for, so it is not run either.
  const peer = (pkg, extra = {}) => {
    const version = installedVersion(pkg);
    if (installError) return { package: pkg, unavailable: installError };
    return version
      ? { package: pkg, version, ...extra }
      : { package: pkg, unavailable: `${pkg} is not in the fixture's node_modules after npm install` };
  };
  return {
    dir: DIR,
    peers: {
      qase: peer('playwright-qase-reporter', { commons: installedVersion('qase-javascript-commons') }),
      testomatio: peer('@testomatio/reporter'),
    },
  };
}

/** The runner "slot" measure() spawns: `playwright test` from the repository's node_modules with BENCH_PEER set. */
const slot = (peer, extra = {}) => ({
  command: () => ({ command: join(BIN, 'playwright'), args: ['test'], env: { BENCH_PEER: peer, ...extra } }),
});

/** The figures a report keeps of one run. */
function keep(run) {
  const { tail, timeline, summary, said, byOp, uploads, ...rest } = run;
  return { ...rest, byOp, ...(said?.length ? { said } : {}) };
}

/** Test cases in the emulator's project: what casebridge's runs created. */
function casesIn(emu) {
  const project = emu.store.projects.find((p) => p.key === PROJECT);
  return emu.store.issues.filter((i) => i.projectId === project?.id && i.type === 'Test Case').length;
}

/**
 * One run of one reporter. junit: the baseline. casebridge: cycle mode into `cycle` with autoCreate, against the
 * emulator (`reset` true = from the seed, for a first run). qase, testomatio: against their stand-in, whose log is
 * cleared before and read after.
 */
async function runOne(who, { dir, emu, standIns, latency, cycle, reset }) {
  const timeoutMs = 900_000;
  if (who === 'junit') {
    return keep(
      await measure({ runner: slot('junit'), dir, casebridge: false, mode: 'cycle', latency: 0, emu, timeoutMs }),
    );
  }
  if (who === 'casebridge') {
    const run = await measure({
      runner: slot('casebridge'),
      dir,
      casebridge: true,
      mode: 'cycle',
      latency,
      emu,
      cycle,
      reset,
      // As a CI job names its cycle: per run (`${build}`, the build number), so it is created without looking
      // first, with the plan's runs preloaded (issue 25's steady run of 5 requests).
      env: {
        CASEBRIDGE_AUTO_CREATE: 'true',
        CASEBRIDGE_CYCLE: '${build}',
        CASEBRIDGE_BUILD: cycle,
        CASEBRIDGE_PRELOAD_RUNS: 'true',
      },
      timeoutMs,
    });
    const rateLimited = emu.requests().filter((r) => r.status === 429).length;
    if (PEERS.dump) {
      const requests = emu.requests().map((r) => ({ at: r.at, op: r.op ?? r.path, status: r.status }));
      // With BENCH_TIMELINE=1, also each request's start and end and the last test's end, in ms from the spawn.
      const timeline = run.timeline ? { wallMs: run.wallMs, timeline: run.timeline } : {};
      appendFileSync(PEERS.dump, `${JSON.stringify({ cycle, requests, ...timeline })}\n`);
    }
    return { ...keep(run), cycle, rateLimited, delivered: delivered(emu, 'cycle', cycle), cases: casesIn(emu) };
  }
  const standIn = standIns[who];
  standIn.clear();
  const peerEnv =
    who === 'qase'
      ? {
          QASE_MODE: 'testops',
          QASE_TESTOPS_API_HOST: standIn.url,
          QASE_TESTOPS_API_TOKEN: TOKEN_QASE,
          QASE_TESTOPS_PROJECT: PROJECT,
          // Its README gives `true` as the default, but qase-javascript-commons 2.9 reads an unset value as false
          // and leaves the run open; its README's config example sets it, as users do.
          QASE_TESTOPS_RUN_COMPLETE: 'true',
        }
      : { TESTOMATIO: TOKEN_TESTOMATIO, TESTOMATIO_URL: standIn.url, TESTOMATIO_CREATE: '1' };
  const run = await measure({
    runner: slot(who, peerEnv),
    dir,
    casebridge: false,
    mode: 'cycle',
    latency: 0,
    emu,
    timeoutMs,
  });
  return { ...keep(run), ...countOf(standIn.requests()) };
}

const load = () => Math.round(loadavg()[0] * 100) / 100;

/**
 * One part of the cell at one latency (and rate limit): first runs, then `rounds` steady rounds. The order of the
 * reporters turns by one each round, so that none always runs right after the baseline.
 */
async function runPart({ dir, who, latency, rateLimit, rounds, emuOptions, standIns, log, save }) {
  const part = { latency, ...(rateLimit ? { requestsPerSecond: rateLimit.requestsPerSecond } : {}), load: [load()] };
  part.first = {};
  part.steady = [];
  save(part);
  const emu = await startEmulator({ port: 0, seed: seedFor(0), ...emuOptions });
  try {
    for (const s of Object.values(standIns)) s.set({ latencyMs: latency, rateLimit });
    rmSync(join(dir, 'casebridge.keys.json'), { force: true });
    const tag = `${latency} ms${rateLimit ? `, ${rateLimit.requestsPerSecond} req/s` : ''}`;
    for (const w of who) {
      part.first[w] = await runOne(w, { dir, emu, standIns, latency, cycle: `Peers first ${tag}`, reset: true });
      log(`  first  ${w.padEnd(10)} ${runText(part.first[w])}`);
      save(part);
    }
    for (let r = 0; r < rounds; r++) {
      const round = {};
      const order = who.map((_, i) => who[(i + r) % who.length]);
      for (const w of order) {
        round[w] = await runOne(w, {
          dir,
          emu,
          standIns,
          latency,
          cycle: `Peers steady ${tag} #${r + 1}`,
          reset: false,
        });
        log(`  steady ${w.padEnd(10)} ${runText(round[w])}`);
      }
      part.steady.push(round);
      save(part);
    }
  } finally {
    await emu.close();
  }
  part.load.push(load());
  save(part);
  return part;
}

function runText(r) {
  const req = r.requests === undefined ? '' : `, ${r.requests} req${r.rateLimited ? ` (${r.rateLimited} × 429)` : ''}`;
  const got = r.delivered === undefined || r.delivered === null ? '' : `, delivered ${r.delivered}`;
  return `wall ${(r.wallMs / 1000).toFixed(1)} s${req}${got}, tests ${r.tests}, exit ${r.code}`;
}

function write(results, final) {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'peers.json'), `${JSON.stringify(results, null, 2)}\n`);
  const md = renderPeers(results);
  writeFileSync(join(OUT, 'peers.md'), md);
  if (final) process.stdout.write(`${md}\nWritten: bench-results/peers.md, bench-results/peers.json\n`);
}

/**
 * The whole cell: fixture and install, an unmeasured junit run (Playwright's transform cache), then one part per
 * latency in `PEERS.latencies` and the rate-limited part. A peer that could not be installed is left out of every
 * run and named in the output; a part that throws is recorded under `errors` and the next one runs.
 */
export async function runPeers({ log, environment }) {
  const started = Date.now();
  const results = { at: new Date().toISOString(), env: environment, versions: versions(), settings: PEERS, parts: [] };
  log('bench: peers: fixture and npm install');
  const { dir, peers } = peersFixture(log);
  results.peers = peers;
  results.playwright = JSON.parse(
    readFileSync(join(ROOT, 'node_modules', '@playwright', 'test', 'package.json')),
  ).version;
  results.errors = [];
  const who = PEERS.who.filter((w) => !peers[w]?.unavailable);
  for (const p of ['qase', 'testomatio'])
    if (peers[p].unavailable) log(`bench: peers: ${p} left out: ${peers[p].unavailable}`);
  const standIns = { qase: await startQase(), testomatio: await startTestomatio() };
  try {
    // Not measured: fills Playwright's transform cache, which the first measured run would pay alone.
    await runOne('junit', { dir, standIns });
    const parts = [
      ...PEERS.latencies.map((latency) => ({ latency, rounds: PEERS.rounds })),
      ...(PEERS.rps > 0
        ? [
            {
              latency: PEERS.rpsLatency,
              rounds: PEERS.rpsRounds,
              rateLimit: { requestsPerSecond: PEERS.rps, perUser: true },
            },
          ]
        : []),
    ];
    for (const p of parts) {
      log(`bench: peers at ${p.latency} ms${p.rateLimit ? `, ${p.rateLimit.requestsPerSecond} requests/s` : ''}`);
      const index = results.parts.length;
      const save = (part) => {
        results.parts[index] = part;
        write(results, false);
      };
      try {
        const emuOptions = p.rateLimit ? { rateLimit: p.rateLimit } : {};
        await runPart({ dir, who, ...p, emuOptions, standIns, log, save });
      } catch (err) {
        log(`bench: peers part failed: ${err.stack ?? err.message}`);
        results.errors.push({ latency: p.latency, error: String(err.message ?? err).slice(0, 2000) });
      }
    }
  } finally {
    await Promise.all(Object.values(standIns).map((s) => s.close()));
  }
  closeResults(results, started);
  write(results, true);
}
