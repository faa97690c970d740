/**
 * The markdown of the peers cell (bench-results/peers.md): one side-by-side table (first and steady runs at each
 * latency and under the rate limit), then each part's runs with their requests by operation.
 */
import { median, round } from './common.mjs';

const LABELS = {
  junit: 'junit only',
  casebridge: 'casebridge',
  qase: 'Qase',
  testomatio: 'testomat.io',
};
const s = (ms) => (Number.isFinite(ms) ? `${round(ms / 1000, 1)} s` : '–');
const ops = (byOp = {}) =>
  Object.entries(byOp)
    .sort((a, b) => b[1] - a[1])
    .map(([op, n]) => `${op} ×${n}`)
    .join(', ') || 'none';
/** A CPU difference in seconds with its sign; "0 s" when it rounds to zero. */
const cpu = (ms) => {
  const sec = round(ms / 1000, 1);
  if (sec === null) return '–';
  return sec === 0 ? '0 s' : `${sec > 0 ? '+' : '−'}${Math.abs(sec)} s`;
};
const partName = (p) => `${p.latency} ms${p.requestsPerSecond ? `, ${p.requestsPerSecond} req/s` : ''}`;

/**
 * A run that did not report its end (probes missing) or exited with an error: named, not counted as a figure. With
 * failing tests (BENCH_PEERS_FAILING) the runner's exit code is 1.
 */
const broken = (r) => (r?.code !== 0 && r?.code !== 1) || r.tests === null;

/** Steady figures of one reporter in a part: medians over rounds of requests, wall, and wall ÷ that round's junit. */
export function steadyOf(part, who) {
  const rounds = part.steady.filter((round) => round[who] && round.junit);
  const ok = rounds.filter((round) => !broken(round[who]) && !broken(round.junit));
  return {
    rounds: rounds.length,
    ok: ok.length,
    requests: median(ok.map((round) => round[who].requests)),
    wallMs: median(ok.map((round) => round[who].wallMs)),
    ratio: median(ok.map((round) => round[who].wallMs / round.junit.wallMs)),
    /** CPU of the runner's main process (where reporters run) minus junit's: what load on the machine hardly moves. */
    cpuMs: median(ok.map((round) => round[who].cpuMs - round.junit.cpuMs)),
    delivered: median(ok.map((round) => round[who].delivered)),
    /** The last test's end to the runner's exit. */
    drainMs: median(ok.map((round) => round[who].drainMs)),
  };
}

function firstText(part, who) {
  const r = part.first[who];
  if (!r) return '–';
  if (broken(r)) return `failed (exit ${r.code}, ${r.tests ?? 'no'} tests reported)`;
  const base = part.first.junit;
  const ratio =
    who !== 'junit' && base && !broken(base)
      ? `, ${round(r.wallMs / base.wallMs, 2)}×, CPU ${cpu(r.cpuMs - base.cpuMs)}`
      : '';
  const req = who === 'junit' ? '' : `${r.requests}${r.rateLimited ? ` (${r.rateLimited} × 429)` : ''}, `;
  return `${req}${s(r.wallMs)}${ratio}`;
}

function steadyText(part, who) {
  const st = steadyOf(part, who);
  if (st.rounds === 0) return '–';
  if (st.ok === 0) return `failed in ${st.rounds} of ${st.rounds} rounds`;
  const req = who === 'junit' ? '' : `${st.requests}, `;
  const ratio = who === 'junit' ? '' : `, ${round(st.ratio, 2)}×, CPU ${cpu(st.cpuMs)}, drain ${s(st.drainMs)}`;
  const missing = st.ok < st.rounds ? ` (${st.rounds - st.ok} rounds failed)` : '';
  return `${req}${s(st.wallMs)}${ratio}${missing}`;
}

function summaryTable(json) {
  const parts = json.parts.filter(Boolean);
  const who = ['casebridge', 'qase', 'testomatio', 'junit'];
  const head = ['reporter', ...parts.flatMap((p) => [`${partName(p)}: first run`, `${partName(p)}: steady run`])];
  const rows = who.map((w) => {
    const peer = json.peers?.[w];
    const label = peer?.version ? `${LABELS[w]} ${peer.version}` : LABELS[w];
    if (peer?.unavailable) return [label, ...parts.flatMap(() => ['not run', 'not run'])];
    return [label, ...parts.flatMap((p) => [firstText(p, w), steadyText(p, w)])];
  });
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

function partDetails(part) {
  const out = [`### ${partName(part)}`, ''];
  out.push('| run | reporter | exit | tests | wall | CPU | requests | failed (429) | delivered | by operation |');
  out.push('|---|---|---|---|---|---|---|---|---|---|');
  const row = (name, who, r) =>
    `| ${name} | ${LABELS[who]} | ${r.code} | ${r.tests ?? '–'} | ${s(r.wallMs)} | ${s(r.cpuMs)} | ${who === 'junit' ? '–' : r.requests} | ${who === 'junit' ? '–' : `${r.failedRequests} (${r.rateLimited ?? 0})`} | ${r.delivered ?? '–'} | ${who === 'junit' ? '' : ops(r.byOp)} |`;
  for (const [who, r] of Object.entries(part.first)) out.push(row('first', who, r));
  part.steady.forEach((round, i) => {
    for (const [who, r] of Object.entries(round)) out.push(row(`steady ${i + 1}`, who, r));
  });
  const said = part.first.casebridge?.said;
  if (said?.length) out.push('', 'casebridge said (first run):', '', '```', ...said, '```');
  const failed = [...Object.values(part.first), ...part.steady.flatMap((r) => Object.values(r))].filter(
    (r) => r.output,
  );
  if (failed.length) out.push('', 'Output of a run that did not report its end:', '', '```', failed[0].output, '```');
  out.push('', `Load average (1 min) at start and end: ${part.load.join(', ')}`, '');
  return out;
}

export function renderPeers(json) {
  const v = json.versions;
  const out = [
    '# Peers: casebridge, Qase and testomat.io side by side (issue 25)',
    '',
    `${json.at}, commit ${v.commit}, Playwright ${json.playwright}, ${json.settings.tests} passing keyless tests, 2 workers; ` +
      `${json.env.cpu} × ${json.env.cores}, Node ${json.env.node}, load ${json.env.loadAtStart.join(' ')}` +
      (v.changedDuringRun ? `; REBUILT during the run: ${v.changedDuringRun.rebuilt.join(', ')}` : ''),
    '',
    'casebridge: the emulator, cycle mode, `CASEBRIDGE_AUTO_CREATE=true`; first run from a project with an empty plan',
    "and no case, steady runs into a new cycle each with the first run's mapping. Qase and testomat.io: their stand-ins",
    '(test/bench/lib/peers-standins.mjs), which answer and count; their servers create cases from results, so their',
    'first run makes the same calls as their steady one. Cells: requests, wall, wall ÷ the junit-only run before it',
    `(steady: medians of ${json.settings.rounds} interleaved rounds; under the rate limit ${json.settings.rpsRounds}),`,
    "and CPU: the runner's main process's CPU time (where the reporters run) minus the junit run's, which load on",
    'the machine moves far less than wall time.',
    'The same latency is added to every answer of the emulator and of the stand-ins; the rate limit (a token bucket',
    'of one second) applies to both.',
    '',
    ...summaryTable(json),
    '',
  ];
  for (const [p, info] of Object.entries(json.peers ?? {})) {
    if (info.unavailable) out.push(`- ${LABELS[p]} (${info.package}) was not run: ${info.unavailable}`);
  }
  for (const e of json.errors ?? []) out.push(`- the part at ${e.latency} ms failed: ${e.error}`);
  out.push('', '## Runs', '');
  for (const part of json.parts.filter(Boolean)) out.push(...partDetails(part));
  if (json.durationSeconds) out.push(`Duration: ${json.durationSeconds} s`, '');
  return `${out.join('\n')}\n`;
}
