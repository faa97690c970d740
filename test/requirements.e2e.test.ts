import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { fixture, playwright, ROOT, run } from './support/runner.js';
import { admin, reporterEnv, TOKEN, useEmulator } from './support/world.js';

/**
 * Requirements traced (issue 49): tests name their requirements (`requirement()` in Jest, an annotation in
 * Playwright), the reporter links their cases once, and coverage is asked of the CLI, the MCP server and the gate.
 * The seed: DEMO-8 "Accounts" (case DEMO-3, child DEMO-9), DEMO-9 "Users can sign in" (DEMO-2), DEMO-10 "Customers
 * can buy products" (DEMO-4, DEMO-5).
 */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const world = useEmulator({ reset: false });
let emu: RunningEmulator;
let dir = '';
let uncovered = '';

const TESTS = `const { requirement } = require('@casebridge/jest');
test('DEMO-2 signs in', () => {});
test('DEMO-7 remembers the user', () => {
  requirement('DEMO-9');
});
test('DEMO-6 shows the profile', () => {
  requirement('DEMO-10', 'DEMO-999');
  expect(1 + 1).toBe(3);
});
`;

const env = (extra: Record<string, string> = {}) =>
  reporterEnv(emu, { CASEBRIDGE_MODE: 'cycle', CASEBRIDGE_TEST_PLAN: 'DEMO-1', CASEBRIDGE_CYCLE: 'Req 1', ...extra });
const cli = (args: string[]) => run('node', [CLI, ...args], dir, env());
const linked = async (req: string) => {
  const tm = admin(emu);
  try {
    return (await tm.requirements.linkedTestCases({ requirementIssueKey: req })).map((c) => c.key).sort();
  } finally {
    await tm.close();
  }
};
const links = () => emu.requests().filter((q) => q.op === 'requirements.linkTestCase');

beforeAll(async () => {
  emu = world();
  const tm = admin(emu);
  try {
    const made = await tm.jira.createIssue({
      fields: { project: { key: 'DEMO' }, issuetype: { name: 'Requirement' }, summary: 'Orders can be refunded' },
    });
    uncovered = made.key;
  } finally {
    await tm.close();
  }
  dir = fixture('requirements-jest', {
    'package.json': JEST_PACKAGE,
    'jest.config.js': jestConfig(),
    'a.test.js': TESTS,
  });
  const out = await jest(dir, ['--runInBand'], env());
  expect(out.code, out.stdout + out.stderr).toBe(1);
  expect(out.stderr).toMatch(/requirements: 3 named, 2 new case link\(s\)/);
  expect(out.stderr).toMatch(/warning: DEMO-999 is not a requirement synapseRT accepts.*named by a\.test\.js > DEMO-6/);
}, 120_000);

describe('tests name their requirements', () => {
  it("links each test's case to its requirements, keeps a person's links, and a second run links nothing", async () => {
    expect(await linked('DEMO-9')).toEqual(['DEMO-2', 'DEMO-7']);
    expect(await linked('DEMO-10')).toEqual(['DEMO-4', 'DEMO-5', 'DEMO-6']);
    const before = links().length;
    const again = await jest(dir, ['--runInBand'], env());
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/requirements: 3 named, 0 new case link\(s\)/);
    expect(links().length).toBe(before);
  }, 60_000);

  it('a Playwright annotation links its case the same way', async () => {
    const pw = fixture('requirements-pw', {
      'playwright.config.mjs': `export default { testDir: 'tests', reporter: [['line'], ['@casebridge/playwright', {}]] };`,
      'tests/a.spec.ts': `import { test } from '@playwright/test';
test('DEMO-3 logs out', { annotation: { type: 'requirement', description: '${uncovered}' } }, async () => {});
`,
    });
    const out = await playwright(pw, ['test'], env({ CASEBRIDGE_CYCLE: 'Req PW' }));
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(await linked(uncovered)).toEqual(['DEMO-3']);
    // Unlinked again by a person: the next run would link it again, nothing else (this test needs it uncovered).
    const tm = admin(emu);
    await tm.requirements.deleteLinkedTestCases({ requirementIssueKey: uncovered, testCaseKeys: ['DEMO-3'] });
    await tm.close();
    // casebridge sync reports the links the reporters would make, and makes none.
    const sync = await run('node', [CLI, 'sync', '--dry-run'], pw, env());
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    expect(sync.stdout).toContain(`${uncovered}: the reporters will link DEMO-3`);
    expect(await linked(uncovered)).toEqual([]);
  }, 60_000);

  it("a JUnit import links by the test case's requirements property", async () => {
    const tm = admin(emu);
    const made = await tm.jira.createIssue({
      fields: { project: { key: 'DEMO' }, issuetype: { name: 'Requirement' }, summary: 'Orders are listed' },
    });
    await tm.close();
    const junit = fixture('requirements-junit', {
      'results.xml': `<?xml version="1.0"?>
<testsuite name="api" tests="1"><testcase classname="api" name="DEMO-4 lists orders">
  <properties><property name="requirements" value="${made.key}"/></properties>
</testcase></testsuite>`,
    });
    const out = await run('node', [CLI, 'junit', 'results.xml'], junit, env({ CASEBRIDGE_CYCLE: 'Req JUnit' }));
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(await linked(made.key)).toEqual(['DEMO-4']);
  }, 60_000);
});

interface Coverage {
  requirements: Array<{
    key: string;
    state: string;
    cases: Array<{ key: string; result?: string; defects: string[] }>;
  }>;
}

describe('coverage, asked anywhere', () => {
  it('casebridge coverage --json: one failing (its failed case and defect), one passing; a JQL set shows the uncovered', async () => {
    const out = await cli(['coverage', '--cycle', 'Req 1', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const got = JSON.parse(out.stdout) as Coverage;
    const by = Object.fromEntries(got.requirements.map((x) => [x.key, x]));
    expect(by['DEMO-9']?.state).toBe('passing');
    expect(by['DEMO-10']?.state).toBe('failing');
    const failed = by['DEMO-10']?.cases.find((c) => c.result === 'failed');
    expect(failed?.key).toBe('DEMO-6');
    expect(failed?.defects).toHaveLength(1);
    // DEMO-8 is judged over its child DEMO-9's cases too; its own DEMO-3 has no run in this cycle.
    expect(by['DEMO-8']?.state).toBe('not run');
    expect(by[uncovered]).toBeUndefined();
    const jql = await cli([
      'coverage',
      '--cycle',
      'Req 1',
      '--jql',
      'project = DEMO AND issuetype = Requirement',
      '--json',
    ]);
    expect(JSON.parse(jql.stdout).requirements.find((x: { key: string }) => x.key === uncovered)?.state).toBe(
      'not covered',
    );
  });

  it("failures --json gives the failure's file, line and the matcher's Expected and Received lines", async () => {
    const out = await cli(['failures', '--cycle', 'Req 1', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const [f] = JSON.parse(out.stdout).failures as Array<{
      key: string;
      file: string;
      line: number;
      errorLines: string[];
    }>;
    expect(f).toMatchObject({
      key: 'DEMO-6',
      file: 'test/.fixtures/requirements-jest/a.test.js',
      line: 8,
      errorLines: ['Error: expect(received).toBe(expected) // Object.is equality', 'Expected: 3', 'Received: 2'],
    });
  });

  it('costs the cycle (2), one search and two reads a requirement', async () => {
    const since = emu.requests().at(-1)?.seq ?? 0;
    const out = await cli(['coverage', '--cycle', 'Req 1', '--requirement', 'DEMO-9', '--requirement', 'DEMO-10']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/2 requirement\(s\), cycle "Req 1" of DEMO-1: 1 passing, 1 failing/);
    const ops = emu
      .requests()
      .filter((q) => q.seq > since && !q.path.startsWith('/__emulator'))
      .map((q) => q.op)
      .sort();
    expect(ops).toEqual([
      'cycles.testRunsByCycleId',
      'jira.search',
      'plans.cycles',
      'requirements.getChildren',
      'requirements.getChildren',
      'requirements.linkedTestCases',
      'requirements.linkedTestCases',
    ]);
  });

  it('the gate: --requirements passing exits 1 naming the failing requirement', async () => {
    const out = await cli([
      'gate',
      '--cycle',
      'Req 1',
      '--max-new',
      '5',
      '--requirements',
      'passing',
      '--requirements-jql',
      'key in (DEMO-9, DEMO-10)',
    ]);
    expect(out.code, out.stdout + out.stderr).toBe(1);
    expect(out.stdout).toMatch(
      /FAIL\s+every requirement passing \(key in \(DEMO-9, DEMO-10\)\): 1 of 2: DEMO-10 Customers can buy products \(failing\)/,
    );
    const covered = await cli([
      'gate',
      '--cycle',
      'Req 1',
      '--max-new',
      '5',
      '--requirements',
      'covered',
      '--requirements-jql',
      'key in (DEMO-9, DEMO-10)',
    ]);
    expect(covered.code, covered.stdout).toBe(0);
  });

  it('bad input: an unknown key, a refused JQL, a cycle that is not there: exit 2 with the reason', async () => {
    const unknown = await cli(['coverage', '--cycle', 'Req 1', '--requirement', 'DEMO-999']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('DEMO-999');
    const refused = await cli(['coverage', '--cycle', 'Req 1', '--jql', 'nonsense ==== here']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/Jira refused the JQL/);
    const cycle = await cli(['coverage', '--cycle', 'No such cycle']);
    expect(cycle.code).toBe(2);
    expect(cycle.stderr).toContain('No such cycle');
    expect(unknown.stderr + refused.stderr + cycle.stderr).not.toContain(TOKEN);
  });

  it('the MCP tool requirement_coverage answers the same, and a tool error for an unknown key', async () => {
    const transport = new StdioClientTransport({
      command: 'node',
      args: [CLI, 'mcp'],
      cwd: dir,
      env: { ...process.env, ...env() } as Record<string, string>,
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const res = await client.callTool({
        name: 'requirement_coverage',
        arguments: { cycle: 'Req 1', requirements: ['DEMO-9', 'DEMO-10'] },
      });
      const got = res.structuredContent as Coverage;
      expect(got.requirements.map((x) => [x.key, x.state])).toEqual([
        ['DEMO-9', 'passing'],
        ['DEMO-10', 'failing'],
      ]);
      const failures = await client.callTool({ name: 'list_failures', arguments: { cycle: 'Req 1' } });
      expect((failures.structuredContent as { failures: unknown[] }).failures).toEqual([
        expect.objectContaining({ key: 'DEMO-6', line: 8, errorLines: expect.arrayContaining(['Received: 2']) }),
      ]);
      const bad = await client.callTool({
        name: 'requirement_coverage',
        arguments: { cycle: 'Req 1', requirements: ['DEMO-999'] },
      });
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.content)).toContain('DEMO-999');
    } finally {
      await client.close();
    }
  }, 30_000);
});
