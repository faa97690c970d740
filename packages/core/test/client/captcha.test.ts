import { mkdtempSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoSeed } from '@casebridge/emulator';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { captchaChallenge } from '../../src/client/errors.js';
import {
  CaptchaError,
  Engine,
  ForbiddenError,
  TestManagementClient,
  type TestResult,
  UnauthorizedError,
} from '../../src/index.js';
import { useEmulator } from '../support/emulator.js';

/**
 * Jira's CAPTCHA after failed logins: 403 with `X-Authentication-Denied-Reason: CAPTCHA_CHALLENGE`. The client turns
 * it into CaptchaError and sends nothing more; the engine stops delivery at once and journals the results. Against
 * the real emulator, whose seed turns the CAPTCHA on after three failed Basic logins.
 */

// carol's password is not her name: a secret equal to the name would redact the name from every message.
const PASSWORD = 'c0rrect-horse-battery';
const emulator = useEmulator({
  seed: {
    ...demoSeed,
    users: [...demoSeed.users, { name: 'carol', displayName: 'Carol', password: PASSWORD }],
    captchaAfterFailedLogins: 3,
  },
});
const WRONG = 'not-the-password-5e1a';

beforeEach(async () => {
  await emulator().reset();
});

const requests = () =>
  emulator()
    .requests()
    .filter((r) => !r.path.startsWith('/__emulator'));

function client(password: string, concurrency = 4) {
  return new TestManagementClient({
    baseUrl: emulator().url,
    auth: { type: 'basic', username: 'carol', password },
    concurrency,
    retry: { retries: 0 },
  });
}

/** Three failed Basic logins of `carol`: Jira puts the CAPTCHA on. */
async function failLogins(): Promise<void> {
  const wrong = client(WRONG);
  for (let i = 0; i < 3; i++) await expect(wrong.jira.myself()).rejects.toBeInstanceOf(UnauthorizedError);
  await wrong.close();
}

describe('the client and the CAPTCHA challenge', () => {
  it('reads the header, with or without the login page', () => {
    expect(captchaChallenge({ 'x-authentication-denied-reason': 'CAPTCHA_CHALLENGE' })).toEqual({});
    expect(
      captchaChallenge({
        'x-authentication-denied-reason': 'CAPTCHA_CHALLENGE; login-url=https://jira.example.com/login.jsp',
      }),
    ).toEqual({ loginUrl: 'https://jira.example.com/login.jsp' });
    expect(captchaChallenge({ 'x-authentication-denied-reason': 'AUTHENTICATION_DENIED' })).toBeUndefined();
    expect(captchaChallenge({})).toBeUndefined();
  });

  it('after three failed logins the right password gets CaptchaError naming the user and the login page; nothing more is sent', async () => {
    await failLogins();
    emulator().clearRequests();
    const tm = client(PASSWORD);
    const err = await tm.jira.myself().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CaptchaError);
    expect(err).toBeInstanceOf(ForbiddenError);
    const captcha = err as CaptchaError;
    expect(captcha.status).toBe(403);
    expect(captcha.user).toBe('carol');
    expect(captcha.loginUrl).toBe(`${emulator().url}/login.jsp`);
    expect(captcha.message).toContain(
      `Jira asks for a CAPTCHA after failed logins of user carol: log in once in a browser at ${emulator().url}/login.jsp`,
    );
    expect(captcha.message).not.toContain(PASSWORD);
    expect(requests()).toHaveLength(1);
    // Any further call of this client fails at once, unsent: each try would count as one more failed login.
    await expect(tm.plans.cycles({ testPlanIssueKey: 'DEMO-1' })).rejects.toBe(captcha);
    await expect(tm.jira.myself()).rejects.toBe(captcha);
    expect(requests()).toHaveLength(1);
    await tm.close();
  });

  it('the calls waiting in the queue are cancelled with the same error, not sent', async () => {
    await failLogins();
    emulator().clearRequests();
    const tm = client(PASSWORD, 1);
    const calls = Array.from({ length: 6 }, (_, i) => tm.runs.get({ runID: String(i + 1) }).catch((e: unknown) => e));
    const errors = await Promise.all(calls);
    for (const e of errors) expect(e).toBeInstanceOf(CaptchaError);
    expect(new Set(errors).size, 'one error, the first answer').toBe(1);
    expect(requests().map((r) => r.status)).toEqual([403]);
    await tm.close();
  });

  it("another user's Basic login and a personal access token still work", async () => {
    await failLogins();
    const admin = new TestManagementClient({
      baseUrl: emulator().url,
      auth: { type: 'basic', username: 'admin', password: 'admin' },
    });
    await expect(admin.jira.myself()).resolves.toMatchObject({ name: 'admin' });
    const token = new TestManagementClient({
      baseUrl: emulator().url,
      auth: { type: 'bearer', token: 'casebridge-dev-token' },
    });
    await expect(token.jira.myself()).resolves.toMatchObject({ name: 'admin' });
    await Promise.all([admin.close(), token.close()]);
  });
});

describe('a session login answered with the CAPTCHA challenge', () => {
  let server: Server | undefined;
  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('is CaptchaError (not "wrong password"), with the login page the header names', async () => {
    let hits = 0;
    server = createServer((req, res) => {
      hits += 1;
      req.resume();
      res.writeHead(403, {
        'content-type': 'text/html',
        'x-authentication-denied-reason': 'CAPTCHA_CHALLENGE; login-url=https://jira.example.com/login.jsp',
      });
      res.end('<html><title>Forbidden</title></html>');
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const tm = new TestManagementClient({
      baseUrl: `http://127.0.0.1:${port}`,
      auth: { type: 'session', username: 'dave', password: 'secret-pass-99' },
      retry: { retries: 0 },
    });
    const err = await tm.plans.cycles({ testPlanIssueKey: 'DEMO-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CaptchaError);
    expect((err as CaptchaError).message).toContain(
      'after failed logins of user dave: log in once in a browser at https://jira.example.com/login.jsp',
    );
    expect((err as CaptchaError).message).not.toContain('secret-pass-99');
    await expect(tm.plans.cycles({ testPlanIssueKey: 'DEMO-1' })).rejects.toBe(err);
    expect(hits, 'only the login was sent').toBe(1);
    await tm.close();
  });
});

describe('the engine and the CAPTCHA challenge', () => {
  function result(title: string, status: 'passed' | 'failed'): TestResult {
    return {
      id: `t.spec.ts>${title}`,
      file: 't.spec.ts',
      titlePath: [title],
      tags: [],
      annotations: [],
      attempts: [
        {
          retry: 0,
          status,
          durationMs: 3,
          errors: status === 'failed' ? [{ message: 'expected 1 to be 2' }] : [],
          steps: [],
          attachments: [],
        },
      ],
    };
  }

  it('stops at the first 403, says once what to do, journals every result, sends nothing more', async () => {
    await failLogins();
    emulator().clearRequests();
    const cwd = mkdtempSync(join(tmpdir(), 'cb-captcha-'));
    const lines: string[] = [];
    const engine = Engine.create(
      {
        url: emulator().url,
        user: 'carol',
        password: PASSWORD,
        projectKey: 'DEMO',
        // One request at a time: the rest wait in the queue and must never leave it.
        concurrency: 1,
        flushTimeoutMs: 10_000,
      },
      { cwd, runner: { name: 'playwright', version: 'test' }, env: {}, out: (t) => lines.push(t) },
    );
    engine.begin({ tests: [] });
    engine.add(result('DEMO-2 logs in', 'passed'));
    engine.add(result('DEMO-3 logs out', 'failed'));
    engine.add(result('DEMO-4 searches', 'passed'));
    const end = await engine.end();
    const out = lines.join('\n');

    expect(
      requests().map((r) => r.status),
      'one request, answered 403',
    ).toEqual([403]);
    expect(out.match(/Jira asks for a CAPTCHA for user carol: stopped sending/g)).toHaveLength(1);
    const fix = `log in once in a browser at ${emulator().url}/login.jsp`;
    expect(out.split(fix).length - 1, 'the fix, once, in the summary').toBe(1);
    expect(out).toMatch(
      new RegExp(
        `stopped delivering: Jira asks for a CAPTCHA after failed logins of user carol: ${fix.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`,
      ),
    );
    expect(out).not.toContain('not allowed');
    expect(out).not.toContain(PASSWORD);
    expect(end.summary.journaled).toBe(3);
    expect(end.summary.serviceDown).toContain('CAPTCHA');
    const journal = join(cwd, '.casebridge', 'journal');
    expect(readdirSync(journal).length).toBeGreaterThan(0);
    // Nothing was written to the service.
    expect(emulator().store.runs.filter((r) => r.status !== 'Not Tested')).toEqual([]);
  });
});
