import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { closedPort, fixture, playwright, ROOT, run } from './support/runner.js';
import { VITEST_FILES, vitest } from './support/vitest.js';
import { indexed, reporterEnv, TOKEN, useEmulator } from './support/world.js';

/**
 * Reading back what the reporters wrote (issue 39): a real Jest suite reports failures into two cycles (realistic
 * profile, defects and history on), the same tests under Vitest into a third, Playwright into a fourth; the built CLI answers as a script and a pipeline use it (`failures --json`,
 * `history`, `gate`), and its MCP server answers the SDK's own Client over stdio and over Streamable HTTP. The
 * classification comes from the reporter's run comment, so it is the reporter's own.
 */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const world = useEmulator({ reset: false });
let emu: RunningEmulator;
let dir = '';

const TESTS = `
test('DEMO-2 signs in', () => {});
test('DEMO-3 signs out', () => { throw new Error('sign-out button is missing'); });
test('DEMO-4 searches', () => { expect(1 + 1).toBe(3); });
test('DEMO-5 checks out', () => {});
`;

const env = (extra: Record<string, string> = {}) =>
  reporterEnv(emu, { CASEBRIDGE_MODE: 'cycle', CASEBRIDGE_TEST_PLAN: 'DEMO-1', ...extra });

const cli = (args: string[], extra: Record<string, string> = {}) => run('node', [CLI, ...args], dir, env(extra));
/** The service's requests since `since` (the emulator's own admin calls left out). */
const served = (since: number) => emu.requests().filter((q) => q.seq > since && !q.path.startsWith('/__emulator'));
const lastSeq = () => emu.requests().at(-1)?.seq ?? 0;

beforeAll(async () => {
  emu = world();
  dir = fixture('read-back-jest', {
    'package.json': JEST_PACKAGE,
    'jest.config.js': jestConfig(),
    'shop.test.js': TESTS,
  });
  for (const cycle of ['Nightly 1', 'Nightly 2']) {
    const out = await jest(dir, ['--runInBand'], env({ CASEBRIDGE_CYCLE: cycle }));
    expect(out.code, out.stdout + out.stderr).toBe(1);
  }
}, 120_000);

describe('the CLI reads back what the reporters wrote', () => {
  it('failures --json: exactly the cycle’s failed runs, with the reporter’s classification and defects', async () => {
    const out = await cli(['failures', '--cycle', 'Nightly 1', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const got = JSON.parse(out.stdout) as {
      total: number;
      failures: Array<{ key: string; classification: string; error?: string; defects: string[]; url: string }>;
    };
    expect(got.failures.map((f) => f.key).sort()).toEqual(['DEMO-3', 'DEMO-4']);
    expect(got.total).toBe(2);
    for (const f of got.failures) {
      expect(f.classification, JSON.stringify(f)).toBe('new');
      expect(f.defects).toHaveLength(1);
      expect(f.url).toContain('/browse/DEMO-1?cycle=');
    }
    expect(got.failures.find((f) => f.key === 'DEMO-3')?.error).toContain('sign-out button is missing');
    // The second cycle: the same failures again, known now (the same signature failed before).
    const second = JSON.parse((await cli(['failures', '--cycle', 'Nightly 2', '--json'])).stdout) as typeof got;
    expect(second.failures.map((f) => f.classification)).toEqual(['known', 'known']);
    expect(out.stdout + out.stderr).not.toContain(TOKEN);
  });

  it('history KEY: the case’s runs newest first', async () => {
    const out = await cli(['history', 'DEMO-3', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const got = JSON.parse(out.stdout) as {
      key: string;
      runs: Array<{ status: string; cycle: string; defects: string[] }>;
    };
    expect(got.runs.map((r) => r.cycle)).toEqual(['Nightly 2', 'Nightly 1']);
    expect(got.runs.every((r) => r.status === 'Failed' && r.defects.length === 1)).toBe(true);
    const missing = await cli(['history', 'DEMO-999']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/DEMO-999/);
  });

  it('gate: a new failure fails it, named; known ones pass; the job summary gets the table and the trend', async () => {
    const since = lastSeq();
    const first = await cli(['gate', '--cycle', 'Nightly 1']);
    expect(first.code, first.stdout + first.stderr).toBe(1);
    expect(first.stdout).toMatch(/FAIL\s+new failures ≤ 0: 2 new: DEMO-3 \S.*, DEMO-4 \S/); // named with their titles
    // One cycle read (the plan's cycles, the cycle's runs): the classification is in the runs, no request per failure.
    expect(served(since).map((q) => q.op)).toEqual(['plans.cycles', 'cycles.testRunsByCycleId']);
    const summary = join(dir, 'summary.md');
    const second = await cli(['gate', '--cycle', 'Nightly 2', '--min-pass-rate', '40'], {
      GITHUB_STEP_SUMMARY: summary,
    });
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const md = readFileSync(summary, 'utf8');
    expect(md).toContain('casebridge gate: ✅ passed');
    expect(md).toContain('xychart-beta');
    const strict = await cli(['gate', '--cycle', 'Nightly 2', '--strict']);
    expect(strict.code).toBe(1);
    // No verdict is not a failed verdict: a cycle that is not there exits 2, with the reason.
    const missing = await cli(['gate', '--cycle', 'No such cycle']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('No such cycle');
    const down = await run('node', [CLI, 'gate', '--cycle', 'Nightly 2'], dir, {
      ...env(),
      CASEBRIDGE_URL: `http://127.0.0.1:${await closedPort()}`,
    });
    expect(down.code, down.stderr).toBe(2);
  }, 60_000);
});

describe('rules from the configuration, and flaky cases', () => {
  it('gate: the configuration’s rules (option gate), a flag above them', async () => {
    const config = join(dir, 'casebridge.config.json');
    writeFileSync(config, `${JSON.stringify({ gate: { maxNew: 2, minPassRate: 40 } })}\n`);
    try {
      const byConfig = await cli(['gate', '--cycle', 'Nightly 1']);
      expect(byConfig.code, byConfig.stdout + byConfig.stderr).toBe(0);
      expect(byConfig.stdout).toMatch(/pass\s+new failures ≤ 2: 2 new/);
      expect(byConfig.stdout).toMatch(/pass\s+pass rate ≥ 40%: 50% of 4 runs/);
      const byFlag = await cli(['gate', '--cycle', 'Nightly 1', '--max-new', '1']);
      expect(byFlag.code, byFlag.stdout).toBe(1);
      writeFileSync(config, `${JSON.stringify({ gate: { maxNew: -1 } })}\n`);
      const bad = await cli(['gate', '--cycle', 'Nightly 1']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/gate\.maxNew/);
    } finally {
      rmSync(config);
    }
  });

  it('flaky: the cases that flipped over the plan’s last cycles, with their rate', async () => {
    // The third cycle by Vitest: the same tests, DEMO-3 fixed.
    const vt = fixture('read-back-vitest', {
      'vitest.config.mjs': VITEST_FILES['vitest.config.mjs'] as string,
      'tests/shop.spec.ts': `import { expect, test } from 'vitest';\n${TESTS.replace(/\{ throw new Error\('sign-out button is missing'\); \}/, '{}')}`,
    });
    const out = await vitest(vt, ['run'], env({ CASEBRIDGE_CYCLE: 'Nightly 3' }));
    expect(out.code, out.stdout + out.stderr).toBe(1);
    // Read back as the Vitest reporter classified it: its run comment says the same.
    const third = JSON.parse((await cli(['failures', '--cycle', 'Nightly 3', '--json'])).stdout) as {
      failures: Array<{ key: string; classification: string; run: number }>;
    };
    expect(third.failures.map((f) => f.key)).toEqual(['DEMO-4']);
    const comment = emu.store.runs.find((r) => r.id === third.failures[0]?.run)?.comment ?? '';
    expect(comment).toContain(`Classification: ${third.failures[0]?.classification}`);
    const flaky = await cli(['flaky', '--json']);
    expect(flaky.code, flaky.stderr).toBe(0);
    const got = JSON.parse(flaky.stdout) as { cycles: string[]; cases: Array<Record<string, unknown>> };
    expect(got.cycles).toEqual(['Nightly 1', 'Nightly 2', 'Nightly 3']);
    // DEMO-3 failed twice, then passed: one flip in three runs, not flaky (the reporters' rule: 2 flips in the last
    // 10; packages/core/test/query/flaky-agreement.test.ts lists one that is); DEMO-4 failed all three times.
    expect(got.cases).toEqual([]);
    const history = JSON.parse((await cli(['history', 'DEMO-3', '--json'])).stdout) as {
      flips: number;
      flaky: boolean;
    };
    expect(history).toMatchObject({ flips: 1, flaky: false });
  }, 60_000);
});

describe('the gate on a sharded cycle', () => {
  it('sees every shard’s runs: the other shard’s failure fails it, and every planned case is checked', async () => {
    const sharded = fixture('read-back-shards', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': jestConfig(),
      'a.test.js': "test('DEMO-2 signs in', () => {});\ntest('DEMO-5 checks out', () => {});\n",
      'b.test.js': "test('DEMO-6 shows the profile', () => { throw new Error('no name shown'); });\n",
    });
    const shardEnv = env({ CASEBRIDGE_CYCLE: 'Sharded', CASEBRIDGE_COMPLETE_CYCLE: 'false' });
    const shards = await Promise.all(
      ['1/2', '2/2'].map((s) => jest(sharded, [`--shard=${s}`, '--runInBand'], shardEnv)),
    );
    expect(shards.map((o) => o.code).sort()).toEqual([0, 1]);
    const out = await run(
      'node',
      [CLI, 'gate', '--cycle', 'Sharded', '--require-all-planned', '--json'],
      sharded,
      env(),
    );
    expect(out.code, out.stderr).toBe(1);
    const got = JSON.parse(out.stdout) as { rules: Array<{ rule: string; figure: string; pass: boolean }> };
    expect(got.rules[0]).toEqual({
      rule: 'new failures ≤ 0',
      figure: expect.stringMatching(/^1 new: DEMO-6 \S/),
      pass: false,
    });
    // DEMO-1's six cases: three ran (one per test), DEMO-3, DEMO-4 and DEMO-7 did not.
    expect(got.rules[2]).toEqual({
      rule: 'every planned case ran',
      figure: '3 of 6; not run: DEMO-3, DEMO-4, DEMO-7',
      pass: false,
    });
  }, 120_000);
});

describe('casebridge mcp', () => {
  it('over stdio: lists its tools and answers each read, a page at a time; refuses every write without --allow-writes', async () => {
    const client = new Client({ name: 'test', version: '1' });
    const transport = new StdioClientTransport({
      command: 'node',
      args: [CLI, 'mcp'],
      cwd: dir,
      env: { ...process.env, ...env() } as Record<string, string>,
      stderr: 'pipe',
    });
    let log = '';
    transport.stderr?.on('data', (d: Buffer) => {
      log += d.toString();
    });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools;
      expect(tools.map((t) => t.name).sort()).toEqual(
        [
          'case_history',
          'compare_cycles',
          'cycle_action',
          'cycle_gate',
          'cycle_summary',
          'failure_detail',
          'flaky_cases',
          'link_defect',
          'list_cycles',
          'list_failures',
          'quarantine_case',
          'quarantined_cases',
          'release_case',
          'requirement_coverage',
        ].sort(),
      );
      for (const t of tools) expect(t.outputSchema, t.name).toBeDefined();
      const failures = await client.callTool({ name: 'list_failures', arguments: { cycle: 'Nightly 2' } });
      const s = failures.structuredContent as { failures: Array<{ key: string; classification: string }> };
      expect(s.failures.map((f) => [f.key, f.classification])).toEqual([
        ['DEMO-3', 'known'],
        ['DEMO-4', 'known'],
      ]);
      // A page at a time: the cursor of one answer gives the next, and the pages add up to the whole.
      const page1 = await client.callTool({ name: 'list_failures', arguments: { cycle: 'Nightly 2', limit: 1 } });
      const p1 = page1.structuredContent as { failures: Array<{ key: string }>; next?: string };
      expect(p1.failures.map((f) => f.key)).toEqual(['DEMO-3']);
      const page2 = await client.callTool({
        name: 'list_failures',
        arguments: { cycle: 'Nightly 2', limit: 1, cursor: p1.next },
      });
      const p2 = page2.structuredContent as { failures: Array<{ key: string }>; next?: string };
      expect([p2.failures.map((f) => f.key), p2.next]).toEqual([['DEMO-4'], undefined]);

      const summary = await client.callTool({ name: 'cycle_summary', arguments: { cycle: 'Nightly 1' } });
      expect(summary.structuredContent).toMatchObject({ counts: { Failed: 2, Passed: 2 }, total: 4 });
      // The gate's verdict, as `casebridge gate` gives it: the known failures of the second cycle waived, or not.
      const gate = await client.callTool({ name: 'cycle_gate', arguments: { cycle: 'Nightly 2' } });
      expect(gate.structuredContent).toMatchObject({ pass: true, waived: 2, cycle: { name: 'Nightly 2' } });
      const strict = await client.callTool({ name: 'cycle_gate', arguments: { cycle: 'Nightly 2', strict: true } });
      const verdict = strict.structuredContent as { pass: boolean; rules: Array<Record<string, unknown>> };
      expect(verdict.pass).toBe(false);
      expect(verdict.rules[0]).toEqual({
        rule: 'new failures ≤ 0 (strict: known and quarantined count)',
        figure: expect.stringMatching(/^2 new: DEMO-3 \S.*, DEMO-4 \S/),
        pass: false,
      });
      const history = await client.callTool({ name: 'case_history', arguments: { key: 'DEMO-3', limit: 2 } });
      const h = history.structuredContent as {
        key: string;
        runs: Array<{ status: string; cycle: string }>;
        next?: string;
      };
      expect(h.runs.map((r) => [r.cycle, r.status])).toEqual([
        ['Nightly 3', 'Passed'],
        ['Nightly 2', 'Failed'],
      ]);
      const older = await client.callTool({
        name: 'case_history',
        arguments: { key: 'DEMO-3', limit: 2, cursor: h.next },
      });
      expect((older.structuredContent as typeof h).runs.map((r) => r.cycle)).toEqual(['Nightly 1']);
      const flaky = await client.callTool({ name: 'flaky_cases', arguments: {} });
      // DEMO-3's one flip is not flaky, as the reporters classify (the CLI's flaky says the same).
      expect((flaky.structuredContent as { cases: Array<{ key: string; flips: number }> }).cases).toEqual([]);
      expect(history.structuredContent).toMatchObject({ flips: 1, flaky: false });
      const cycles = await client.callTool({ name: 'list_cycles', arguments: { limit: 2 } });
      const c = cycles.structuredContent as { cycles: Array<{ name: string }>; next?: string };
      expect(c.cycles).toHaveLength(2);
      expect(c.next).toBeDefined();

      const writes = {
        link_defect: { run: 1, issue: 'DEMO-9' },
        quarantine_case: { key: 'DEMO-3', reason: 'flaky' },
        release_case: { key: 'DEMO-3' },
        cycle_action: { cycle: 'Nightly 1', action: 'complete' },
      };
      for (const [name, args] of Object.entries(writes)) {
        const write = await client.callTool({ name, arguments: args });
        expect(write.isError, name).toBe(true);
        expect(JSON.stringify(write.content), name).toContain('--allow-writes');
      }
      const bad = await client.callTool({ name: 'list_failures', arguments: { cycle: 'No such cycle' } });
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.content)).toContain('No such cycle');
      const badPlan = await client.callTool({ name: 'list_cycles', arguments: { plan: 'DEMO-999' } });
      expect(badPlan.isError).toBe(true);
      expect(JSON.stringify(badPlan.content)).toContain('DEMO-999');
      const badKey = await client.callTool({ name: 'case_history', arguments: { key: 'DEMO-999' } });
      expect(badKey.isError).toBe(true);
      const badCursor = await client.callTool({ name: 'flaky_cases', arguments: { cursor: 'x' } });
      expect(badCursor.isError).toBe(true);
      expect(JSON.stringify([failures, summary, gate, history, flaky, bad, badPlan, badKey])).not.toContain(TOKEN);
    } finally {
      await client.close();
    }
    expect(log).not.toContain(TOKEN);
  }, 60_000);

  it('with --allow-writes: quarantine_case makes the next Playwright run expect the failure; links, cycle moves', async () => {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: 'node',
        args: [CLI, 'mcp', '--allow-writes'],
        cwd: dir,
        env: { ...process.env, ...env() } as Record<string, string>,
      }),
    );
    try {
      const q = await client.callTool({
        name: 'quarantine_case',
        arguments: { key: 'DEMO-7', reason: 'loads slowly on CI', owner: 'admin', until: '2099-12-31' },
      });
      expect(q.isError, JSON.stringify(q.content)).toBeFalsy();
      expect(q.structuredContent).toMatchObject({ key: 'DEMO-7', owner: 'admin', until: '2099-12-31', expired: false });
      await indexed(emu);
      const listed = await client.callTool({ name: 'quarantined_cases', arguments: {} });
      expect((listed.structuredContent as { cases: Array<{ key: string }> }).cases.map((c) => c.key)).toContain(
        'DEMO-7',
      );

      // The reporters' own quarantine: Playwright 1.62+ runs DEMO-7 expected-to-fail, so its failure keeps exit 0.
      const pw = fixture('read-back-pw', {
        'playwright.config.mjs': `import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: 'tests', outputDir: 'test-results', workers: 1,
  reporter: [['line'], ['@casebridge/playwright', {}]] });
`,
        'tests/slow.spec.mjs': `import { test } from '@playwright/test';
test('DEMO-7 loads the list', () => { throw new Error('took 12 s'); });
`,
      });
      const out = await playwright(pw, ['test'], env({ CASEBRIDGE_CYCLE: 'Quarantined' }));
      expect(out.code, out.stdout + out.stderr).toBe(0);
      expect(out.stdout + out.stderr).toMatch(/1 test\(s\) ran expected to fail/);

      const failures = await client.callTool({ name: 'list_failures', arguments: { cycle: 'Quarantined' } });
      const f = (
        failures.structuredContent as { failures: Array<{ key: string; classification: string; run: number }> }
      ).failures;
      expect(f.map((x) => [x.key, x.classification])).toEqual([['DEMO-7', 'quarantined']]);
      // A quarantined failure is waived by the gate, unless --strict.
      const gate = await cli(['gate', '--cycle', 'Quarantined']);
      expect(gate.code, gate.stdout + gate.stderr).toBe(0);
      expect(gate.stdout).toContain('(1 known or quarantined failure(s) waived)');
      expect((await cli(['gate', '--cycle', 'Quarantined', '--strict'])).code).toBe(1);

      const bug = emu.store.issues.find((i) => i.type === 'Bug' && i.summary.includes('sign-out button'))?.key ?? '';
      const link = await client.callTool({ name: 'link_defect', arguments: { run: f[0]?.run, issue: bug } });
      expect(link.isError, JSON.stringify(link.content)).toBeFalsy();
      const run = emu.store.runs.find((r) => r.id === f[0]?.run);
      const linked = emu.store.bugLinks
        .filter((b) => b.runId === run?.id)
        .map((b) => emu.store.issues.get(b.issueId)?.key);
      expect(linked).toContain(bug);

      const released = await client.callTool({ name: 'release_case', arguments: { key: 'DEMO-7' } });
      expect(released.structuredContent).toEqual({ key: 'DEMO-7', removed: true });

      const moved = await client.callTool({
        name: 'cycle_action',
        arguments: { cycle: 'Quarantined', action: 'complete' },
      });
      expect(moved.structuredContent).toMatchObject({ cycle: 'Quarantined', status: 'Completed' });
    } finally {
      await client.close();
    }
  }, 120_000);

  it('over HTTP: answers the SDK client; refuses a foreign Origin or Host, and a wrong token', async () => {
    const secret = 'mcp-secret-for-test';
    const child = spawn('node', [CLI, 'mcp', '--http', '0', '--allow-writes'], {
      cwd: dir,
      env: { ...process.env, ...env({ CASEBRIDGE_MCP_TOKEN: secret }) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      const url = await new Promise<string>((done, fail) => {
        let err = '';
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err);
          if (m) done(m[1] as string);
        });
        child.once('exit', () => fail(new Error(err)));
      });
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${secret}` } },
        }),
      );
      expect((await client.listTools()).tools).toHaveLength(14);
      const cycles = await client.callTool({ name: 'list_cycles', arguments: {} });
      const names = (cycles.structuredContent as { cycles: Array<{ name: string }> }).cycles.map((c) => c.name);
      expect(names).toEqual(expect.arrayContaining(['Nightly 1', 'Nightly 2']));
      await client.close();

      const init = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      });
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${secret}`,
      };
      const post = (h: Record<string, string>) =>
        fetch(url, { method: 'POST', headers: { ...headers, ...h }, body: init });
      expect((await post({})).status).toBe(200);
      expect((await post({ origin: 'http://evil.example' })).status).toBe(403);
      expect((await post({ authorization: 'Bearer wrong' })).status).toBe(401);
      // A configuration with problems: exit 2 naming them, before anything listens (an assistant shows stderr).
      const unset = await run('node', [CLI, 'mcp'], dir, { CASEBRIDGE_TOKEN: TOKEN });
      expect(unset.code).toBe(2);
      expect(unset.stderr).toContain('url (CASEBRIDGE_URL): required');
      expect(unset.stderr).not.toContain(TOKEN);
      // Off loopback, a token is required before anything listens.
      const open = await run('node', [CLI, 'mcp', '--http', '0', '--host', '0.0.0.0'], dir, env());
      expect(open.code).toBe(2);
      expect(open.stderr).toContain('CASEBRIDGE_MCP_TOKEN');
      // A page on another site whose name now points here (DNS rebinding): the browser sends that name as Host.
      const rebound = await new Promise<number>((done, fail) => {
        const req = request(url, { method: 'POST', headers: { ...headers, host: 'evil.example' } }, (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        });
        req.on('error', fail);
        req.end(init);
      });
      expect(rebound).toBe(403);
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});
