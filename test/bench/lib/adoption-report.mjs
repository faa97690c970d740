/**
 * The targets of issue 14 for the adoption and replay cells (lib/adoption.mjs), met or MISSED, and their markdown
 * (bench-results/adoption.md).
 */
import { ADOPTION, REPLAY } from './adoption.mjs';
import { round } from './common.mjs';

/** The runner's name as its users write it. */
const runnerLabel = (runner) => ({ playwright: 'Playwright', vitest: 'Vitest' })[runner] ?? 'Jest';

const verdict = (ok) => (ok === null ? 'not measured' : ok ? 'met' : 'MISSED');
const s = (ms) => round(ms / 1000, 1);
const ops = (byOp) =>
  Object.entries(byOp)
    .sort((a, b) => b[1] - a[1])
    .map(([op, n]) => `${op} ×${n}`)
    .join(', ') || 'none';
/** Results still waiting after the process exited: entries (claimed or not) and undelivered write-ahead log lines. */
const waiting = (j) => j.entries + j.claimed + j.walResults;
const journalText = (j) =>
  waiting(j) === 0 && j.wals === 0
    ? 'empty'
    : `${j.entries} entries${j.claimed ? `, ${j.claimed} claimed` : ''}, ${j.wals} wal-*.jsonl (${j.walResults} results not marked delivered)${j.blobs ? `, ${j.blobs} blobs` : ''}`;
/** Results of the run that reached neither the cycle nor the journal (0 when some were both, in part). */
const lost = (run, tests) => Math.max(0, tests - run.delivered - waiting(run.journal));
const statusText = (st) =>
  Object.entries(st)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || 'no runs';

/** Requests, wall and delivery budgets of an adoption cell (issue 14, "How it is checked"). */
export function budgets(cell) {
  const perFailure = 3;
  return {
    // 1.15 × 1,400 is 1609.9999999999998 in floating point: round before flooring.
    firstRequests: Math.floor(Math.round((1.15 * cell.tests + 30 + perFailure * cell.failing) * 1000) / 1000),
    wallMs: cell.bare.wallMs + (cell.tests * cell.latency) / ADOPTION.concurrency + 3000,
    secondRequests: 10 + perFailure * cell.failing,
  };
}

export function adoptionTargets(json) {
  const out = [];
  for (const c of json.adoption) {
    const b = budgets(c);
    const { first, second, bare } = c;
    const name = `adoption, ${c.variant}${c.failing ? ` (${c.failing} failing)` : ''}`;
    const failNote = c.failing ? ` + 3 × ${c.failing} failing` : '';
    out.push({
      cell: name,
      target: `first run ≤ 1.15 requests per new test + 30${failNote} = ${b.firstRequests}`,
      figure: `${first.requests} (${round(first.requests / c.tests, 2)} per new test; ${first.failedRequests} answered with an error)`,
      verdict: verdict(first.requests <= b.firstRequests),
      why: ops(first.byOp),
    });
    out.push({
      cell: name,
      target: 'first run: every result delivered within the run (all tests in the cycle, journal empty at exit)',
      figure: `${first.delivered} of ${c.tests} in the cycle (${statusText(first.state.statuses)}); journal ${journalText(first.journal)}`,
      verdict: verdict(first.delivered === c.tests && waiting(first.journal) === 0),
      why: `${lost(first, c.tests)} neither in the cycle nor in the journal; ${first.state.cases} cases in the project, ${first.state.casesInCycle} with a run in the cycle; ${first.mapped} entries in casebridge.keys.json; ${first.state.defects} defects`,
    });
    out.push({
      cell: name,
      target: `first run's wall ≤ bare wall + ${c.tests.toLocaleString('en')} new cases × ${c.latency} ms ÷ ${ADOPTION.concurrency} + 3 s = ${s(b.wallMs)} s`,
      figure: `${s(first.wallMs)} s (bare ${s(bare.wallMs)} s, ratio ${round(first.wallMs / bare.wallMs, 2)})`,
      verdict: verdict(first.wallMs <= b.wallMs),
      why: `last test's end to exit ${s(first.drainMs)} s (bare ${s(bare.drainMs)} s); emulator CPU on the same cores ${s(first.emulatorCpuMs)} s; one run each, load average ${c.load.join(' → ')} on ${c.cores} cores`,
    });
    out.push({
      cell: name,
      target: `second run (mapping file kept, new cycle) ≤ 10 requests${failNote} = ${b.secondRequests}`,
      figure: `${second.requests}; ${second.delivered} of ${c.tests} in its cycle; wall ${s(second.wallMs)} s`,
      verdict: verdict(second.requests <= b.secondRequests),
      why: `${ops(second.byOp)}; ${second.state.casesCreated} cases created; journal ${journalText(second.journal)}`,
    });
  }
  for (const c of json.replay) {
    const r = c.replay;
    const journaled = waiting(c.down.journal);
    const valid = journaled === c.tests;
    const note = valid ? '' : ` (the run with the service down journaled ${journaled}, not ${c.tests})`;
    out.push({
      cell: 'replay',
      target: `\`casebridge replay\` of ${c.tests.toLocaleString('en')} journaled status-only results ≤ 12 requests`,
      figure: `${r.requests}${note}`,
      verdict: verdict(r.requests <= 12),
      why: ops(r.byOp),
    });
    out.push({
      cell: 'replay',
      target: 'journal empty after the replay (every result in the cycle)',
      figure: `journal ${journalText(r.journal)}; ${r.delivered} of ${c.tests} in the cycle (${statusText(r.state.statuses)})`,
      verdict: verdict(waiting(r.journal) === 0 && r.delivered === c.tests),
      why: `before: ${journalText(c.down.journal)}`,
    });
    out.push({
      cell: 'replay',
      target: 'replay exits 0',
      figure: r.timedOut ? `killed after ${s(r.timeoutMs)} s` : `exit ${r.code} after ${s(r.wallMs)} s`,
      verdict: verdict(!r.timedOut && r.code === 0),
      why: lastLines(r.stderr, 1)
        .concat(lastLines(r.stdout, 6).filter((l) => /not delivered|flushTimeoutMs|journal/.test(l)))
        .map((l) => l.trim())
        .join(' / '),
    });
  }
  return out;
}

const lastLines = (text, n) =>
  text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(Boolean)
    .slice(-n);

/** The build times of the packages a cell ran, as copied into its fixture when it started. */
const buildsText = (builds, names) =>
  `Builds at the cell's start: ${names.map((n) => `${n} ${builds?.[n]?.slice(11, 19) ?? '?'}`).join(', ')} (UTC).`;

function adoptionTable(c) {
  const { bare, first, second } = c;
  const row = (label, a, b, d) => `| ${label} | ${a} | ${b} | ${d} |`;
  return [
    `### ${runnerLabel(c.runner)}, ${c.tests.toLocaleString('en')} tests in ${c.files} files, ${c.variant}${c.failing ? ` (${c.failing} failing)` : ''}, ${c.latency} ms`,
    '',
    `Load average (1 min) ${c.load.join(' → ')} on ${c.cores} cores: wall times of single runs move with it. ${buildsText(c.builds, ['core', 'jest'])}`,
    '',
    '| | bare run | first run ("Adoption 1") | second run ("Adoption 2") |',
    '|---|---:|---:|---:|',
    row('wall s', s(bare.wallMs), s(first.wallMs), s(second.wallMs)),
    row("last test's end to exit s", s(bare.drainMs), s(first.drainMs), s(second.drainMs)),
    row('requests', '', first.requests, second.requests),
    row('requests answered with an error', '', first.failedRequests, second.failedRequests),
    row('results in the cycle', '', `${first.delivered} / ${c.tests}`, `${second.delivered} / ${c.tests}`),
    row('runs in the cycle by status', '', statusText(first.state.statuses), statusText(second.state.statuses)),
    row(
      'test cases in the project after the run',
      0,
      first.state.cases,
      `${second.state.cases} (${second.state.casesCreated} new)`,
    ),
    row('defects in the project', 0, first.state.defects, second.state.defects),
    row('entries in casebridge.keys.json', '', first.mapped, second.mapped),
    row('left in .casebridge/journal at exit', '', journalText(first.journal), journalText(second.journal)),
    row('results neither in the cycle nor in the journal', '', lost(first, c.tests), lost(second, c.tests)),
    row('exit code', bare.code, first.code, second.code),
    '',
    `First run's requests: ${ops(first.byOp)}.`,
    '',
    `Second run's requests: ${ops(second.byOp)}.`,
    '',
    'What casebridge printed in the first run (stdout and stderr; long lines cut):',
    '',
    '```',
    ...(first.said ?? []),
    '```',
    '',
  ];
}

function replayTable(c) {
  const { down, replay: r } = c;
  return [
    `### Jest, ${c.tests.toLocaleString('en')} keyed passing tests, replayed at ${c.latency} ms`,
    '',
    `Load average (1 min) ${c.load.join(' → ')} on ${c.cores} cores. ${buildsText(c.builds, ['core', 'jest', 'cli'])}`,
    '',
    '| | run with the service down | `casebridge replay` |',
    '|---|---:|---:|',
    `| wall s | ${s(down.wallMs)} | ${s(r.wallMs)}${r.timedOut ? ' (killed)' : ''} |`,
    `| requests reaching the emulator | ${down.requests} | ${r.requests} |`,
    `| requests answered with an error | | ${r.failedRequests} |`,
    `| results in the cycle | | ${r.delivered} / ${c.tests} (${statusText(r.state.statuses)}) |`,
    `| .casebridge/journal after exit | ${journalText(down.journal)} | ${journalText(r.journal)} |`,
    `| exit code | ${down.code} | ${r.timedOut ? 'killed' : r.code} |`,
    '',
    `Replay's requests: ${ops(r.byOp)}. Command: ${c.command}. Its summary (stdout) and its last progress line or error (stderr):`,
    '',
    '```',
    ...lastLines(r.stdout, 12),
    // No summary: the command failed before it could print one, and stderr says why.
    ...lastLines(r.stderr, r.stdout ? 1 : 12),
    '```',
    '',
  ];
}

export function renderAdoption(json) {
  const e = json.env;
  const v = json.versions;
  const builds = Object.entries(v.builds)
    .filter(([, t]) => t)
    .map(([k, t]) => `${k} ${t}`)
    .join(', ');
  const rebuilt = v.changedDuringRun?.rebuilt?.length
    ? ` **Rebuilt during the run: ${v.changedDuringRun.rebuilt.join(', ')}; cells before and after measured different builds.**`
    : '';
  return [
    '# Adoption and replay benchmark (issue 14)',
    '',
    `${json.at} · Node ${e.node} · ${e.platform} · ${e.cores} × ${e.cpu} · load average at start ${e.loadAtStart.join(' ')}${e.loadAtEnd ? `, at end ${e.loadAtEnd.join(' ')}` : ''}${json.durationSeconds ? ` · ${Math.round(json.durationSeconds / 60)} min` : ''}`,
    '',
    `Measured: commit ${v.commit}; builds ${builds}.${rebuilt}`,
    '',
    `Adoption: ${runnerLabel(ADOPTION.runner)} in cycle mode, ${ADOPTION.tests.toLocaleString('en')} generated tests without case keys, \`CASEBRIDGE_AUTO_CREATE=true\`, defects on, ${ADOPTION.latency} ms on every route; the seed has project BENCH and an empty test plan BENCH-1. The second run keeps the emulator's state and casebridge.keys.json, reports into a new cycle named per run (\`\${build}\`) with the plan's runs preloaded, and starts with an empty journal. Replay: ${REPLAY.tests.toLocaleString('en')} keyed passing tests journaled by a run with CASEBRIDGE_URL on a closed port, then \`casebridge replay\` against the emulator at ${REPLAY.latency} ms. One run of each; method in test/bench/README.md.`,
    '',
    '## Targets',
    '',
    '| cell | target | figure | verdict | breakdown |',
    '|---|---|---|:---:|---|',
    ...adoptionTargets(json).map(
      (t) => `| ${t.cell} | ${t.target} | ${t.figure} | ${t.verdict} | ${t.why.replace(/\|/g, '\\|')} |`,
    ),
    '',
    ...(json.adoption.length > 0 ? ['## Adoption', '', ...json.adoption.flatMap(adoptionTable)] : []),
    ...(json.replay.length > 0 ? ['## Replay', '', ...json.replay.flatMap(replayTable)] : []),
  ].join('\n');
}
