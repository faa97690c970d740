import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { closedPort, fixture, ROOT, run } from './support/runner.js';
import { reporterEnv, TOKEN, useEmulator } from './support/world.js';

/**
 * Failures explained (issue 49, point 4): a real Jest suite reports into two cycles of the real emulator, then the
 * built CLI and its MCP server tell one failure's whole story (`failure KEY`, `failure_detail`) and what changed
 * between the cycles (`diff --base`, `compare_cycles`). First run: DEMO-3 fails (`expect(1 + 1).toBe(3)`, a
 * screenshot in its failing step, a trace and an error context), DEMO-4 fails, DEMO-2 and DEMO-5 pass. Second run:
 * DEMO-4 fixed, DEMO-2 newly failing, DEMO-3 still failing the same way, DEMO-5 gone, DEMO-6 new.
 */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const world = useEmulator({ reset: false });
let emu: RunningEmulator;
let dir = '';

const PNG = '89504e470d0a1a0a0000000d4948445200000001000000010806000000';
const SHOP = `const { attach, step } = require('@casebridge/jest');
const second = process.env.ROUND === '2';

test('DEMO-2 logs in', async () => {
  await step('Open the login page', async () => {});
  await step('Enter user name and password', async () => {
    if (second) throw new Error('the password field is read-only');
  });
});

test('DEMO-3 logs out', async () => {
  attach('trace', { body: Buffer.from('PK trace'), contentType: 'application/zip' });
  attach('error-context', { body: '# Page snapshot\\n- button "Log out"', contentType: 'text/markdown' });
  await step('Open the user menu', async () => {});
  await step('Choose "Log out"', async () => {
    attach('screenshot.png', { body: Buffer.from('${PNG}', 'hex') });
    expect(1 + 1).toBe(3);
  });
});

test('DEMO-4 searches', () => {
  if (!second) throw new Error('no results for teapot');
});

if (!second) test('DEMO-5 checks out', () => {});
if (second) test('DEMO-6 shows the profile', () => {});
`;
/** The line of `expect(1 + 1).toBe(3)`: where the reporter says DEMO-3 failed. */
const EXPECT_LINE = SHOP.split('\n').findIndex((l) => l.includes('toBe(3)')) + 1;

const env = (extra: Record<string, string> = {}) =>
  reporterEnv(emu, { CASEBRIDGE_MODE: 'cycle', CASEBRIDGE_TEST_PLAN: 'DEMO-1', ...extra });
const cli = (args: string[], extra: Record<string, string> = {}) => run('node', [CLI, ...args], dir, env(extra));

beforeAll(async () => {
  emu = world();
  dir = fixture('explain-jest', {
    'package.json': JEST_PACKAGE,
    'jest.config.js': jestConfig({ attachments: { traces: true } }),
    'shop.test.js': SHOP,
  });
  for (const round of ['1', '2']) {
    const out = await jest(dir, ['--runInBand'], env({ CASEBRIDGE_CYCLE: `Explain ${round}`, ROUND: round }));
    expect(out.code, out.stdout + out.stderr).toBe(1);
  }
}, 120_000);

interface Detail {
  key: string;
  run: { status: string; url: string };
  classification?: string;
  file?: string;
  line?: number;
  error?: string[];
  errorLines?: string[];
  stack?: string[];
  steps: Array<{ step: number; text: string; status: string }>;
  attachments: Array<{ name: string; kind: string; url?: string; step?: number }>;
  defects: Array<{ key: string; status?: string; assignee?: string | null }>;
  history: { runs: Array<{ cycle: string; status: string }> };
}

interface Comparison {
  newlyFailing: Array<{ key: string; failure?: { errorLines?: string[]; file?: string } }>;
  fixed: Array<{ key: string }>;
  stillFailing: { same: Array<{ key: string }>; other: Array<{ key: string }> };
  newTests: Array<{ key: string }>;
  notRunAnyMore: Array<{ key: string }>;
}

const keys = (list: ReadonlyArray<{ key: string }>) => list.map((c) => c.key);

/** What `failure` and `failure_detail` tell of DEMO-3 in the second cycle. */
async function expectStory(d: Detail) {
  expect(d).toMatchObject({ key: 'DEMO-3', run: { status: 'Failed' }, classification: 'known' });
  expect(d.run.url).toContain('/browse/DEMO-1?cycle=');
  // From the repository's root (the fixture lives in this repository's test/.fixtures).
  expect([d.file, d.line]).toEqual(['test/.fixtures/explain-jest/shop.test.js', EXPECT_LINE]);
  expect(d.error).toEqual(expect.arrayContaining(['Expected: 3', 'Received: 2']));
  expect(d.error?.[0]).toMatch(/expect\(received\)\.toBe\(expected\)/);
  expect(d.errorLines).toEqual(expect.arrayContaining(['Expected: 3', 'Received: 2']));
  // Jest's reporter writes the message; the stack is in the defect's description, not the comment.
  expect(d.stack).toBeUndefined();
  expect(d.steps.map((s) => [s.step, s.status])).toEqual([
    [1, 'Passed'],
    [2, 'Failed'],
  ]);
  const byKind = Object.fromEntries(d.attachments.map((a) => [a.kind, a]));
  expect(Object.keys(byKind).sort()).toEqual(['error-context', 'screenshot', 'trace']);
  expect(byKind.screenshot?.step).toBe(2);
  for (const a of d.attachments) {
    const got = await fetch(a.url as string, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(got.status, a.name).toBe(200);
  }
  const context = await fetch(byKind['error-context']?.url as string, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(await context.text()).toContain('button "Log out"');
  expect(d.defects).toHaveLength(1);
  expect(d.defects[0]).toMatchObject({ status: expect.any(String), assignee: null });
  expect(d.history.runs.map((r) => [r.cycle, r.status])).toEqual([
    ['Explain 2', 'Failed'],
    ['Explain 1', 'Failed'],
  ]);
}

describe('casebridge failure KEY', () => {
  it('--json: the error lines, file and line, steps, file links, the defect’s status, the last results', async () => {
    const out = await cli(['failure', 'DEMO-3', '--cycle', 'Explain 2', '--json']);
    expect(out.code, out.stderr).toBe(0);
    await expectStory(JSON.parse(out.stdout) as Detail);
    expect(out.stdout + out.stderr).not.toContain(TOKEN);
  });

  it('as text, for a person; an unknown key, a case with no run, an unknown cycle exit 1; a dead service 2', async () => {
    const out = await cli(['failure', 'DEMO-3', '--cycle', 'Explain 2']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(`at: test/.fixtures/explain-jest/shop.test.js:${EXPECT_LINE}`);
    expect(out.stdout).toMatch(/^\s+Expected: 3$/m);
    expect(out.stdout).toMatch(/^\s+Received: 2$/m);
    expect(out.stdout).toContain('(no stack in the run comment)');
    expect(out.stdout).toMatch(/screenshot: screenshot\.png \(step 2\)\n\s+http/);
    const unknown = await cli(['failure', 'DEMO-999', '--cycle', 'Explain 2']);
    expect([unknown.code, unknown.stdout]).toEqual([1, '']);
    expect(unknown.stderr).toContain('test case DEMO-999 is not there');
    const noRun = await cli(['failure', 'DEMO-7', '--cycle', 'Explain 2']);
    expect(noRun.code).toBe(1);
    expect(noRun.stderr).toContain('test case DEMO-7 has no run in cycle "Explain 2" of DEMO-1');
    const noCycle = await cli(['failure', 'DEMO-3', '--cycle', 'No such cycle']);
    expect(noCycle.code).toBe(1);
    expect(noCycle.stderr).toContain('No such cycle');
    const down = await run('node', [CLI, 'failure', 'DEMO-3', '--cycle', 'Explain 2'], dir, {
      ...env(),
      CASEBRIDGE_URL: `http://127.0.0.1:${await closedPort()}`,
    });
    expect(down.code, down.stderr).toBe(2);
  }, 60_000);
});

describe('casebridge diff --base', () => {
  it('--json: newly failing, fixed, still failing the same way, new tests, not run any more', async () => {
    const out = await cli(['diff', '--base', 'Explain 1', '--cycle', 'Explain 2', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const d = JSON.parse(out.stdout) as Comparison;
    expect(keys(d.newlyFailing)).toEqual(['DEMO-2']);
    expect(d.newlyFailing[0]?.failure).toMatchObject({
      file: 'test/.fixtures/explain-jest/shop.test.js',
      errorLines: ['Error: the password field is read-only'],
    });
    expect(keys(d.fixed)).toEqual(['DEMO-4']);
    expect(keys(d.stillFailing.same)).toEqual(['DEMO-3']);
    expect(keys(d.stillFailing.other)).toEqual([]);
    expect(keys(d.newTests)).toEqual(['DEMO-6']);
    expect(keys(d.notRunAnyMore)).toEqual(['DEMO-5']);
  });

  it('as text; --base is required (usage, exit 2); an unknown cycle exits 1', async () => {
    const out = await cli(['diff', '--base', 'Explain 1', '--cycle', 'Explain 2']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^newly failing: 1\n\s+DEMO-2 .*\(test\/.fixtures\/explain-jest\/shop\.test\.js:\d+\)/m);
    expect(out.stdout).toMatch(/^fixed: 1\n\s+DEMO-4 /m);
    expect(out.stdout).toMatch(/^still failing the same way: 1\n\s+DEMO-3 /m);
    expect((await cli(['diff', '--cycle', 'Explain 2'])).code).toBe(2);
    const unknown = await cli(['diff', '--base', 'No such cycle', '--cycle', 'Explain 2']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No such cycle');
  });
});

describe('casebridge mcp: failure_detail and compare_cycles', () => {
  it('over stdio: the same answers as structured content; an unknown key or cycle is a tool error', async () => {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: 'node',
        args: [CLI, 'mcp'],
        cwd: dir,
        env: { ...process.env, ...env() } as Record<string, string>,
      }),
    );
    try {
      const tools = (await client.listTools()).tools;
      for (const name of ['failure_detail', 'compare_cycles']) {
        const tool = tools.find((t) => t.name === name);
        expect(tool?.outputSchema, name).toBeDefined();
        expect(tool?.annotations?.readOnlyHint, name).toBe(true);
      }
      const detail = await client.callTool({
        name: 'failure_detail',
        arguments: { cycle: 'Explain 2', key: 'DEMO-3' },
      });
      expect(detail.isError, JSON.stringify(detail.content)).toBeFalsy();
      await expectStory(detail.structuredContent as unknown as Detail);
      expect(JSON.stringify(detail.content)).toContain('Expected: 3');

      const compared = await client.callTool({
        name: 'compare_cycles',
        arguments: { base: 'Explain 1', cycle: 'Explain 2' },
      });
      expect(compared.isError, JSON.stringify(compared.content)).toBeFalsy();
      const c = compared.structuredContent as unknown as Comparison;
      expect([keys(c.newlyFailing), keys(c.fixed), keys(c.stillFailing.same)]).toEqual([
        ['DEMO-2'],
        ['DEMO-4'],
        ['DEMO-3'],
      ]);

      const badKey = await client.callTool({
        name: 'failure_detail',
        arguments: { cycle: 'Explain 2', key: 'DEMO-999' },
      });
      expect(badKey.isError).toBe(true);
      expect(JSON.stringify(badKey.content)).toContain('DEMO-999 is not there');
      const badCycle = await client.callTool({
        name: 'compare_cycles',
        arguments: { base: 'No such cycle', cycle: 'Explain 2' },
      });
      expect(badCycle.isError).toBe(true);
      expect(JSON.stringify(badCycle.content)).toContain('No such cycle');
      expect(JSON.stringify([detail, compared, badKey, badCycle])).not.toContain(TOKEN);
    } finally {
      await client.close();
    }
  }, 60_000);
});
