import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { demoSeed, type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { fixture, ROOT, run } from './support/runner.js';

/**
 * Jira asks the user for a CAPTCHA after failed logins (the real emulator): `casebridge doctor`, built, and the Jest
 * reporter in a real run.
 */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const PASSWORD = 'erin-pw-3f9c2';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({
    port: 0,
    seed: { ...demoSeed, users: [...demoSeed.users, { name: 'erin', password: PASSWORD, captcha: true }] },
  });
});
afterAll(async () => {
  await emu?.close();
});

it('doctor: ✗ credentials naming the CAPTCHA and the login page, the fix, exit 1, one request, no password', async () => {
  emu.clearRequests();
  const out = await run(process.execPath, [CLI, 'doctor'], ROOT, {
    CASEBRIDGE_URL: emu.url,
    CASEBRIDGE_USER: 'erin',
    CASEBRIDGE_PASSWORD: PASSWORD,
    CASEBRIDGE_PROJECT: 'DEMO',
  });
  expect(out.code, out.stdout + out.stderr).toBe(1);
  expect(out.stdout).toMatch(
    /^✗ credentials +Jira asks for a CAPTCHA after failed logins of user erin \(HTTP 403, X-Authentication-Denied-Reason: CAPTCHA_CHALLENGE\)/m,
  );
  expect(out.stdout).toContain(
    `fix: log in once in a browser at ${emu.url}/login.jsp, then check CASEBRIDGE_USER and CASEBRIDGE_PASSWORD before the next run`,
  );
  expect(out.stdout).not.toMatch(/licen[cs]e/);
  expect(out.stdout + out.stderr).not.toContain(PASSWORD);
  expect(
    emu
      .requests()
      .filter((r) => !r.path.startsWith('/__emulator'))
      .map((r) => r.status),
  ).toEqual([403]);
});

it('a Jest run: one line naming the CAPTCHA, the fix in the summary, the results kept on disk, one request, the exit code untouched', async () => {
  await emu.reset();
  emu.clearRequests();
  const dir = fixture('jest-captcha', {
    'package.json': JEST_PACKAGE,
    'jest.config.js': jestConfig(),
    'tests/shop.test.js': "test('DEMO-2 logs in', () => {});\ntest('DEMO-3 logs out', () => {});\n",
  });
  const out = await jest(dir, [], {
    CASEBRIDGE_URL: emu.url,
    CASEBRIDGE_USER: 'erin',
    CASEBRIDGE_PASSWORD: PASSWORD,
    CASEBRIDGE_PROJECT: 'DEMO',
    CASEBRIDGE_MODE: 'cycle',
    CASEBRIDGE_TEST_PLAN: 'DEMO-1',
    CASEBRIDGE_CYCLE: 'CI captcha',
  });
  const text = out.stdout + out.stderr;
  expect(out.code, text).toBe(0);
  expect(text).toContain('casebridge: Jira asks for a CAPTCHA for user erin: stopped sending');
  expect(text).toContain(`${emu.url}/login.jsp`);
  expect(text).not.toMatch(/licen[cs]e/);
  expect(text).not.toContain(PASSWORD);
  expect(text).toMatch(/2 result\(s\) not delivered: kept in/);
  expect(readdirSync(join(dir, '.casebridge', 'journal')).filter((f) => f.endsWith('.json'))).toHaveLength(2);
  const statuses = emu
    .requests()
    .filter((r) => !r.path.startsWith('/__emulator'))
    .map((r) => r.status);
  expect(statuses).toEqual([403]);
});
