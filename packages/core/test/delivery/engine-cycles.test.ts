import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/index.js';
import { base, ctx, project, report, result, until, useEngineWorld } from '../support/engine-world.js';

/**
 * Cycles the engine completes, against the real emulator over real HTTP: completeCycle at the end, and a cycle
 * completed by someone else mid-run. Each test asserts the emulator's final state.
 */

const world = useEngineWorld();
const { runsOfCycle, bugKeysOfRun, ops, admin, statusesOf, sentOps } = world;
let emu: RunningEmulator;
beforeAll(() => {
  emu = world.emulator();
});

describe('cycles', () => {
  it('completeCycle completes the cycle at the end', async () => {
    const end = await report(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI done', completeCycle: true }),
      [result('DEMO-2 a', 'passed'), result('DEMO-3 b', 'failed')],
    );
    expect(end.summary.problems).toEqual([]);
    expect(emu.store.cycles.find((c) => c.name === 'CI done')?.status).toBe('Completed');
    expect(statusesOf('CI done')).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Failed'],
    ]);
  });

  it('preloadRuns: the new cycle holds every case of the plan; a run of two costs no add to the cycle', async () => {
    // Latency on every answer: requests sent together overlap in the log.
    emu.faults.set([{ route: '**', latencyMs: 50 }]);
    const end = await report(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI preloaded', preloadRuns: true }),
      [result('DEMO-2 a', 'passed'), result('DEMO-3 b', 'passed')],
    );
    expect(end.summary.problems).toEqual([]);
    expect(emu.store.cycles.find((c) => c.name === 'CI preloaded')?.status).toBe('Active');
    // The plan's six cases: the two reported, the four the run left out Not Tested.
    expect(statusesOf('CI preloaded')).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
      ['DEMO-4', 'Not Tested'],
      ['DEMO-5', 'Not Tested'],
      ['DEMO-6', 'Not Tested'],
      ['DEMO-7', 'Not Tested'],
    ]);
    // Find, create, then read back, start and list the runs by name (together: the create answers no id, the
    // start and the list go by name), one bulk.
    expect(sentOps().sort()).toEqual(
      [
        'plans.cycles',
        'plans.addCycle',
        'plans.cycles',
        'cycles.workflow',
        'cycles.testRuns',
        'runs.bulkStatusUpdate',
      ].sort(),
    );
    const [readBack, start, list] = [ops('plans.cycles')[1], ops('cycles.workflow')[0], ops('cycles.testRuns')[0]];
    // All three sent before any was answered.
    const three = [readBack, start, list].filter((r) => r !== undefined);
    expect(three).toHaveLength(3);
    expect(Math.max(...three.map((r) => r.at))).toBeLessThanOrEqual(Math.min(...three.map((r) => r.at + r.ms)));
  });

  it('preloadRuns off (the default): the new cycle holds only what the run reports', async () => {
    await report(base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI empty' }), [
      result('DEMO-2 a', 'passed'),
    ]);
    expect(runsOfCycle('CI empty').map((r) => [r.key, r.status])).toEqual([['DEMO-2', 'Passed']]);
    expect(ops('cycles.addMembersToTestCycle')).toHaveLength(1);
  });

  for (const planned of [true, false]) {
    it(`a cycle completed by someone else mid-run is resumed, gets the result and is completed again (${
      planned ? 'planned' : 'unplanned'
    } tests)`, async () => {
      const name = `CI interrupted ${planned}`;
      const first = result('DEMO-2 first', 'failed');
      const second = result('DEMO-3 second', 'failed');
      const lines: string[] = [];
      const engine = Engine.create(
        base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: name }),
        ctx(project(), lines),
      );
      engine.begin(planned ? { tests: [first, second] } : {});
      engine.add(first);
      const firstRun = () => runsOfCycle(name).find((r) => r.key === 'DEMO-2')?.run;
      await until('the first result', () => {
        const run = firstRun();
        return run?.status === 'Failed' && bugKeysOfRun(run.id).length === 1;
      });
      const tm = admin();
      await tm.cycles.workflow({ testPlanIssueKey: 'DEMO-1', cycleName: name, action: 'Complete' });
      await tm.close();
      expect(emu.store.cycles.find((c) => c.name === name)?.status).toBe('Completed');

      engine.add(second);
      const end = await engine.end();
      expect(end.summary.problems).toEqual([]);
      expect(end.summary.journaled, lines.join('\n')).toBe(0);
      expect(emu.store.cycles.find((c) => c.name === name)?.status).toBe('Completed');
      const runs = runsOfCycle(name);
      expect(runs.map((r) => [r.key, r.status]).sort()).toEqual([
        ['DEMO-2', 'Failed'],
        ['DEMO-3', 'Failed'],
      ]);
      const secondRun = runs.find((r) => r.key === 'DEMO-3')?.run;
      expect(secondRun?.comment).toContain('expected 200, got 500 for DEMO-3 second');
      expect(bugKeysOfRun(secondRun?.id as number)).toHaveLength(1);
      expect(ops('cycles.workflow').map((r) => r.status)).toEqual([200, 200, 200, 200]);
    });
  }
});
