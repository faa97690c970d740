import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixture, playwright } from './support/runner.js';
import { cycleState } from './support/state.js';
import { reporterEnv, useEmulator } from './support/world.js';

/**
 * A first Playwright run of keyless tests (issue 38, point 4): Playwright names every test at begin, so casebridge
 * finds or creates their cases while the tests run (CaseRegistry.plan), not as their results come in. The proof is a
 * test that runs first, alone in its worker, and passes only once every planned test's case is in Jira's search: no
 * result but its own can have reached the reporter by then.
 *
 * Around it: a test with steps (its case gets them from its result: a case made at begin has none), and a keyless
 * test that names its case at runtime (`caseKey`): the case made for it at begin is closed as a duplicate of that
 * key and stays out of the mapping file.
 */

const world = useEmulator();
let emu: RunningEmulator;
beforeAll(() => {
  emu = world();
});

/** The first test: it waits, polling Jira's search as a person would, until the project holds `CB_WANT` cases. */
const HOLD = `import { test, expect } from '@playwright/test';
test('waits for every planned case', async () => {
  test.setTimeout(30_000);
  const jql = encodeURIComponent('project = DEMO AND issuetype = "Test Case"');
  const want = Number(process.env.CB_WANT);
  let total = -1;
  for (let i = 0; i < 100 && total < want; i++) {
    const res = await fetch(\`\${process.env.CASEBRIDGE_URL}/rest/api/2/search?jql=\${jql}&maxResults=0\`, {
      headers: { authorization: \`Bearer \${process.env.CASEBRIDGE_TOKEN}\` },
    });
    total = (await res.json()).total;
    if (total < want) await new Promise((r) => setTimeout(r, 250));
  }
  expect(total).toBeGreaterThanOrEqual(want);
});
`;
const CART = `import { test } from '@playwright/test';
test.describe('Cart', () => {
${Array.from({ length: 8 }, (_, i) => `  test('keeps item ${i + 1}', () => {});`).join('\n')}
  test('checks out', async () => {
    await test.step('open the cart', async () => {});
    await test.step('pay', async () => {});
  });
});
`;
const RUNTIME = `import { test } from '@playwright/test';
import { caseKey } from '@casebridge/playwright';
test('names its case at runtime', () => {
  caseKey('DEMO-6');
});
`;
const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  workers: 1,
  reporter: [['line'], ['@casebridge/playwright', {}]],
});
`;
/** Planned tests without a key: the holder, the cart's 9, the runtime-keyed one. */
const KEYLESS = 11;

const testCases = () => emu.store.issues.filter((i) => i.type === 'Test Case');

describe('a first Playwright run of keyless tests', () => {
  it('creates every planned case while the tests run; steps from results; a runtime key gives its case up', async () => {
    const dir = fixture('first-run-pw', {
      'playwright.config.mjs': CONFIG,
      'tests/a-hold.spec.mjs': HOLD,
      'tests/cart.spec.mjs': CART,
      'tests/runtime.spec.mjs': RUNTIME,
    });
    const before = testCases().length;
    const out = await playwright(
      dir,
      ['test'],
      reporterEnv(emu, {
        CASEBRIDGE_MODE: 'cycle',
        CASEBRIDGE_TEST_PLAN: 'DEMO-1',
        CASEBRIDGE_CYCLE: 'first',
        CASEBRIDGE_AUTO_CREATE: 'true',
        CB_WANT: String(before + KEYLESS),
      }),
    );
    expect(out.code, out.stdout + out.stderr).toBe(0);

    const mapping = JSON.parse(readFileSync(join(dir, 'casebridge.keys.json'), 'utf8')) as Record<string, string>;
    const names = Object.keys(mapping).sort();
    // The runtime-keyed test is not in the mapping file: its key is its own.
    expect(names, JSON.stringify(mapping)).toHaveLength(KEYLESS - 1);
    expect(names.some((n) => n.includes('names its case at runtime'))).toBe(false);

    // Every run in the cycle passed: the mapped ones and DEMO-6, by its runtime key.
    const runs = cycleState(emu, 'first').filter((r) => r.status !== 'Not Tested');
    expect(runs.map((r) => r.key).sort()).toEqual([...Object.values(mapping), 'DEMO-6'].sort());
    expect(runs.every((r) => r.status === 'Passed')).toBe(true);

    // The case of the test with steps has them, from its result; its run was made from it, so it has them too.
    const checkout = mapping[Object.keys(mapping).find((n) => n.endsWith('checks out')) as string] as string;
    const issue = emu.store.issues.find((i) => i.key === checkout);
    const steps = emu.store.caseSteps.filter((s) => s.tcId === issue?.id).map((s) => s.step);
    expect(steps).toEqual(['open the cart', 'pay']);
    expect(runs.find((r) => r.key === checkout)?.steps).toEqual(['Passed', 'Passed']);

    // The case made at begin for the runtime-keyed test: closed as a duplicate of DEMO-6 (or labelled), not used.
    const made = testCases().filter((i) => i.summary === 'names its case at runtime');
    expect(made).toHaveLength(1);
    const closed = made[0]?.resolution === 'Duplicate' || /^casebridge-duplicate-of:/m.test(made[0]?.description ?? '');
    expect(closed, JSON.stringify(made[0])).toBe(true);
  }, 120_000);
});
