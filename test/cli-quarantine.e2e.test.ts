import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest } from './support/jest.js';
import { fixture, ROOT, run } from './support/runner.js';
import { admin, indexed, reporterEnv, useEmulator } from './support/world.js';

/**
 * `casebridge cycle keys --quarantined`, built, against the real emulator: cases carrying the quarantine label, a
 * bug carrying it linked to another case's run, a closed labelled case and a closed labelled bug (both left out),
 * the label from --label, the environment and a Jest config's reporter options; then the Jest pattern fed to a real
 * Jest run, which must run every test but the quarantined ones (keyed in titles, in a describe title, or only by
 * the mapping file).
 */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const LABEL = 'casebridge-quarantine';

const world = useEmulator({ reset: false });
let emu: RunningEmulator;
/** The open bug carrying the label, linked to DEMO-4's failed run. */
let bug = '';

function setLabels(key: string, labels: string[], closed = false): void {
  const issue = emu.store.issues.find((i) => i.key === key);
  if (!issue) throw new Error(`${key} not found`);
  emu.store.issues.update({ ...issue, labels, ...(closed ? { status: 'Done', resolution: 'Done' } : {}) });
}

beforeAll(async () => {
  emu = world();
  const tm = admin(emu);
  const plan = { testPlanIssueKey: 'DEMO-1' };
  try {
    // Failed runs of DEMO-4 and DEMO-5 in a cycle, for bugs to be linked to, as a tester does in synapseRT.
    await tm.plans.addCycle({ ...plan, name: 'Nightly' });
    await tm.cycles.workflow({ ...plan, cycleName: 'Nightly', action: 'Start' });
    await tm.cycles.addMembersToTestCycle({ ...plan, testCycleName: 'Nightly', addTestCaseKeys: ['DEMO-4', 'DEMO-5'] });
    for (const key of ['DEMO-4', 'DEMO-5']) {
      await tm.runs.updateTestRun({ ...plan, cycleName: 'Nightly', testcaseKey: key, result: 'Failed' });
    }
    const cycleId = (await tm.plans.cycles(plan)).find((c) => c.name === 'Nightly')?.id ?? 0;
    const runs = await tm.cycles.testRunsByCycleId({ ...plan, cycleId: String(cycleId) });
    const runOf = (key: string) => String(runs.find((r) => r.testCaseKey === key)?.id);
    const fileBug = async (summary: string) =>
      (
        await tm.jira.createIssue({
          fields: { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary, labels: [LABEL] },
        })
      ).key;
    bug = await fileBug('Search times out on the staging database');
    await tm.runs.update({ runId: runOf('DEMO-4'), bugs: [bug] });
    const closedBug = await fileBug('Checkout was broken last week');
    await tm.runs.update({ runId: runOf('DEMO-5'), bugs: [closedBug] });
    setLabels(closedBug, [LABEL], true);
  } finally {
    await tm.close();
  }
  setLabels('DEMO-2', ['smoke', LABEL]);
  setLabels('DEMO-7', [LABEL], true);
  setLabels('DEMO-6', ['known-broken']);
  // A person labels long before CI reads the labels.
  await indexed(emu);
});

/**
 * The demo project holds six cases: under the default cap (5 %, at least one) only one of the quarantines here would
 * apply. A half lets them all apply; the cap has its own tests (quarantine-owner, core's quarantine-cap).
 */
const env = (extra: Record<string, string> = {}) => reporterEnv(emu, { CASEBRIDGE_QUARANTINE_MAX: '0.5', ...extra });
const keys = (args: string[], cwd = ROOT, extra: Record<string, string> = {}) =>
  run(process.execPath, [CLI, 'cycle', 'keys', '--quarantined', ...args], cwd, env(extra));

describe('casebridge cycle keys --quarantined', () => {
  it('the open labelled cases and the cases of an open labelled bug; closed ones left out; each format', async () => {
    const lines = await keys(['--format', 'lines']);
    expect(lines.code, lines.stderr).toBe(0);
    expect(lines.stdout).toBe('DEMO-2\nDEMO-4\n');
    // The search, the runs of the open bug (the closed bug's are never read), and the count of the cases for the cap.
    expect(lines.stderr).toContain(`project DEMO, label ${LABEL}: 2 quarantined case(s) (3 request(s))`);
    expect(lines.stderr).toContain(`DEMO-2: label ${LABEL}`);
    expect(lines.stderr).toContain(`DEMO-4: bug ${bug} (label ${LABEL})`);
    const grep = await keys([]);
    expect(grep.stdout).toBe('\\b(?:DEMO-2|DEMO-4)\\b\n');
    const json = await keys(['--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      label: LABEL,
      keys: ['DEMO-2', 'DEMO-4'],
      why: { 'DEMO-2': `label ${LABEL}`, 'DEMO-4': `bug ${bug} (label ${LABEL})` },
      titles: [],
      grep: '\\b(?:DEMO-2|DEMO-4)\\b',
      invert: true,
    });
    const vitest = await keys(['--runner', 'vitest']);
    expect(vitest.stdout).toBe('^(?![\\s\\S]*(?:\\b(?:DEMO-2|DEMO-4)\\b))\n');
  });

  it('another label: --label, CASEBRIDGE_QUARANTINE_LABEL, or the reporter options of the runner config', async () => {
    const byOption = await keys(['--label', 'known-broken', '--format', 'lines']);
    expect(byOption.code, byOption.stderr).toBe(0);
    expect(byOption.stdout).toBe('DEMO-6\n');
    const byEnv = await keys(['--format', 'lines'], ROOT, { CASEBRIDGE_QUARANTINE_LABEL: 'known-broken' });
    expect(byEnv.stdout).toBe('DEMO-6\n');
    const dir = fixture('quarantine-config', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': `module.exports = {
  testEnvironment: 'node',
  reporters: ['default', ['@casebridge/jest', { quarantine: { label: 'known-broken' } }]],
};
`,
    });
    const byConfig = await keys(['--runner', 'jest'], dir);
    expect(byConfig.code, byConfig.stderr).toBe(0);
    expect(byConfig.stdout).toBe('^(?![\\s\\S]*(?:\\b(?:DEMO-6)\\b))\n');
    // --label above the config, as any option given on the command line.
    const over = await keys(['--runner', 'jest', '--label', LABEL, '--format', 'lines'], dir);
    expect(over.stdout).toBe('DEMO-2\nDEMO-4\n');
  });

  it('nothing quarantined: nothing on stdout, a note saying to run every test, exit code 1', async () => {
    const out = await keys(['--label', 'nothing-carries-this', '--runner', 'jest']);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain(
      'no test case is quarantined (label nothing-carries-this); nothing printed (exit code 1): run every test',
    );
  });

  it('wrong usage: exit code 2 with what was wrong', async () => {
    for (const [args, message] of [
      [
        ['--status', 'Failed'],
        "--quarantined lists the project's quarantined cases, not a plan's or a cycle's: --status does not apply",
      ],
      [['--tester', 'me'], '--tester does not apply'],
      [['--cycle', 'Nightly'], '--cycle does not apply'],
      [['--label', 'two words'], '--label expects a Jira label (no spaces or quotes)'],
    ] as const) {
      const out = await keys([...args]);
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stderr).toContain(message);
    }
    const label = await run(process.execPath, [CLI, 'cycle', 'keys', '--plan', 'DEMO-1', '--label', 'x'], ROOT, env());
    expect(label.code).toBe(2);
    expect(label.stderr).toContain('--label names the quarantine label: it goes with --quarantined');
  });
});

/** A fixture's tests: quarantined ones keyed in a title, in a describe title and only by the mapping file; decoys. */
const SPEC = `
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
const MAPPING = `${JSON.stringify({ 'tests/shop.test.js > cart > adds (two) items [x]': 'DEMO-2' })}\n`;
const RUN = ['DEMO-20 is another case', '[DEMO-3] logs out', 'cart adds (two) items [x] twice', 'DEMO-6 profile'];

describe('--quarantined feeds the runner filter', () => {
  it('Jest -t runs every test but the quarantined ones, mapped tests included', async () => {
    const dir = fixture('cli-quarantine-jest', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': "module.exports = { testEnvironment: 'node', cacheDirectory: '<rootDir>/.jest-cache' };\n",
      'casebridge.keys.json': MAPPING,
      'tests/shop.test.js': SPEC,
    });
    const grep = await keys(['--runner', 'jest'], dir);
    expect(grep.code, grep.stderr).toBe(0);
    expect(grep.stdout.trim()).toBe('^(?![\\s\\S]*(?:\\b(?:DEMO-2|DEMO-4)\\b|^cart adds \\(two\\) items \\[x\\]$))');
    expect(grep.stderr).toContain('casebridge.keys.json: 1 test(s) mapped to these keys');
    const out = await jest(dir, ['--json', '-t', grep.stdout.trim()]);
    expect(out.code, out.stderr).toBe(0);
    const report = JSON.parse(out.stdout) as {
      testResults: Array<{ assertionResults: Array<{ fullName: string; status: string }> }>;
    };
    const all = report.testResults.flatMap((f) => f.assertionResults);
    expect(
      all
        .filter((a) => a.status === 'passed')
        .map((a) => a.fullName)
        .sort(),
    ).toEqual([...RUN].sort());
    expect(
      all
        .filter((a) => a.status !== 'passed')
        .map((a) => a.fullName)
        .sort(),
    ).toEqual(['DEMO-2 logs in', 'DEMO-4 search finds by name', 'cart adds (two) items [x]'].sort());
  });
});
