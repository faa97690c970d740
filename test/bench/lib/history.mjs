/**
 * The history cell of issue 26 ("1,000 tests with 100 failing, history classification on: requests ≤ 100 + the
 * run's usual"): real Jest, cycle mode, 20 ms on every route, defects on with the default cap. A round is two nights
 * with `CASEBRIDGE_HISTORY=false` and the same two with `true`, each pair from the seed: night 1 sees its failures
 * for the first time, night 2 (a new cycle, the emulator's state kept) sees the same failures again, now known. The
 * figures are the emulator's request log and what it stores: results delivered, the `Classification:` word and the
 * `casebridge signature:` line of each failed run's comment (core's delivery/comment.ts), defects filed and linked.
 * The engine-level twin, without a runner, is packages/core/test/defects/history-cost.test.ts.
 * Writes bench-results/history.md and .json after every night, so an interrupted run keeps what it measured.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEmulator } from '@casebridge/emulator';
import { closeResults, keyOf, median, OUT, PROJECT, round, seedFor, versions, writeFixture } from './common.mjs';
import { jest, jestProjectFiles } from './jest.mjs';
import { measure } from './measure.mjs';

export const HISTORY = {
  tests: 1000,
  perFile: 100,
  /** Every tenth test fails (tests 10, 20, ...): 100 failures, each on its own line, so 100 failure groups. */
  failEvery: 10,
  latency: Number(process.env.BENCH_HISTORY_LATENCY ?? 20),
  /** BENCH_HISTORY_ROUNDS: rounds of (off: night 1, night 2; on: night 1, night 2); the order alternates per round. */
  rounds: Number(process.env.BENCH_HISTORY_ROUNDS ?? 5),
  /** The issue's allowance: history on may cost this many requests more than off, per night. */
  allowance: 100,
};

const failing = () => HISTORY.tests / HISTORY.failEvery;
const fails = (i) => (i + 1) % HISTORY.failEvery === 0;

/**
 * The keyed suite (test i → BENCH-(i+2), as the matrix's) without screenshots: a failing test is one
 * `expect(i + 1).toBe(0)` on its own line. The normalised message is the same for all (numbers removed) and the
 * first frame in the project differs, so each failure is its own group (defects/fingerprint.ts), as in the
 * engine-level test. No attachment, so the request figures are delivery, defects and history alone.
 */
function historySuite() {
  const files = jestProjectFiles();
  for (let from = 0, n = 1; from < HISTORY.tests; from += HISTORY.perFile, n++) {
    const lines = [];
    for (let i = from; i < Math.min(HISTORY.tests, from + HISTORY.perFile); i++) {
      const title = `${keyOf(i)} generated test ${i + 1}`;
      if (fails(i)) lines.push(`test('${title}', () => {`, `  expect(${i + 1}).toBe(0);`, '});');
      else lines.push(`test('${title}', () => {});`);
    }
    files[`tests/part-${String(n).padStart(3, '0')}.test.js`] = `${lines.join('\n')}\n`;
  }
  return writeFixture(`bench-history-jest-${HISTORY.tests}`, files);
}

/**
 * What the emulator holds for one night's cycle: runs with a result, by status, the classification words and the
 * distinct signatures in the failed runs' comments, the bugs linked to its runs and the Bugs in the project.
 */
function tally(emu, cycle) {
  const s = emu.store;
  const ids = new Set(s.cycles.filter((c) => c.name === cycle).map((c) => c.id));
  const runs = s.runs.filter((r) => ids.has(r.cycleId));
  const runIds = new Set(runs.map((r) => r.id));
  const statuses = {};
  const classification = {};
  const signatures = new Set();
  let unclassified = 0;
  for (const r of runs) {
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.status !== 'Failed') continue;
    const word = /^Classification: (\S+)/m.exec(r.comment ?? '')?.[1];
    if (word) classification[word] = (classification[word] ?? 0) + 1;
    else unclassified += 1;
    const sig = /^casebridge signature: (cb-[0-9a-f]+)/m.exec(r.comment ?? '')?.[1];
    if (sig) signatures.add(sig);
  }
  const links = s.bugLinks.filter((l) => runIds.has(l.runId));
  return {
    runs: runs.length,
    statuses,
    classification,
    unclassified,
    signatures: signatures.size,
    runsWithBug: new Set(links.map((l) => l.runId)).size,
    bugsLinked: new Set(links.map((l) => l.issueId)).size,
    bugsInProject: bugsIn(emu),
  };
}

/** Bugs in project BENCH: the defects filed so far (the seed has none). */
function bugsIn(emu) {
  const project = emu.store.projects.find((p) => p.key === PROJECT);
  return emu.store.issues.filter((i) => i.projectId === project?.id && i.type === 'Bug').length;
}

/** One night: the measured run into cycle `cycle`, then the emulator's tally of it. */
async function night({ emu, dir, history, n, label, log }) {
  const cycle = `History ${history ? 'on' : 'off'} ${label} night ${n}`;
  const bugsBefore = bugsIn(emu);
  const r = await measure({
    runner: jest,
    dir,
    casebridge: true,
    mode: 'cycle',
    latency: HISTORY.latency,
    emu,
    cycle,
    env: { CASEBRIDGE_HISTORY: String(history), CASEBRIDGE_DEFECTS: 'true' },
    // Night 1 starts from the seed (reset before it, by the caller); night 2 keeps night 1's runs and defects.
    reset: false,
  });
  const t = tally(emu, cycle);
  t.defectsFiled = t.bugsInProject - bugsBefore;
  const reads = r.byOp['runs.caseTestRuns'] ?? 0;
  const searches = r.byOp['jira.search'] ?? 0;
  log(
    `  history ${history ? 'on ' : 'off'} night ${n}: ${r.requests} req (${reads} history reads, ${searches} searches), ` +
      `wall ${(r.wallMs / 1000).toFixed(1)} s, delivered ${r.delivered}, classified ${JSON.stringify(t.classification)}, ` +
      `${t.defectsFiled} defects filed, ${t.bugsLinked} linked`,
  );
  return {
    history,
    night: n,
    cycle,
    code: r.code,
    wallMs: round(r.wallMs, 0),
    drainMs: round(r.drainMs, 0),
    requests: r.requests,
    failedRequests: r.failedRequests,
    historyReads: reads,
    searches,
    byOp: r.byOp,
    delivered: r.delivered,
    journal: r.journal,
    tally: t,
    said: r.said,
    ...(r.output ? { output: r.output } : {}),
  };
}

/**
 * Per night: medians over the rounds, and the difference compared like for like: night 2 files no new defect in
 * most runs and 10 in some (whether the 10 defects it links count towards the cycle's cap depends on when the
 * cycle's defect list is read), with history on or off, and 10 defects cost about 35 requests. So on and off are
 * compared among runs that filed as many defects (each such class's medians), and the target is met when every
 * class's difference is within the allowance. Each difference is split into the history reads, the Jira searches
 * on minus off (bug states) and the rest (cycle preparation sends its member batches in one or two requests as
 * results happen to arrive).
 */
export function summarize(runs) {
  const nights = [];
  for (const n of [1, 2]) {
    const of = (history) => runs.filter((r) => r.night === n && r.history === history);
    const off = of(false);
    const on = of(true);
    if (off.length === 0 || on.length === 0) continue;
    const med = (xs, k) => median(xs.map((x) => x[k]));
    const filed = (r) => r.tally.defectsFiled;
    const like = [...new Set(on.map(filed))]
      .filter((v) => off.some((r) => filed(r) === v))
      .sort((x, y) => x - y)
      .map((v) => {
        const h = on.filter((r) => filed(r) === v);
        const o = off.filter((r) => filed(r) === v);
        const difference = med(h, 'requests') - med(o, 'requests');
        const reads = med(h, 'historyReads');
        const searches = med(h, 'searches') - med(o, 'searches');
        return {
          filed: v,
          runsOn: h.length,
          runsOff: o.length,
          difference,
          reads,
          searches,
          other: difference - reads - searches,
        };
      });
    const difference = med(on, 'requests') - med(off, 'requests');
    const same = (xs, f) => [...new Set(xs.map((x) => JSON.stringify(f(x))))].map((j) => JSON.parse(j));
    nights.push({
      night: n,
      requestsOff: med(off, 'requests'),
      requestsOn: med(on, 'requests'),
      difference,
      like,
      historyReads: med(on, 'historyReads'),
      searchesOff: med(off, 'searches'),
      searchesOn: med(on, 'searches'),
      wallOffMs: med(off, 'wallMs'),
      wallOnMs: med(on, 'wallMs'),
      met: (like.length > 0 ? like.map((l) => l.difference) : [difference]).every((d) => d <= HISTORY.allowance),
      everyResultDelivered: [...off, ...on].every((r) => r.delivered === HISTORY.tests && r.journal?.entries === 0),
      /** The distinct classification tallies of the rounds (one when every round classified alike). */
      classificationOn: same(on, (r) => r.tally.classification),
      classificationOff: same(off, (r) => r.tally.classification),
      signatures: same(on, (r) => r.tally.signatures),
      /** New defects filed, `{count: runs}`, on / off. */
      filedOn: countBy(on.map(filed)),
      filedOff: countBy(off.map(filed)),
    });
  }
  return nights;
}

const countBy = (xs) => {
  const out = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
};
const runsBy = (c) =>
  Object.entries(c)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
const changedLine = (v) => {
  const c = v.changedDuringRun;
  const rebuilt = c.rebuilt.length > 0 ? `rebuilt ${c.rebuilt.join(', ')}` : 'no package rebuilt';
  const commit = c.commit !== v.commit ? `, the commit moved to ${c.commit}` : '';
  return `During the run: ${rebuilt}${commit} (the fixture copied the packages' dist at the start).`;
};
const sign = (n) => (n >= 0 ? `+${n}` : `${n}`);
const words = (c) =>
  Object.entries(c)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ') || 'none';
const sec = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** bench-results/history.md: the per-night table, the target, then every run. */
export function renderHistory(results) {
  const s = results.settings;
  const env = results.env;
  const out = [
    `# History classification (issue 26): ${s.tests} tests, ${failing()} failing, Jest, cycle mode, ${s.latency} ms`,
    '',
    `${results.at}, commit ${results.versions.commit}, node ${env.node}, ${env.cores} cores, ` +
      `load at start ${env.loadAtStart.join(' ')}${env.loadAtEnd ? `, at end ${env.loadAtEnd.join(' ')}` : ''}` +
      `${results.durationSeconds ? `, ${results.durationSeconds} s` : ''}; ${s.rounds} round(s), medians.`,
    // The fixture's copies of the packages were taken at the start: a rebuild later does not change what ran.
    ...(results.versions.changedDuringRun ? ['', changedLine(results.versions)] : []),
    '',
    `Bare run (Jest's summary reporter only): ${results.bare ? sec(results.bare.wallMs) : '—'}.`,
    '',
    '| night | requests, history on | off | difference | history reads | Jira searches on / off | wall on | wall off | every result delivered | classified (on; off) | signatures | defects filed: runs, on; off |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const n of results.nights) {
    out.push(
      `| ${n.night} | ${n.requestsOn} | ${n.requestsOff} | ${sign(n.difference)} | ` +
        `${n.historyReads} | ${n.searchesOn} / ${n.searchesOff} | ${sec(n.wallOnMs)} | ${sec(n.wallOffMs)} | ` +
        `${n.everyResultDelivered ? 'yes' : 'NO'} | ${n.classificationOn.map(words).join(' or ')}; ` +
        `${n.classificationOff.map(words).join(' or ')} | ${n.signatures.join(' or ')} | ` +
        `${runsBy(n.filedOn)}; ${runsBy(n.filedOff)} |`,
    );
  }
  out.push('', '## Target', '');
  out.push(
    `"requests ≤ ${s.allowance} + the run's usual": history on minus history off ≤ ${s.allowance}, per night, among runs ` +
      'that filed as many new defects (medians): history reads + Jira searches on minus off + the rest.',
  );
  out.push('');
  for (const n of results.nights) {
    const like = n.like.map(
      (l) =>
        `${sign(l.difference)} = ${l.reads} ${sign(l.searches)} ${sign(l.other)} (runs that filed ${l.filed} defects: ` +
        `${l.runsOn} on, ${l.runsOff} off)`,
    );
    out.push(
      `- night ${n.night}: ${like.join('; ') || `${sign(n.difference)} (no like-for-like runs)`}: **${n.met ? 'met' : 'MISSED'}**`,
    );
  }
  out.push('', '## Runs', '');
  out.push(
    '| history | night | requests | reads | searches | wall | delivered | journal | classified | defects filed / linked |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results.runs) {
    const t = r.tally;
    out.push(
      `| ${r.history ? 'on' : 'off'} | ${r.night} | ${r.requests} | ${r.historyReads} | ${r.searches} | ${sec(r.wallMs)} | ` +
        `${r.delivered} | ${r.journal?.entries ?? '—'} | ${words(t.classification)}${t.unclassified ? `, ${t.unclassified} unclassified` : ''} | ` +
        `${t.defectsFiled} / ${t.bugsLinked} |`,
    );
  }
  for (const e of results.errors) out.push('', `**Error**: ${e}`);
  return `${out.join('\n')}\n`;
}

function write(results, final) {
  results.nights = summarize(results.runs);
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'history.json'), `${JSON.stringify(results, null, 2)}\n`);
  const md = renderHistory(results);
  writeFileSync(join(OUT, 'history.md'), md);
  if (final) process.stdout.write(`${md}\nWritten: bench-results/history.md, bench-results/history.json\n`);
}

/** The cell: a bare run to fill Jest's cache, one measured bare run, then the rounds. */
export async function runHistory({ log, environment }) {
  if (!(HISTORY.rounds >= 1)) {
    throw new Error(
      `BENCH_HISTORY_ROUNDS: expected a whole number from 1 up, got "${process.env.BENCH_HISTORY_ROUNDS}"`,
    );
  }
  const started = Date.now();
  const results = {
    at: new Date().toISOString(),
    env: environment,
    versions: versions(),
    settings: HISTORY,
    runs: [],
    errors: [],
  };
  const dir = historySuite();
  const emu = await startEmulator({ port: 0, seed: seedFor(HISTORY.tests) });
  try {
    const bare = { runner: jest, dir, casebridge: false, mode: 'cycle', latency: 0, emu };
    await measure(bare); // not measured: fills Jest's transform cache
    results.bare = { wallMs: round((await measure(bare)).wallMs, 0) };
    for (let r = 1; r <= HISTORY.rounds; r++) {
      // Off first in odd rounds, on first in even ones: neither side always runs on a machine that has warmed up.
      for (const history of r % 2 === 1 ? [false, true] : [true, false]) {
        log(`bench: history ${history ? 'on' : 'off'}, round ${r}`);
        // Each pair from the seed: night 1 meets its failures for the first time, night 2 meets them again.
        await emu.reset();
        for (const n of [1, 2]) {
          try {
            results.runs.push(await night({ emu, dir, history, n, label: `r${r}`, log }));
          } catch (err) {
            log(`bench: history ${history ? 'on' : 'off'} night ${n} failed: ${err.stack ?? err.message}`);
            results.errors.push(String(err.message ?? err).slice(0, 2000));
          }
          write(results, false);
        }
      }
    }
  } finally {
    await emu.close();
  }
  closeResults(results, started);
  write(results, true);
}
