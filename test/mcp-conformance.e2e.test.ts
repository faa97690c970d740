import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, run } from './support/runner.js';
import { reporterEnv, useEmulator } from './support/world.js';

/**
 * `casebridge mcp` against the MCP project's own tools (issue 39): the official conformance suite
 * (`@modelcontextprotocol/conformance`) runs its `server-initialize`, `ping`, `tools-list` and
 * `dns-rebinding-protection` scenarios against `casebridge mcp --http`, and the MCP Inspector's CLI mode lists the
 * tools over stdio. Both need Node 22+: they run under the npm package `node@24`, installed with them into a folder
 * of their own (test/.fixtures, ignored by git; kept between local runs, about 15 s to install on a fresh machine).
 */

const TOOLS = join(ROOT, 'test', '.fixtures', 'mcp-tools');
const NODE24 = join(TOOLS, 'node_modules', 'node', 'bin', 'node');
const CONFORMANCE = join(TOOLS, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const INSPECTOR = join(
  TOOLS,
  'node_modules',
  '@modelcontextprotocol',
  'inspector',
  'clients',
  'launcher',
  'build',
  'index.js',
);
const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const PINNED = ['node@24', '@modelcontextprotocol/conformance@0.1.16', '@modelcontextprotocol/inspector@2.12.0'];

const world = useEmulator({ reset: false });
let emu: RunningEmulator;
let server: ChildProcess | undefined;
let url = '';

beforeAll(async () => {
  emu = world();
  if (![NODE24, CONFORMANCE, INSPECTOR].every(existsSync)) {
    mkdirSync(TOOLS, { recursive: true });
    writeFileSync(join(TOOLS, 'package.json'), '{ "name": "casebridge-mcp-tools", "private": true }\n');
    const out = await run('npm', ['install', '--no-audit', '--no-fund', ...PINNED], TOOLS, {}, 300_000);
    expect(out.code, out.stdout + out.stderr).toBe(0);
  }
  server = spawn('node', [CLI, 'mcp', '--http', '0'], {
    cwd: TOOLS,
    env: { ...process.env, ...reporterEnv(emu, { CASEBRIDGE_TEST_PLAN: 'DEMO-1' }) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  url = await new Promise<string>((done, fail) => {
    let err = '';
    server?.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err);
      if (m) done(m[1] as string);
    });
    server?.once('exit', () => fail(new Error(err)));
  });
}, 360_000);

afterAll(() => {
  server?.kill('SIGTERM');
});

describe('casebridge mcp and the MCP project’s tools', () => {
  for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) {
    it(`conformance: ${scenario}`, async () => {
      const out = await run(NODE24, [CONFORMANCE, 'server', '--url', url, '--scenario', scenario], TOOLS, {}, 120_000);
      expect(out.code, out.stdout + out.stderr).toBe(0);
      expect(out.stdout).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    }, 120_000);
  }

  it('the Inspector’s CLI lists the tools over stdio', async () => {
    const env = reporterEnv(emu);
    const pass = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const out = await run(NODE24, [INSPECTOR, '--cli', ...pass, 'node', CLI, 'mcp', '--method', 'tools/list'], TOOLS);
    expect(out.code, out.stdout + out.stderr).toBe(0);
    const tools = (JSON.parse(out.stdout) as { tools: Array<{ name: string; outputSchema?: unknown }> }).tools;
    expect(tools.map((t) => t.name)).toContain('list_failures');
    expect(tools.every((t) => t.outputSchema !== undefined)).toBe(true);
  }, 120_000);
});
