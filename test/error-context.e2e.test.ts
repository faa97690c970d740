import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixture, hasChromium, playwright } from './support/runner.js';
import { reporterEnv, useEmulator } from './support/world.js';

/**
 * Playwright's failure context (issue 39, point 5): the real `playwright test` opens a page with the Debian chromium
 * and fails an expect on it; Playwright writes `error-context.md` (the page's ARIA snapshot at the failure). The
 * reporter, in cycle mode against the real emulator over real HTTP, uploads it with the run's screenshot under the
 * default attachment policy (screenshots on failure only) and names it in the run comment; a config that asks for no
 * files leaves it out, and the size cap applies to it as to any file.
 */

const world = useEmulator();
let emu: RunningEmulator;
beforeAll(() => {
  emu = world();
});

const config = (attachments: Record<string, unknown>) => `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  reporter: [['line'], ['@casebridge/playwright', { attachments: ${JSON.stringify(attachments)} }]],
  use: {
    screenshot: 'only-on-failure',
    launchOptions: { executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] },
  },
});`;

const SPEC = `
import { expect, test } from '@playwright/test';
test('DEMO-6 profile shows the user name', async ({ page }) => {
  await page.setContent('<h1>Hello, Tess</h1><button>Sign out</button>');
  await expect(page.locator('h1')).toHaveText('Hello, Admin', { timeout: 500 });
});`;

/** Runs the fixture into its own cycle; returns the run of DEMO-6 with its files and what Playwright wrote. */
async function runWith(name: string, attachments: Record<string, unknown>) {
  const dir = fixture(name, { 'playwright.config.mjs': config(attachments), 'tests/page.spec.ts': SPEC });
  const cycle = `CI ${name}`;
  const out = await playwright(dir, ['test'], {
    ...reporterEnv(emu, { CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000' }),
    CASEBRIDGE_MODE: 'cycle',
    CASEBRIDGE_TEST_PLAN: 'DEMO-1',
    CASEBRIDGE_CYCLE: cycle,
  });
  const text = out.stdout + out.stderr;
  expect(out.code, text).toBe(1);
  expect(existsSync(join(dir, 'test-results')), text).toBe(true);
  const written = readdirSync(join(dir, 'test-results'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('error-context.md'));
  expect(written, 'Playwright wrote one error-context.md').toHaveLength(1);
  const bytes = readFileSync(join(dir, 'test-results', written[0] as string));
  const s = emu.store;
  const cycleId = s.cycles.find((c) => c.name === cycle)?.id;
  const caseId = s.issues.find((i) => i.key === 'DEMO-6')?.id;
  const runs = s.runs.filter((r) => r.cycleId === cycleId && r.tcId === caseId);
  expect(runs, text).toHaveLength(1);
  const run = runs[0] as (typeof runs)[number];
  const files = s.attachments.filter((a) => a.runId === run.id);
  return { run, files, bytes, text };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.runIf(hasChromium)('Playwright error-context.md', () => {
  it('goes with the screenshot under the default policy, byte for byte, named in the comment', async () => {
    const { run, files, bytes } = await runWith('pw-error-context', {});
    expect(bytes.toString('utf8'), 'the page state at the failure').toContain('heading "Hello, Tess"');
    expect(run.status).toBe('Failed');
    expect(files.map((f) => f.fileName).sort()).toEqual(['error-context.md', 'screenshot.png']);
    const context = files.find((f) => f.fileName === 'error-context.md');
    expect(context?.sha256).toBe(sha256(bytes));
    expect(context?.runStepId).toBeNull();
    expect(run.comment).toContain('Page state at the failure: error-context.md (attached)');
  });

  it('is left out when the config asks for no files, and named but not sent when over the size cap', async () => {
    const [none, capped] = await Promise.all([
      runWith('pw-error-context-none', { screenshots: 'off' }),
      runWith('pw-error-context-cap', { maxBytes: 64 }),
    ]);
    expect(none.files).toEqual([]);
    expect(none.run.comment ?? '').not.toContain('error-context.md'); // (the fixture's folder is named so)
    // The screenshot is over 64 bytes too: nothing is uploaded, both are named.
    expect(capped.files).toEqual([]);
    expect(capped.run.comment).toMatch(
      /^Page state at the failure: error-context\.md not uploaded: 0\.0 MB is over attachments\.maxBytes/m,
    );
  });
});
