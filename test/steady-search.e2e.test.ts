import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixture, playwright } from './support/runner.js';
import { cycleState, serviceRequests } from './support/state.js';
import { reporterEnv, useEmulator } from './support/world.js';

/**
 * A steady Playwright run (issue 25): every test is mapped by the mapping file a first run with `autoCreate` wrote,
 * and the run goes into a new cycle. It must not search Jira for cases: the registry reads the project's cases only
 * when a planned test resolves no key (Engine.begin), and a search there costs a request per 1,000 cases of the
 * project on every CI run.
 *
 * The one search such a run makes on Playwright 1.62+ is the quarantine's (`project = P AND labels = L`, one page
 * at any size): `preprocess` must know the quarantined cases before the first test to run them expected-to-fail,
 * and nothing but a search tells which cases carry the label today. Jest and Vitest read it at the first failure, so
 * their all-passing steady runs make none. `CASEBRIDGE_QUARANTINE=false` turns it off, and then there is no search.
 */

const world = useEmulator();
let emu: RunningEmulator;
beforeAll(() => {
  emu = world();
});

/** 20 keyless tests: top-level ones, a describe and a nested describe, in two files (one in a subfolder). */
const CART = `import { test } from '@playwright/test';
test.describe('Cart', () => {
${Array.from({ length: 6 }, (_, i) => `  test('updates the draft entry (case ${i + 1})', () => {});`).join('\n')}
  test.describe('coupons', () => {
${Array.from({ length: 6 }, (_, i) => `    test('applies coupon ${i + 1}', () => {});`).join('\n')}
  });
});
`;
const LOGIN = `import { test } from '@playwright/test';
${Array.from({ length: 8 }, (_, i) => `test('signs in with account ${i + 1}', () => {});`).join('\n')}
`;
const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  workers: 2,
  fullyParallel: true,
  reporter: [['line'], ['@casebridge/playwright', {}]],
});
`;
const TESTS = 20;

const env = (cycle: string, extra: Record<string, string> = {}) =>
  reporterEnv(emu, {
    CASEBRIDGE_MODE: 'cycle',
    CASEBRIDGE_TEST_PLAN: 'DEMO-1',
    CASEBRIDGE_CYCLE: cycle,
    CASEBRIDGE_AUTO_CREATE: 'true',
    CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
    ...extra,
  });

/** What creates or links a case: a steady run makes none of these. */
const CASE_WRITES = [
  'jira.createIssue',
  'jira.bulkCreateIssues',
  'cases.createTestCaseInSuite',
  'cases.linkTestCaseToSuite',
  'plans.addMembers',
];

/** Runs the fixture into `cycle` and gives the operations it sent, in order. */
async function runInto(dir: string, cycle: string, extra: Record<string, string> = {}): Promise<string[]> {
  emu.clearRequests();
  const out = await playwright(dir, ['test'], env(cycle, extra));
  expect(out.code, out.stdout + out.stderr).toBe(0);
  // A preloaded cycle holds a run for every case of the plan (DEMO-1's other cases too, Not Tested).
  const statuses = cycleState(emu, cycle)
    .map((r) => r.status)
    .filter((s) => s !== 'Not Tested');
  expect(statuses, `the runs of cycle "${cycle}"`).toEqual(Array(TESTS).fill('Passed'));
  return serviceRequests(emu).map((r) => r.op ?? r.path);
}

const count = (ops: string[], op: string) => ops.filter((o) => o === op).length;

describe('a steady Playwright run whose every test is mapped', () => {
  it('searches Jira for no case; with quarantine on, its one search is the quarantine read before the run', async () => {
    const dir = fixture('steady-search-pw', {
      'playwright.config.mjs': CONFIG,
      'tests/cart.spec.ts': CART,
      'tests/auth/login.spec.mjs': LOGIN,
    });
    const first = await runInto(dir, 'first');
    expect(count(first, 'jira.search'), 'the first run reads the project cases').toBeGreaterThan(0);
    const mapping = JSON.parse(readFileSync(join(dir, 'casebridge.keys.json'), 'utf8')) as Record<string, string>;
    expect(Object.keys(mapping)).toHaveLength(TESTS);

    const quiet = await runInto(dir, 'steady, no quarantine', { CASEBRIDGE_QUARANTINE: 'false' });
    expect(count(quiet, 'jira.search'), quiet.join(' ')).toBe(0);
    expect(
      quiet.filter((op) => CASE_WRITES.includes(op)),
      quiet.join(' '),
    ).toEqual([]);

    const steady = await runInto(dir, 'steady');
    expect(count(steady, 'jira.search'), steady.join(' ')).toBe(1);
    expect(
      steady.filter((op) => CASE_WRITES.includes(op)),
      steady.join(' '),
    ).toEqual([]);
  }, 180_000);

  it('into a new cycle per CI run, preloaded: 5 requests, 6 with the quarantine read (issue 38), at any size', async () => {
    const dir = fixture('steady-floor-pw', {
      'playwright.config.mjs': CONFIG,
      'tests/cart.spec.ts': CART,
      'tests/auth/login.spec.mjs': LOGIN,
    });
    await runInto(dir, 'first');
    // A cycle name with the build number is new each run: created at once, not looked for first (cycles.ts); created
    // preloaded, its runs are listed by name while it starts, and one bulk writes every status.
    const perRun = (build: string, extra: Record<string, string> = {}) =>
      runInto(dir, `steady ${build}`, {
        CASEBRIDGE_CYCLE: 'steady ${build}',
        CASEBRIDGE_BUILD: build,
        CASEBRIDGE_PRELOAD_RUNS: 'true',
        ...extra,
      });
    const quiet = await perRun('41', { CASEBRIDGE_QUARANTINE: 'false' });
    // The start, the read back and the list go side by side: their order is the sockets', not the engine's.
    expect(quiet[0], quiet.join(' ')).toBe('plans.addCycle');
    expect(quiet.at(-1), quiet.join(' ')).toBe('runs.bulkStatusUpdate');
    expect([...quiet].sort(), quiet.join(' ')).toEqual(
      ['plans.addCycle', 'cycles.testRuns', 'cycles.workflow', 'plans.cycles', 'runs.bulkStatusUpdate'].sort(),
    );
    const steady = await perRun('42');
    expect(steady.length, steady.join(' ')).toBe(6);
    expect(count(steady, 'jira.search'), steady.join(' ')).toBe(1);
  }, 180_000);
});
