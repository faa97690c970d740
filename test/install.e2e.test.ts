import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packs } from './support/matrix.js';
import { closedPort, ROOT, run } from './support/runner.js';
import { adhocState } from './support/state.js';

/**
 * A user's install: our packed tarballs and the runners from the registry in a scratch project outside the
 * repository (nothing resolves from the repository's node_modules), used the way the README tells a user to:
 * the reporter from a config file typed with the exported helper, the printed replay command, the CLI's commands,
 * and the CLI without the emulator.
 */

const SCRATCH = mkdtempSync(join(tmpdir(), 'cb-install-'));
const npx = (args: string[], env: Record<string, string> = {}) =>
  run('npx', ['--offline', ...args], SCRATCH, { npm_config_update_notifier: 'false', ...env });

let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  const tarballs = await packs();
  const pkg = {
    name: 'scratch-user-project',
    private: true,
    version: '0.0.0',
    type: 'commonjs',
    devDependencies: {
      jest: '30.5.2',
      typescript: '5.9.3',
      '@casebridge/jest': `file:${tarballs.jest}`,
      '@casebridge/vitest': `file:${tarballs.vitest}`,
      '@casebridge/playwright': `file:${tarballs.playwright}`,
      '@casebridge/cli': `file:${tarballs.cli}`,
      '@casebridge/core': `file:${tarballs.core}`,
    },
    overrides: { '@casebridge/core': `file:${tarballs.core}` },
  };
  writeFileSync(join(SCRATCH, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  const out = await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--install-links', '--loglevel=error'],
    SCRATCH,
    { npm_config_update_notifier: 'false', npm_config_workspaces: 'false' },
    600_000,
  );
  if (out.code !== 0) throw new Error(`npm install failed:\n${out.stdout}\n${out.stderr}`);
}, 600_000);

afterAll(async () => {
  await emu?.close();
  rmSync(SCRATCH, { recursive: true, force: true });
});

describe("a user's install from the tarballs", () => {
  it('brings no native module, no emulator and no package both bundled and depended on', () => {
    const modules = readdirSync(join(SCRATCH, 'node_modules'));
    expect(modules).not.toContain('better-sqlite3');
    expect(modules).not.toContain('swagger-ui-dist');
    expect(existsSync(join(SCRATCH, 'node_modules', '@casebridge', 'emulator'))).toBe(false);
    // p-queue and zod are bundled into the core: they must not be installed beside it as well (typescript, the
    // only other package of this project, depends on neither).
    expect(modules).not.toContain('p-queue');
    expect(modules).not.toContain('zod');
    for (const p of ['core', 'cli', 'jest', 'vitest', 'playwright']) {
      expect(existsSync(join(SCRATCH, 'node_modules', '@casebridge', p, 'LICENSE')), `${p} LICENSE`).toBe(true);
    }
  });

  it('every package publishes without npm correcting it, with its licence and README', async () => {
    for (const p of ['core', 'cli', 'emulator', 'playwright', 'vitest', 'jest']) {
      const out = await run('npm', ['publish', '--dry-run', '--json'], join(ROOT, 'packages', p), {
        npm_config_update_notifier: 'false',
      });
      expect(out.stderr, p).not.toMatch(/auto-corrected|invalid and removed/);
      // npm 11 keys the report by package name; npm 10 gives the report itself.
      const report = JSON.parse(out.stdout.slice(out.stdout.indexOf('{'))) as Record<string, unknown>;
      const entry = (report.files ? report : Object.values(report)[0]) as { files: { path: string }[] };
      const files = entry.files;
      expect(files.map((f) => f.path)).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
    }
  });

  it('types a config with the exported CasebridgeOptions and defineCasebridgeConfig (url and project optional)', async () => {
    writeFileSync(
      join(SCRATCH, 'typed.ts'),
      `import type { CasebridgeOptions } from '@casebridge/playwright';
import { defineCasebridgeConfig } from '@casebridge/vitest';
import type { CasebridgeOptions as JestOptions } from '@casebridge/jest';

export const pw: CasebridgeOptions = { testPlan: 'PROJ-1', mode: 'cycle' };
export const vt = defineCasebridgeConfig({ projectKey: 'PROJ', defects: { enabled: false } });
export const jt: JestOptions = { url: 'https://jira.example.com' };
// @ts-expect-error: not an option
export const wrong: CasebridgeOptions = { projectKeys: 'PROJ' };
`,
    );
    const tsc = await run(
      process.execPath,
      [
        join(SCRATCH, 'node_modules', 'typescript', 'bin', 'tsc'),
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--skipLibCheck',
        'false',
        '--types',
        'node',
        'typed.ts',
      ],
      SCRATCH,
    );
    // @types/node comes with jest's dependencies.
    expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0);
  });

  it('reports from casebridge.config.mjs; the replay command it prints delivers what an outage left behind', async () => {
    writeFileSync(
      join(SCRATCH, 'casebridge.config.mjs'),
      `import { defineCasebridgeConfig } from '@casebridge/jest';
export default defineCasebridgeConfig({ projectKey: 'DEMO', flushTimeoutMs: 1500 });
`,
    );
    writeFileSync(
      join(SCRATCH, 'jest.config.js'),
      "module.exports = { testMatch: ['**/tests/*.test.js'], reporters: ['default', '@casebridge/jest'] };\n",
    );
    mkdirSync(join(SCRATCH, 'tests'), { recursive: true });
    writeFileSync(
      join(SCRATCH, 'tests', 'shop.test.js'),
      "test('DEMO-2 logs in', () => {});\ntest('[DEMO-4] search finds the teapot', () => {});\n",
    );
    const token = { CASEBRIDGE_TOKEN: 'casebridge-dev-token' };
    const down = await npx(['jest', '--ci'], { ...token, CASEBRIDGE_URL: `http://127.0.0.1:${await closedPort()}` });
    expect(down.code, down.stderr).toBe(0);
    const printed = /deliver them now with `([^`]+)`/.exec(down.stderr)?.[1];
    expect(printed, down.stderr).toBe('npx @casebridge/cli replay');

    const replay = await npx([...(printed as string).split(' ').slice(1)], { ...token, CASEBRIDGE_URL: emu.url });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect(adhocState(emu).map((r) => [r.key, r.status])).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-4', 'Passed'],
    ]);
  });

  it('the CLI says how to get the emulator; with it, demo runs its own tiny suite with the installed runner', async () => {
    const help = await npx(['@casebridge/cli', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/init \[dir\]/);
    const missing = await npx(['@casebridge/cli', 'emulator', '--port', '0']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('the emulator is not installed');
    expect(missing.stderr).toContain('npm i -D @casebridge/emulator');
    // The MCP SDK is an optional peer too (about 75 packages): `mcp` says how to get it, the rest runs without it.
    expect(readdirSync(join(SCRATCH, 'node_modules'))).not.toContain('@modelcontextprotocol');
    const mcp = await npx(['@casebridge/cli', 'mcp'], {
      CASEBRIDGE_URL: 'http://127.0.0.1:9',
      CASEBRIDGE_PROJECT: 'P',
    });
    expect(mcp.code, mcp.stderr).toBe(1);
    expect(mcp.stderr).toContain('npm i -D @modelcontextprotocol/sdk');

    // The emulator as installed beside the CLI (linked: its native module is built once, in the repository).
    symlinkSync(join(ROOT, 'packages', 'emulator'), join(SCRATCH, 'node_modules', '@casebridge', 'emulator'), 'dir');
    try {
      const demo = await npx(['@casebridge/cli', 'demo', '--port', '0']);
      const text = demo.stdout + demo.stderr;
      expect(demo.code, text).toBe(0);
      expect(text).toContain('running .casebridge/demo/jest (jest)');
      const row = text.split('\n').find((l) => /^jest\s+Demo jest/.test(l));
      // runner, cycle, id, runs, passed, failed, ...: two passing tests and one failing on purpose.
      expect((row ?? '').split(/\s{2,}/).slice(3, 6), text).toEqual(['3', '2', '1']);
      expect(text).not.toMatch(/example suites/);
    } finally {
      rmSync(join(SCRATCH, 'node_modules', '@casebridge', 'emulator'));
    }
  });

  it('from a project with a test suite to results in the service: init, then the tests', async () => {
    const dir = join(SCRATCH, 'fresh');
    mkdirSync(join(dir, 'tests'), { recursive: true });
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'fresh', private: true, devDependencies: { jest: '30.5.2' } }),
    );
    writeFileSync(join(dir, 'tests', 'cart.test.js'), "test('DEMO-5 pays with the saved card', () => {});\n");
    const init = await npx(['@casebridge/cli', 'init', 'fresh', '--url', emu.url, '--project', 'DEMO']);
    expect(init.code, init.stdout + init.stderr).toBe(0);
    expect(init.stdout).toContain('+++ fresh/package.json');
    expect(init.stdout).toContain('npx jest');
    const tests = await run('npx', ['--offline', 'jest', '--ci'], dir, { CASEBRIDGE_TOKEN: 'casebridge-dev-token' });
    expect(tests.code, tests.stderr).toBe(0);
    expect(
      adhocState(emu)
        .filter((r) => r.key === 'DEMO-5')
        .map((r) => r.status),
    ).toEqual(['Passed']);
  });
});
