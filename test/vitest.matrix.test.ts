import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matrixProject, writeFiles } from './support/matrix.js';
import { hasChromium, run } from './support/runner.js';
import { adhocState, cycleState, defects } from './support/state.js';
import { expected, VITEST_FILES } from './support/vitest.js';

/**
 * The Vitest version matrix: 3.2, 4.1 and 5.1, each installed from the registry into its own fixture with our
 * packed tarballs, run for real against the emulator. Vitest 5 needs Node 22.12 or later: its fixture installs the
 * npm package `node` and runs Vitest with that binary.
 */

const VERSIONS: { vitest: string; node?: string }[] = [
  { vitest: '3.2.4' },
  { vitest: '4.1.12' },
  { vitest: '5.1.1', node: '24.9.0' },
];

let emu: RunningEmulator;
const dirs = new Map<string, Promise<string>>();

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  // Installs in parallel (network-bound; reused when unchanged); each test awaits its own.
  for (const v of VERSIONS) {
    dirs.set(
      v.vitest,
      matrixProject({
        name: `matrix-vitest-${v.vitest}`,
        dependencies: { vitest: v.vitest, ...(v.node ? { node: v.node } : {}) },
        casebridge: ['vitest'],
        packageJson: { type: 'module', ...(v.node ? { allowScripts: { node: true } } : {}) },
      }),
    );
  }
  if (hasChromium) {
    dirs.set(
      'browser',
      matrixProject({
        name: 'matrix-vitest-browser-4.1.12',
        dependencies: { vitest: '4.1.12', '@vitest/browser-playwright': '4.1.12' },
        casebridge: ['vitest'],
        packageJson: { type: 'module' },
      }),
    );
  }
  // Keep a failed install from surfacing as an unhandled rejection before its test awaits it.
  for (const p of dirs.values()) p.catch(() => undefined);
}, 600_000);

afterAll(async () => {
  await emu?.close();
});

describe('Vitest version matrix', () => {
  for (const v of VERSIONS) {
    it(`Vitest ${v.vitest}${v.node ? ` on Node ${v.node}` : ''}: the fixture's cycle as with the workspace's Vitest`, async () => {
      const dir = await (dirs.get(v.vitest) as Promise<string>);
      writeFiles(dir, VITEST_FILES);
      const nodeBin = v.node ? join(dir, 'node_modules', '.bin', 'node') : process.execPath;
      expect(existsSync(nodeBin), `${nodeBin} installed`).toBe(true);
      const cycle = `CI matrix vitest ${v.vitest}`;
      const out = await run(nodeBin, [join(dir, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], dir, {
        CASEBRIDGE_URL: emu.url,
        CASEBRIDGE_TOKEN: 'casebridge-dev-token',
        CASEBRIDGE_PROJECT: 'DEMO',
        CASEBRIDGE_MODE: 'cycle',
        CASEBRIDGE_TEST_PLAN: 'DEMO-1',
        CASEBRIDGE_CYCLE: cycle,
      });
      const text = out.stdout + out.stderr;
      if (v.node) expect(text).not.toMatch(/Unsupported engine|requires Node/i);
      expect(out.code, text).toBe(1);
      expect(text).toContain(`cycle "${cycle}"`);
      expect(text, 'no reporter error reaches Vitest').not.toMatch(/Unhandled Reporter Error|Vitest reporter failed/);
      expected(cycleState(emu, cycle));
      expect(defects(emu).length).toBeGreaterThanOrEqual(1);
    }, 600_000);
  }
});

/** Browser mode (4.1, Playwright provider, the system's Chromium): the failure screenshot becomes a run attachment. */
const BROWSER_CONFIG = `
import { defineConfig } from 'vitest/config';
import { playwright } from '@vitest/browser-playwright';
export default defineConfig({
  test: {
    include: ['browser/**/*.spec.ts'],
    browser: {
      enabled: true,
      headless: true,
      screenshotFailures: true,
      provider: playwright({
        launchOptions: { executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] },
      }),
      instances: [{ browser: 'chromium' }],
    },
    reporters: ['default', ['@casebridge/vitest', { mode: 'adhoc' }]],
  },
});
`;

const BROWSER_SPEC = `
import { expect, test } from 'vitest';

test('DEMO-6 profile shows the user name', async ({ annotate }) => {
  await annotate('DEMO-7', 'testCase');
  document.body.innerHTML = '<h1>Hello, Tess</h1>';
  expect(document.querySelector('h1')?.textContent).toBe('Hello, Admin');
});
`;

describe.runIf(hasChromium)('Vitest browser mode', () => {
  it('Vitest 4.1 with Chromium: the failure screenshot arrives byte-identical', async () => {
    await emu.reset();
    const dir = await (dirs.get('browser') as Promise<string>);
    writeFiles(dir, { 'vitest.config.mjs': BROWSER_CONFIG, 'browser/page.spec.ts': BROWSER_SPEC });
    const out = await run(process.execPath, [join(dir, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], dir, {
      CASEBRIDGE_URL: emu.url,
      CASEBRIDGE_TOKEN: 'casebridge-dev-token',
      CASEBRIDGE_PROJECT: 'DEMO',
    });
    const text = out.stdout + out.stderr;
    expect(out.code, text).toBe(1);
    const shots = readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.png') && !f.startsWith('node_modules'));
    // Vitest keeps the screenshot under __screenshots__ and copies it into its attachments folder: one content.
    const hashes = new Set(
      shots.map((f) =>
        createHash('sha256')
          .update(readFileSync(join(dir, f)))
          .digest('hex'),
      ),
    );
    expect([...hashes], text).toHaveLength(1);
    const sha = [...hashes][0];
    const state = adhocState(emu);
    expect(state.map((r) => [r.key, r.status])).toEqual([
      ['DEMO-6', 'Failed'],
      ['DEMO-7', 'Failed'],
    ]);
    for (const r of state) expect(r.files).toEqual([sha]);
  }, 600_000);
});
