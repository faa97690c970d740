/**
 * One measured run of a runner on a fixture: spawns it, times it from the parent, reads the timing probes' lines and
 * what the emulator saw (request log, delivered runs).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PLAN, PROJECT, TOKEN } from './common.mjs';

const now = () => performance.timeOrigin + performance.now();

/** A clean copy of our environment: no CASEBRIDGE_* / CI settings of the caller leak into the measured runs. */
function baseEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('CASEBRIDGE_') && !k.startsWith('GITHUB_') && k !== 'CI' && !k.startsWith('VITEST')) env[k] = v;
  }
  return env;
}

export const CYCLE = 'Bench';

/** The runner process under way, so that an interrupted benchmark does not leave it running. */
let running;

export function stopRunning() {
  running?.kill('SIGKILL');
}

function casebridgeEnv(emu, mode) {
  return {
    CASEBRIDGE_URL: emu.url,
    CASEBRIDGE_TOKEN: TOKEN,
    CASEBRIDGE_PROJECT: PROJECT,
    CASEBRIDGE_MODE: mode,
    ...(mode === 'cycle' ? { CASEBRIDGE_TEST_PLAN: PLAN, CASEBRIDGE_CYCLE: CYCLE } : {}),
  };
}

/** Runs delivered into the emulator: cycle mode, runs of the cycle with a status; ad hoc mode, ad hoc runs with one. */
function delivered(emu, mode) {
  const s = emu.store;
  const cycles =
    mode === 'cycle'
      ? s.cycles.filter((c) => c.name === CYCLE).map((c) => c.id)
      : s.cycles.filter((c) => c.adhocTcId !== null).map((c) => c.id);
  const ids = new Set(cycles);
  return s.runs.filter((r) => ids.has(r.cycleId) && r.status !== 'Not Tested').length;
}

/**
 * One run. `casebridge` false = baseline (JUnit only; the emulator is not touched); `options` are casebridge's
 * reporter options (the fixture's config reads them from BENCH_CB_OPTIONS). Resolves with the figures;
 * rejects only when the runner could not be started or timed out.
 */
export async function measure({ runner, dir, casebridge, mode, latency, emu, options = {}, timeoutMs = 1_800_000 }) {
  const timing = join(dir, 'bench-timing.jsonl');
  rmSync(timing, { force: true });
  // An earlier run's journal would be replayed first and change the request count.
  rmSync(join(dir, '.casebridge'), { recursive: true, force: true });
  if (casebridge) {
    await emu.reset();
    emu.faults.set(latency > 0 ? [{ route: '**', latencyMs: latency }] : []);
    emu.clearRequests();
  }
  const { command, args, env } = runner.command(dir, casebridge);
  // The emulator answers in this process: its CPU time during the run is this process's.
  const cpu0 = process.cpuUsage();
  const started = now();
  const child = spawn(command, args, {
    cwd: dir,
    env: {
      ...baseEnv(),
      FORCE_COLOR: '0',
      BENCH_TIMING_FILE: timing,
      BENCH_CB_OPTIONS: JSON.stringify(options),
      ...(casebridge ? casebridgeEnv(emu, mode) : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running = child;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout = (stdout + d).slice(-20_000);
  });
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-20_000);
  });
  const { code, exitAt } = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} in ${dir} did not finish in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (c) => {
      clearTimeout(timer);
      running = undefined;
      resolve({ code: c, exitAt: now() });
    });
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
  const requests = casebridge ? emu.requests().filter((r) => !r.path.startsWith('/__emulator')) : [];
  const byOp = {};
  for (const r of requests) byOp[r.op ?? r.path] = (byOp[r.op ?? r.path] ?? 0) + 1;
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
    /** CPU time (user + system) of the runner's main process, where the reporters run: far less noisy than wall. */
    cpuMs: exit?.cpuMs ?? null,
    /** CPU the in-process emulator (and this harness) used during the run: load on the same cores. */
    emulatorCpuMs: (cpu.user + cpu.system) / 1000,
    requests: requests.length,
    failedRequests: requests.filter((r) => r.status === 0 || r.status >= 400).length,
    byOp,
    tail,
    delivered: casebridge ? delivered(emu, mode) : null,
    uploads: uploads.length
      ? {
          count: uploads.length,
          spanMs: Math.max(...uploads.map((u) => u.at + u.ms)) - Math.min(...uploads.map((u) => u.at)),
        }
      : null,
  };
  if (!pre || !exit) result.output = `${stdout}\n${stderr}`.slice(-4000);
  else if (casebridge) result.summary = stderr.slice(-1500);
  return result;
}
