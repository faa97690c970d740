import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fixture, ROOT } from '../support/runner.js';

/**
 * The suites of the fault campaign, one per runner: the same shape everywhere — a stepped passing test (DEMO-2), a
 * flaky test (DEMO-3), a plain pass (DEMO-4), a failing test with a failing step and a screenshot (DEMO-5).
 * Playwright replaces its worker after each failed attempt, and a worker costs about a second of CPU to start: one
 * worker, with the failing tests last, starts three per run instead of four or five (the campaign runs the suite 15
 * times beside other files on a 2-core machine).
 */

export interface ChaosRunner {
  name: string;
  /** The keys the suite reports, sorted. */
  keys: string[];
  /** How many results the suite hands to the engine (one per key). */
  mapped: number;
  project: (name: string) => string;
  command: (dir: string) => [string, string[]];
}

export const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d1a30000000049454e44ae426082',
  'hex',
);
export const PNG_SHA = createHash('sha256').update(PNG).digest('hex');

export const playwright: ChaosRunner = {
  name: 'playwright',
  keys: ['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5'],
  mapped: 4,
  project: (name) =>
    fixture(`${name}-playwright`, {
      'playwright.config.mjs': `
export default {
  testDir: 'tests',
  outputDir: 'test-results',
  retries: 1,
  workers: 1,
  fullyParallel: true,
  reporter: [['@casebridge/playwright', {}]],
};
`,
      'tests/shop.spec.ts': `
import { expect, test } from '@playwright/test';
const PNG = Buffer.from('${PNG.toString('hex')}', 'hex');

test('DEMO-2 logs in', async () => {
  await test.step('Open the login page', async () => {});
  await test.step('Enter user name and password', async () => {});
  await test.step('Press "Log in"', async () => {});
});

test('DEMO-4 search finds the teapot', async () => {});

test('DEMO-3 logs out', async ({}, testInfo) => {
  expect(testInfo.retry, 'passes on the second attempt').toBe(1);
});

test('DEMO-5 pays with the saved card', async ({}, testInfo) => {
  await test.step('Add a product to the cart', async () => {});
  await test.step('Open checkout', async () => {
    await testInfo.attach('screenshot', { body: PNG, contentType: 'image/png' });
    expect(2, 'the saved card is preselected').toBe(1);
  });
  await test.step('Place the order', async () => {});
});
`,
    }),
  command: () => [join(ROOT, 'node_modules', '.bin', 'playwright'), ['test']],
};

export const vitest: ChaosRunner = {
  name: 'vitest',
  keys: ['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5'],
  mapped: 4,
  project: (name) =>
    fixture(`${name}-vitest`, {
      'vitest.config.mjs': `
export default { test: { include: ['tests/**/*.test.ts'], reporters: [['@casebridge/vitest', {}]] } };
`,
      'tests/account.test.ts': `
import { expect, test } from 'vitest';
import { step } from '@casebridge/vitest';

test('DEMO-2 logs in', async () => {
  await step('Open the login page', async () => {});
  await step('Enter user name and password', async () => {});
  await step('Press "Log in"', async () => {});
});

test('DEMO-3 logs out', { retry: 1 }, ({ task }) => {
  expect(task.result?.retryCount ?? 0, 'passes on the second attempt').toBe(1);
});
`,
      'tests/shop.test.ts': `
import { expect, test } from 'vitest';
import { attach, step } from '@casebridge/vitest';
const PNG = Buffer.from('${PNG.toString('hex')}', 'hex');

test('DEMO-5 pays with the saved card', async () => {
  await step('Add a product to the cart', async () => {});
  await step('Open checkout', async () => {
    attach('screenshot', { body: PNG, contentType: 'image/png' });
    expect(2, 'the saved card is preselected').toBe(1);
  });
  await step('Place the order', async () => {});
});

test('DEMO-4 search finds the teapot', async () => {});
`,
    }),
  command: () => [join(ROOT, 'node_modules', '.bin', 'vitest'), ['run']],
};
