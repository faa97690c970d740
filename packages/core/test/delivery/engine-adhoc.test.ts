import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { setFaults } from '../support/emulator.js';
import { base, report, result, TM_PREFIX, useEngineWorld } from '../support/engine-world.js';

/**
 * Ad hoc mode against the real emulator over real HTTP: a create whose answer is lost still gives exactly one run per
 * result.
 */

const world = useEngineWorld();
const { adhocRuns } = world;
let emu: RunningEmulator;
beforeAll(() => {
  emu = world.emulator();
});

describe('ad hoc mode', () => {
  it('an ad hoc create whose answer is lost still gives exactly one run per result', async () => {
    await setFaults(emu, [
      { route: `${TM_PREFIX}/testRun/adhoc/create/*`, methods: ['PUT'], resetRate: 1, phase: 'after', times: 1 },
    ]);
    const end = await report(base(emu.url), [result('DEMO-2 a', 'passed'), result('DEMO-3 b', 'failed')]);
    expect(end.summary.problems).toEqual([]);
    expect(emu.requests().filter((r) => r.fault === 'reset')).toHaveLength(1);
    expect(adhocRuns('DEMO-2').map((r) => r.status)).toEqual(['Passed']);
    expect(adhocRuns('DEMO-3').map((r) => r.status)).toEqual(['Failed']);
  });

  it('the same, with two results for one case delivered at once', async () => {
    await setFaults(emu, [
      { route: `${TM_PREFIX}/testRun/adhoc/create/*`, methods: ['PUT'], resetRate: 1, phase: 'after', times: 1 },
    ]);
    const tests = ['a', 'b', 'c'].map((n) => result(`DEMO-4 search ${n}`, 'passed'));
    const end = await report(base(emu.url), tests);
    expect(end.summary.problems).toEqual([]);
    expect(emu.requests().filter((r) => r.fault === 'reset')).toHaveLength(1);
    expect(adhocRuns('DEMO-4').map((r) => r.status)).toEqual(['Passed', 'Passed', 'Passed']);
  });
});
