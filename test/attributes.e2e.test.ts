import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixture, playwright } from './support/runner.js';
import { serviceRequests } from './support/state.js';

/**
 * Run attributes (issue 27, point 2) with real Playwright against the real emulator (its realistic profile) over real
 * HTTP: one test in a `chromium` and a `firefox` project (no browser is launched: the tests use no page, so the second
 * project stands in for firefox where none is installed) with `attributes: { Browser: '${project}' }` is one case with
 * two runs in an advanced cycle, each with its project's status. A second run reuses them. A project whose name the
 * synapseRT project does not define as a Browser value is named once, and its result waits in the journal until the
 * value is defined.
 */

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});
beforeEach(async () => {
  await emu.reset();
  // The synapseRT project's Browser attribute as an administrator set it up for these projects.
  browserValues(['chromium', 'firefox']);
});

/** Sets the values of project DEMO's run attribute Browser, as an administrator does in the project's settings. */
function browserValues(values: string[]): void {
  const attr = emu.store.runAttributes.find((a) => a.name === 'Browser');
  if (!attr) throw new Error('the seed has no Browser attribute');
  emu.store.runAttributes.update({ ...attr, values });
}

const CYCLE = 'CI browsers';
const env = () => ({
  CASEBRIDGE_URL: emu.url,
  CASEBRIDGE_TOKEN: 'casebridge-dev-token',
  CASEBRIDGE_PROJECT: 'DEMO',
  CASEBRIDGE_MODE: 'cycle',
  CASEBRIDGE_TEST_PLAN: 'DEMO-1',
  CASEBRIDGE_CYCLE: CYCLE,
  CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
});

const config = (projects: string[]) => `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  workers: 1,
  projects: ${JSON.stringify(projects.map((name) => ({ name })))},
  reporter: [['line'], ['@casebridge/playwright', { attributes: { Browser: '\${project}' } }]],
});
`;

/** DEMO-2 fails in the projects named in FAIL_IN (comma-separated), passes elsewhere. */
const SPEC = `import { expect, test } from '@playwright/test';
test('DEMO-2 login works', async ({}, info) => {
  const failIn = (process.env.FAIL_IN ?? '').split(',');
  expect(failIn.includes(info.project.name), 'the login page in ' + info.project.name).toBe(false);
});
`;

/** `Browser status` of each run of DEMO-2 in the cycle, sorted; with the run ids. */
function runsOfDemo2() {
  const cycle = emu.store.cycles.find((c) => c.name === CYCLE);
  const tc = emu.store.issues.find((i) => i.key === 'DEMO-2');
  const runs = emu.store.runs.filter((r) => r.cycleId === cycle?.id && r.tcId === tc?.id);
  return {
    advanced: cycle?.advanced,
    statuses: runs.map((r) => `${r.attributes?.Browser ?? '-'} ${r.status}`).sort(),
    ids: runs.map((r) => r.id).sort((a, b) => a - b),
  };
}

const created = () => serviceRequests(emu).filter((r) => r.op === 'cycles.createTestRuns').length;

describe('run attributes with real Playwright', () => {
  it('one case in two projects: two runs with their own statuses; a second run reuses them', async () => {
    const dir = fixture('attributes-pw', {
      'playwright.config.mjs': config(['chromium', 'firefox']),
      'tests/a.spec.ts': SPEC,
    });
    const first = await playwright(dir, ['test'], { ...env(), FAIL_IN: 'firefox' });
    const text = first.stdout + first.stderr;
    expect(first.code, text).toBe(1);
    const one = runsOfDemo2();
    expect(one.advanced).toBe(true);
    expect(one.statuses, text).toEqual(['chromium Passed', 'firefox Failed']);
    // The two results come one project after the other (one worker), seconds apart: the runs of both projects were
    // created from the plan at the start, in one createTestRuns for the whole run (it was one per project before).
    const firstCreates = created();
    expect(firstCreates, text).toBe(1);
    // The failure's comment is on the firefox run only.
    const firefox = emu.store.runs.get(one.ids[1] as number);
    const failed = firefox?.attributes?.Browser === 'firefox' ? firefox : emu.store.runs.get(one.ids[0] as number);
    expect(failed?.comment).toContain('the login page in firefox');

    // The next run: chromium fails, firefox passes. The same two runs, no run created.
    const second = await playwright(dir, ['test'], { ...env(), FAIL_IN: 'chromium' });
    expect(second.code, second.stdout + second.stderr).toBe(1);
    const two = runsOfDemo2();
    expect(two.ids).toEqual(one.ids);
    expect(two.statuses).toEqual(['chromium Failed', 'firefox Passed']);
    expect(created()).toBe(firstCreates);
    expect(emu.store.runs.filter((r) => r.cycleId === emu.store.cycles.find((c) => c.name === CYCLE)?.id)).toHaveLength(
      2,
    );
  }, 180_000);

  it('a project whose name is no Browser value is named once; its result waits and is delivered once defined', async () => {
    const dir = fixture('attributes-pw-webkit', {
      'playwright.config.mjs': config(['chromium', 'firefox', 'webkit']),
      'tests/a.spec.ts': SPEC,
      'tests/b.spec.ts': `import { test } from '@playwright/test';
test('DEMO-3 cart works', async () => {});
`,
    });
    const first = await playwright(dir, ['test'], { ...env(), FAIL_IN: 'webkit' });
    const text = first.stdout + first.stderr;
    expect(first.code, text).toBe(1);
    // Named once for its two results (DEMO-2 and DEMO-3 in webkit), with where to define it.
    expect(text.split('Browser "webkit"').length - 1, text).toBe(1);
    expect(text).toContain('Run Attributes');
    expect(text).toMatch(/2 result\(s\) not delivered: kept in/);
    expect(runsOfDemo2().statuses).toEqual(['chromium Passed', 'firefox Passed']);

    // The administrator adds webkit; the next run delivers the journal first: nothing was lost.
    browserValues(['chromium', 'firefox', 'webkit']);
    const second = await playwright(dir, ['test'], { ...env(), FAIL_IN: 'webkit' });
    const text2 = second.stdout + second.stderr;
    expect(second.code, text2).toBe(1);
    expect(text2).not.toContain('Browser "webkit"');
    expect(text2).not.toContain('not delivered');
    expect(runsOfDemo2().statuses, text2).toEqual(['chromium Passed', 'firefox Passed', 'webkit Failed']);
    const webkit = emu.store.runs.filter((r) => r.attributes?.Browser === 'webkit');
    expect(webkit.map((r) => `${emu.store.issues.get(r.tcId)?.key} ${r.status}`).sort()).toEqual([
      'DEMO-2 Failed',
      'DEMO-3 Passed',
    ]);
  }, 240_000);
});
