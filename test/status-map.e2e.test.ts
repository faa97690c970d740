import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { fixture, ROOT, run } from './support/runner.js';
import { cycleState, type RunState } from './support/state.js';

/**
 * `statusMap` end to end: the real `jest` (30.x) on a fixture with a skipped test, a flaky one (retried), one that
 * runs out of time, one that fails and one that passes, into a cycle of the real emulator. The statuses the runs end
 * with are the emulator's; the defects are decided on the outcome, whatever status is written.
 */

const TESTS = `
jest.retryTimes(1);

test.skip('DEMO-2 is skipped', () => {});

let tries = 0;
test('DEMO-3 passes on its retry', () => {
  tries += 1;
  expect(tries).toBe(2);
});

test('DEMO-4 runs out of time', async () => {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
}, 150);

test('DEMO-5 fails', () => {
  expect(1).toBe(2);
});

test('DEMO-6 passes', () => {});
`;

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const MAP = { skipped: 'na', flaky: 'Failed', timedOut: 'Blocked' };

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});
beforeEach(async () => {
  await emu.reset();
});

const env = (cycle: string, extra: Record<string, string> = {}) => ({
  CASEBRIDGE_URL: emu.url,
  CASEBRIDGE_TOKEN: 'casebridge-dev-token',
  CASEBRIDGE_PROJECT: 'DEMO',
  CASEBRIDGE_MODE: 'cycle',
  CASEBRIDGE_TEST_PLAN: 'DEMO-1',
  CASEBRIDGE_CYCLE: cycle,
  CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
  ...extra,
});

function project(name: string, options: Record<string, unknown>): string {
  return fixture(name, {
    'package.json': JEST_PACKAGE,
    'jest.config.js': jestConfig(options),
    'tests/kinds.test.js': TESTS,
  });
}

const byKey = (state: RunState[]) => Object.fromEntries(state.map((r) => [r.key, r]));
const statuses = (state: RunState[]) => Object.fromEntries(state.map((r) => [r.key, r.status]));
/** Defects are filed for the failures (the timeout and DEMO-5), never for the flaky test, mapped to Failed or not. */
const expectDefects = (state: RunState[]) => {
  const by = byKey(state);
  expect(by['DEMO-4']?.bugs).toHaveLength(1);
  expect(by['DEMO-5']?.bugs).toHaveLength(1);
  expect(by['DEMO-3']?.bugs).toEqual([]);
  expect(by['DEMO-2']?.bugs ?? []).toEqual([]);
};

describe('statusMap through Jest', () => {
  it('in the reporter options: skipped → NA, flaky → Failed, timed out → Blocked; the rest as always', async () => {
    const out = await jest(project('jest-status-map', { statusMap: MAP }), ['--runInBand'], env('CI status map'));
    expect(out.code, 'the failures fail the run, as without the reporter').toBe(1);
    expect(out.stdout + out.stderr).toMatch(/Exceeded timeout of 150 ms/);
    const state = cycleState(emu, 'CI status map');
    expect(statuses(state)).toEqual({
      'DEMO-2': 'NA',
      'DEMO-3': 'Failed',
      'DEMO-4': 'Blocked',
      'DEMO-5': 'Failed',
      'DEMO-6': 'Passed',
    });
    expectDefects(state);
  });

  it('without statusMap the mapping is unchanged: skipped left Not Tested, flaky Passed, timed out Failed', async () => {
    const out = await jest(project('jest-status-default', {}), ['--runInBand'], env('CI status default'));
    expect(out.code).toBe(1);
    const state = cycleState(emu, 'CI status default');
    expect(statuses(state)).toEqual({
      'DEMO-2': 'Not Tested',
      'DEMO-3': 'Passed',
      'DEMO-4': 'Failed',
      'DEMO-5': 'Failed',
      'DEMO-6': 'Passed',
    });
    // The skipped test's run was added to the cycle and left as it was: nobody executed it.
    expect(emu.store.runs.find((r) => r.status === 'Not Tested' && Boolean(r.executedBy))).toBeUndefined();
    expectDefects(state);
  });

  it('CASEBRIDGE_STATUS_MAP gives the same as the options; a custom status of the instance is written; an empty name turns reporting off', async () => {
    const dir = project('jest-status-env', {});
    const out = await jest(
      dir,
      ['--runInBand'],
      env('CI status env', { CASEBRIDGE_STATUS_MAP: 'skipped=NA,flaky=failed,timedOut=Blocked' }),
    );
    expect(out.code).toBe(1);
    expect(statuses(cycleState(emu, 'CI status env'))).toEqual({
      'DEMO-2': 'NA',
      'DEMO-3': 'Failed',
      'DEMO-4': 'Blocked',
      'DEMO-5': 'Failed',
      'DEMO-6': 'Passed',
    });
    // An administrator added "Skipped" and renamed nothing: statusMap takes the instance's name, in any case.
    emu.store.runStatuses.insert({
      name: 'Skipped',
      description: 'Not run on purpose',
      color: '#999999',
      lozenge: 'aui-lozenge-default',
      enabled: true,
      immutable: false,
      isDefault: false,
    });
    const custom = await jest(
      dir,
      ['--runInBand'],
      env('CI status custom', { CASEBRIDGE_STATUS_MAP: 'skipped=skipped,timedOut=Blocked' }),
    );
    expect(custom.code).toBe(1);
    expect(custom.stderr).not.toContain('statusMap');
    expect(statuses(cycleState(emu, 'CI status custom'))).toMatchObject({ 'DEMO-2': 'Skipped', 'DEMO-4': 'Blocked' });
    // doctor reads the statuses the plan's newest cycles show: Skipped is in use now, "Wobbly" never was.
    const doctor = await run(process.execPath, [CLI, 'doctor'], dir, {
      ...env('CI status custom', { CASEBRIDGE_STATUS_MAP: 'skipped=Skipped,flaky=Wobbly' }),
    });
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout).toMatch(
      /run statuses.*a hint, not an error: "Wobbly" \(statusMap\.flaky\) not seen on \d+ run\(s\)/,
    );
    expect(doctor.stdout).not.toMatch(/"Skipped" \(statusMap/);
    const bad = await jest(
      project('jest-status-bad', { statusMap: { skipped: ' ' } }),
      ['--runInBand'],
      env('CI status bad'),
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('statusMap.skipped');
    expect(bad.stderr).toContain('expected a run status as your instance names it');
    expect(cycleState(emu, 'CI status bad')).toEqual([]);
  });
});
