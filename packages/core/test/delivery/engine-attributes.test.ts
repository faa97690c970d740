import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Engine, type TestResult } from '../../src/index.js';
import { insertIssue } from '../support/emulator.js';
import { base, ctx, FAST, project, report, result, until, useEngineWorld } from '../support/engine-world.js';

/**
 * Run attributes (option `attributes`), against the real emulator: an advanced cycle, one run per case and attribute
 * set made with createTestRuns in batches, each result to its own run; reused by the next run; a value the project
 * does not define named once, its results kept in the journal and delivered once the value exists. The runs the
 * plan makes known are created at begin. The seed's project DEMO defines Browser (Chrome, Firefox), OS (Linux,
 * Windows) and Device (Desktop, Mobile).
 */

const world = useEngineWorld();
const { runsOfCycle, ops } = world;
let emu: RunningEmulator;
beforeAll(() => {
  emu = world.emulator();
});

const options = (cycle: string, extra: Record<string, unknown> = {}) =>
  base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle, attributes: { Browser: '${project}' }, ...extra });

/** The same test in each project (a Playwright run with one project per browser). */
function inProjects(title: string, statuses: Record<string, 'passed' | 'failed'>): TestResult[] {
  return Object.entries(statuses).map(([p, s]) => result(title, s, { id: `t.spec.ts>${title}>${p}`, project: p }));
}

/** Lets real I/O run for `ms` of real time while setTimeout is faked (polls on setImmediate, which is not). */
async function settleFor(ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) await new Promise((r) => setImmediate(r));
}

/** Case key, attributes and status of each run of the cycle, sorted. */
function matrix(cycle: string): string[] {
  return runsOfCycle(cycle)
    .map((r) => `${r.key} ${JSON.stringify(r.run.attributes)} ${r.status}`)
    .sort();
}

describe('run attributes', () => {
  it('an advanced cycle gets a run per case and browser, in one createTestRuns; each result goes to its run', async () => {
    const tests = [
      ...inProjects('DEMO-2 login', { Chrome: 'passed', Firefox: 'failed' }),
      ...inProjects('DEMO-3 cart', { Chrome: 'passed', Firefox: 'passed' }),
    ];
    const end = await report(options('CI browsers'), tests);
    expect(end.summary.problems).toEqual([]);
    const cycle = emu.store.cycles.find((c) => c.name === 'CI browsers');
    expect(cycle?.advanced).toBe(true);
    expect(matrix('CI browsers')).toEqual([
      'DEMO-2 {"Browser":"Chrome"} Passed',
      'DEMO-2 {"Browser":"Firefox"} Failed',
      'DEMO-3 {"Browser":"Chrome"} Passed',
      'DEMO-3 {"Browser":"Firefox"} Passed',
    ]);
    // 2 cases × 2 sets: one request; no case was added to the cycle the plain way (the cycle refuses it).
    expect(ops('cycles.createTestRuns')).toHaveLength(1);
    expect(ops('cycles.addMembersToTestCycle')).toHaveLength(0);
    // The failure's defect and comment are on the Firefox run only.
    const firefox = runsOfCycle('CI browsers').find(
      (r) => r.key === 'DEMO-2' && r.run.attributes?.Browser === 'Firefox',
    );
    expect(firefox?.run.comment).toContain('expected 200, got 500');
    const chrome = runsOfCycle('CI browsers').find((r) => r.key === 'DEMO-2' && r.run.attributes?.Browser === 'Chrome');
    expect(chrome?.run.comment ?? '').not.toContain('expected 200');
  });

  it('a second run into the cycle reuses the runs: no new run, the statuses of this run', async () => {
    await report(options('CI again'), inProjects('DEMO-2 login', { Chrome: 'passed', Firefox: 'failed' }));
    const first = runsOfCycle('CI again').map((r) => r.run.id);
    const before = ops('cycles.createTestRuns').length;
    const end = await report(options('CI again'), inProjects('DEMO-2 login', { Chrome: 'failed', Firefox: 'passed' }));
    expect(end.summary.problems).toEqual([]);
    expect(
      runsOfCycle('CI again')
        .map((r) => r.run.id)
        .sort(),
    ).toEqual([...first].sort());
    expect(matrix('CI again')).toEqual(['DEMO-2 {"Browser":"Chrome"} Failed', 'DEMO-2 {"Browser":"Firefox"} Passed']);
    // The run list names each run's attribute set: nothing to create.
    expect(ops('cycles.createTestRuns').length - before).toBe(0);
  });

  it('6 cases on 2 browsers: one createTestRuns for the 12 runs, one bulk', async () => {
    const keys = ['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6', 'DEMO-7'];
    const tests = keys.flatMap((k) => inProjects(`${k} t`, { Chrome: 'passed', Firefox: 'passed' }));
    const end = await report(options('CI matrix'), tests);
    expect(end.summary.problems).toEqual([]);
    expect(runsOfCycle('CI matrix')).toHaveLength(12);
    expect(runsOfCycle('CI matrix').every((r) => r.status === 'Passed')).toBe(true);
    expect(ops('cycles.createTestRuns')).toHaveLength(1);
    // One bulk for the 12 statuses; no read of the run list (createTestRuns answered the ids).
    expect(ops('runs.bulkStatusUpdate')).toHaveLength(1);
    expect(ops('cycles.testRunsByCycleId')).toHaveLength(0);
  });

  it('an unknown value among known ones in one request: the service creates the others (partial success)', async () => {
    const tests = [
      ...inProjects('DEMO-2 login', { Chrome: 'passed', Safari: 'passed' }),
      ...inProjects('DEMO-3 cart', { Chrome: 'failed', Safari: 'passed' }),
    ];
    const end = await report(options('CI partial'), tests);
    expect(ops('cycles.createTestRuns')).toHaveLength(1);
    expect(end.summary.problems.filter((p) => p.includes('Browser "Safari"'))).toHaveLength(1);
    expect(matrix('CI partial')).toEqual(['DEMO-2 {"Browser":"Chrome"} Passed', 'DEMO-3 {"Browser":"Chrome"} Failed']);
    expect(end.summary.journaled).toBe(2);
  });

  it('a value the project does not define is named once; its results wait in the journal and are delivered once it is defined', async () => {
    const dir = project();
    const lines: string[] = [];
    const tests = [
      ...inProjects('DEMO-2 login', { Chrome: 'passed', Safari: 'failed' }),
      ...inProjects('DEMO-3 cart', { Safari: 'passed' }),
    ];
    const end = await report(options('CI safari'), tests, ctx(dir, lines));
    // Named once, with the value and where to define it; Chrome delivered.
    const named = end.summary.problems.filter((p) => p.includes('Safari'));
    expect(named).toHaveLength(1);
    expect(named[0]).toContain('Browser "Safari"');
    expect(named[0]).toContain('Run Attributes');
    expect(matrix('CI safari')).toEqual(['DEMO-2 {"Browser":"Chrome"} Passed']);
    // Nothing lost: both Safari results are in the journal, marked refused.
    expect(end.summary.journaled).toBe(2);
    const journal = join(dir, '.casebridge', 'journal');
    expect(readdirSync(journal).length).toBeGreaterThanOrEqual(2);

    // An administrator defines the value; the next run delivers the journal.
    const browser = emu.store.runAttributes.find((a) => a.name === 'Browser');
    browser?.values.push('Safari');
    const again = await report(options('CI safari'), [], ctx(dir, []));
    expect(again.summary.problems.filter((p) => p.includes('Safari'))).toEqual([]);
    expect(matrix('CI safari')).toEqual([
      'DEMO-2 {"Browser":"Chrome"} Passed',
      'DEMO-2 {"Browser":"Safari"} Failed',
      'DEMO-3 {"Browser":"Safari"} Passed',
    ]);
  });

  it('a cycle of that name created without attributes (a normal cycle): named, the results kept', async () => {
    await report(base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI plain' }), [
      result('DEMO-2 a', 'passed'),
    ]);
    // On the engine's faster clock (FAST): its tries again after 1, 3 and 6 s, bounded by the end's 3 s.
    const end = await report(
      options('CI plain', { flushTimeoutMs: 3_000 * FAST }),
      inProjects('DEMO-3 b', { Chrome: 'passed', Firefox: 'failed' }),
      ctx(project(), [], {}, FAST),
    );
    // Named once, with the cycle and the way out; both results kept (the case's plain run untouched).
    expect(end.summary.problems).toHaveLength(1);
    expect(end.summary.problems[0]).toContain(
      'test cycle "CI plain" of DEMO-1 refused the runs of option `attributes`',
    );
    expect(end.summary.problems[0]).toContain('Report into another cycle (option `cycle`)');
    expect(end.summary.journaled).toBe(2);
    expect(matrix('CI plain')).toEqual(['DEMO-2 null Passed']);
  }, 60_000);

  it('250 cases × 3 attribute sets (750 results): 3 createTestRuns, one bulk, no run-list read', async () => {
    const now = Date.now();
    const keys: string[] = [];
    for (let i = 0; i < 250; i++) {
      const key = `DEMO-${5000 + i}`;
      keys.push(insertIssue(emu, { project: 'DEMO', key, type: 'Test Case', summary: `case ${i}`, at: now }).key);
    }
    await world.admin().plans.addMembers({ testPlanIssueKey: 'DEMO-1', testCaseKeys: keys });
    const sets = [
      ['Chrome', 'Linux'],
      ['Firefox', 'Linux'],
      ['Firefox', 'Windows'],
    ];
    const tests = keys.flatMap((k) =>
      sets.map(([browser, os]) =>
        result(`${k} t`, 'passed', {
          id: `t.spec.ts>${k}>${browser}>${os}`,
          project: browser,
          annotations: [{ type: 'os', description: os as string }],
        }),
      ),
    );
    const before = emu.requests().length;
    const end = await report(
      options('CI wide', { attributes: { Browser: '${project}', OS: '${annotation:os}' } }),
      tests,
      undefined,
      false,
    );
    expect(end.summary.problems).toEqual([]);
    expect(runsOfCycle('CI wide')).toHaveLength(750);
    expect(runsOfCycle('CI wide').every((r) => r.status === 'Passed')).toBe(true);
    expect(ops('cycles.createTestRuns')).toHaveLength(3);
    expect(ops('runs.bulkStatusUpdate')).toHaveLength(1);
    expect(ops('cycles.testRunsByCycleId')).toHaveLength(0);
    // Find the cycle, create it, start it and read it back, 3 createTestRuns, 1 bulk: nothing else (a defect search
    // the test before gathered and never needed used to go out here, after its run had ended: search.ts close).
    const service = (from: number) =>
      emu
        .requests()
        .slice(from)
        .map((r) => r.op);
    expect(service(before)).toEqual([
      'plans.cycles',
      'plans.addCycle',
      'cycles.workflow',
      'plans.cycles',
      'cycles.createTestRuns',
      'cycles.createTestRuns',
      'cycles.createTestRuns',
      'runs.bulkStatusUpdate',
    ]);

    // The same suite again: the run list names every run's set; nothing created, 3 requests as without attributes.
    const again = emu.requests().length;
    const end2 = await report(
      options('CI wide', { attributes: { Browser: '${project}', OS: '${annotation:os}' } }),
      tests,
      undefined,
      false,
    );
    expect(end2.summary.problems).toEqual([]);
    expect(runsOfCycle('CI wide')).toHaveLength(750);
    expect(service(again)).toEqual(['plans.cycles', 'cycles.testRunsByCycleId', 'runs.bulkStatusUpdate']);
  }, 60_000);

  it('a createTestRuns that created the runs and answered 500, then a 503: every result in its run, none twice', async () => {
    emu.faults.set([
      { route: '**/testRun/createTestRuns', errors: { '500': 1 }, phase: 'after', times: 1 },
      { route: '**/testRun/createTestRuns', errors: { '503': 1 }, times: 1, retryAfterSeconds: 0 },
    ]);
    const tests = [
      ...inProjects('DEMO-2 login', { Chrome: 'passed', Firefox: 'failed' }),
      ...inProjects('DEMO-3 cart', { Chrome: 'passed', Firefox: 'passed' }),
    ];
    // The engine's waits FAST times shorter, its patience FAST times longer; the client's retries stay real.
    const end = await report(
      options('CI faults', { flushTimeoutMs: 20_000 * FAST }),
      tests,
      ctx(project(), [], {}, FAST),
    );
    expect(end.summary.problems).toEqual([]);
    expect(end.summary.journaled).toBe(0);
    // The lost answer, then a create that finds the runs made already: the run list names them.
    expect(ops('cycles.createTestRuns').length).toBeGreaterThanOrEqual(2);
    expect(ops('cycles.testRunsByCycleId').length).toBeGreaterThanOrEqual(1);
    expect(matrix('CI faults')).toEqual([
      'DEMO-2 {"Browser":"Chrome"} Passed',
      'DEMO-2 {"Browser":"Firefox"} Failed',
      'DEMO-3 {"Browser":"Chrome"} Passed',
      'DEMO-3 {"Browser":"Firefox"} Passed',
    ]);
  }, 60_000);

  it('results journaled before attributes were set get their set when a run with attributes replays them', async () => {
    const dir = project();
    // The service down for the whole first run (no attributes): both results wait in the journal.
    emu.faults.set([{ route: '**', errors: { '503': 1 }, retryAfterSeconds: 0 }]);
    const down = await report(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI later', flushTimeoutMs: 1_000 }),
      inProjects('DEMO-2 login', { Chrome: 'passed', Firefox: 'failed' }),
      ctx(dir, []),
    );
    expect(down.summary.journaled).toBe(2);
    emu.faults.set([]);
    const end = await report(options('CI later'), [], ctx(dir, []));
    expect(end.summary.problems).toEqual([]);
    expect(end.summary.journaled).toBe(0);
    expect(matrix('CI later')).toEqual(['DEMO-2 {"Browser":"Chrome"} Passed', 'DEMO-2 {"Browser":"Firefox"} Failed']);
  }, 60_000);

  it('the runs the plan makes known are created at begin: one createTestRuns for projects reporting seconds apart', async () => {
    const chrome = [
      ...inProjects('DEMO-2 login', { Chrome: 'passed' }),
      ...inProjects('DEMO-3 cart', { Chrome: 'passed' }),
    ];
    const firefox = [
      ...inProjects('DEMO-2 login', { Firefox: 'failed' }),
      ...inProjects('DEMO-3 cart', { Firefox: 'passed' }),
    ];
    const engine = Engine.create(options('CI planned'), ctx(project(), []));
    engine.begin({ tests: [...chrome, ...firefox] });
    // Before any result: the whole matrix, not tested yet, from one request.
    await until('the runs of the plan', () => runsOfCycle('CI planned').length === 4);
    expect(ops('cycles.createTestRuns')).toHaveLength(1);
    expect(matrix('CI planned').every((r) => r.endsWith('Not Tested'))).toBe(true);
    // One project, then the other after a preparation batch went (TIMING.prepareWaitMs, 2 s): each wave used to
    // create its own runs. The 2.5 s between them pass on a faked setTimeout (HTTP and the emulator stay on real
    // sockets): every timer the first wave set that is due by then fires, and what it sent is answered, before the
    // second wave comes.
    // The second wave is added on the real clock again: a timer it set on the faked one would be dropped with it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (const t of chrome) engine.add(t);
      await vi.advanceTimersByTimeAsync(2_500);
      // Whatever those timers sent is answered on real sockets (a faked clock does not move them); a batch still on
      // its way when the second wave comes would not hide the regression: that wave would make its own runs anyway.
      await settleFor(200);
    } finally {
      vi.useRealTimers();
    }
    for (const t of firefox) engine.add(t);
    const end = await engine.end();
    expect(end.summary.problems).toEqual([]);
    expect(ops('cycles.createTestRuns')).toHaveLength(1);
    expect(matrix('CI planned')).toEqual([
      'DEMO-2 {"Browser":"Chrome"} Passed',
      'DEMO-2 {"Browser":"Firefox"} Failed',
      'DEMO-3 {"Browser":"Chrome"} Passed',
      'DEMO-3 {"Browser":"Firefox"} Passed',
    ]);
  }, 30_000);

  it('a set only the run gives is not guessed at begin: ${param.*}, or an annotation the planned test lacks', async () => {
    const rows = ['Chrome', 'Firefox'].map((b) =>
      result('DEMO-2 login', 'passed', { id: `t.spec.ts>DEMO-2>${b}`, params: { browser: b } }),
    );
    const engine = Engine.create(
      options('CI rows', { attributes: { Browser: '${param.browser}' } }),
      ctx(project(), []),
    );
    // Planned without their data row (the adapter learns it as the test runs).
    engine.begin({ tests: rows.map(({ params: _, ...t }) => t) });
    // The cycle is made at once; no run of a guessed set.
    await until('the cycle', () => emu.store.cycles.find((c) => c.name === 'CI rows') !== undefined);
    await new Promise((r) => setTimeout(r, 200));
    expect(ops('cycles.createTestRuns')).toHaveLength(0);
    for (const t of rows) engine.add(t);
    expect((await engine.end()).summary.problems).toEqual([]);
    expect(matrix('CI rows')).toEqual(['DEMO-2 {"Browser":"Chrome"} Passed', 'DEMO-2 {"Browser":"Firefox"} Passed']);

    // `${annotation:os}`: the test that declares it is prepared, the one that may add it as it runs is not.
    const withOs = result('DEMO-3 cart', 'passed', {
      project: 'Chrome',
      annotations: [{ type: 'os', description: 'Linux' }],
    });
    const later = result('DEMO-4 search', 'passed', { project: 'Chrome' });
    const two = Engine.create(
      options('CI os', { attributes: { Browser: '${project}', OS: '${annotation:os}' } }),
      ctx(project(), []),
    );
    two.begin({ tests: [withOs, later] });
    await until('the prepared run', () => runsOfCycle('CI os').length === 1);
    expect(runsOfCycle('CI os')[0]?.key).toBe('DEMO-3');
    two.add(withOs);
    two.add({ ...later, annotations: [{ type: 'os', description: 'Windows' }] });
    expect((await two.end()).summary.problems).toEqual([]);
    expect(matrix('CI os')).toEqual([
      'DEMO-3 {"Browser":"Chrome","OS":"Linux"} Passed',
      'DEMO-4 {"Browser":"Chrome","OS":"Windows"} Passed',
    ]);
  }, 30_000);

  it('a dry run lists the createTestRuns it would make, and sends nothing', async () => {
    const before = emu.requests().filter((r) => !r.path.startsWith('/__emulator')).length;
    const tests = [
      ...inProjects('DEMO-2 login', { Chrome: 'passed', Firefox: 'failed' }),
      ...inProjects('DEMO-3 cart', { Chrome: 'passed', Firefox: 'passed' }),
    ];
    const lines: string[] = [];
    const end = await report(
      options('CI dry', { dryRun: true }),
      tests,
      ctx(project(), lines, { CASEBRIDGE_DEBUG: '1' }),
    );
    expect(emu.requests().filter((r) => !r.path.startsWith('/__emulator'))).toHaveLength(before);
    const creates = (end.summary.calls ?? []).filter((c) => c.startsWith('cycles.createTestRuns '));
    expect(creates).toHaveLength(1);
    const input = JSON.parse((creates[0] as string).slice('cycles.createTestRuns '.length));
    expect(input.testCaseKeys).toBe('DEMO-2,DEMO-3');
    expect(input.attributeValues).toEqual([
      { Browser: 'Chrome', '-': '-' },
      { Browser: 'Firefox', '-': '-' },
    ]);
    expect(lines.join('\n')).toContain('dry run: cycles.createTestRuns {');
    // The bulk and the failure's update use the four made-up runs of the create, each once.
    const calls = end.summary.calls ?? [];
    const bulk = calls.find((c) => c.startsWith('runs.bulkStatusUpdate '));
    const update = calls.find((c) => c.startsWith('runs.update '));
    const ids = [
      ...JSON.parse((bulk ?? '').slice('runs.bulkStatusUpdate '.length)).runIds,
      JSON.parse((update ?? '').slice('runs.update '.length)).runId,
    ];
    expect(ids.sort()).toEqual([1, 2, 3, 4]);
  });

  it('in ad hoc mode the option is named as ignored', async () => {
    const end = await report(
      base(emu.url, { mode: 'adhoc', attributes: { Browser: '${project}', OS: '${os}' } }),
      inProjects('DEMO-2 login', { Chrome: 'passed' }),
    );
    expect(end.summary.problems).toEqual([
      'attributes: run attributes need cycle mode (mode cycle); in ad hoc mode they are ignored',
      'attributes.OS: ${os} is not a variable of a run attribute template (${project}, ${tag:<prefix>}, ${annotation:<type>}, ${param.<name>}); it is sent as written',
    ]);
  });
});
