import { join } from 'node:path';
import { demoSeed, type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROOT, run } from './support/runner.js';

/** `casebridge doctor`, built, when Jira asks the user for a CAPTCHA after failed logins (the real emulator). */

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
