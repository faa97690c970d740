/**
 * One measured run of a runner on a fixture: spawns it, times it from the parent, reads the timing probes' lines and
 * what the emulator saw (request log, delivered runs).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { PLAN, PROJECT, TOKEN } from './common.mjs';

const now = () => performance.timeOrigin + performance.now();

/** A clean copy of our environment: no CASEBRIDGE_* / CI settings of the caller leak into the measured runs. */
export function baseEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('CASEBRIDGE_') && !k.startsWith('GITHUB_') && k !== 'CI' && !k.startsWith('VITEST')) env[k] = v;
  }
  return env;
}

export const CYCLE = 'Bench';

/** The runner process under way, so that an interrupted benchmark does not leave it running. */
let running;

/**
 * The service is not on the CI machine: its CPU must not compete with the runner's. The emulator (and the peers'
 * stand-ins) answer from this process's main thread, which `serveNiced` moves to nice BENCH_NICE (19 by default:
 * it runs when a core is free); the runners are started through `nice -n -19`, back at the priority they would
 * have had. Linux keeps nice per thread: only the main thread moves. BENCH_NICE=0, or a machine that refuses to
 * raise a priority again, leaves everything at one priority (as before; the line says so).
 */
let niced = 0;
export function serveNiced(log) {
  const nice = Number(process.env.BENCH_NICE ?? 19);
  if (!(nice > 0)) return;
  try {
    setPriority(nice);
    const back = execFileSync('nice', ['-n', String(-nice), 'nice'], { encoding: 'utf8', stdio: 'pipe' }).trim();
    if (back !== '0') throw new Error(`nice -n ${-nice} gave ${back}`);
    niced = nice;
    log(`bench: the emulator answers at nice ${nice}; the runners run at nice 0`);
  } catch (err) {
    setPriority(0);
    log(`bench: emulator and runners at one priority (${String(err.message ?? err).split('\n')[0]})`);
  }
}

export function stopRunning() {
  running?.kill('SIGKILL');
}

/** The `CASEBRIDGE_*` variables of a measured run: the emulator, its token, project BENCH, the mode (and plan, cycle). */
export function casebridgeEnv(emu, mode, cycle = CYCLE) {
  return {
    CASEBRIDGE_URL: emu.url,
    CASEBRIDGE_TOKEN: TOKEN,
    CASEBRIDGE_PROJECT: PROJECT,
    CASEBRIDGE_MODE: mode,
    ...(mode === 'cycle' ? { CASEBRIDGE_TEST_PLAN: PLAN, CASEBRIDGE_CYCLE: cycle } : {}),
  };
}

/** Runs delivered into the emulator: cycle mode, runs of the cycle with a status; ad hoc mode, ad hoc runs with one. */
export function delivered(emu, mode, cycle = CYCLE) {
  const s = emu.store;
  const cycles =
    mode === 'cycle'
      ? s.cycles.filter((c) => c.name === cycle).map((c) => c.id)
      : s.cycles.filter((c) => c.adhocTcId !== null).map((c) => c.id);
  const ids = new Set(cycles);
  return s.runs.filter((r) => ids.has(r.cycleId) && r.status !== 'Not Tested').length;
}

/**
 * What waits in a journal folder (`.casebridge/journal` of a fixture): entries (`<id>.json`, one result each, and
 * `<id>.json.claimed-<pid>` that a process took and did not finish), write-ahead logs (`wal-*.jsonl`, of a run that
 * did not write its journal at the end) with the results in them not marked delivered (what a later run recovers)
 * and blobs. Zeros when the folder does not exist.
 */
export function journalLeft(dir) {
  const out = { entries: 0, claimed: 0, wals: 0, walResults: 0, blobs: 0 };
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (name.endsWith('.json')) out.entries += 1;
    else if (/\.json\.claimed-\d+$/.test(name)) out.claimed += 1;
    else if (/^wal-.*\.jsonl/.test(name)) {
      out.wals += 1;
      out.walResults += walPending(readFileSync(join(dir, name), 'utf8'));
    } else if (name === 'blobs') out.blobs = readdirSync(join(dir, name)).length;
  }
  return out;
}

/** Results of a write-ahead log not marked delivered: `{item: {id}}` lines minus `{done: id}` lines (core's journal.ts). */
function walPending(text) {
  const pending = new Set();
  for (const line of text.split('\n')) {
    try {
      const r = JSON.parse(line);
      if (r.item?.id) pending.add(r.item.id);
      else if (r.done) pending.delete(r.done);
    } catch {
      // An empty or torn last line.
    }
  }
  return pending.size;
}

/** Requests the emulator logged (admin calls left out): the list, the count by operation, the failed ones. */
export function requestsOf(emu) {
  const list = emu.requests().filter((r) => !r.path.startsWith('/__emulator'));
  const byOp = {};
  for (const r of list) byOp[r.op ?? r.path] = (byOp[r.op ?? r.path] ?? 0) + 1;
  return { list, byOp, failed: list.filter((r) => r.status === 0 || r.status >= 400).length };
}

/**
 * Spawns a command and waits for its exit; kills it after `timeoutMs` (resolving with `timedOut`, or rejecting when
 * `rejectOnTimeout`). Wall is spawn to the child's `exit` event, in this process; output keeps the last 20,000
 * characters of each stream.
 */
export async function timedRun(command, args, { cwd, env, timeoutMs, rejectOnTimeout = true }) {
  const started = now();
  const [cmd, argv] = niced > 0 ? ['nice', ['-n', String(-niced), command, ...args]] : [command, args];
  const child = spawn(cmd, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running = child;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout = (stdout + d).slice(-20_000);
  });
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-20_000);
  });
  let timedOut = false;
  const { code, exitAt } = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
      if (rejectOnTimeout) {
        reject(new Error(`${command} ${args.join(' ')} in ${cwd} did not finish in ${timeoutMs} ms\n${stderr}`));
      }
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (c) => {
      clearTimeout(timer);
      running = undefined;
      resolve({ code: c, exitAt: now() });
    });
  });
  return { code, timedOut, started, exitAt, wallMs: exitAt - started, stdout, stderr };
}

/**
 * One run. `casebridge` false = baseline (JUnit only; the emulator is not touched); `options` are casebridge's
 * reporter options (the fixture's config reads them from BENCH_CB_OPTIONS). `cycle` names the cycle of cycle mode;
 * `env` adds or overrides variables (e.g. `CASEBRIDGE_AUTO_CREATE`, or `CASEBRIDGE_URL` of a service that is down).
 * `reset` false keeps the emulator's state (a second run after a first one), `clearJournal` false keeps what an
 * earlier run left in the fixture's journal. Resolves with the figures; rejects only when the runner could not be
 * started or timed out.
 */
export async function measure({
  runner,
  dir,
  casebridge,
  mode,
  latency,
  emu,
  options = {},
  cycle = CYCLE,
  env: extraEnv = {},
  reset = true,
  clearJournal = true,
  timeoutMs = 1_800_000,
}) {
  const timing = join(dir, 'bench-timing.jsonl');
  rmSync(timing, { force: true });
  // An earlier run's journal would be replayed first and change the request count.
  if (clearJournal) rmSync(join(dir, '.casebridge'), { recursive: true, force: true });
  if (casebridge) {
    if (reset) await emu.reset();
    emu.faults.set(latency > 0 ? [{ route: '**', latencyMs: latency }] : []);
    emu.clearRequests();
  }
  const { command, args, env } = runner.command(dir, casebridge);
  // The emulator answers in this process: its CPU time during the run is this process's.
  const cpu0 = process.cpuUsage();
  const { code, started, exitAt, stdout, stderr } = await timedRun(command, args, {
    cwd: dir,
    env: {
      ...baseEnv(),
      FORCE_COLOR: '0',
      BENCH_TIMING_FILE: timing,
      BENCH_CB_OPTIONS: JSON.stringify(options),
      ...(casebridge ? { ...casebridgeEnv(emu, mode, cycle), ...extraEnv } : {}),
      ...env,
    },
    timeoutMs,
  });
  const cpu = process.cpuUsage(cpu0);
  const lines = existsSync(timing)
    ? readFileSync(timing, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
  const pre = lines.find((l) => l.probe === 'pre' && l.event === 'end');
  const post = lines.find((l) => l.probe === 'post' && l.event === 'end');
  const exit = lines.find((l) => l.event === 'exit');
  const { list: requests, byOp, failed } = casebridge ? requestsOf(emu) : { list: [], byOp: {}, failed: 0 };
  const uploads = requests.filter((r) => /^attachments\.addTo/.test(r.op ?? ''));
  // Requests still under way or started after the last test ended: what the end of the run waits for.
  const tail = pre?.lastTestEnd
    ? requests.filter((r) => r.at + r.ms >= pre.lastTestEnd).map((r) => ({ op: r.op, ms: r.ms, status: r.status }))
    : [];
  const result = {
    casebridge,
    code,
    wallMs: exitAt - started,
    tests: pre?.tests ?? null,
    /** Last test's end to the process's exit, seen from the parent. */
    drainMs: pre?.lastTestEnd ? exitAt - pre.lastTestEnd : null,
    /** Last test's end to the first reporter's end hook: the runner's own wind-down (workers stopping). */
    beforeEndMs: pre?.lastTestEnd ? pre.at - pre.lastTestEnd : null,
    /** Time the real reporters spent in the end hook (between the two probes). */
    onEndMs: pre && post ? post.at - pre.at : null,
    /** From the last reporter's end hook to the exit event inside the process. */
    teardownMs: post && exit ? exit.at - post.at : null,
    maxRssMb: exit ? exit.maxRssKb / 1024 : null,
    /** BENCH_LIVE_HEAP_MS: the largest heap left after a forced full GC (see probeSource). */
    maxLiveMb: exit?.maxLiveMb ?? null,
    /** CPU time (user + system) of the runner's main process, where the reporters run: far less noisy than wall. */
    cpuMs: exit?.cpuMs ?? null,
    /** CPU the in-process emulator (and this harness) used during the run: load on the same cores. */
    emulatorCpuMs: (cpu.user + cpu.system) / 1000,
    requests: requests.length,
    failedRequests: failed,
    byOp,
    tail,
    // BENCH_TIMELINE=1: every request as [start, end, op], ms from the spawn, with the last test's end: where a
    // run's time goes (kept out of the reports otherwise: thousands of entries).
    ...(process.env.BENCH_TIMELINE
      ? {
          timeline: {
            lastTestEnd: pre?.lastTestEnd ? Math.round(pre.lastTestEnd - started) : null,
            requests: requests.map((r) => [Math.round(r.at - started), Math.round(r.at + r.ms - started), r.op]),
          },
        }
      : {}),
    delivered: casebridge ? delivered(emu, mode, cycle) : null,
    /** What the run left in the fixture's journal folder (the default `.casebridge/journal`). */
    journal: casebridge ? journalLeft(join(dir, '.casebridge', 'journal')) : null,
    uploads: uploads.length
      ? {
          count: uploads.length,
          spanMs: Math.max(...uploads.map((u) => u.at + u.ms)) - Math.min(...uploads.map((u) => u.at)),
        }
      : null,
  };
  if (!pre || !exit) result.output = `${stdout}\n${stderr}`.slice(-4000);
  else if (casebridge) {
    result.summary = stderr.slice(-1500);
    result.said = casebridgeLines(`${stdout}\n${stderr}`);
  }
  return result;
}

/**
 * What casebridge printed (its lines start with `casebridge`, its summary's details are indented under them), each
 * line cut at 240 characters (a list of 1,400 created keys is one line), at most 40 lines. Of the output kept (the
 * last 20,000 characters of each stream).
 */
export function casebridgeLines(text) {
  const out = [];
  let inBlock = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('casebridge')) inBlock = true;
    else if (!/^\s+\S/.test(line)) inBlock = false;
    if (inBlock) out.push(line.length > 240 ? `${line.slice(0, 240)} … (${line.length} characters)` : line);
  }
  return out.slice(-40);
}
