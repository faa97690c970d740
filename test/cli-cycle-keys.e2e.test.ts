import { join } from 'node:path';
import { TestManagementClient } from '@casebridge/core';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest } from './support/jest.js';
import { fixture, ROOT, run } from './support/runner.js';
import { vitest } from './support/vitest.js';

/**
 * `casebridge cycle keys`, built, against the real emulator: a cycle of the demo plan with runs of several statuses
 * and testers, each filter and format, then the grep output fed to real Jest and Vitest runs of a fixture, which
 * must run exactly the selected tests (keyed in titles, in a describe title, or only by the mapping file).
 */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const TOKEN = 'casebridge-dev-token';

/** The cycle's runs: case → status, and the tester of some. DEMO-6 keeps its initial Not Tested. */
const STATUSES: Record<string, string> = {
  'DEMO-2': 'Failed',
  'DEMO-3': 'Passed',
  'DEMO-4': 'Failed',
  'DEMO-5': 'Blocked',
  'DEMO-7': 'Passed',
};
const TESTERS: Record<string, string[]> = { admin: ['DEMO-2'], tester: ['DEMO-4', 'DEMO-6'] };

let emu: RunningEmulator;
let cycleId = 0;

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  const tm = new TestManagementClient({ baseUrl: emu.url, auth: { type: 'bearer', token: TOKEN } });
  const plan = { testPlanIssueKey: 'DEMO-1' };
  try {
    await tm.plans.addCycle({ ...plan, name: 'Nightly' });
    await tm.plans.addCycle({ ...plan, name: 'Empty' });
    await tm.cycles.workflow({ ...plan, cycleName: 'Nightly', action: 'Start' });
    await tm.cycles.addMembersToTestCycle({
      ...plan,
      testCycleName: 'Nightly',
      addTestCaseKeys: ['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6', 'DEMO-7'],
    });
    for (const [key, result] of Object.entries(STATUSES)) {
      await tm.runs.updateTestRun({ ...plan, cycleName: 'Nightly', testcaseKey: key, result });
    }
    cycleId = (await tm.plans.cycles(plan)).find((c) => c.name === 'Nightly')?.id ?? 0;
    const runs = await tm.cycles.testRunsByCycleId({ ...plan, cycleId: String(cycleId) });
    for (const [testerName, keys] of Object.entries(TESTERS)) {
      const runIds = runs.filter((r) => keys.includes(r.testCaseKey)).map((r) => r.id);
      await tm.cycles.bulkAssignUpdate({ ...plan, testCycleId: cycleId, testerName, runIds });
    }
  } finally {
    await tm.close();
  }
});
afterAll(async () => {
  await emu?.close();
});

const env = () => ({ CASEBRIDGE_URL: emu.url, CASEBRIDGE_TOKEN: TOKEN, CASEBRIDGE_PROJECT: 'DEMO' });
const keys = (args: string[], cwd = ROOT) => run(process.execPath, [CLI, 'cycle', 'keys', ...args], cwd, env());

describe('casebridge cycle keys', () => {
  it('without --cycle: the plan members, in each format', async () => {
    const lines = await keys(['--plan', 'DEMO-1', '--format', 'lines']);
    expect(lines.code, lines.stderr).toBe(0);
    expect(lines.stdout).toBe('DEMO-2\nDEMO-3\nDEMO-4\nDEMO-5\nDEMO-6\nDEMO-7\n');
    expect(lines.stderr).toContain('test plan DEMO-1: 6 test case(s)');
    const grep = await keys(['--plan', 'DEMO-1']);
    expect(grep.stdout).toBe('\\b(?:DEMO-2|DEMO-3|DEMO-4|DEMO-5|DEMO-6|DEMO-7)\\b\n');
    const json = await keys(['--plan', 'DEMO-1', '--format', 'json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      plan: 'DEMO-1',
      keys: ['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6', 'DEMO-7'],
      titles: [],
    });
    expect(JSON.parse(json.stdout).cycle).toBeUndefined();
  });

  it('with --cycle: the runs, filtered by status (any case, comma-separated or repeated) and by tester', async () => {
    const cases: Array<[string[], string]> = [
      [[], 'DEMO-2 DEMO-3 DEMO-4 DEMO-5 DEMO-6 DEMO-7'],
      [['--status', 'Failed'], 'DEMO-2 DEMO-4'],
      [['--status', 'failed,Not Tested'], 'DEMO-2 DEMO-4 DEMO-6'],
      [['--status', 'Blocked', '--status', 'PASSED'], 'DEMO-3 DEMO-5 DEMO-7'],
      [['--tester', 'me'], 'DEMO-2'],
      [['--tester', 'tester'], 'DEMO-4 DEMO-6'],
      [['--tester', 'tester', '--status', 'Failed'], 'DEMO-4'],
    ];
    for (const [filters, expected] of cases) {
      const out = await keys(['--plan', 'DEMO-1', '--cycle', 'Nightly', '--format', 'lines', ...filters]);
      expect(out.code, `${filters.join(' ')}: ${out.stderr}`).toBe(0);
      expect(out.stdout.trim().split('\n').join(' '), filters.join(' ')).toBe(expected);
    }
    const byId = await keys(['--plan', 'DEMO-1', '--cycle', `#${cycleId}`, '--status', 'Failed', '--json']);
    expect(byId.code, byId.stderr).toBe(0);
    expect(JSON.parse(byId.stdout)).toEqual({
      plan: 'DEMO-1',
      cycle: { id: cycleId, name: 'Nightly', status: 'Active' },
      keys: ['DEMO-2', 'DEMO-4'],
      titles: [],
      grep: '\\b(?:DEMO-2|DEMO-4)\\b',
    });
    const grep = await keys(['--plan', 'DEMO-1', '--cycle', String(cycleId), '--status', 'Failed']);
    expect(grep.stdout).toBe('\\b(?:DEMO-2|DEMO-4)\\b\n');
    expect(grep.stderr).toContain(
      `cycle "Nightly" (#${cycleId}) of DEMO-1: 2 of 6 run(s)'s case(s) with status failed`,
    );
  });

  it('nothing selected: nothing on stdout, a note on stderr, exit code 1', async () => {
    for (const args of [
      ['--cycle', 'Nightly', '--status', 'NA'],
      ['--cycle', 'Empty'],
      ['--cycle', 'Nightly', '--tester', 'nolicense'],
    ]) {
      const out = await keys(['--plan', 'DEMO-1', ...args]);
      expect(out.code, args.join(' ')).toBe(1);
      expect(out.stdout).toBe('');
      expect(out.stderr).toContain('no test case matches; nothing printed (exit code 1)');
    }
  });

  it('wrong usage: exit code 2 with what was expected; an unknown cycle names those there are', async () => {
    const status = await keys(['--plan', 'DEMO-1', '--cycle', 'Nightly', '--status', 'Faild']);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('--status: "Faild" is not a run status; expected one or more of "Passed"');
    const noCycle = await keys(['--plan', 'DEMO-1', '--status', 'Failed']);
    expect(noCycle.code).toBe(2);
    expect(noCycle.stderr).toContain('--status filters the runs of a cycle: name one with --cycle NAME (or #ID)');
    const format = await keys(['--plan', 'DEMO-1', '--format', 'xml']);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format expects grep, json, lines, got "xml"');
    const unknown = await keys(['--plan', 'DEMO-1', '--cycle', 'Weekly']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('test plan DEMO-1 has no cycle "Weekly": it has "Nightly"');
    const help = await run(process.execPath, [CLI, 'help', 'cycle'], ROOT);
    expect(help.stdout).toContain('Usage: casebridge cycle keys');
    const top = await run(process.execPath, [CLI, '--help'], ROOT);
    expect(top.stdout).toContain('cycle keys --plan P');
  });
});

/** A fixture's tests: keyed in titles, in a describe title, by the mapping file only, and decoys. */
const SPEC = (api: string) => `${api}
test('DEMO-2 logs in', () => {});
test('DEMO-20 is another case', () => {});
test('[DEMO-3] logs out', () => {});
describe('DEMO-4 search', () => {
  test('finds by name', () => {});
});
describe('cart', () => {
  test('adds (two) items [x]', () => {});
  test('adds (two) items [x] twice', () => {});
});
test('DEMO-6 profile', () => {});
`;
const MAPPING = `${JSON.stringify({ 'tests/shop.test.js > cart > adds (two) items [x]': 'DEMO-4' })}\n`;
const SELECTED = ['DEMO-2 logs in', 'DEMO-4 search finds by name', 'cart adds (two) items [x]'];

describe('cycle keys feeds the runner filter', () => {
  it('Jest -t runs exactly the failed cases of the cycle, mapped tests included', async () => {
    const dir = fixture('cycle-keys-jest', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': "module.exports = { testEnvironment: 'node', cacheDirectory: '<rootDir>/.jest-cache' };\n",
      'casebridge.keys.json': MAPPING,
      'tests/shop.test.js': SPEC(''),
    });
    const grep = await keys(['--plan', 'DEMO-1', '--cycle', 'Nightly', '--status', 'Failed', '--runner', 'jest'], dir);
    expect(grep.code, grep.stderr).toBe(0);
    expect(grep.stdout.trim()).toBe('\\b(?:DEMO-2|DEMO-4)\\b|^cart adds \\(two\\) items \\[x\\]$');
    expect(grep.stderr).toContain('casebridge.keys.json: 1 test(s) mapped to these keys');
    const out = await jest(dir, ['--json', '-t', grep.stdout.trim()]);
    expect(out.code, out.stderr).toBe(0);
    const report = JSON.parse(out.stdout) as {
      testResults: Array<{ assertionResults: Array<{ fullName: string; status: string }> }>;
    };
    const ran = report.testResults.flatMap((f) => f.assertionResults).filter((a) => a.status === 'passed');
    expect(ran.map((a) => a.fullName).sort()).toEqual([...SELECTED].sort());
  });

  it('Vitest -t runs exactly the same tests with the runner-neutral pattern', async () => {
    const dir = fixture('cycle-keys-vitest', {
      'package.json': `${JSON.stringify({ name: 'cycle-keys-vitest', private: true, type: 'module' })}\n`,
      'vitest.config.mjs': "export default { test: { include: ['tests/**/*.test.js'] } };\n",
      'casebridge.keys.json': MAPPING,
      'tests/shop.test.js': SPEC("import { describe, test } from 'vitest';"),
    });
    const grep = await keys(['--plan', 'DEMO-1', '--cycle', 'Nightly', '--status', 'Failed'], dir);
    expect(grep.code, grep.stderr).toBe(0);
    const out = await vitest(dir, ['run', '--reporter=json', '-t', grep.stdout.trim()]);
    expect(out.code, out.stderr).toBe(0);
    const report = JSON.parse(out.stdout.slice(out.stdout.indexOf('{'))) as {
      testResults: Array<{ assertionResults: Array<{ fullName: string; status: string }> }>;
    };
    const ran = report.testResults.flatMap((f) => f.assertionResults).filter((a) => a.status === 'passed');
    expect(ran.map((a) => a.fullName).sort()).toEqual([...SELECTED].sort());
  });
});
