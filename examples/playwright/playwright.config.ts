import { defineConfig, devices } from '@playwright/test';
import { chromiumPath, hasChromium, noChromium } from './tests/support';

const port = Number(process.env.EXAMPLE_PORT ?? 3210);

// Workers load this file too: say it once, from the main process.
if (!hasChromium && process.env.TEST_WORKER_INDEX === undefined) console.warn(noChromium);

export default defineConfig({
  testDir: 'tests',
  retries: 1,
  // The tests wait on the page far more than they compute: three at a time on any machine (Playwright's default is
  // half the cores, one on a 2-core CI runner), so the demo's Playwright run takes about half as long.
  workers: 3,
  timeout: 15_000,
  expect: { timeout: 2_000 },
  reporter: [
    ['list'],
    [
      '@casebridge/playwright',
      {
        // Credentials come from CASEBRIDGE_TOKEN (or CASEBRIDGE_USER / CASEBRIDGE_PASSWORD), which the reporter reads
        // itself; any other option can come from CASEBRIDGE_* as well (CASEBRIDGE_MODE=cycle, CASEBRIDGE_DRY_RUN=1).
        url: process.env.CASEBRIDGE_URL ?? 'http://127.0.0.1:8990',
        projectKey: process.env.CASEBRIDGE_PROJECT ?? 'DEMO',
        testPlan: process.env.CASEBRIDGE_TEST_PLAN ?? 'DEMO-1',
        // Each project's results go to their own run of the case (the demo data's run attribute Device: Desktop,
        // Mobile), so the cycle shows which device failed. Run attributes need cycle mode: in ad hoc mode the
        // reporter would only say it ignores them.
        ...(process.env.CASEBRIDGE_MODE === 'cycle' ? { attributes: { Device: '${project}' } } : {}),
      },
    ],
  ],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    screenshot: 'only-on-failure',
    launchOptions: { executablePath: chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu'] },
  },
  // Both on the system's Chromium (Playwright cannot download Firefox or WebKit here): a desktop and a phone viewport.
  // The API tests open no page: they run once, in Desktop. Mobile holds no flaky test, so it retries nothing (its
  // failures are real; a retry would only add a few seconds to the demo).
  projects: [
    { name: 'Desktop', use: { ...devices['Desktop Chrome'] } },
    { name: 'Mobile', use: { ...devices['Pixel 7'] }, testIgnore: 'api.spec.ts', retries: 0 },
  ],
  webServer: {
    command: 'node app/server.mjs',
    url: `http://127.0.0.1:${port}/api/health`,
    env: { PORT: String(port) },
    reuseExistingServer: !process.env.CI,
  },
});
