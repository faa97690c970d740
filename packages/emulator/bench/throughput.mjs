#!/usr/bin/env node
/**
 * Throughput benchmark of the emulator (`npm run bench`).
 *
 * Starts the BUILT emulator (`packages/emulator/dist/cli.js`, in memory, demo seed) as a child process, so the server
 * and the load generator each get a core of their own, then drives three simple requests with autocannon over
 * loopback (2 connections, no pipelining): list plan members, list cycles, and an idempotent addMembers. Prints a
 * markdown table and writes `bench-results/emulator.json` and `.md` at the repository root.
 *
 * Target on a 2-core machine: >= 2,000 requests/s and p99 < 20 ms for each request. Builds nothing: run
 * `npm run build` first (`npm run bench` does, through .ci/setup).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, platform, release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = join(ROOT, 'packages', 'emulator', 'dist', 'cli.js');
const OUT = join(ROOT, 'bench-results');

/** Seconds per request type (plus a short warm-up): three types stay well under a minute in all. */
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const WARMUP = 1;
const CONNECTIONS = 2;
const TARGET = { rps: 2000, p99: 20 };
const CYCLES = 10;

const PFX = '/rest/synapse/latest/public';
const AUTH = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
const CASES = [
  { name: 'GET plan members', method: 'GET', path: `${PFX}/testPlan/DEMO-1/members` },
  { name: 'GET plan cycles', method: 'GET', path: `${PFX}/testPlan/DEMO-1/cycles` },
  {
    name: 'POST addMembers (idempotent)',
    method: 'POST',
    path: `${PFX}/testPlan/DEMO-1/addMembers`,
    body: JSON.stringify({ testCaseKeys: ['DEMO-2', 'DEMO-3'] }),
  },
];

/** Starts the built CLI on a free port; resolves with its base URL and the child process. */
function startEmulator() {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: build first (npm run build -w @casebridge/core -w @casebridge/emulator)`);
  }
  const child = spawn(process.execPath, [CLI, '--port', '0', '--seed', 'demo'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`the emulator did not start within 15 s:\n${out}${err}`)), 15_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the emulator exited with code ${code}:\n${out}${err}`));
    });
  });
}

/**
 * One autocannon run. autocannon's own histogram keeps whole milliseconds, too coarse for a sub-millisecond
 * server, so the latency of every 2xx response is also collected here, in fractional milliseconds.
 */
async function run(url, c, duration) {
  const latencies = [];
  const instance = autocannon({
    url: url + c.path,
    method: c.method,
    connections: CONNECTIONS,
    pipelining: 1,
    duration,
    headers: { authorization: AUTH, accept: 'application/json', 'content-type': 'application/json' },
    body: c.body,
  });
  instance.on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await instance;
  latencies.sort((a, b) => a - b);
  return { result, latencies };
}

/** Nearest-rank percentile of sorted values, in ms rounded to 0.01. */
function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);
}

const round = (n, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/** Ten cycles with runs, so that the cycle list is not an empty array. */
async function prepare(url) {
  for (let i = 1; i <= CYCLES; i++) {
    const res = await fetch(`${url}${PFX}/testPlan/DEMO-1/addCycle`, {
      method: 'POST',
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Bench cycle ${i}`, build: `1.0.${i}`, environment: 'bench', preloadRuns: 'yes' }),
    });
    if (res.status !== 200) throw new Error(`preparing cycle ${i}: HTTP ${res.status} ${await res.text()}`);
  }
}

async function main() {
  const { child, url } = await startEmulator();
  const results = [];
  try {
    await prepare(url);
    for (const c of CASES) {
      await run(url, c, WARMUP);
      const { result: r, latencies } = await run(url, c, DURATION);
      const rps = r.requests.total / r.duration;
      const p99 = percentile(latencies, 99);
      results.push({
        name: c.name,
        method: c.method,
        path: c.path,
        requests: r.requests.total,
        durationSeconds: round(r.duration),
        requestsPerSecond: Math.round(rps),
        latencyMs: {
          mean: round(latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length)),
          p50: percentile(latencies, 50),
          p90: percentile(latencies, 90),
          p99,
          max: round(latencies.at(-1) ?? Number.NaN),
        },
        non2xx: r.non2xx,
        errors: r.errors,
        timeouts: r.timeouts,
        meetsTarget: rps >= TARGET.rps && p99 < TARGET.p99,
      });
    }
  } finally {
    child.kill('SIGTERM');
  }

  const env = {
    node: process.version,
    platform: `${platform()} ${release()}`,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
  };
  const settings = {
    connections: CONNECTIONS,
    pipelining: 1,
    durationSeconds: DURATION,
    warmupSeconds: WARMUP,
    cycles: CYCLES,
  };
  const lines = [
    '# Emulator throughput',
    '',
    `${new Date().toISOString()} · Node ${env.node} · ${env.platform} · ${env.cores} × ${env.cpu}`,
    `autocannon, ${CONNECTIONS} connections, no pipelining, ${DURATION} s per request after ${WARMUP} s warm-up; ` +
      `emulator in memory (built CLI, separate process), demo data plus ${CYCLES} cycles of 6 runs. Target: >= ${TARGET.rps} requests/s and p99 < ${TARGET.p99} ms.`,
    '',
    '| Request | Requests/s | p50 ms | p90 ms | p99 ms | max ms | non-2xx | errors | target |',
    '|---|---:|---:|---:|---:|---:|---:|---:|:---:|',
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.requestsPerSecond} | ${r.latencyMs.p50} | ${r.latencyMs.p90} | ${r.latencyMs.p99} | ` +
        `${r.latencyMs.max} | ${r.non2xx} | ${r.errors} | ${r.meetsTarget ? 'met' : 'MISSED'} |`,
    ),
    '',
  ];
  const markdown = lines.join('\n');
  mkdirSync(OUT, { recursive: true });
  writeFileSync(
    join(OUT, 'emulator.json'),
    `${JSON.stringify({ at: new Date().toISOString(), env, settings, target: TARGET, results }, null, 2)}\n`,
  );
  writeFileSync(join(OUT, 'emulator.md'), markdown);
  process.stdout.write(`${markdown}\nWritten: bench-results/emulator.json, bench-results/emulator.md\n`);
  // Failed requests mean the numbers measure error paths, not the emulator: fail loudly.
  if (results.some((r) => r.non2xx > 0 || r.errors > 0)) {
    process.stderr.write('bench: some requests failed (non-2xx or connection errors); the figures are not valid\n');
    process.exitCode = 1;
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${err.message}\n`);
  process.exit(1);
});
