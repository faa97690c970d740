import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { JEST_PACKAGE, jest } from './support/jest.js';
import { fixture } from './support/runner.js';
import { vitest } from './support/vitest.js';

/**
 * Run attributes from data-driven tests and tags (issue 27, points 2 and 3), with the real Jest and Vitest against
 * the real emulator over real HTTP: a `test.each` row names its parameter with the runtime's `param`, read by the
 * `${param.<name>}` template; a Vitest 4.1 native tag is read by `${tag:<prefix>}`. Each attribute set of the case is
 * its own run in an advanced cycle. Project DEMO's seed defines the run attribute Browser with Chrome and Firefox.
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
});

const env = (cycle: string) => ({
  CASEBRIDGE_URL: emu.url,
  CASEBRIDGE_TOKEN: 'casebridge-dev-token',
  CASEBRIDGE_PROJECT: 'DEMO',
  CASEBRIDGE_MODE: 'cycle',
  CASEBRIDGE_TEST_PLAN: 'DEMO-1',
  CASEBRIDGE_CYCLE: cycle,
  CASEBRIDGE_DEFECTS: 'false',
  CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
});

/** `Browser status` of each run of `key` in the cycle, sorted. */
function runsOf(cycleName: string, key: string): string[] {
  const cycle = emu.store.cycles.find((c) => c.name === cycleName);
  const tc = emu.store.issues.find((i) => i.key === key);
  return emu.store.runs
    .filter((r) => r.cycleId === cycle?.id && r.tcId === tc?.id)
    .map((r) => `${r.attributes?.Browser ?? '-'} ${r.status}`)
    .sort();
}

it('Jest test.each: each row names its browser with param(), one run per row of the case', async () => {
  const dir = fixture('attributes-jest-each', {
    'package.json': JEST_PACKAGE,
    'jest.config.js': `module.exports = {
  testEnvironment: 'node',
  cacheDirectory: '<rootDir>/.jest-cache',
  reporters: ['default', ['@casebridge/jest', { attributes: { Browser: '\${param.browser}' } }]],
};
`,
    'tests/render.test.js': `const { param } = require('@casebridge/jest');
test.each([['Chrome'], ['Firefox']])('DEMO-3 renders the cart in %s', (browser) => {
  param('browser', browser);
  expect(browser).toBe('Chrome');
});
`,
  });
  const out = await jest(dir, [], env('CI rows'));
  const text = out.stdout + out.stderr;
  expect(out.code, text).toBe(1);
  expect(emu.store.cycles.find((c) => c.name === 'CI rows')?.advanced).toBe(true);
  expect(runsOf('CI rows', 'DEMO-3'), text).toEqual(['Chrome Passed', 'Firefox Failed']);
  expect(text).not.toContain('not delivered');
}, 120_000);

it('Vitest 4.1 tags: a browser tag read by ${tag:browser-} sends each test to its run of the case', async () => {
  const dir = fixture('attributes-vitest-tags', {
    'vitest.config.mjs': `
import { defineConfig } from 'vitest/config';
export default defineConfig({
  test: {
    include: ['tests/**/*.spec.ts'],
    tags: [{ name: 'browser-Chrome' }, { name: 'browser-Firefox' }],
    reporters: ['default', ['@casebridge/vitest', { attributes: { Browser: '\${tag:browser-}' } }]],
  },
});
`,
    'tests/cart.spec.ts': `
import { expect, test } from 'vitest';
test('DEMO-4 empties the cart (Chrome)', { tags: ['browser-Chrome'] }, () => { expect(1).toBe(2); });
test('DEMO-4 empties the cart (Firefox)', { tags: ['browser-Firefox'] }, () => {});
`,
  });
  const out = await vitest(dir, ['run'], env('CI tags'));
  const text = out.stdout + out.stderr;
  expect(out.code, text).toBe(1);
  expect(runsOf('CI tags', 'DEMO-4'), text).toEqual(['Chrome Failed', 'Firefox Passed']);
  expect(text).not.toContain('not delivered');
}, 120_000);
