import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { closedPort, ROOT, run } from './support/runner.js';

/** `casebridge doctor` and `casebridge cycle`, built, against the real emulator. */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const TOKEN = 'casebridge-dev-token';

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

const env = (extra: Record<string, string> = {}) => ({
  CASEBRIDGE_URL: emu.url,
  CASEBRIDGE_TOKEN: TOKEN,
  CASEBRIDGE_PROJECT: 'DEMO',
  CASEBRIDGE_MODE: 'cycle',
  CASEBRIDGE_TEST_PLAN: 'DEMO-1',
  ...extra,
});
const cli = (args: string[], extra: Record<string, string> = {}, cwd = ROOT) =>
  run(process.execPath, [CLI, ...args], cwd, env(extra));

describe('casebridge doctor', () => {
  it('all checks pass: ✓ per check, exit 0, no colour off a terminal', async () => {
    const out = await cli(['doctor'], { CASEBRIDGE_CYCLE: 'CI ${BUILD_ID}', BUILD_ID: '41' });
    expect(out.code, out.stdout + out.stderr).toBe(0);
    for (const check of ['config', 'proxy', 'credentials', 'clock', 'project', 'test plan', 'cycle', 'mapping file']) {
      expect(out.stdout).toMatch(new RegExp(`^✓ ${check} `, 'm'));
    }
    expect(out.stdout).toContain('"CI 41" does not exist yet');
    expect(out.stdout).toContain('All checks passed.');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for ANSI escapes.
    expect(out.stdout).not.toMatch(/\u001b\[/);
    const forced = await cli(['doctor'], { FORCE_COLOR: '1' });
    expect(forced.stdout).toContain('\u001b[32m✓\u001b[0m');
    const noColor = await cli(['doctor'], { FORCE_COLOR: '1', NO_COLOR: '1' });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for ANSI escapes.
    expect(noColor.stdout).not.toMatch(/\u001b\[/);
  });

  it('wrong credentials: ✗ with the fix, exit 1, the token never printed', async () => {
    const secret = 'not-the-right-token-8c1f';
    const out = await cli(['doctor'], { CASEBRIDGE_TOKEN: secret });
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/^✗ credentials +the service refused the credentials \(HTTP 401\)/m);
    expect(out.stdout).toContain('fix: check the token (CASEBRIDGE_TOKEN)');
    expect(out.stdout + out.stderr).not.toContain(secret);
  });

  it('a missing plan and a bad mapping file: each a ✗ with its fix; --json gives the same checks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-doctor-'));
    writeFileSync(join(dir, 'casebridge.keys.json'), '{"a.spec.ts > x": "nope"}');
    const out = await cli(['doctor', dir, '--json'], { CASEBRIDGE_TEST_PLAN: 'DEMO-404' });
    expect(out.code).toBe(1);
    const report = JSON.parse(out.stdout) as {
      ok: boolean;
      checks: Array<{ name: string; ok: boolean; fix?: string }>;
    };
    expect(report.ok).toBe(false);
    const failed = report.checks.filter((c) => !c.ok).map((c) => [c.name, c.fix]);
    expect(failed).toEqual([
      ['test plan', 'check testPlan (CASEBRIDGE_TEST_PLAN): the key of an issue of type Test Plan'],
      ['mapping file', 'correct casebridge.keys.json'],
    ]);
  });

  it('a service that is not there, and a config with problems', async () => {
    const down = await cli(['doctor'], { CASEBRIDGE_URL: `http://127.0.0.1:${await closedPort()}` });
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/✗ credentials +cannot reach http:\/\/127\.0\.0\.1:\d+/);
    expect(down.stdout).toContain('fix: check the URL (CASEBRIDGE_URL)');
    const bad = await cli(['doctor'], { CASEBRIDGE_MODE: 'sideways' });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/✗ config .*mode/);
  });
});

describe('casebridge cycle', () => {
  it('start from three jobs at once: one cycle, started, the same id printed by each', async () => {
    const name = 'CI fan-out 9';
    const outs = await Promise.all([1, 2, 3].map(() => cli(['cycle', 'start', '--name', name])));
    for (const o of outs) expect(o.code, o.stderr).toBe(0);
    const ids = new Set(outs.map((o) => o.stdout.trim()));
    expect(ids.size).toBe(1);
    const cycles = emu.store.cycles.filter((c) => c.name === name);
    expect(cycles).toHaveLength(1);
    expect(String(cycles[0]?.id)).toBe([...ids][0]);
    expect(cycles[0]?.status).toBe('Active');
    expect(outs.filter((o) => o.stderr.includes('(created now)'))).toHaveLength(1);
  });

  it('complete is idempotent, abort of a completed cycle is refused with the reason, resume reopens it', async () => {
    const name = 'CI lifecycle';
    expect((await cli(['cycle', 'create', '--name', name])).code).toBe(0);
    expect(emu.store.cycles.find((c) => c.name === name)?.status).toBe('Draft');
    const early = await cli(['cycle', 'complete', '--name', name]);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('is Draft: complete applies only to Active cycles (start it first)');
    expect((await cli(['cycle', 'start', '--name', name])).code).toBe(0);
    const done = await Promise.all([1, 2].map(() => cli(['cycle', 'complete', '--name', name, '--json'])));
    for (const d of done) {
      expect(d.code, d.stderr).toBe(0);
      expect(JSON.parse(d.stdout)).toMatchObject({ name, plan: 'DEMO-1', status: 'Completed' });
    }
    const abort = await cli(['cycle', 'abort', '--name', name]);
    expect(abort.code).toBe(1);
    expect(abort.stderr).toContain('is Completed: abort applies only to Active cycles');
    expect((await cli(['cycle', 'resume', '--name', name])).code).toBe(0);
    expect(emu.store.cycles.find((c) => c.name === name)?.status).toBe('Active');
    const missing = await cli(['cycle', 'complete', '--name', 'CI never made']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('has no cycle "CI never made": create or start it first');
  });

  it('usage errors exit 2; every command has --help with examples', async () => {
    const wrong = await cli(['cycle', 'finish']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('expected one of create, start, complete, abort, resume, keys, got finish');
    const option = await cli(['doctor', '--frobnicate']);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("Unknown option '--frobnicate'");
    for (const command of ['demo', 'replay', 'doctor', 'cycle', 'sync', 'junit']) {
      const help = await cli([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: casebridge ${command}[\\s\\S]*Example`));
    }
  });
});

describe('casebridge emulator', () => {
  it('starts the emulator with the options given (--port, --seed, --variant, --data), and stops on SIGTERM', async () => {
    const data = mkdtempSync(join(tmpdir(), 'cb-emu-data-'));
    const child = spawn(
      process.execPath,
      [CLI, 'emulator', '--port', '0', '--variant', 'ID', '--seed', 'demo', '--data', data],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const deadline = Date.now() + 30_000;
    while (!/listening on (http:\/\/\S+)/.test(out) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
    expect(url, out).toBeDefined();
    // The ID variant: identifiers spelled `ID` in answers.
    const res = await fetch(`${url}/rest/synapse/latest/public/testPlan/DEMO-1/addCycle`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'from the CLI' }),
    });
    expect(res.status).toBeLessThan(300);
    const cycles = (await (
      await fetch(`${url}/rest/synapse/latest/public/testPlan/DEMO-1/cycles`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
    ).json()) as Array<Record<string, unknown>>;
    expect(cycles.map((c) => c.name)).toContain('from the CLI');
    expect(cycles[0]).toHaveProperty('ID');
    const exited = new Promise((done) => child.on('exit', done));
    child.kill('SIGTERM');
    await exited;
    expect(readdirSync(data).length, 'state kept on disk with --data').toBeGreaterThan(0);
  });
});
