import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type EngineContext, type TestResult } from '../src/index.js';
import { clearFaults, setFaults } from './support/emulator.js';
import { FAST } from './support/engine-world.js';

/**
 * Issue 23's ambiguous answers, against the real emulator over real HTTP with its fault rules: synapseRT answers 500
 * to a refusal and to a transient fault alike, and a degraded service is not a down one. No result may be lost.
 */

const SIZE = 60;
const TOKEN = 'faults-token';
const key = (i: number) => `FLT-${i + 2}`;

let emu: RunningEmulator;
beforeAll(async () => {
  const cases = Array.from({ length: SIZE }, (_, i) => ({ type: 'Test Case', summary: `case ${i}` }));
  emu = await startEmulator({
    port: 0,
    profile: 'ideal',
    seed: {
      users: [{ name: 'ci', displayName: 'CI', password: 'ci', tokens: [TOKEN], admin: true }],
      projects: [
        {
          key: 'FLT',
          name: 'Faults',
          issues: [{ type: 'Test Plan', summary: 'Plan', members: cases.map((_, i) => key(i)) }, ...cases],
        },
      ],
    },
  });
});
afterAll(async () => {
  await emu?.close();
});
afterEach(async () => {
  await clearFaults(emu);
});

function result(title: string, status: 'passed' | 'failed', line = 3): TestResult {
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
        errors:
          status === 'failed' ? [{ message: `expected ${line} to be 2`, stack: `Error\n at t.spec.ts:${line}:1` }] : [],
        steps: [],
        attachments: [],
      },
    ],
  };
}

const passing = (n = SIZE) => Array.from({ length: n }, (_, i) => result(`${key(i)} test ${i}`, 'passed'));

const options = (cycle: string, extra: Record<string, unknown> = {}) => ({
  url: emu.url,
  token: TOKEN,
  projectKey: 'FLT',
  mode: 'cycle',
  testPlan: 'FLT-1',
  cycle,
  flushTimeoutMs: 20_000 * FAST,
  ...extra,
});

const ctx = (cwd: string, lines: string[] = [], timing: EngineContext['timing'] = {}): EngineContext => ({
  cwd,
  runner: { name: 'jest', version: 'test' },
  env: {},
  out: (t) => lines.push(t),
  // The engine's waits FAST times shorter (support/engine-world.ts): the same path.
  timeScale: FAST,
  timing,
});

const dir = () => mkdtempSync(join(tmpdir(), 'cb-faults-'));

async function report(
  cycle: string,
  tests: TestResult[],
  cwd = dir(),
  lines: string[] = [],
  extra = {},
  timing: EngineContext['timing'] = {},
) {
  const engine = Engine.create(options(cycle, extra), ctx(cwd, lines, timing));
  engine.begin({ tests });
  for (const t of tests) engine.add(t);
  const end = await engine.end();
  return { end, cwd, out: lines.join('\n') };
}

/** The journal's next replay, as the next run (or `casebridge replay`) makes it. */
async function replay(cwd: string) {
  const engine = Engine.create(options('replay'), ctx(cwd));
  engine.begin();
  return engine.end();
}

function statuses(cycle: string): Map<string, string> {
  const c = emu.store.cycles.find((x) => x.name === cycle);
  const out = new Map<string, string>();
  for (const r of emu.store.runs.filter((x) => x.cycleId === c?.id)) {
    out.set(emu.store.issues.get(r.tcId)?.key ?? '?', r.status);
  }
  return out;
}

const passed = (cycle: string) => [...statuses(cycle).values()].filter((s) => s === 'Passed').length;
const journalFiles = (cwd: string) => readdirSync(join(cwd, '.casebridge/journal')).filter((f) => f.endsWith('.json'));

const BULK = '/rest/synapse/latest/public/testPlan/*/bulkStatusUpdate';

describe('ambiguous answers lose nothing', () => {
  it('a 500 on bulkStatusUpdate that outlasts the client retries: the halves go through, 60 of 60 delivered', async () => {
    await setFaults(emu, [{ route: BULK, errors: { '500': 1 }, times: 3, body: 'text' }]);
    const { end } = await report('transient bulk 500', passing());
    expect(passed('transient bulk 500')).toBe(SIZE);
    expect(end.summary.journaled).toBe(0);
    expect(end.summary.problems).toEqual([]);
  });

  it('bulkStatusUpdate answering 500 for the whole run: all 60 journaled, named once; the replay delivers all', async () => {
    await setFaults(emu, [{ route: BULK, errors: { '500': 1 }, body: 'text' }]);
    // The end gives up on a service that answers nothing but 500 after flushTimeoutMs (5 s here, not 20).
    const { end, cwd } = await report('lasting bulk 500', passing(), dir(), [], { flushTimeoutMs: 5_000 * FAST });
    expect(passed('lasting bulk 500')).toBe(0);
    expect(end.summary.journaled).toBe(SIZE);
    expect(end.summary.problems).toHaveLength(1);
    expect(end.summary.problems[0]).toMatch(/run status 'Passed' \(60 run\(s\)\).*check statusMap.*casebridge replay/);
    expect(journalFiles(cwd)).toHaveLength(SIZE);
    await clearFaults(emu);
    const again = await replay(cwd);
    expect(again.summary.journaled).toBe(0);
    expect(passed('lasting bulk 500')).toBe(SIZE);
    expect(journalFiles(cwd)).toEqual([]);
  });

  it('a run status the instance disabled: named once, the runs journaled, delivered once it is back', async () => {
    const status = emu.store.runStatuses.find((s) => s.name === 'Passed');
    if (!status) throw new Error('no Passed status in the seed');
    status.enabled = false;
    try {
      const { end, cwd } = await report('status disabled', passing(10), dir(), [], { flushTimeoutMs: 5_000 * FAST });
      expect(end.summary.journaled).toBe(10);
      const lines = end.summary.problems.filter((p) => p.includes("run status 'Passed'"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('Run status "Passed" is disabled: expected one of Failed, Blocked');
      status.enabled = true;
      expect((await replay(cwd)).summary.journaled).toBe(0);
      expect(passed('status disabled')).toBe(10);
    } finally {
      status.enabled = true;
    }
  });

  it('a disabled status on run updates (failures): one line for all, each result journaled marked, defects once', async () => {
    const status = emu.store.runStatuses.find((s) => s.name === 'Failed');
    if (!status) throw new Error('no Failed status in the seed');
    emu.store.issues.removeWhere((i) => i.type === 'Bug');
    status.enabled = false;
    try {
      const tests = [0, 1, 2].map((i) => result(`${key(i)} fails ${i}`, 'failed', 40 + i));
      // A refusal is an answer within refusalWindowMs of the service answering others, whose answers take real time:
      // the window (and the quiet time) stay seconds long on the fast clock (0.75 s was missed under a loaded CI run).
      const real = { refusalWindowMs: 15_000 * FAST, quietMs: 30_000 * FAST };
      const { end, cwd } = await report('failed disabled', tests, dir(), [], {}, real);
      expect(end.summary.journaled).toBe(3);
      expect(end.summary.problems).toHaveLength(1);
      expect(end.summary.problems[0]).toMatch(
        /^3 results \(FLT-2, FLT-3, FLT-4\): the service refused each on its own.*Run status "Failed" is disabled/,
      );
      for (const f of journalFiles(cwd)) {
        expect(JSON.parse(readFileSync(join(cwd, '.casebridge/journal', f), 'utf8')).refused?.times).toBe(1);
      }
      const bugs = emu.store.issues.filter((i) => i.type === 'Bug');
      expect(bugs, 'each failure filed once, whatever the retries').toHaveLength(3);
      status.enabled = true;
      expect((await replay(cwd)).summary.journaled).toBe(0);
      expect([...statuses('failed disabled').values()]).toEqual(['Failed', 'Failed', 'Failed']);
      expect(
        emu.store.issues.filter((i) => i.type === 'Bug'),
        'the replay files none again',
      ).toHaveLength(3);
    } finally {
      status.enabled = true;
    }
  });

  it('one run the service refuses inside a bulk: only it is named and journaled, marked; the 59 others delivered', async () => {
    const tests = passing();
    const lines: string[] = [];
    const cwd = dir();
    emu.clearRequests();
    const engine = Engine.create(options('one refused'), ctx(cwd, lines));
    engine.begin({ tests });
    // The cycle is prepared (its run list read); then someone deletes one run: the bulk names a run that is gone.
    const deadline = Date.now() + 10_000;
    while (!emu.requests().some((r) => r.op === 'cycles.testRunsByCycleId') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const cycle = emu.store.cycles.find((c) => c.name === 'one refused');
    const gone = emu.store.runs.find((r) => r.cycleId === cycle?.id && emu.store.issues.get(r.tcId)?.key === key(41));
    if (!gone) throw new Error('run not prepared');
    emu.store.runs.remove(gone.id);
    for (const t of tests) engine.add(t);
    const end = await engine.end();
    expect(passed('one refused')).toBe(SIZE - 1);
    expect(end.summary.journaled).toBe(1);
    expect(end.summary.problems).toHaveLength(1);
    expect(end.summary.problems[0]).toMatch(
      new RegExp(
        `^${key(41)} \\(.*\\): the service refused its result on its own, repeatedly.*not found in test cycle`,
      ),
    );
    const [file] = journalFiles(cwd);
    const entry = JSON.parse(readFileSync(join(cwd, '.casebridge/journal', file as string), 'utf8'));
    expect(entry).toMatchObject({ version: 1, kind: 'result', refused: { times: 1 }, payload: { key: key(41) } });
    expect(entry.payload.refused, 'the mark is on the entry, not in the payload').toBeUndefined();
    // The replay tries the marked entry again: its case gets a run again, and the result arrives.
    expect((await replay(cwd)).summary.journaled).toBe(0);
    expect(statuses('one refused').get(key(41))).toBe('Passed');
    expect(journalFiles(cwd)).toEqual([]);
  });
});

describe('defects under ambiguous answers', () => {
  const failing = () => [
    result(`${key(0)} one`, 'failed', 11),
    result(`${key(1)} two`, 'failed', 22),
    result(`${key(2)} three`, 'failed', 33),
  ];
  const bugs = () => emu.store.issues.filter((i) => i.type === 'Bug' && /\[cb-/.test(i.summary));
  const removeBugs = () => emu.store.issues.removeWhere((i) => i.type === 'Bug');

  it('a 500 on the first createRunBug: it is searched for, sent again, and the other failures get theirs: 3 defects', async () => {
    removeBugs();
    await setFaults(emu, [
      { route: '/rest/synapse/latest/public/testRun/createRunBug', errors: { '500': 1 }, times: 1, body: 'json' },
    ]);
    const { end } = await report('first bug 500', failing());
    expect(bugs()).toHaveLength(3);
    expect(end.summary.problems).toEqual([]);
    expect(end.summary.journaled).toBe(0);
    expect([...statuses('first bug 500').values()]).toEqual(['Failed', 'Failed', 'Failed']);
  });

  it('a createRunBug that committed and then answered 500: found by the search, never filed twice', async () => {
    removeBugs();
    await setFaults(emu, [
      {
        route: '/rest/synapse/latest/public/testRun/createRunBug',
        errors: { '500': 1 },
        times: 1,
        phase: 'after',
        body: 'html',
      },
    ]);
    const { end } = await report('bug 500 after commit', failing());
    expect(bugs()).toHaveLength(3);
    expect(end.summary.problems).toEqual([]);
  });
});

describe('a degraded service is not a down one', () => {
  it('30% of requests answer 503 during a first run of 300 new tests: every result delivered within the run', async () => {
    const cycle = 'degraded first run';
    const tests = Array.from({ length: 300 }, (_, i) => result(`new test ${i}`, 'passed'));
    const before = emu.store.issues.filter((i) => i.type === 'Test Case').length;
    await setFaults(emu, [{ route: '/rest/**', errors: { '503': 0.3 }, retryAfterSeconds: 0 }], 11);
    const lines: string[] = [];
    const { end } = await report(cycle, tests, dir(), lines, { autoCreate: true, flushTimeoutMs: 30_000 * FAST });
    await clearFaults(emu);
    expect(end.summary.journaled, lines.join('\n')).toBe(0);
    expect(passed(cycle)).toBe(300);
    expect(emu.store.issues.filter((i) => i.type === 'Test Case').length - before).toBe(300);
    expect(lines.join('\n')).not.toContain('not answering as it should');
  }, 120_000);

  it('a service down for a while is probed, and delivery resumes within the run (also at its end)', async () => {
    const cycle = 'down then back';
    const tests = [
      ...passing(20),
      ...[20, 21, 22, 23, 24, 25].map((i) => result(`${key(i)} fails ${i}`, 'failed', 60 + i)),
    ];
    const lines: string[] = [];
    const engine = Engine.create(options(cycle, { defects: { enabled: false } }), ctx(dir(), lines));
    engine.begin({ tests });
    const deadline = Date.now() + 10_000;
    while (statuses(cycle).size < 26 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // Every request now answers 503 (the client retries each five times, then gives up): the service is down.
    await setFaults(emu, [{ route: '/rest/**', errors: { '503': 1 }, retryAfterSeconds: 0 }]);
    for (const t of tests) engine.add(t);
    const ended = engine.end();
    const downAt = Date.now() + 20_000;
    while (!lines.some((l) => l.includes('not answering as it should')) && Date.now() < downAt) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await clearFaults(emu);
    const end = await ended;
    const out = lines.join('\n');
    expect(out).toContain('asking again every few seconds');
    expect(out).toContain('the service answers again: delivery resumes');
    expect(end.summary.journaled, out).toBe(0);
    expect([...statuses(cycle).values()].filter((s) => s === 'Failed')).toHaveLength(6);
    expect(passed(cycle)).toBe(20);
  }, 90_000);
});
