import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { cycleNamePerRun } from '../../src/engine/clients.js';
import { configSchema } from '../../src/engine/config/schema.js';
import { createCycle, type ListedRuns } from '../../src/engine/delivery/cycles.js';
import type { CycleInfo } from '../../src/engine/kernel/types.js';
import { Engine, NotFoundError } from '../../src/index.js';
import { base, ctx, FAST, project, report, result, until, useEngineWorld } from '../support/engine-world.js';

/**
 * What a steady run (every test mapped and passing, cycle mode) sends to open its cycle, against the real emulator
 * over real HTTP: the requests in the order they arrived, which ones went together, and the cycle's final state. A
 * per-run name (`${build}`, a CI run id) is created first; a preloaded cycle this run created has its runs listed by
 * name beside the start and the id read-back.
 */

const world = useEngineWorld();
const { ops, admin, statusesOf: statuses, sentOps: sent } = world;
let emu: RunningEmulator;
beforeAll(() => {
  emu = world.emulator();
});

const passing = () => [result('DEMO-2 a', 'passed'), result('DEMO-3 b', 'passed')];

/** The requests of these operations were all sent before any of them was answered (one round trip). */
function together(...names: string[]): boolean {
  const reqs = names.map((n) => {
    const r = ops(n).at(-1);
    if (!r) throw new Error(`no ${n} was sent`);
    return r;
  });
  return Math.max(...reqs.map((r) => r.at)) <= Math.min(...reqs.map((r) => r.at + r.ms));
}

/** Sent after the request of `first` was answered. */
function after(first: string, ...names: string[]): boolean {
  const f = ops(first).at(-1);
  if (!f) throw new Error(`no ${first} was sent`);
  return names.every((n) => ops(n).every((r) => r.at >= f.at + f.ms - 1));
}

/** Makes a cycle as a person would before the run: created (with the plan's runs), and started unless `draft`. */
async function existing(name: string, draft = false): Promise<void> {
  const tm = admin();
  await tm.plans.addCycle({ testPlanIssueKey: 'DEMO-1', name, preloadRuns: 'yes' });
  if (!draft) await tm.cycles.workflow({ testPlanIssueKey: 'DEMO-1', cycleName: name, action: 'Start' });
  await tm.close();
  emu.clearRequests();
}

const perRun = (extra: Record<string, unknown> = {}) =>
  base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI ${build}', build: '417', ...extra });

describe('a steady run into its cycle', () => {
  it('per-run name, preloaded, new: create, then start, read back and list by name together, one bulk (5)', async () => {
    emu.faults.set([{ route: '**', latencyMs: 50 }]);
    const end = await report(perRun({ preloadRuns: true }), passing());
    expect(end.summary.problems).toEqual([]);
    expect(end.summary.journaled).toBe(0);
    expect(sent()).toHaveLength(5);
    expect(sent()[0]).toBe('plans.addCycle');
    expect(sent().slice(1, 4).sort()).toEqual(['cycles.testRuns', 'cycles.workflow', 'plans.cycles']);
    expect(sent()[4]).toBe('runs.bulkStatusUpdate');
    expect(after('plans.addCycle', 'cycles.testRuns', 'cycles.workflow', 'plans.cycles')).toBe(true);
    expect(together('cycles.testRuns', 'cycles.workflow', 'plans.cycles')).toBe(true);
    expect(emu.store.cycles.find((c) => c.name === 'CI 417')?.status).toBe('Active');
    expect(statuses('CI 417')).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
      ['DEMO-4', 'Not Tested'],
      ['DEMO-5', 'Not Tested'],
      ['DEMO-6', 'Not Tested'],
      ['DEMO-7', 'Not Tested'],
    ]);
  });

  it('per-run name, not preloaded, new: create, start and read back together, add, list by id, one bulk (6)', async () => {
    emu.faults.set([{ route: '**', latencyMs: 50 }]);
    const end = await report(perRun(), passing());
    expect(end.summary.problems).toEqual([]);
    expect(sent()).toEqual([
      'plans.addCycle',
      ...['cycles.workflow', 'plans.cycles'].sort(),
      'cycles.addMembersToTestCycle',
      'cycles.testRunsByCycleId',
      'runs.bulkStatusUpdate',
    ]);
    expect(together('cycles.workflow', 'plans.cycles')).toBe(true);
    expect(statuses('CI 417')).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
    ]);
  });

  it('a per-run variable of the CI names the cycle: created first too', async () => {
    const end = await report(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'nightly ${BUILD_NUMBER}', preloadRuns: true }),
      passing(),
      ctx(project(), [], { BUILD_NUMBER: '88' }),
    );
    expect(end.summary.problems).toEqual([]);
    expect(sent()[0]).toBe('plans.addCycle');
    expect(sent()).toHaveLength(5);
    expect(statuses('nightly 88').filter(([, s]) => s === 'Passed')).toHaveLength(2);
  });

  /**
   * A steady run in CI (a pipeline id) into a new per-run cycle, preloaded, whose tests take longer than preparing
   * it, as in a real run; `named`: the runner names its tests up front (Playwright). The operations sent.
   */
  async function inCi(runId: string, named: boolean, tests = passing()): Promise<string[]> {
    const engine = Engine.create(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI ${GITHUB_RUN_ID}', preloadRuns: true }),
      ctx(project(), [], { GITHUB_RUN_ID: runId }),
    );
    engine.begin({ tests: named ? tests : [] });
    await until('the cycle prepared', () => ops('cycles.workflow').length === 1 && ops('plans.cycles').length === 1);
    await new Promise((r) => setTimeout(r, 20));
    for (const t of tests) engine.add(t);
    const end = await engine.end();
    expect(end.summary.problems).toEqual([]);
    return sent();
  }

  it('in CI (a pipeline id), no tests named up front (Jest, Vitest): the runs are read once, right before the bulk (5)', async () => {
    // Not listed as it is created: the bulk reads the list again anyway (another job of the pipeline may have failed
    // some of these runs meanwhile), so a list read at the start would be read twice.
    expect(await inCi('123', false)).toEqual([
      'plans.addCycle',
      ...['cycles.workflow', 'plans.cycles'].sort(),
      'cycles.testRunsByCycleId',
      'runs.bulkStatusUpdate',
    ]);
  });

  it('in CI (a pipeline id), tests named up front (Playwright): the runs are read once, right before the bulk (5)', async () => {
    // The planned cases are the plan's: the preloaded cycle has their runs, so nothing is read until the bulk, which
    // reads the list anyway. Before, the start read it too (6 requests).
    expect(await inCi('124', true)).toEqual([
      'plans.addCycle',
      ...['cycles.workflow', 'plans.cycles'].sort(),
      'cycles.testRunsByCycleId',
      'runs.bulkStatusUpdate',
    ]);
    expect(statuses('CI 124').filter(([, st]) => st !== 'Not Tested')).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
    ]);
  });

  it('in CI, tests named up front, one failing: its run is read when it is needed, every status lands', async () => {
    const tests = [result('DEMO-2 a', 'passed'), result('DEMO-3 b', 'failed'), result('DEMO-4 c', 'passed')];
    const sentOps = await inCi('125', true, tests);
    expect(statuses('CI 125').filter(([k]) => ['DEMO-2', 'DEMO-3', 'DEMO-4'].includes(k ?? ''))).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Failed'],
      ['DEMO-4', 'Passed'],
    ]);
    // Read when the failing result needs its run; the bulk reads it again unless that read began after the bulk did
    // (here the results come together: one read serves both).
    const reads = sentOps.filter((o) => o === 'cycles.testRunsByCycleId').length;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(2);
    expect(sentOps.filter((o) => o === 'runs.bulkStatusUpdate')).toHaveLength(1);
  });

  it('default name, cycle there and active: find, list by id, one bulk (3), as before', async () => {
    const name = `CI ${new Date().toISOString().slice(0, 10)}`;
    await existing(name);
    const end = await report(base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1' }), passing());
    expect(end.summary.problems).toEqual([]);
    expect(sent()).toEqual(['plans.cycles', 'cycles.testRunsByCycleId', 'runs.bulkStatusUpdate']);
    expect(statuses(name).filter(([, s]) => s === 'Passed')).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
    ]);
  });

  it('default name, new and preloaded: find, create, then start, read back and list by name together, one bulk (6)', async () => {
    emu.faults.set([{ route: '**', latencyMs: 50 }]);
    const end = await report(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI nightly', preloadRuns: true }),
      passing(),
    );
    expect(end.summary.problems).toEqual([]);
    expect(sent()).toEqual([
      'plans.cycles',
      'plans.addCycle',
      ...['cycles.testRuns', 'cycles.workflow', 'plans.cycles'].sort(),
      'runs.bulkStatusUpdate',
    ]);
    expect(together('cycles.testRuns', 'cycles.workflow', 'plans.cycles')).toBe(true);
  });

  it('per-run name that exists (a re-run): the create is refused, the cycle found, the results delivered (4)', async () => {
    await existing('CI 417');
    const end = await report(perRun({ preloadRuns: true }), passing());
    expect(end.summary.problems).toEqual([]);
    expect(end.summary.journaled).toBe(0);
    expect(sent()).toEqual(['plans.addCycle', 'plans.cycles', 'cycles.testRunsByCycleId', 'runs.bulkStatusUpdate']);
    expect(ops('plans.addCycle')[0]?.status).toBe(500);
    expect(emu.store.cycles.filter((c) => c.name === 'CI 417')).toHaveLength(1);
    expect(statuses('CI 417').filter(([, s]) => s === 'Passed')).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
    ]);
  });

  it('per-run name that exists as a Draft: refused create, found, started, delivered', async () => {
    await existing('CI 417', true);
    const end = await report(perRun(), passing());
    expect(end.summary.problems).toEqual([]);
    expect(sent().slice(0, 3)).toEqual(['plans.addCycle', 'plans.cycles', 'cycles.workflow']);
    expect(emu.store.cycles.find((c) => c.name === 'CI 417')?.status).toBe('Active');
    expect(statuses('CI 417').filter(([, s]) => s === 'Passed')).toHaveLength(2);
  });

  for (const preloadRuns of [true, false]) {
    it(`two shards create the same per-run-name cycle at once: one cycle, every result in it (preloadRuns ${preloadRuns})`, async () => {
      emu.faults.set([{ route: '**', latencyMs: 30 }]);
      const shard = (current: number) => ({ ...ctx(project(), []), shard: { current, total: 2 } });
      const [one, two] = await Promise.all([
        report(perRun({ preloadRuns }), passing(), shard(1)),
        report(perRun({ preloadRuns }), [result('DEMO-4 c', 'passed'), result('DEMO-5 d', 'failed')], shard(2)),
      ]);
      for (const end of [one, two]) {
        expect(end.summary.problems).toEqual([]);
        expect(end.summary.journaled).toBe(0);
      }
      expect(ops('plans.addCycle')).toHaveLength(2);
      expect(ops('plans.addCycle').filter((r) => r.status === 500)).toHaveLength(1);
      expect(emu.store.cycles.filter((c) => c.name === 'CI 417')).toHaveLength(1);
      expect(emu.store.cycles.find((c) => c.name === 'CI 417')?.status).toBe('Active');
      const reported = statuses('CI 417').filter(([, s]) => s !== 'Not Tested');
      expect(reported).toEqual([
        ['DEMO-2', 'Passed'],
        ['DEMO-3', 'Passed'],
        ['DEMO-4', 'Passed'],
        ['DEMO-5', 'Failed'],
      ]);
    });
  }

  it('per-run name in a plan that does not exist: the create answers 404, the find says the plan is missing', async () => {
    const end = await report(perRun({ testPlan: 'DEMO-404' }), passing());
    expect(sent().slice(0, 2)).toEqual(['plans.addCycle', 'plans.cycles']);
    expect(end.summary.problems.join('\n')).toMatch(/test plan DEMO-404 was not found/);
    expect(emu.store.cycles.filter((c) => c.name === 'CI 417')).toHaveLength(0);
  });

  it('a name with "/" and other path characters is listed by name, encoded as one path segment', async () => {
    const end = await report(perRun({ build: 'release/4.1 #7 %', preloadRuns: true }), passing());
    expect(end.summary.problems).toEqual([]);
    expect(sent()).toHaveLength(5);
    expect(ops('cycles.testRuns')[0]?.status).toBe(200);
    expect(statuses('CI release/4.1 #7 %').filter(([, s]) => s === 'Passed')).toHaveLength(2);
  });

  it('the list by name fails: the runs are read by id, every result delivered', async () => {
    emu.faults.set([{ route: '**/cycle/*/testRuns', methods: ['GET'], errors: { '503': 1 }, retryAfterSeconds: 0 }]);
    // The client's waits between tries on the fast clock (support/engine-world.ts): the same tries, not their seconds.
    const end = await report(perRun({ preloadRuns: true }), passing(), ctx(project(), [], {}, FAST));
    expect(end.summary.problems).toEqual([]);
    expect(end.summary.journaled).toBe(0);
    expect(ops('cycles.testRuns').every((r) => r.status === 503)).toBe(true);
    expect(ops('cycles.testRunsByCycleId')).toHaveLength(1);
    expect(statuses('CI 417').filter(([, s]) => s === 'Passed')).toHaveLength(2);
  });

  it('a dry run of a per-run, preloaded cycle shows the create, the start and the list, and sends nothing', async () => {
    const end = await report(perRun({ preloadRuns: true, dryRun: true }), passing());
    expect(emu.requests().filter((r) => !r.path.startsWith('/__emulator'))).toEqual([]);
    const calls = (end.summary.calls ?? []).map((c) => c.split(' ')[0]);
    expect(calls[0]).toBe('plans.addCycle');
    expect(calls.slice(1, 3).sort()).toEqual(['cycles.testRuns', 'cycles.workflow']);
    expect(calls).toContain('runs.bulkStatusUpdate');
  });
});

describe('createCycle: the list by name is an early read, never a way to fail', () => {
  /** A service whose list by name answers 404 (a server that refuses an encoded `/` in a path, say). */
  function service(list: () => Promise<unknown>) {
    const calls: string[] = [];
    const tm = {
      plans: {
        addCycle: async () => void calls.push('plans.addCycle'),
        cycles: async () => {
          calls.push('plans.cycles');
          return [{ id: 9, name: 'CI a/b', status: 'Draft' }];
        },
      },
      cycles: {
        workflow: async () => void calls.push('cycles.workflow'),
        testRuns: async () => {
          calls.push('cycles.testRuns');
          return list();
        },
      },
    };
    return { svc: { tm, dryRun: false, o: {} } as never, calls };
  }

  it('a 404 of the list leaves `listed` out: the caller reads by id', async () => {
    const { svc, calls } = service(async () => {
      throw new NotFoundError('HTTP 404', { status: 404 });
    });
    const spec = { plan: 'DEMO-1', name: 'CI a/b', preloadRuns: true };
    const cycle: CycleInfo & { listed?: ListedRuns } = await createCycle(svc, spec, { start: true, listRuns: true });
    expect(cycle).toMatchObject({ id: 9, status: 'Active', created: true, preloaded: true });
    expect(cycle.listed).toBeUndefined();
    expect(calls.sort()).toEqual(['cycles.testRuns', 'cycles.workflow', 'plans.addCycle', 'plans.cycles']);
  });

  it('without listRuns (the CLI) nothing is listed', async () => {
    const { svc, calls } = service(async () => []);
    const cycle = await createCycle(svc, { plan: 'DEMO-1', name: 'CI a/b', preloadRuns: true });
    expect(cycle.listed).toBeUndefined();
    expect(calls).toEqual(['plans.addCycle', 'plans.cycles']);
  });
});

describe('cycleNamePerRun: which cycle names are new per run', () => {
  const config = (extra: Record<string, unknown>) =>
    configSchema.parse({ url: 'http://x.test', token: 't', projectKey: 'DEMO', ...extra });
  it.each([
    [{}, {}, false],
    [{ cycle: 'CI ${build}' }, {}, false],
    [{ cycle: 'CI ${build}', build: '417' }, {}, true],
    [{ cycle: 'CI ${branch} ${date}', build: '417' }, {}, false],
    [{ cycle: 'run ${GITHUB_RUN_ID}' }, { GITHUB_RUN_ID: '123' }, true],
    [{ cycle: 'run ${GITHUB_RUN_ID}' }, {}, false],
    [{ cycle: 'pipeline ${CI_PIPELINE_IID}' }, { CI_PIPELINE_IID: '5' }, true],
    [{ cycle: 'sha ${GITHUB_SHA}' }, { GITHUB_SHA: 'abc' }, false],
  ])('%j with %j: %s', (extra, env, want) => {
    expect(cycleNamePerRun(config(extra), env)).toBe(want);
  });
});
