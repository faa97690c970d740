import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupOf } from '../src/engine/defects/groups.js';
import { Engine, type EngineContext, type TestResult } from '../src/index.js';
import { closedPort, insertIssue } from './support/emulator.js';
import { FAST } from './support/engine-world.js';

/**
 * The engine at the scale of a real suite, against the emulator: journaled results replayed through the bulk, the
 * pipeline rule between machines, a URL that is not Jira's. (The runners at 1,000 tests: test/adoption.e2e.test.ts.)
 */

const SIZE = 1000;
const TOKEN = 'first-run-token';
const key = (i: number) => `BIG-${i + 2}`;

let emu: RunningEmulator;
beforeAll(async () => {
  const cases = Array.from({ length: SIZE }, (_, i) => ({ type: 'Test Case', summary: `case ${i}` }));
  emu = await startEmulator({
    port: 0,
    seed: {
      users: [{ name: 'ci', displayName: 'CI', password: 'ci', tokens: [TOKEN], admin: true }],
      projects: [
        {
          key: 'BIG',
          name: 'Big',
          issues: [{ type: 'Test Plan', summary: 'Plan', members: cases.map((_, i) => key(i)) }, ...cases],
        },
      ],
    },
  });
});
afterAll(async () => {
  await emu?.close();
});

function result(title: string, status: 'passed' | 'failed'): TestResult {
  return {
    id: `t.spec.ts>${title}`,
    file: 't.spec.ts',
    titlePath: [title],
    tags: [],
    annotations: [],
    attempts: [
      {
        retry: 0,
        status,
        durationMs: 1,
        errors: status === 'failed' ? [{ message: 'expected 1 to be 2', stack: 'Error\n at t.spec.ts:3:1' }] : [],
        steps: [],
        attachments: [],
      },
    ],
  };
}

const options = (url: string, extra: Record<string, unknown> = {}) => ({
  url,
  token: TOKEN,
  projectKey: 'BIG',
  mode: 'cycle',
  testPlan: 'BIG-1',
  flushTimeoutMs: 10_000,
  ...extra,
});

const ctx = (cwd: string, lines: string[] = [], env: NodeJS.ProcessEnv = {}, timeScale = 1): EngineContext => ({
  cwd,
  runner: { name: 'jest', version: 'test' },
  env,
  out: (t) => lines.push(t),
  timeScale,
});

/**
 * Another machine's defect of the group `marker`, created once this run's first search is on its way: Jira's index
 * (the realistic profile) shows it about a second later.
 */
async function filedElsewhere(key: string, marker: string) {
  while (!emu.requests().some((r) => r.op === 'jira.search')) await new Promise((r) => setTimeout(r, 10));
  const summary = `pays: expected 1 to be 2 ${marker}`;
  return insertIssue(emu, { project: 'BIG', key, type: 'Bug', summary, description: 'filed by the other machine' });
}

const statusesOf = (cycle: string) => {
  const c = emu.store.cycles.find((x) => x.name === cycle);
  return emu.store.runs.filter((r) => r.cycleId === c?.id).map((r) => r.status);
};

describe('a first run at scale', () => {
  it('1,000 journaled status-only results are replayed through the bulk: a handful of requests, journal empty', async () => {
    await emu.reset();
    const dir = mkdtempSync(join(tmpdir(), 'cb-first-'));
    const down = Engine.create(
      options(`http://127.0.0.1:${await closedPort()}`, { cycle: 'replayed', flushTimeoutMs: 2_000 * FAST }),
      ctx(dir, [], {}, FAST),
    );
    down.begin({ tests: [] });
    for (let i = 0; i < SIZE; i++) down.add(result(`${key(i)} works`, 'passed'));
    expect((await down.end()).summary.journaled).toBe(SIZE);

    emu.clearRequests();
    const replay = Engine.create(options(emu.url), ctx(dir));
    replay.begin();
    const end = await replay.end();
    expect(end.summary.journaled).toBe(0);
    expect(end.summary.replayed).toBe(SIZE);
    const requests = emu.requests().filter((r) => r.service === 'tm' || r.service === 'jira');
    // Find, create and start the cycle (4), add the cases and read the runs (2), one bulk per status (1).
    expect(requests.length, requests.map((r) => r.op).join(', ')).toBeLessThanOrEqual(12);
    const statuses = statusesOf('replayed');
    expect(statuses).toHaveLength(SIZE);
    expect(new Set(statuses)).toEqual(new Set(['Passed']));
    expect(readdirSync(join(dir, '.casebridge', 'journal')).filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  it('in CI, a Passed from one machine does not overwrite a Failed of another machine of the same pipeline run', async () => {
    await emu.reset();
    const cycle = 'two machines';
    const run = async (status: 'passed' | 'failed', env: NodeJS.ProcessEnv) => {
      const e = Engine.create(
        options(emu.url, { cycle, defects: { enabled: false } }),
        ctx(mkdtempSync(join(tmpdir(), 'cb-m-')), [], env),
      );
      e.begin({ tests: [] });
      e.add(result(`${key(0)} logs in`, status));
      e.add(result(`${key(1)} logs out`, 'passed'));
      return e.end();
    };
    await run('failed', { GITHUB_RUN_ID: '41', GITHUB_RUN_ATTEMPT: '1' });
    await run('passed', { GITHUB_RUN_ID: '41', GITHUB_RUN_ATTEMPT: '1' });
    const c = emu.store.cycles.find((x) => x.name === cycle);
    const statusOf = (k: string) =>
      emu.store.runs.find((r) => r.cycleId === c?.id && emu.store.issues.get(r.tcId)?.key === k)?.status;
    expect(statusOf(key(0))).toBe('Failed');
    expect(statusOf(key(1))).toBe('Passed');
    // A new attempt of the pipeline (a re-run) may overwrite it.
    await run('passed', { GITHUB_RUN_ID: '41', GITHUB_RUN_ATTEMPT: '2' });
    expect(statusOf(key(0))).toBe('Passed');
  });

  it('in CI, runners that name their tests (Playwright) into a preloaded per-run cycle: a Failed of another machine stays too', async () => {
    await emu.reset();
    // Machine B's runs are not read at its start (the preloaded cycle has them): the list is read right before its
    // bulk, after machine A failed the first test.
    const run = async (status: 'passed' | 'failed', env: NodeJS.ProcessEnv) => {
      const e = Engine.create(
        options(emu.url, { cycle: 'CI ${GITHUB_RUN_ID}', preloadRuns: true, defects: { enabled: false } }),
        ctx(mkdtempSync(join(tmpdir(), 'cb-m-')), [], env),
      );
      const tests = [result(`${key(0)} logs in`, status), result(`${key(1)} logs out`, 'passed')];
      e.begin({ tests });
      for (const t of tests) e.add(t);
      return e.end();
    };
    const a = await run('failed', { GITHUB_RUN_ID: '42', GITHUB_RUN_ATTEMPT: '1' });
    const b = await run('passed', { GITHUB_RUN_ID: '42', GITHUB_RUN_ATTEMPT: '1' });
    expect([a.summary.journaled, b.summary.journaled]).toEqual([0, 0]);
    const c = emu.store.cycles.filter((x) => x.name === 'CI 42');
    expect(c).toHaveLength(1);
    const statusOf = (k: string) =>
      emu.store.runs.find((r) => r.cycleId === c[0]?.id && emu.store.issues.get(r.tcId)?.key === k)?.status;
    expect(statusOf(key(0))).toBe('Failed');
    expect(statusOf(key(1))).toBe('Passed');
  });

  it('autoCreate while the service is down: the new tests wait in the journal too, and the next run creates their cases', async () => {
    await emu.reset();
    const dir = mkdtempSync(join(tmpdir(), 'cb-auto-down-'));
    const auto = { autoCreate: true, cycle: 'created later' };
    const down = Engine.create(
      options(`http://127.0.0.1:${await closedPort()}`, { ...auto, flushTimeoutMs: 10_000 * FAST }),
      ctx(dir, [], {}, FAST),
    );
    down.begin({ tests: [] });
    down.add(result('a new test', 'passed'));
    down.add(result('', 'passed'));
    down.add(result(`${key(0)} keyed`, 'passed'));
    const first = await down.end();
    expect(first.summary.journaled).toBe(3);
    expect(first.summary.unmapped).toEqual([]);

    const next = Engine.create(options(emu.url, auto), ctx(dir));
    next.begin();
    const end = await next.end();
    expect(end.summary.journaled).toBe(0);
    expect(end.summary.createdCases).toHaveLength(2);
    const made = emu.store.issues.filter((i) => end.summary.createdCases.includes(i.key)).map((i) => i.summary);
    expect(made.sort()).toEqual(['(untitled test) in t.spec.ts', 'a new test']);
    expect(statusesOf('created later')).toEqual(['Passed', 'Passed', 'Passed']);
  });

  it('creates that take Jira long do not hold the run back: results are delivered while they go on', async () => {
    // 20 ms an issue: a bulk of 50 holds its request 1 s, 24 of them 4 at a time take 6 s, and the creates fill every
    // slot of the client as each ends. The re-reads that decide them and the bulks of statuses go first (background
    // creates, transport.ts), so the results of the first cases land while the last are still being made, not all
    // after them. The engine's own waits (the bulk's timers, the wait before a re-read decides a create) on a clock
    // FAST times faster: on the real clock they take the seconds that 50 ms an issue (15 s of creates) was there to
    // cover; the creates' time is the emulator's, real.
    await emu.reset();
    emu.setJira({ createMs: 20 });
    emu.faults.set([{ route: '**', latencyMs: 20 }]);
    try {
      const dir = mkdtempSync(join(tmpdir(), 'cb-slow-creates-'));
      const run = Engine.create(
        options(emu.url, { autoCreate: true, cycle: 'slow creates', flushTimeoutMs: 10_000 * FAST }),
        ctx(dir, [], {}, FAST),
      );
      run.begin({ tests: [] });
      for (let i = 0; i < 1_200; i++) run.add(result(`slow create ${i}`, 'passed'));
      const end = await run.end();
      expect(end.summary.journaled).toBe(0);
      expect(end.summary.createdCases).toHaveLength(1_200);
      expect(statusesOf('slow creates').filter((s) => s === 'Passed')).toHaveLength(1_200);
      const log = emu.requests();
      const creates = log.filter((r) => r.op === 'jira.bulkCreateIssues');
      const lastCreateEnd = Math.max(...creates.map((r) => r.at + r.ms));
      const firstBulk = Math.min(...log.filter((r) => r.op === 'runs.bulkStatusUpdate').map((r) => r.at));
      expect(creates).toHaveLength(24);
      if (process.env.MARGIN) console.log('margin ms', lastCreateEnd - firstBulk);
      expect(firstBulk, 'the first statuses went before the last create was answered').toBeLessThan(lastCreateEnd);
    } finally {
      emu.faults.set([]);
      emu.setJira({ createMs: 25 });
    }
  }, 60_000);

  it('shards of one run adopting into one cycle each create their own cases at once (no waiting for the other)', async () => {
    await emu.reset();
    const auto = { autoCreate: true, cycle: 'sharded adoption' };
    const shard = async (current: number) => {
      const e = Engine.create(options(emu.url, auto), {
        ...ctx(mkdtempSync(join(tmpdir(), 'cb-shard-'))),
        shard: { current, total: 2 },
      });
      e.begin({ tests: [] });
      for (let i = 0; i < 20; i++) e.add(result(`shard ${current} test ${i}`, 'passed'));
      return e.end();
    };
    emu.clearRequests();
    const ends = await Promise.all([shard(1), shard(2)]);
    expect(ends.map((e) => e.summary.createdCases.length)).toEqual([20, 20]);
    expect(ends.map((e) => e.summary.journaled)).toEqual([0, 0]);
    // Each reads the project's cases once, then once more after its creates: a shard that waited for the other
    // would read again every second while the other's count grows.
    const searches = emu.requests().filter((r) => r.op === 'jira.search');
    expect(searches.length).toBeLessThanOrEqual(4);
    expect(statusesOf('sharded adoption')).toHaveLength(40);
  });

  it('another job of the matrix, in the same cycle, files the same failure a moment before: linked, none filed twice', async () => {
    await emu.reset();
    const failing = result(`${key(0)} pays`, 'failed');
    const marker = `[cb-${groupOf(failing).hash}]`;
    const job = (tests: TestResult[]) => {
      const e = Engine.create(
        options(emu.url, { cycle: 'matrix jobs', quarantine: { enabled: false } }),
        ctx(mkdtempSync(join(tmpdir(), 'cb-matrix-'))),
      );
      e.begin({ tests: [] });
      for (const t of tests) e.add(t);
      return e;
    };
    // The other job made and started the cycle a moment ago: this one finds it, shared.
    await job([result(`${key(1)} logs in`, 'passed')]).end();
    emu.clearRequests();
    const ending = job([failing]).end();
    // Its defect is created while this job's search is on its way: the search cannot show it yet (index lag).
    const theirs = await filedElsewhere('BIG-5001', marker);
    const end = await ending;
    const bugs = emu.store.issues.filter((i) => i.type === 'Bug');
    expect(
      bugs.map((b) => `${b.key} ${b.resolution ?? 'open'}`),
      "the other job's defect only: none filed to close as its duplicate",
    ).toEqual(['BIG-5001 open']);
    expect(end.summary.defects).toEqual({ created: [], linked: ['BIG-5001'] });
    const cycle = emu.store.cycles.find((c) => c.name === 'matrix jobs');
    const run = emu.store.runs.find((r) => r.cycleId === cycle?.id && emu.store.issues.get(r.tcId)?.key === key(0));
    expect(run?.status).toBe('Failed');
    expect(emu.store.bugLinks.filter((b) => b.runId === run?.id).map((b) => b.issueId)).toEqual([theirs.id]);
  });

  it('a failure another machine filed at the same moment: the older defect is kept, this one closed as Duplicate by the next read', async () => {
    await emu.reset();
    const failing = result(`${key(0)} pays`, 'failed');
    const marker = `[cb-${groupOf(failing).hash}]`;
    // The other machine's create lands while this one's is on its way (it answers 400 ms late).
    emu.faults.set([{ route: '**/testRun/createRunBug', latencyMs: 400 }]);
    // No quarantine: its search (at the first failure) would be the first one, and the other machine's defect is to
    // land between this run's defect search and its create.
    const e = Engine.create(
      options(emu.url, { cycle: 'racing defects', quarantine: { enabled: false } }),
      ctx(mkdtempSync(join(tmpdir(), 'cb-race-'))),
    );
    e.begin({ tests: [] });
    e.add(failing);
    const ending = e.end();
    const theirs = await filedElsewhere('BIG-5000', marker);
    await ending;
    // Jira's index shows a create about a second late (the realistic profile): the search right after this run's
    // create may show neither defect. The next read of the group (this run's next failure, another machine's, the
    // next run's) shows both: the older one is kept and linked, the newer closed as its duplicate.
    emu.catchUpIndex(); // the index lag passes, without waiting on the clock
    // The next run (a new cycle: within one cycle the cycle's defect list links without a search).
    const next = Engine.create(
      options(emu.url, { cycle: 'racing defects, next run' }),
      ctx(mkdtempSync(join(tmpdir(), 'cb-race-'))),
    );
    next.begin({ tests: [] });
    next.add(failing);
    const end = await next.end();
    const bugs = emu.store.issues.filter((i) => i.type === 'Bug');
    const ours = bugs.find((b) => b.key !== theirs.key);
    expect(bugs).toHaveLength(2);
    expect(ours?.resolution).toBe('Duplicate');
    expect(emu.store.issues.get(theirs.id)?.resolution).toBeNull();
    expect(end.summary.defects).toEqual({ created: [], linked: ['BIG-5000'] });
    const c = emu.store.cycles.find((x) => x.name === 'racing defects, next run');
    const run = emu.store.runs.find((r) => r.cycleId === c?.id);
    expect(run?.status).toBe('Failed');
    expect(emu.store.bugLinks.filter((b) => b.runId === run?.id).map((b) => b.issueId)).toContain(theirs.id);
  });

  it('a URL that does not answer as Jira is named as such, and the results wait in the journal', async () => {
    await emu.reset();
    const dir = mkdtempSync(join(tmpdir(), 'cb-url-'));
    const lines: string[] = [];
    const e = Engine.create(options(`${emu.url}/jira`, { cycle: 'wrong url' }), ctx(dir, lines));
    e.begin({ tests: [] });
    e.add(result(`${key(0)} logs in`, 'passed'));
    e.add(result(`${key(1)} logs out`, 'failed'));
    const end = await e.end();
    const text = lines.join('\n');
    expect(end.summary.journaled).toBe(2);
    expect(end.summary.serviceDown).toMatch(
      /\/jira does not answer as Jira \(GET \/rest\/api\/2\/myself: not found\): check url \(CASEBRIDGE_URL\)/,
    );
    expect(text).not.toMatch(/test plan BIG-1 was not found/);
    expect(end.summary.problems).toEqual([]);
  });
});
