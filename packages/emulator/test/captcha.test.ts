import { beforeEach, describe, expect, it } from 'vitest';
import { demoSeed } from '../src/seed/seed.js';
import { captchaRequired, solveCaptcha } from '../src/service/auth.js';
import { basic, call, REPO, TM, useEmulator } from './helpers.js';

/**
 * Jira's CAPTCHA after failed logins: with `captchaAfterFailedLogins: 3` in the seed, a user's fourth Basic login
 * after three failed ones in a row answers 403 with `X-Authentication-Denied-Reason: CAPTCHA_CHALLENGE`, right
 * password or not, until the user logs in through the browser. A seed user with `captcha: true` starts that way.
 */

const emulator = useEmulator({
  seed: {
    ...demoSeed,
    users: [...demoSeed.users, { name: 'locked', password: 'locked-pw', captcha: true }],
    captchaAfterFailedLogins: 3,
  },
});
const other = useEmulator({ profile: 'ideal' });

beforeEach(async () => {
  await emulator().reset();
});

const myself = (password: string, user = 'tester', emu = emulator()) =>
  call(emu, 'GET', '/rest/api/2/myself', { auth: basic(user, password) });

describe('CAPTCHA after failed logins', () => {
  it('three failed Basic logins answer 401; from then on 403 CAPTCHA_CHALLENGE with the login page, right password or not', async () => {
    for (let i = 0; i < 3; i++) expect((await myself('wrong')).status).toBe(401);
    const right = await myself('tester');
    expect(right.status).toBe(403);
    expect(right.headers.get('x-authentication-denied-reason')).toBe(
      `CAPTCHA_CHALLENGE; login-url=${emulator().url}/login.jsp`,
    );
    expect(right.headers.get('x-seraph-loginreason')).toBe('AUTHENTICATION_DENIED');
    expect(right.json.errorMessages[0]).toMatch(/^CAPTCHA_CHALLENGE: user tester must log in through the browser/);
    // The test-management service answers the same, in its own error shape.
    const tm = await call(emulator(), 'GET', `${TM}/testPlan/DEMO-1/cycles`, { auth: basic('tester', 'tester') });
    expect(tm.status).toBe(403);
    expect(tm.headers.get('x-authentication-denied-reason')).toMatch(/^CAPTCHA_CHALLENGE\b/);
    expect(tm.json.message).toMatch(/CAPTCHA_CHALLENGE/);
    // Other users, tokens and the content repository (which has no such counter) are not affected.
    expect((await myself('admin', 'admin')).status).toBe(200);
    const token = await call(emulator(), 'GET', '/rest/api/2/myself', { auth: 'Bearer casebridge-dev-token' });
    expect(token.status).toBe(200);
    const repo = await call(emulator(), 'GET', `${REPO}/authentication/v1/validateSession`, {
      auth: basic('tester', 'tester'),
    });
    expect(repo.json).toMatchObject({ isValidLogin: true });
  });

  it('the failures must be in a row: a successful login starts the count again; an unknown user counts nothing', async () => {
    for (let round = 0; round < 3; round++) {
      expect((await myself('wrong')).status).toBe(401);
      expect((await myself('wrong')).status).toBe(401);
      expect((await myself('tester')).status).toBe(200);
    }
    for (let i = 0; i < 5; i++) expect((await myself('wrong', 'nobody')).status).toBe(401);
    expect(captchaRequired(emulator().store, 'nobody')).toBe(false);
  });

  it('a browser login lifts it; a seed user with captcha: true starts with it; a reset goes back to the seed', async () => {
    expect((await myself('locked-pw', 'locked')).status).toBe(403);
    // The login page the 403 names: a login there lifts the challenge, as in Jira.
    const login = await fetch(`${emulator().url}/login.jsp`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: emulator().url },
      body: new URLSearchParams({ os_username: 'locked', os_password: 'locked-pw', os_destination: '/' }).toString(),
    });
    expect(login.status).toBe(303);
    expect(login.headers.get('x-seraph-loginreason')).toBe('OK');
    expect((await myself('locked-pw', 'locked')).status).toBe(200);
    solveCaptcha(emulator().store, 'locked');
    for (let i = 0; i < 3; i++) await myself('wrong');
    expect(captchaRequired(emulator().store, 'tester')).toBe(true);
    await emulator().reset();
    expect(captchaRequired(emulator().store, 'tester')).toBe(false);
    expect((await myself('tester')).status).toBe(200);
    expect((await myself('locked-pw', 'locked')).status).toBe(403);
  });

  it('without captchaAfterFailedLogins in the seed (ideal profile; the realistic one asks after 3), failed logins never lead to a CAPTCHA', async () => {
    for (let i = 0; i < 6; i++) expect((await myself('wrong', 'tester', other())).status).toBe(401);
    expect((await myself('tester', 'tester', other())).status).toBe(200);
  });
});
