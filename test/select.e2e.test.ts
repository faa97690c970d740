import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { fixture, playwright, ROOT, run } from './support/runner.js';
import { cycleState, serviceRequests } from './support/state.js';
import { admin, indexed, reporterEnv, useEmulator } from './support/world.js';

/**
 * Selection in Playwright's preprocess (issue 27, point 1), real Playwright 1.62+ against the real emulator (its
 * realistic profile, index lag on) over real HTTP: `select: { cycle, status }` runs exactly the tests of the cycle's
 * matching cases among 40, keyed in titles, tags, annotations and the mapping file; the others are excluded and
 * reported nowhere; the cycle's case no test maps is listed; `--shard 1/2` and `2/2` together run the selection
 * once; a selection of no test runs nothing and says so.
 */

const PLAN = { testPlanIssueKey: 'DEMO-1' };

const world = useEmulator();
let emu: RunningEmulator;
beforeAll(() => {
  emu = world();
});

/** The id of a planned cycle, as the selection names it (`#<id>`). */
const idOf = (name: string) => emu.store.cycles.find((c) => c.name === name && c.adhocTcId === null)?.id;

/** Extra cases outside every cycle: tests keyed to them must not run or be reported. */
let others: string[] = [];

/**
 * The cycles a person planned before the run: `Regression` holds DEMO-2..7 (DEMO-7 has no test), `Nightly` the same
 * and three more cases, with statuses (Failed or Blocked: DEMO-2, 3, 4 and two of the three others), `Empty` none.
 */
beforeEach(async () => {
  const tm = admin(emu);
  try {
    others = [];
    for (const n of [1, 2, 3]) {
      const { key } = await tm.jira.createIssue({
        fields: { project: { key: 'DEMO' }, issuetype: { name: 'Test Case' }, summary: `Other case ${n}` },
      });
      others.push(key);
    }
    await tm.plans.addMembers({ ...PLAN, testCaseKeys: others });
    const demo = ['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6', 'DEMO-7'];
    for (const [name, keys] of [
      ['Regression', demo],
      ['Nightly', [...demo, ...others]],
      ['Empty', []],
    ] as const) {
      await tm.plans.addCycle({ ...PLAN, name });
      await tm.cycles.workflow({ ...PLAN, cycleName: name, action: 'Start' });
      if (keys.length)
        await tm.cycles.addMembersToTestCycle({ ...PLAN, testCycleName: name, addTestCaseKeys: [...keys] });
    }
    const nightly: Record<string, string> = {
      'DEMO-2': 'Failed',
      'DEMO-3': 'Blocked',
      'DEMO-4': 'Failed',
      'DEMO-5': 'Passed',
      'DEMO-6': 'Passed',
      'DEMO-7': 'Passed',
      [others[0] as string]: 'Failed',
      [others[1] as string]: 'Blocked',
      [others[2] as string]: 'Passed',
    };
    for (const [key, result] of Object.entries(nightly)) {
      await tm.runs.updateTestRun({ ...PLAN, cycleName: 'Nightly', testcaseKey: key, result });
    }
    for (const key of demo) {
      await tm.runs.updateTestRun({ ...PLAN, cycleName: 'Regression', testcaseKey: key, result: 'Failed' });
    }
  } finally {
    await tm.close();
  }
  await indexed(emu);
}, 60_000);

/**
 * 40 tests in 4 files: DEMO-2 in a title, DEMO-3 in brackets, DEMO-4 by the mapping file only, DEMO-5 in an
 * annotation, DEMO-6 in a tag; one test per other case; 32 tests without a key.
 */
function project(name: string, select: Record<string, unknown> | undefined, configLines = '') {
  const keyless = (file: string, n: number) =>
    Array.from({ length: n }, (_, i) => `test('${file} keyless ${i + 1}', async () => {});`).join('\n');
  return fixture(name, {
    'playwright.config.mjs': `
import { readFileSync } from 'node:fs';
import { defineConfig } from '@playwright/test';
export default defineConfig({${configLines}
  testDir: 'tests',
  outputDir: 'test-results',
  fullyParallel: true,
  workers: 2,
  reporter: [['list'], ['@casebridge/playwright', ${JSON.stringify(select ? { select } : {})}]],
});
`,
    'casebridge.keys.json': `${JSON.stringify({ 'tests/b.spec.ts > cart > adds items': 'DEMO-4' })}\n`,
    'tests/a.spec.ts': `import { test } from '@playwright/test';
test('DEMO-2 logs in', async () => {});
test('[DEMO-3] logs out', async () => {});
test('DEMO-20 is not a case of the cycle', async () => {});
${keyless('a', 7)}
`,
    'tests/b.spec.ts': `import { test } from '@playwright/test';
test.describe('cart', () => {
  test('adds items', async () => {});
  test('adds items twice', async () => {});
});
test('searches', { annotation: { type: 'testCase', description: 'DEMO-5' } }, async () => {});
test('profile', { tag: '@DEMO-6' }, async () => {});
${keyless('b', 6)}
`,
    'tests/c.spec.ts': `import { test } from '@playwright/test';
${others.map((k) => `test('${k} other case', async () => {});`).join('\n')}
${keyless('c', 7)}
`,
    'tests/d.spec.ts': `import { test } from '@playwright/test';
${keyless('d', 10)}
`,
  });
}

const env = (extra: Record<string, string> = {}) =>
  reporterEnv(emu, { CASEBRIDGE_MODE: 'cycle', CASEBRIDGE_TEST_PLAN: 'DEMO-1', ...extra });

/** The tests Playwright's list reporter shows as passed, by title. */
function passed(stdout: string): string[] {
  return [...stdout.matchAll(/✓\s+\d+ tests\/\S+ › (.+?) \(\d+(?:\.\d+)?m?s\)$/gm)]
    .map((m) => (m[1] as string).replace(/ @DEMO-6$/, ''))
    .sort();
}

const REGRESSION = ['DEMO-2 logs in', '[DEMO-3] logs out', 'cart › adds items', 'profile', 'searches'].sort();

/** The run's state in the emulator apart from the planned cycles: ad hoc runs, other cycles. */
const strayCycles = () =>
  emu.store.cycles.filter((c) => c.adhocTcId !== null || !['Regression', 'Nightly', 'Empty'].includes(c.name));

describe('select, Playwright 1.62+ (preprocess)', () => {
  it('runs exactly the 5 tests of the cycle among 40, reports only them, and lists the case without a test', async () => {
    const dir = project('select-pw-cycle', { cycle: 'Regression' });
    const before = serviceRequests(emu).length;
    const out = await playwright(dir, ['test'], env({ CASEBRIDGE_CYCLE: 'Regression' }));
    const text = out.stdout + out.stderr;
    expect(out.code, text).toBe(0);
    expect(passed(out.stdout), text).toEqual(REGRESSION);
    expect(text).toContain('Running 5 tests');
    expect(text).toContain(
      `casebridge: select: cycle "Regression" (#${idOf('Regression')}) of DEMO-1: 6 case(s) of 6 run(s): 5 of 40 test(s) run, 35 excluded`,
    );
    expect(text).toContain('casebridge: select: 1 case(s) of the cycle have no test here: DEMO-7');
    expect(text).toContain(
      `select: 6 case(s) of cycle "Regression" (#${idOf('Regression')}) of DEMO-1: 5 of 40 test(s) selected`,
    );
    expect(text).toContain('1 case(s) of the cycle have no test: DEMO-7');
    expect(text).toContain('casebridge: 5 test result(s)');
    // Only the selected tests reached the service: their runs in the cycle, nothing else anywhere.
    const state = Object.fromEntries(cycleState(emu, 'Regression').map((r) => [r.key, r.status]));
    expect(state).toEqual({
      'DEMO-2': 'Passed',
      'DEMO-3': 'Passed',
      'DEMO-4': 'Passed',
      'DEMO-5': 'Passed',
      'DEMO-6': 'Passed',
      'DEMO-7': 'Failed',
    });
    expect(strayCycles()).toEqual([]);
    // Before the first test: the plan's cycles, then the cycle's runs by id (and the quarantine's search); then
    // the reporter's own cycle preparation and one bulk update of the 5 runs.
    const ops = serviceRequests(emu)
      .slice(before)
      .map((r) => r.op);
    expect(ops, ops.join(' ')).toEqual([
      'plans.cycles',
      'cycles.testRunsByCycleId',
      'jira.search',
      'plans.cycles',
      'cycles.testRunsByCycleId',
      'runs.bulkStatusUpdate',
    ]);
  }, 120_000);

  it('quarantine marks only the selected tests: a quarantined test left out is neither run nor counted', async () => {
    for (const key of ['DEMO-2', others[0] as string]) {
      const issue = emu.store.issues.find((i) => i.key === key);
      if (!issue) throw new Error(`${key} not found`);
      emu.store.issues.update({ ...issue, labels: [...issue.labels, 'casebridge-quarantine'] });
    }
    await indexed(emu);
    const dir = fixture('select-pw-quarantine', {
      'playwright.config.mjs': `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  workers: 1,
  reporter: [['list'], ['@casebridge/playwright', { select: { cycle: 'Regression' } }]],
});
`,
      'tests/a.spec.ts': `import { expect, test } from '@playwright/test';
test('DEMO-2 is known broken', async () => { expect(1).toBe(2); });
test('DEMO-3 passes', async () => {});
test('${others[0]} is known broken too', async () => { expect(1).toBe(2); });
`,
    });
    const out = await playwright(dir, ['test'], env({ CASEBRIDGE_CYCLE: 'Regression' }));
    const text = out.stdout + out.stderr;
    expect(out.code, text).toBe(0);
    expect(text).toContain('Running 2 tests');
    expect(text).toContain('quarantine (label casebridge-quarantine): 1 test(s) ran expected to fail');
    expect(text).not.toContain(`${others[0]} is known broken too`);
  }, 120_000);

  it('with a status filter: the cycle runs Failed or Blocked that have a test', async () => {
    const dir = project('select-pw-status', { cycle: 'Nightly', status: ['failed', 'BLOCKED'] });
    const out = await playwright(dir, ['test'], env({ CASEBRIDGE_CYCLE: 'Nightly' }));
    const text = out.stdout + out.stderr;
    expect(out.code, text).toBe(0);
    expect(passed(out.stdout), text).toEqual(
      [
        'DEMO-2 logs in',
        '[DEMO-3] logs out',
        'cart › adds items',
        `${others[0]} other case`,
        `${others[1]} other case`,
      ].sort(),
    );
    expect(text).toContain('status failed or blocked: 5 case(s) of 9 run(s): 5 of 40 test(s) run, 35 excluded');
    expect(text).not.toContain('have no test');
    const state = Object.fromEntries(cycleState(emu, 'Nightly').map((r) => [r.key, r.status]));
    expect(state).toMatchObject({
      'DEMO-3': 'Passed',
      'DEMO-5': 'Passed',
      'DEMO-7': 'Passed',
      [others[2] as string]: 'Passed',
    });
    expect(strayCycles()).toEqual([]);
  }, 120_000);

  it('--shard 1/2 and 2/2 together run the 5 selected tests, each once', async () => {
    const dir = project('select-pw-shards', { cycle: 'Regression' });
    const runs = [];
    for (const shard of ['1/2', '2/2']) {
      runs.push(await playwright(dir, ['test', `--shard=${shard}`], env({ CASEBRIDGE_CYCLE: 'Regression' })));
    }
    const ran = runs.flatMap((r) => passed(r.stdout));
    for (const r of runs) expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(ran.sort(), runs.map((r) => r.stdout).join('\n')).toEqual(REGRESSION);
    // Playwright shards the selected set: neither shard is empty.
    for (const r of runs) expect(passed(r.stdout).length).toBeGreaterThan(0);
    const state = cycleState(emu, 'Regression').filter((r) => r.status === 'Passed');
    expect(state.map((r) => r.key).sort()).toEqual(['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6']);
    expect(strayCycles()).toEqual([]);
  }, 180_000);

  it('a selection of no test runs nothing and says so', async () => {
    const dir = project('select-pw-empty', { cycle: 'Empty' });
    const out = await playwright(dir, ['test'], env({ CASEBRIDGE_CYCLE: 'Empty' }));
    const text = out.stdout + out.stderr;
    // As for a --grep that matches nothing: Playwright says "No tests found" and exits 1, unless told otherwise.
    expect(out.code, text).toBe(1);
    expect(text).toContain('No tests found');
    const quiet = await playwright(dir, ['test', '--pass-with-no-tests'], env({ CASEBRIDGE_CYCLE: 'Empty' }));
    expect(quiet.code, quiet.stdout + quiet.stderr).toBe(0);
    expect(text).toContain(
      `casebridge: select: cycle "Empty" (#${idOf('Empty')}) of DEMO-1: 0 case(s) of 0 run(s); no test maps a case: every test is excluded, nothing runs`,
    );
    expect(passed(out.stdout)).toEqual([]);
    expect(cycleState(emu, 'Regression').every((r) => r.status === 'Failed')).toBe(true);
    expect(strayCycles()).toEqual([]);
  }, 120_000);

  it("a cycle that is not there: one line names the plan's cycles, and every test runs", async () => {
    const dir = project('select-pw-unknown', { cycle: 'Weekly' });
    const out = await playwright(
      dir,
      ['test', 'tests/a.spec.ts'],
      env({ CASEBRIDGE_MODE: 'adhoc', CASEBRIDGE_DRY_RUN: '' }),
    );
    const text = out.stdout + out.stderr;
    expect(out.code, text).toBe(0);
    const cycles = ['Regression', 'Nightly', 'Empty'].map((n) => `"${n}" (#${idOf(n)})`).join(', ');
    expect(text).toContain(
      `casebridge: select: test plan DEMO-1 has no cycle "Weekly": it has ${cycles}; every test runs`,
    );
    expect(passed(out.stdout)).toHaveLength(10);
  }, 120_000);
});

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const cycleKeys = (args: string[], cwd: string) =>
  run(process.execPath, [CLI, 'cycle', 'keys', '--plan', 'DEMO-1', ...args], cwd, reporterEnv(emu));

describe('older runners: cycle keys --file, read by the runner config', () => {
  it("Jest reads the pattern as testNamePattern and runs the cycle's tests; its reporter says select is for Playwright", async () => {
    const dir = fixture('select-jest-file', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': jestConfig(
        { select: { cycle: 'Regression' } },
        "testNamePattern: require('node:fs').readFileSync(`${__dirname}/.casebridge/select.txt`, 'utf8'),",
      ),
      'casebridge.keys.json': `${JSON.stringify({ 'tests/shop.test.js > cart > adds items': 'DEMO-4' })}\n`,
      'tests/shop.test.js': `test('DEMO-2 logs in', () => {});
test('[DEMO-3] logs out', () => {});
test('DEMO-20 is not a case of the cycle', () => {});
describe('cart', () => {
  test('adds items', () => {});
  test('adds items twice', () => {});
});
test('keyless', () => {});
`,
    });
    const keys = await cycleKeys(
      ['--cycle', 'Regression', '--runner', 'jest', '--file', '.casebridge/select.txt'],
      dir,
    );
    expect(keys.code, keys.stderr).toBe(0);
    expect(keys.stdout).toBe('');
    expect(keys.stderr).toContain('6 key(s) written to .casebridge/select.txt (grep)');
    const pattern = readFileSync(join(dir, '.casebridge', 'select.txt'), 'utf8');
    expect(pattern).toBe('\\b(?:DEMO-2|DEMO-3|DEMO-4|DEMO-5|DEMO-6|DEMO-7)\\b|^cart adds items$');
    const out = await jest(dir, ['--json'], { ...env({ CASEBRIDGE_DRY_RUN: 'true' }) });
    expect(out.code, out.stderr).toBe(0);
    const report = JSON.parse(out.stdout) as {
      testResults: Array<{ assertionResults: Array<{ fullName: string; status: string }> }>;
    };
    const ran = report.testResults.flatMap((f) => f.assertionResults).filter((a) => a.status === 'passed');
    expect(ran.map((a) => a.fullName).sort()).toEqual(['DEMO-2 logs in', '[DEMO-3] logs out', 'cart adds items']);
    expect(out.stderr).toContain(
      'casebridge: select (cycle "Regression") is not applied: it needs Playwright 1.62+; `npx @casebridge/cli cycle keys --plan DEMO-1 --cycle Regression --runner jest --file .casebridge/select.txt` writes the pattern for -t "$(cat .casebridge/select.txt)" or the config (see the CLI README); every test runs',
    );
  }, 120_000);

  it('Playwright reads it as grep: the tests keyed in titles, tags and the mapping file (not annotations)', async () => {
    const dir = project(
      'select-pw-grep-file',
      undefined,
      "\n  grep: new RegExp(readFileSync(new URL('./.casebridge/select.txt', import.meta.url), 'utf8')),",
    );
    const keys = await cycleKeys(['--cycle', 'Regression', '--file', '.casebridge/select.txt'], dir);
    expect(keys.code, keys.stderr).toBe(0);
    const out = await playwright(dir, ['test'], env({ CASEBRIDGE_DRY_RUN: 'true' }));
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(passed(out.stdout)).toEqual(REGRESSION.filter((t) => t !== 'searches'));
  }, 120_000);

  it('nothing selected: no file (one left from before is removed), exit code 1', async () => {
    const dir = fixture('select-empty-file', { '.casebridge/select.txt': 'DEMO-2' });
    const keys = await cycleKeys(['--cycle', 'Empty', '--file', '.casebridge/select.txt'], dir);
    expect(keys.code).toBe(1);
    expect(keys.stderr).toContain(
      'no test case matches; nothing written (.casebridge/select.txt removed) (exit code 1)',
    );
    expect(existsSync(join(dir, '.casebridge', 'select.txt'))).toBe(false);
  }, 60_000);
});

// Playwright 1.45.3 (no preprocess) ignores select with one line: test/playwright.matrix.test.ts, where it is installed.
