/**
 * The `failing` cell (`BENCH_ONLY=failing`): a failing Playwright suite reported twice, as two nights of a CI job.
 * 300 keyed tests (test i → BENCH-(i+2), seed `seedFor(300)`: one case per test and test plan BENCH-1 holding them),
 * 30 of them failing each its own way (its own message and its own line: 30 failure groups), cycle mode, defects on
 * with the default cap (10 new defects a run, `defects.maxPerRun`), history on (the default), 20 ms on every route,
 * 2 workers (the matrix's config; Playwright's own default here would be 1, half the 2 cores).
 *
 * A round: a bare run (Playwright with JUnit only), then from the seed night 1 into a cycle of its own (it files the
 * 10 defects of the cap), then, keeping the emulator's state, night 2 into a new cycle: the same 30 failures, 10 of
 * them with a known defect (linked), and 10 more filed. Both nights name their cycle per run, as a CI job does
 * (`CASEBRIDGE_CYCLE='${build}'`, `CASEBRIDGE_PRELOAD_RUNS=true`, the adoption cell's second run and the peers'
 * steady runs; `BENCH_FAILING_CYCLE=daily` uses one fixed name per night instead, looked for, created and filled).
 * Per night: requests by operation, the last test's end to the runner's exit (the timing probe `pre`, as every
 * cell), which requests were under way or started in that tail and whether a defect was filed in it, defects filed
 * and linked, the classification words. Writes bench-results/failing.md and .json after every run.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEmulator } from '@casebridge/emulator';
import { closeResults, keyOf, median, OUT, PROJECT, ROOT, round, seedFor, versions, writeFixture } from './common.mjs';
import { measure, requestsOf } from './measure.mjs';
import { playwright, playwrightProjectFiles } from './playwright.mjs';

const env = process.env;

export const FAILING = {
  tests: 300,
  perFile: 100,
  /** Every tenth test fails (tests 10, 20, ...): 30 failures. */
  failEvery: 10,
  /** The matrix's Playwright config (playwrightProjectFiles): 2 workers, fully parallel. */
  workers: 2,
  latency: Number(env.BENCH_FAILING_LATENCY ?? 20),
  /** BENCH_FAILING_ROUNDS: rounds of (bare, night 1, night 2), each from the seed. */
  rounds: Number(env.BENCH_FAILING_ROUNDS ?? 1),
  /** `per-run` (default): `${build}` with preloadRuns, as a CI job; `daily`: a fixed name per night. */
  cycle: env.BENCH_FAILING_CYCLE === 'daily' ? 'daily' : 'per-run',
  /** The default cap (`defects.maxPerRun`): the runs set nothing, this is what the tally expects. */
  cap: 10,
  targets: {
    /** Night 2's requests in all. */
    secondRequests: 81,
    /** The last test's end to the runner's exit when no defect is filed in that tail. */
    tailMs: 500,
    /** The same when the cap files defects then. */
    tailWithDefectsMs: 1500,
  },
};

const fails = (i) => (i + 1) % FAILING.failEvery === 0;
const failingCount = () => Array.from({ length: FAILING.tests }, (_, i) => fails(i)).filter(Boolean).length;

/**
 * Words for the failures' messages: the fingerprint removes numbers, so each message differs by a word (and each
 * sits on its own line of its file): 30 failure groups.
 */
const WORDS = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliett',
  'kilo',
  'lima',
  'mike',
  'november',
  'oscar',
  'papa',
  'quebec',
  'romeo',
  'sierra',
  'tango',
  'uniform',
  'victor',
  'whiskey',
  'xray',
  'yankee',
  'zulu',
  'amber',
  'cobalt',
  'indigo',
  'scarlet',
];

/** One spec file of 100 keyed tests; a failing one checks its own field and fails with its own message. */
function specFile(from, to) {
  const lines = ["import { expect, test } from '@playwright/test';", ''];
  for (let i = from; i < to; i++) {
    const title = `${keyOf(i)} generated test ${i + 1}`;
    if (fails(i)) {
      const word = WORDS[Math.floor(i / FAILING.failEvery) % WORDS.length];
      lines.push(
        `test('${title}', () => {`,
        `  expect('${word} received', 'the ${word} field').toBe('${word} expected');`,
        '});',
      );
    } else {
      lines.push(`test('${title}', () => {});`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** test/.fixtures/bench-failing-playwright-300/: the matrix's Playwright project with the suite above. */
function failingSuite() {
  const files = playwrightProjectFiles();
  for (let from = 0, n = 1; from < FAILING.tests; from += FAILING.perFile, n++) {
    files[`tests/part-${String(n).padStart(3, '0')}.spec.mjs`] = specFile(
      from,
      Math.min(FAILING.tests, from + FAILING.perFile),
    );
  }
  return writeFixture(`bench-failing-playwright-${FAILING.tests}`, files);
}

/** Operations that file a defect (synapseRT's run bug, or a Jira issue linked afterwards). */
const DEFECT_CREATES = new Set(['defects.createRunBug', 'defects.createRunStepBug', 'jira.createIssue']);

/**
 * The operations of a night in the groups a failing test's cost is read by: what a CI job's run costs anyway (the
 * cycle and the bulk of statuses, the quarantine read), per failing test (its history read, its run update), the
 * defects (the searches, the creates, the links and the rest of their traffic).
 */
const GROUPS = [
  ['history reads', (op) => op === 'runs.caseTestRuns'],
  ['run updates', (op) => /^runs\.(update|updateTestRun|updateStep)$/.test(op)],
  ['defect creates', (op) => DEFECT_CREATES.has(op)],
  ['searches', (op) => op === 'jira.search' || op === 'jira.searchPost'],
  ['bug links', (op) => op === 'runs.linkBugToTestRun'],
  ['cycle and statuses', (op) => /^(plans|cycles)\./.test(op) || op === 'runs.bulkStatusUpdate'],
];

export function groupOps(byOp) {
  const out = Object.fromEntries([...GROUPS.map(([name]) => [name, 0]), ['other', 0]]);
  for (const [op, n] of Object.entries(byOp)) {
    const g = GROUPS.find(([, f]) => f(op));
    out[g ? g[0] : 'other'] += n;
  }
  return out;
}

function bugsIn(emu) {
  const project = emu.store.projects.find((p) => p.key === PROJECT);
  return emu.store.issues.filter((i) => i.projectId === project?.id && i.type === 'Bug').length;
}

/** What the emulator holds for a night's cycle: runs by status, classification words, signatures, bugs linked. */
function tally(emu, cycle) {
  const s = emu.store;
  const ids = new Set(s.cycles.filter((c) => c.name === cycle).map((c) => c.id));
  const runs = s.runs.filter((r) => ids.has(r.cycleId));
  const runIds = new Set(runs.map((r) => r.id));
  const statuses = {};
  const classification = {};
  const signatures = new Set();
  for (const r of runs) {
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.status !== 'Failed') continue;
    const word = /^Classification: (\S+)/m.exec(r.comment ?? '')?.[1];
    if (word) classification[word] = (classification[word] ?? 0) + 1;
    const sig = /^casebridge signature: (cb-[0-9a-f]+)/m.exec(r.comment ?? '')?.[1];
    if (sig) signatures.add(sig);
  }
  const links = s.bugLinks.filter((l) => runIds.has(l.runId));
  return {
    runs: runs.length,
    statuses,
    classification,
    signatures: signatures.size,
    runsWithBug: new Set(links.map((l) => l.runId)).size,
    bugsLinked: new Set(links.map((l) => l.issueId)).size,
    bugsInProject: bugsIn(emu),
  };
}

/**
 * The packages with uncommitted changes when the cell started (others edit and rebuild meanwhile): the builds it
 * measured are the commit plus those changes, if they were built. Null outside a git checkout.
 */
function uncommitted() {
  try {
    const out = execFileSync('git', ['status', '--porcelain', '--', 'packages'], { cwd: ROOT, encoding: 'utf8' });
    const dirs = new Set(
      out
        .split('\n')
        .map((l) => /packages\/([^/]+)\//.exec(l)?.[1])
        .filter(Boolean),
    );
    return [...dirs].sort();
  } catch {
    return null;
  }
}

/** The timing probe's `pre` line of the run that just ended: when the last test ended (epoch ms). */
function lastTestEndOf(dir) {
  try {
    const lines = readFileSync(join(dir, 'bench-timing.jsonl'), 'utf8').split('\n').filter(Boolean);
    return lines.map((l) => JSON.parse(l)).find((l) => l.probe === 'pre' && l.event === 'end')?.lastTestEnd ?? null;
  } catch {
    return null;
  }
}

/**
 * The requests of the tail (the last test's end to the exit): each one that ended after the last test, with when it
 * started and ended relative to the last test's end (ms; a negative start = under way when the last test ended).
 */
function tailOf(emu, lastTestEnd) {
  if (!lastTestEnd) return [];
  return requestsOf(emu)
    .list.filter((r) => r.at + r.ms >= lastTestEnd)
    .map((r) => ({
      op: r.op ?? r.path,
      start: Math.round(r.at - lastTestEnd),
      end: Math.round(r.at + r.ms - lastTestEnd),
      status: r.status,
    }));
}

const cycleEnv = (cycle) =>
  FAILING.cycle === 'per-run'
    ? { CASEBRIDGE_CYCLE: '${build}', CASEBRIDGE_BUILD: cycle, CASEBRIDGE_PRELOAD_RUNS: 'true' }
    : {};

async function night({ emu, dir, n, label, log }) {
  const cycle = `Failing ${label} night ${n}`;
  const bugsBefore = bugsIn(emu);
  const r = await measure({
    runner: playwright,
    dir,
    casebridge: true,
    mode: 'cycle',
    latency: FAILING.latency,
    emu,
    cycle,
    env: { CASEBRIDGE_DEFECTS: 'true', ...cycleEnv(cycle) },
    // Night 1 starts from the seed (reset by the caller); night 2 keeps night 1's runs and defects.
    reset: false,
  });
  const t = tally(emu, cycle);
  t.defectsFiled = t.bugsInProject - bugsBefore;
  const tail = tailOf(emu, lastTestEndOf(dir));
  const tailCreates = tail.filter((q) => DEFECT_CREATES.has(q.op));
  const run = {
    night: n,
    cycle,
    code: r.code,
    tests: r.tests,
    wallMs: round(r.wallMs, 0),
    /** The last test's end (probe `pre`, in the runner) to the runner's exit (parent). */
    drainMs: round(r.drainMs, 0),
    /** The last test's end to the first reporter's end hook: Playwright's own wind-down (workers stopping). */
    beforeEndMs: round(r.beforeEndMs, 0),
    /** The reporters' end hooks (between the probes): casebridge's end(). */
    onEndMs: round(r.onEndMs, 0),
    teardownMs: round(r.teardownMs, 0),
    cpuMs: round(r.cpuMs, 0),
    emulatorCpuMs: round(r.emulatorCpuMs, 0),
    requests: r.requests,
    failedRequests: r.failedRequests,
    byOp: r.byOp,
    groups: groupOps(r.byOp),
    tail,
    /** Defects filed in the tail: creates that ended after the last test (started before it or after). */
    tailDefectCreates: tailCreates.length,
    tailDefectCreatesStartedAfter: tailCreates.filter((q) => q.start >= 0).length,
    delivered: r.delivered,
    journal: r.journal,
    tally: t,
    said: r.said,
    ...(r.output ? { output: r.output } : {}),
  };
  log(
    `  night ${n}: ${run.requests} req, wall ${(run.wallMs / 1000).toFixed(1)} s, last test to exit ${run.drainMs} ms ` +
      `(end hooks ${run.onEndMs} ms), ${tail.length} req in the tail (${run.tailDefectCreates} defect creates), ` +
      `delivered ${run.delivered}/${FAILING.tests}, ${t.defectsFiled} defects filed, ${t.bugsLinked} linked, ` +
      `classified ${JSON.stringify(t.classification)}, exit ${run.code}`,
  );
  return run;
}

/** Per night: medians over the rounds (one round: that run's figures) and the targets. */
export function summarize(results) {
  const out = [];
  for (const n of [1, 2]) {
    const runs = results.runs.filter((r) => r.night === n && r.tests !== null);
    if (runs.length === 0) continue;
    const med = (f) => median(runs.map(f));
    const withDefects = runs.filter((r) => r.tailDefectCreates > 0).length;
    const limit = (r) => (r.tailDefectCreates > 0 ? FAILING.targets.tailWithDefectsMs : FAILING.targets.tailMs);
    out.push({
      night: n,
      runs: runs.length,
      requests: med((r) => r.requests),
      /** The failures' artifact uploads among them (Playwright's error-context, one a failure): not in issue 47's count. */
      uploads: med((r) =>
        Object.entries(r.byOp).reduce((n, [op, k]) => (op.startsWith('attachments.addTo') ? n + k : n), 0),
      ),
      wallMs: med((r) => r.wallMs),
      drainMs: med((r) => r.drainMs),
      onEndMs: med((r) => r.onEndMs),
      bareDrainMs: median(results.bare.map((b) => b.drainMs)),
      tailWithDefects: withDefects,
      tailMet: runs.every((r) => r.drainMs <= limit(r)),
      requestsMet: n === 2 ? runs.every((r) => r.requests <= FAILING.targets.secondRequests) : null,
      defectsFiled: runs.map((r) => r.tally.defectsFiled),
      bugsLinked: runs.map((r) => r.tally.bugsLinked),
    });
  }
  return out;
}

const sec = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : '–');
const ops = (byOp) =>
  Object.entries(byOp)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([op, k]) => `${op} ×${k}`)
    .join(', ');
const words = (c) =>
  Object.entries(c)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ') || 'none';
const verdict = (ok) => (ok === null ? '–' : ok ? 'met' : 'MISSED');

/** bench-results/failing.md. */
export function renderFailing(results) {
  const s = results.settings;
  const e = results.env;
  const nFailing = failingCount();
  const out = [
    `# A failing Playwright suite, two nights: ${s.tests} tests, ${nFailing} failing, cycle mode, ${s.latency} ms`,
    '',
    `${results.at}, commit ${results.versions.commit}, Node ${e.node}, ${e.cores} cores, load at start ` +
      `${e.loadAtStart.join(' ')}${e.loadAtEnd ? `, at end ${e.loadAtEnd.join(' ')}` : ''}` +
      `${results.durationSeconds ? `, ${results.durationSeconds} s` : ''}; ${s.rounds} round(s)` +
      `${s.rounds > 1 ? ', medians' : ''}.` +
      ` Builds measured (core and playwright copied into the fixture, the emulator loaded, at the start): ${Object.entries(
        results.versions.builds,
      )
        .filter(([k, t]) => t && ['core', 'playwright', 'emulator'].includes(k))
        .map(([k, t]) => `${k} ${t}`)
        .join(', ')}` +
      (results.uncommitted?.length
        ? `; uncommitted changes in packages/${results.uncommitted.join(', packages/')} when the cell started`
        : '') +
      '.' +
      (results.versions.changedDuringRun
        ? ` Rebuilt during the run: ${results.versions.changedDuringRun.rebuilt.join(', ') || 'none'} (after the copy: not measured).`
        : ''),
    '',
    `Playwright ${results.playwright}, ${s.workers} workers (the matrix's config; Playwright's default here is 1), ` +
      `no page opened. ${s.tests} keyed tests (BENCH-2..BENCH-${s.tests + 1}, plan BENCH-1 holding them), every ` +
      `${s.failEvery}th failing with its own message and on its own line (${nFailing} failure groups). Defects on ` +
      `with the default cap (${s.cap} new a run), history on, ${s.latency} ms on every route, the emulator's ` +
      `realistic profile. Cycle: ${s.cycle === 'per-run' ? "named per run (`CASEBRIDGE_CYCLE='${build}'`, `CASEBRIDGE_PRELOAD_RUNS=true`)" : 'one fixed name per night (looked for, created, filled)'}. ` +
      'Night 1 from the seed, night 2 into a new cycle with the emulator\'s state kept. "Last test to exit": the ' +
      "timing probe's last onTestEnd in the runner to the runner's exit seen from the parent.",
    '',
    `Bare run (JUnit only): ${results.bare.map((b) => `${sec(b.wallMs)}, last test to exit ${sec(b.drainMs)}`).join('; ') || '–'}.`,
    '',
    '## Targets',
    '',
    '| target | figure | verdict |',
    '|---|---|---|',
  ];
  for (const n of results.nights) {
    if (n.night === 2) {
      out.push(
        `| night 2: ≤ ${s.targets.secondRequests} requests | ${n.requests}${n.runs > 1 ? ` (median of ${n.runs})` : ''}; ${n.requests - n.uploads} without the ${n.uploads} uploads of the failures' error context | ${verdict(n.requestsMet)} |`,
      );
    }
    out.push(
      `| night ${n.night}: last test to exit ≤ ${sec(s.targets.tailMs)} with no defect filed then, ≤ ${sec(s.targets.tailWithDefectsMs)} when the cap files some then | ` +
        `${sec(n.drainMs)} (end hooks ${sec(n.onEndMs)}; bare run ${sec(n.bareDrainMs)}); defects filed in the tail in ${n.tailWithDefects} of ${n.runs} run(s) | ${verdict(n.tailMet)} |`,
    );
  }
  out.push('', '## Runs', '');
  out.push(
    '| round | night | exit | tests | wall | last test to exit | of which end hooks | requests | history reads | run updates | searches | defect creates | bug links | cycle and statuses | other | tail: requests (defect creates) | defects filed / linked | classified | delivered | journal |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results.runs) {
    const g = r.groups;
    out.push(
      `| ${r.round} | ${r.night} | ${r.code} | ${r.tests ?? '–'} | ${sec(r.wallMs)} | ${sec(r.drainMs)} | ${sec(r.onEndMs)} | ${r.requests} | ` +
        `${g['history reads']} | ${g['run updates']} | ${g.searches} | ${g['defect creates']} | ${g['bug links']} | ${g['cycle and statuses']} | ${g.other} | ` +
        `${r.tail.length} (${r.tailDefectCreates}) | ${r.tally.defectsFiled} / ${r.tally.bugsLinked} | ${words(r.tally.classification)} | ` +
        `${r.delivered}/${s.tests} | ${r.journal ? r.journal.entries + r.journal.claimed : '–'} |`,
    );
  }
  out.push('', '## Requests by operation', '');
  for (const r of results.runs) out.push(`- round ${r.round}, night ${r.night} (${r.requests}): ${ops(r.byOp)}`);
  out.push('', '## The tail', '', "Requests that ended after the last test's end: start–end in ms from it.", '');
  for (const r of results.runs) {
    const list = r.tail.map((q) => `${q.op} ${q.start}–${q.end}${q.status >= 400 ? ` (${q.status})` : ''}`);
    out.push(`- round ${r.round}, night ${r.night}: ${list.join(', ') || 'none'}`);
  }
  const said = results.runs.find((r) => r.night === 2)?.said;
  if (said?.length) out.push('', 'casebridge said (night 2):', '', '```', ...said, '```');
  const broken = results.runs.find((r) => r.output);
  if (broken) out.push('', 'Output of a run that did not report its end:', '', '```', broken.output, '```');
  for (const err of results.errors) out.push('', `**Error**: ${err}`);
  return `${out.join('\n')}\n`;
}

function write(results, final) {
  results.nights = summarize(results);
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'failing.json'), `${JSON.stringify(results, null, 2)}\n`);
  const md = renderFailing(results);
  writeFileSync(join(OUT, 'failing.md'), md);
  if (final) process.stdout.write(`${md}\nWritten: bench-results/failing.md, bench-results/failing.json\n`);
}

/** The cell: an unmeasured bare run (Playwright's transform cache), then per round a bare run and the two nights. */
export async function runFailing({ log, environment }) {
  if (!(FAILING.rounds >= 1)) {
    throw new Error(`BENCH_FAILING_ROUNDS: expected a whole number from 1 up, got "${env.BENCH_FAILING_ROUNDS}"`);
  }
  const started = Date.now();
  const results = {
    at: new Date().toISOString(),
    env: environment,
    versions: versions(),
    uncommitted: uncommitted(),
    playwright: JSON.parse(readFileSync(join(ROOT, 'node_modules', '@playwright', 'test', 'package.json'), 'utf8'))
      .version,
    settings: FAILING,
    bare: [],
    runs: [],
    errors: [],
  };
  const dir = failingSuite();
  const emu = await startEmulator({ port: 0, seed: seedFor(FAILING.tests) });
  try {
    const bare = { runner: playwright, dir, casebridge: false, mode: 'cycle', latency: 0, emu };
    await measure(bare); // not measured: Playwright's transform cache
    for (let r = 1; r <= FAILING.rounds; r++) {
      log(`bench: failing, round ${r}`);
      const b = await measure(bare);
      results.bare.push({ wallMs: round(b.wallMs, 0), drainMs: round(b.drainMs, 0), tests: b.tests, code: b.code });
      log(`  bare: wall ${(b.wallMs / 1000).toFixed(1)} s, last test to exit ${round(b.drainMs, 0)} ms`);
      await emu.reset();
      for (const n of [1, 2]) {
        try {
          results.runs.push({ round: r, ...(await night({ emu, dir, n, label: `r${r}`, log })) });
        } catch (err) {
          log(`bench: failing night ${n} failed: ${err.stack ?? err.message}`);
          results.errors.push(String(err.message ?? err).slice(0, 2000));
        }
        write(results, false);
      }
    }
  } finally {
    await emu.close();
  }
  closeResults(results, started);
  write(results, true);
}
