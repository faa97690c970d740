import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine, TestManagementClient } from '@casebridge/core';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, ROOT } from '../support/runner.js';
import { cycleState, defects, type RunState, serviceRequests } from '../support/state.js';
import type { ChaosRunner } from './runners.js';

/**
 * The fault campaign: each scenario runs a mixed suite (pass, fail with a screenshot, flaky, steps) through a real
 * runner and reporter while the emulator misbehaves, recovers the way a user would (the next run, or
 * `casebridge replay`), and compares the emulator's final state with a fault-free run of the same suite: the same
 * runs, statuses, steps, attachments (by hash) and defects — nothing missing, nothing doubled. The figures go to
 * bench-results/chaos-<runner>.md. One test file per runner (chaos-playwright.test.ts, chaos-vitest.test.ts), each
 * with its own emulator, so the two campaigns run side by side.
 */

const TOKEN = 'casebridge-dev-token';
let emu: RunningEmulator;

async function faults(rules: unknown[] | undefined, seed = 7): Promise<void> {
  await fetch(`${emu.url}/__emulator/faults`, {
    method: rules ? 'PUT' : 'DELETE',
    headers: { 'content-type': 'application/json' },
    ...(rules ? { body: JSON.stringify({ rules, seed }) } : {}),
  });
}

const env = (cycle: string, extra: Record<string, string> = {}): Record<string, string> => ({
  CASEBRIDGE_URL: emu.url,
  CASEBRIDGE_TOKEN: TOKEN,
  CASEBRIDGE_PROJECT: 'DEMO',
  CASEBRIDGE_MODE: 'cycle',
  CASEBRIDGE_TEST_PLAN: 'DEMO-1',
  CASEBRIDGE_CYCLE: cycle,
  CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
  ...extra,
});

/** Runs the suite; `during` runs while it does (it may act on the emulator or kill the child). */
function runSuite(
  runner: ChaosRunner,
  dir: string,
  vars: Record<string, string>,
  during?: (child: ChildProcess) => Promise<void>,
): Promise<{ code: number | null; out: string }> {
  const [file, args] = runner.command(dir);
  const base: NodeJS.ProcessEnv = {};
  // Ours, without CASEBRIDGE_* and the markers of the Vitest running this file (a child Vitest would obey them).
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('CASEBRIDGE_') && !k.startsWith('VITEST') && k !== 'CI' && k !== 'NODE_ENV') base[k] = v;
  }
  const child = spawn(file, args, { cwd: dir, env: { ...base, FORCE_COLOR: '0', ...vars } });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((done) => child.on('close', done));
  return (async () => {
    if (during) {
      try {
        await during(child);
      } catch (err) {
        // The scenario failed (e.g. `until` gave up): the suite must not run on past the test that started it.
        child.kill('SIGKILL');
        await exited;
        throw err;
      }
    }
    return { code: await exited, out };
  })();
}

/** `casebridge replay` in the project, as the user would run it (in-process engine: same code as the CLI). */
async function replay(dir: string, token = TOKEN): Promise<number> {
  const engine = Engine.create(
    { url: emu.url, token, projectKey: 'DEMO', mode: 'cycle', testPlan: 'DEMO-1' },
    { cwd: dir, runner: { name: 'junit' }, env: {}, out: () => undefined },
  );
  engine.begin();
  const s = (await engine.end()).summary;
  replayedByScenario += s.delivered;
  return s.journaled;
}

/** Results the recovery (replay) delivered in the scenario under way, rather than the run itself. */
let replayedByScenario = 0;

/**
 * Waits until `done` holds (polling), at most 60 s; past that it throws naming `what`: a scenario whose moment never
 * came did not test what it names (returning quietly let it pass as if it had).
 */
async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!done()) {
    if (Date.now() >= deadline) throw new Error(`chaos: gave up after 60 s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

const delivering = () => serviceRequests(emu).some((r) => /testRun\/update|bulkStatusUpdate/.test(r.path));
const walItems = (dir: string) => {
  const journal = join(dir, '.casebridge', 'journal');
  const wal = existsSync(journal) ? readdirSync(journal).find((f) => f.startsWith('wal-')) : undefined;
  return wal ? (readFileSync(join(journal, wal), 'utf8').match(/"item":/g) ?? []).length : 0;
};

interface Scenario {
  name: string;
  /** Runs the suite into `cycle` under the fault and recovers; the final state is then compared. */
  play: (runner: ChaosRunner, dir: string, cycle: string) => Promise<void>;
  /** Scenarios whose recovery moves files elsewhere by design compare everything but the files. */
  compareFiles?: boolean;
  /** Whether the scenario met its condition, when that shows neither as a fault nor as a replay. */
  exercised?: () => boolean;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'service down for the whole run, then replay',
    async play(runner, dir, cycle) {
      await runSuite(
        runner,
        dir,
        env(cycle, { CASEBRIDGE_URL: `http://127.0.0.1:${await closedPort()}`, CASEBRIDGE_FLUSH_TIMEOUT_MS: '5000' }),
      );
      await replay(dir);
    },
  },
  {
    name: '30% 503 and 10% connection resets throughout',
    async play(runner, dir, cycle) {
      await faults(
        [
          // A 503 is the balancer's or the node's refusal before any work; a reset may come after the write.
          { route: '/rest/**', errors: { '503': 0.3 }, retryAfterSeconds: 0 },
          { route: '/rest/**', resetRate: 0.1, phase: 'after' },
        ],
        11,
      );
      await runSuite(runner, dir, env(cycle));
      await faults(undefined);
      await replay(dir);
    },
  },
  {
    name: '429 storm with Retry-After',
    async play(runner, dir, cycle) {
      // Half the requests refused until six were, each with a second to wait: the whole client waits each out (one
      // rate limit for all), so a longer storm only waits longer on the clock, to the same end.
      await faults([{ route: '/rest/**', errors: { '429': 0.5 }, retryAfterSeconds: 1, times: 6 }], 3);
      const run = await runSuite(runner, dir, env(cycle));
      await faults(undefined);
      await replay(dir);
      expect(run.out).not.toMatch(/not delivered/);
      expect(replayedByScenario, 'waited out within the run: nothing left for the replay').toBe(0);
    },
  },
  {
    name: 'answers slower than the client timeout',
    async play(runner, dir, cycle) {
      await faults([{ route: '/rest/**', hangRate: 0.2, hangMs: 2500, phase: 'after' }], 5);
      await runSuite(runner, dir, env(cycle, { CASEBRIDGE_TIMEOUT_MS: '1000' }));
      await faults(undefined);
      await replay(dir);
    },
  },
  {
    name: 'reporter killed (SIGKILL) mid-delivery, then replay',
    async play(runner, dir, cycle) {
      await faults([{ route: '/rest/**', latencyMs: 600 }]);
      await runSuite(runner, dir, env(cycle), async (child) => {
        await until(
          'every result in the journal and a delivery under way',
          () => walItems(dir) >= runner.mapped && delivering(),
        );
        child.kill('SIGKILL');
      });
      await faults(undefined);
      await replay(dir);
    },
  },
  {
    name: 'cycle completed by someone else mid-run',
    async play(runner, dir, cycle) {
      await faults([{ route: '/rest/**', latencyMs: 150 }]);
      await runSuite(runner, dir, env(cycle), async () => {
        await until('a delivery under way (a run update or a bulk status update)', delivering);
        const tm = new TestManagementClient({ baseUrl: emu.url, auth: { type: 'bearer', token: TOKEN } });
        await tm.cycles
          .workflow({ testPlanIssueKey: 'DEMO-1', cycleName: cycle, action: 'Complete' })
          .catch(() => undefined);
        await tm.close();
      });
      await faults(undefined);
      await replay(dir);
    },
  },
  {
    name: 'token expired mid-run, then replay with a new one',
    async play(runner, dir, cycle) {
      const user = emu.store.users.find((u) => u.name === 'tester');
      if (!user) throw new Error('the demo data has no user "tester"');
      emu.store.users.update({ ...user, tokens: ['chaos-token-1'] });
      await faults([{ route: '/rest/**', latencyMs: 150 }]);
      await runSuite(runner, dir, env(cycle, { CASEBRIDGE_TOKEN: 'chaos-token-1' }), async () => {
        await until('a delivery under way (a run update or a bulk status update)', delivering);
        const now = emu.store.users.find((u) => u.name === 'tester');
        if (now) emu.store.users.update({ ...now, tokens: [] });
      });
      await faults(undefined);
      await replay(dir);
    },
  },
  {
    name: 'one transient 500 (plain text) on the bulk status update',
    async play(runner, dir, cycle) {
      // synapseRT documents every 500 as "a validation error or any unknown Internal Server Error": one such answer
      // must cost nothing. No replay: the run itself delivers everything.
      await faults([{ route: '**/bulkStatusUpdate', errors: { '500': 1 }, body: 'text', times: 1 }]);
      await runSuite(runner, dir, env(cycle));
      await faults(undefined);
    },
  },
  {
    name: 'every bulk status update answers 500 for the whole run, then replay',
    async play(runner, dir, cycle) {
      await faults([{ route: '**/bulkStatusUpdate', errors: { '500': 1 }, body: 'json' }]);
      await runSuite(runner, dir, env(cycle, { CASEBRIDGE_FLUSH_TIMEOUT_MS: '5000' }));
      await faults(undefined);
      await replay(dir);
    },
  },
  {
    name: 'run writes answer an HTML 500 after they committed',
    async play(runner, dir, cycle) {
      await faults(
        [
          {
            route: '/rest/synapse/**/testRun/**',
            methods: ['PUT', 'POST'],
            errors: { '500': 0.4 },
            body: 'html',
            phase: 'after',
          },
        ],
        13,
      );
      await runSuite(runner, dir, env(cycle));
      await faults(undefined);
      await replay(dir);
    },
  },
  {
    name: 'a session login on a two-node cluster',
    async play(runner, dir, cycle) {
      // Jira DC behind a load balancer: the session lives on the node that made it, found by its ROUTEID cookie.
      const vars = env(cycle, {
        CASEBRIDGE_AUTH_TYPE: 'session',
        CASEBRIDGE_USER: 'admin',
        CASEBRIDGE_PASSWORD: 'admin',
      });
      delete vars.CASEBRIDGE_TOKEN;
      await runSuite(runner, dir, vars);
      await replay(dir);
    },
    // A session that kept only JSESSIONID would meet the other node's 401 on every second request.
    exercised: () =>
      emu.requests().some((r) => r.path.startsWith('/rest/auth/1/session') && r.status === 200) &&
      !emu.requests().some((r) => r.status === 401),
  },
  {
    name: 'rate limited with Retry-After: 0',
    async play(runner, dir, cycle) {
      await faults([{ route: '/rest/**', errors: { '429': 0.5 }, retryAfterSeconds: 0 }], 17);
      await runSuite(runner, dir, env(cycle));
      await faults(undefined);
      await replay(dir);
    },
  },
  {
    name: 'content repository answers 503 (quota) on upload',
    async play(runner, dir, cycle) {
      writeFileSync(
        join(dir, 'casebridge.config.json'),
        JSON.stringify({
          repository: { url: emu.url, user: 'admin', password: 'admin' },
          attachments: { repositoryMinBytes: 1 },
        }),
      );
      await faults([{ route: '/edu-sharing/rest/**', errors: { '503': 1 }, retryAfterSeconds: 0 }]);
      await runSuite(runner, dir, env(cycle));
      await faults(undefined);
      await replay(dir);
    },
  },
];

interface Row {
  runner: string;
  scenario: string;
  expected: number;
  delivered: number;
  missing: number;
  duplicates: number;
  /** Requests that met a fault: an injected error, reset or hang, or a 401/403 the scenario caused. */
  faults: number;
  /** Results delivered by the recovery (replay of the journal or of a killed run's log). */
  viaReplay: number;
}
const rows: Row[] = [];

function writeTable(): void {
  if (rows.length === 0) return;
  const out = join(ROOT, 'bench-results');
  mkdirSync(out, { recursive: true });
  const sum = (f: (r: Row) => number) => rows.reduce((a, r) => a + f(r), 0);
  const lines = [
    '| runner | scenario | requests faulted | results expected | delivered | via replay | missing | duplicates |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.runner} | ${r.scenario} | ${r.faults} | ${r.expected} | ${r.delivered} | ${r.viaReplay} | ${r.missing} | ${r.duplicates} |`,
    ),
    `| **all** | ${rows.length} scenario runs | ${sum((r) => r.faults)} | ${sum((r) => r.expected)} | ${sum((r) => r.delivered)} | ${sum((r) => r.viaReplay)} | ${sum((r) => r.missing)} | ${sum((r) => r.duplicates)} |`,
  ];
  const name = rows[0]?.runner ?? 'runner';
  writeFileSync(join(out, `chaos-${name}.md`), `${lines.join('\n')}\n`);
  writeFileSync(join(out, `chaos-${name}.json`), JSON.stringify(rows, null, 2));
}

/** Compares a scenario's state with the reference; records the row. */
function compare(runner: string, scenario: string, reference: RunState[], state: RunState[], files: boolean): void {
  const strip = (r: RunState) => (files ? r : { ...r, files: [] });
  const ref = new Map(reference.map((r) => [r.key, JSON.stringify(strip(r))]));
  const seen = new Map<string, number>();
  let delivered = 0;
  for (const r of state) {
    seen.set(r.key, (seen.get(r.key) ?? 0) + 1);
    if (ref.get(r.key) === JSON.stringify(strip(r))) delivered += 1;
  }
  const duplicates =
    [...seen.values()].reduce((a, n) => a + Math.max(0, n - 1), 0) +
    state.reduce(
      (a, r) => a + Math.max(0, r.files.length - (reference.find((x) => x.key === r.key)?.files.length ?? 0)),
      0,
    );
  const faults = emu.requests().filter((r) => r.fault !== null || [401, 403, 429, 503].includes(r.status)).length;
  rows.push({
    runner,
    scenario,
    expected: reference.length,
    delivered,
    missing: reference.length - delivered,
    duplicates,
    faults,
    viaReplay: replayedByScenario,
  });
}

/** The campaign of one runner, in the test file that calls it (its own emulator). */
export function faultCampaign(runner: ChaosRunner): void {
  beforeAll(async () => {
    emu = await startEmulator({ port: 0 });
  });
  afterAll(async () => {
    await emu?.close();
    writeTable();
  });
  describe(`fault campaign: ${runner.name}`, () => campaignOf(runner));
}

function campaignOf(runner: ChaosRunner): void {
  let reference: RunState[] = [];
  let referenceDefects: string[] = [];

  it('the fault-free reference run', async () => {
    await emu.reset();
    const dir = runner.project('chaos-ref');
    await runSuite(runner, dir, env('chaos reference'));
    reference = cycleState(emu, 'chaos reference');
    referenceDefects = defects(emu);
    expect(reference.map((r) => r.key)).toEqual(runner.keys);
    expect(referenceDefects).toHaveLength(1);
  });

  it.each(SCENARIOS)('$name: the fault-free state, nothing lost, nothing doubled', async (scenario) => {
    // Each scenario starts from the reference's defects, like a real project: the failure's defect exists.
    const dir = runner.project(`chaos-${scenario.name.replace(/\W+/g, '-').slice(0, 40)}`);
    const cycle = `chaos ${scenario.name}`;
    emu.clearRequests();
    replayedByScenario = 0;
    await scenario.play(runner, dir, cycle);
    const state = cycleState(emu, cycle);
    compare(runner.name, scenario.name, reference, state, scenario.compareFiles !== false);
    const row = rows[rows.length - 1];
    expect(row, JSON.stringify(state, null, 2)).toMatchObject({ missing: 0, duplicates: 0 });
    // The fault really happened: requests met it, or the recovery had results to deliver.
    const exercised = scenario.exercised?.() ?? (row?.faults ?? 0) + (row?.viaReplay ?? 0) > 0;
    expect(exercised, 'the scenario exercised its fault').toBe(true);
    expect(defects(emu), 'no second defect for the same failure').toEqual(referenceDefects);
    const journal = join(dir, '.casebridge', 'journal');
    if (existsSync(journal))
      expect(readdirSync(journal).filter((f) => f.endsWith('.json') || f.startsWith('wal-'))).toEqual([]);
  });
}
