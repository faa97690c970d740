import type { RequestLogEntry } from '@casebridge/emulator';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AuthOptions,
  ConfigError,
  ContentRepositoryClient,
  ForbiddenError,
  JiraClient,
  TestManagementClient,
  UnauthorizedError,
} from '../../src/index.js';
import { clearRequestLog, requestLog, useEmulator } from '../support/emulator.js';

/**
 * Every auth mode of both clients against the emulator: Basic with a password, Bearer (a personal access token, the
 * only way Jira takes one: see client-credentials.test.ts), session (one login for many calls, one re-login after
 * the server dropped the session) and, for the content repository, tickets given or obtained. The emulator's request log tells who each request ran as and how often
 * the client logged in.
 */

const TOKEN = 'casebridge-dev-token';
const LOGIN = '/rest/auth/1/session';
const REPO_VALIDATE = '/edu-sharing/rest/authentication/v1/validateSession';
const APPAUTH = '/edu-sharing/rest/authentication/v1/appauth/admin';

const emu = useEmulator();
const clients: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await clearRequestLog(emu());
});

function tm(auth: AuthOptions): TestManagementClient {
  const c = new TestManagementClient({ baseUrl: emu().url, auth, retry: { retries: 1, baseDelayMs: 5 } });
  clients.push(c);
  return c;
}
function repo(auth: AuthOptions): ContentRepositoryClient {
  const c = new ContentRepositoryClient({ baseUrl: emu().url, auth, retry: { retries: 1, baseDelayMs: 5 } });
  clients.push(c);
  return c;
}

const count = (log: RequestLogEntry[], method: string, path: string) =>
  log.filter((e) => e.method === method && e.path === path).length;
const members = (c: TestManagementClient) => c.plans.members({ testPlanIssueKey: 'DEMO-1' });

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

describe('test management', () => {
  const modes: [string, AuthOptions][] = [
    ['basic with a password', { type: 'basic', username: 'admin', password: 'admin' }],
    ['bearer (personal access token)', { type: 'bearer', token: TOKEN }],
    ['session', { type: 'session', username: 'admin', password: 'admin' }],
  ];
  for (const [name, auth] of modes) {
    it(`${name}: calls run as the user`, async () => {
      const c = tm(auth);
      expect((await members(c)).length).toBeGreaterThan(0);
      expect((await c.jira.myself()).name).toBe('admin');
      const log = await requestLog(emu());
      const calls = log.filter((e) => e.path !== LOGIN);
      expect(calls.map((e) => [e.status, e.user])).toEqual([
        [200, 'admin'],
        [200, 'admin'],
      ]);
    });
  }

  it('session: logs in once for many calls, in parallel and in sequence', async () => {
    const c = tm({ type: 'session', username: 'tester', password: 'tester' });
    await Promise.all(Array.from({ length: 6 }, () => members(c)));
    for (let i = 0; i < 3; i += 1) await members(c);
    const log = await requestLog(emu());
    expect(count(log, 'POST', LOGIN)).toBe(1);
    expect(log.filter((e) => e.path !== LOGIN).every((e) => e.status === 200 && e.user === 'tester')).toBe(true);
    expect(
      emu()
        .store.sessions.all()
        .filter((s) => s.userId === 2),
    ).toHaveLength(1);
  });

  it('session: after the server dropped the session, a 401 leads to exactly one re-login and the call succeeds', async () => {
    const c = tm({ type: 'session', username: 'admin', password: 'admin' });
    await members(c);
    // The server forgets every session (a timeout, a node restart behind the load balancer).
    emu().store.sessions.clear();
    await clearRequestLog(emu());
    expect((await members(c)).length).toBeGreaterThan(0);
    const log = await requestLog(emu());
    expect(log.map((e) => [e.method, e.path === LOGIN ? 'login' : 'members', e.status])).toEqual([
      ['GET', 'members', 401],
      ['POST', 'login', 200],
      ['GET', 'members', 200],
    ]);
  });

  it('session: calls in flight when the session is dropped share one re-login', async () => {
    const c = tm({ type: 'session', username: 'admin', password: 'admin' });
    await members(c);
    emu().store.sessions.clear();
    await clearRequestLog(emu());
    await Promise.all(Array.from({ length: 5 }, () => members(c)));
    const log = await requestLog(emu());
    expect(count(log, 'POST', LOGIN)).toBe(1);
    expect(log.filter((e) => e.path !== LOGIN && e.status === 200)).toHaveLength(5);
  });

  it('a wrong password: UnauthorizedError (basic, bearer, session)', async () => {
    const wrong: AuthOptions[] = [
      { type: 'basic', username: 'admin', password: 'wrong' },
      { type: 'bearer', token: 'not-a-token' },
      { type: 'session', username: 'admin', password: 'wrong' },
    ];
    for (const auth of wrong) {
      const err = await failure(members(tm(auth)));
      expect(err, auth.type).toBeInstanceOf(UnauthorizedError);
      expect(err).toMatchObject({ kind: 'unauthorized', status: 401, retryable: false });
    }
    // A refused session login is not repeated in a loop.
    expect(count(await requestLog(emu()), 'POST', LOGIN)).toBe(1);
  });

  it('a session login takes the password, not a token', async () => {
    const err = await failure(members(tm({ type: 'session', username: 'admin', password: TOKEN })));
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(err.message).toMatch(/session login/);
  });

  it('a user without a licence: ForbiddenError that mentions the licence', async () => {
    const err = await failure(members(tm({ type: 'basic', username: 'nolicense', password: 'nolicense' })));
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(err).toMatchObject({ status: 403, kind: 'forbidden' });
    expect(err.message).toMatch(/licen[cs]e/i);
  });

  it('ticket auth is refused for test management and Jira with a ConfigError', () => {
    expect(() => tm({ type: 'ticket', ticket: 'TICKET_x' })).toThrow(ConfigError);
    expect(() => new JiraClient({ baseUrl: emu().url, auth: { type: 'ticket', ticket: 'TICKET_x' } })).toThrow(
      ConfigError,
    );
  });

  it('Jira client: session mode logs in through the same resource', async () => {
    const c = new JiraClient({ baseUrl: emu().url, auth: { type: 'session', username: 'tester', password: 'tester' } });
    clients.push(c);
    expect((await c.jira.myself()).name).toBe('tester');
    expect((await c.jira.project({ projectIdOrKey: 'DEMO' })).key).toBe('DEMO');
    expect(count(await requestLog(emu()), 'POST', LOGIN)).toBe(1);
  });
});

describe('a two-node cluster behind a load balancer (ROUTEID)', () => {
  const cluster = useEmulator({ jira: { nodes: 2 } });

  it('session: the route cookie is kept, so one login serves every call, in sequence and in parallel', async () => {
    const c = new TestManagementClient({
      baseUrl: cluster().url,
      auth: { type: 'session', username: 'admin', password: 'admin' },
      retry: { retries: 1, baseDelayMs: 5 },
    });
    clients.push(c);
    for (let i = 0; i < 5; i += 1) await members(c);
    await Promise.all(Array.from({ length: 6 }, () => members(c)));
    const log = await requestLog(cluster());
    // Without ROUTEID every other call would land on the node that does not know the session: 401, log in again.
    expect(count(log, 'POST', LOGIN)).toBe(1);
    expect(log.filter((e) => e.path !== LOGIN).map((e) => e.status)).toEqual(Array(11).fill(200));
  });
});

describe('content repository', () => {
  /** Stores a small file and returns its node. */
  const store = (c: ContentRepositoryClient, name: string) =>
    c.storeFile({ data: `content of ${name}`, fileName: name }, { name });

  /** A ticket issued by the emulator to admin, obtained with a raw request. */
  async function issueTicket(): Promise<string> {
    const res = await fetch(emu().url + APPAUTH, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}`,
        'content-type': 'application/json',
      },
      body: '{}',
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { ticket: string }).ticket;
  }

  const modes: [string, () => Promise<AuthOptions>][] = [
    ['basic', async () => ({ type: 'basic', username: 'admin', password: 'admin' })],
    ['basic with an API token', async () => ({ type: 'basic', username: 'admin', password: TOKEN })],
    ['bearer', async () => ({ type: 'bearer', token: TOKEN })],
    ['session', async () => ({ type: 'session', username: 'admin', password: 'admin' })],
    ['ticket (given)', async () => ({ type: 'ticket', ticket: await issueTicket() })],
    [
      'ticket (obtained with user name and password)',
      async () => ({ type: 'ticket', username: 'admin', password: 'admin' }),
    ],
  ];
  for (const [name, auth] of modes) {
    it(`${name}: validates the session and stores a file as the user`, async () => {
      const c = repo(await auth());
      await clearRequestLog(emu());
      const session = await c.validateSession();
      expect(session).toMatchObject({ isValidLogin: true, authorityName: 'admin' });
      const node = await store(c, `${name.replace(/\W+/g, '-')}.txt`);
      expect(node.downloadUrl).toMatch(/^http/);
      const log = (await requestLog(emu())).filter((e) => e.path !== APPAUTH);
      expect(log.every((e) => e.status === 200 && e.user === 'admin')).toBe(true);
    });
  }

  it('session: one login for many calls, one re-login after the server dropped the session', async () => {
    const c = repo({ type: 'session', username: 'admin', password: 'admin' });
    await Promise.all(Array.from({ length: 4 }, (_, i) => store(c, `session-${i}.txt`)));
    expect(count(await requestLog(emu()), 'GET', REPO_VALIDATE)).toBe(1);
    emu().store.sessions.clear();
    await store(c, 'after-drop.txt');
    const log = await requestLog(emu());
    expect(count(log, 'GET', REPO_VALIDATE)).toBe(2);
    expect(log.filter((e) => e.status === 401)).toHaveLength(1);
  });

  it('ticket obtained: issued once, and issued again once after the server dropped it', async () => {
    const c = repo({ type: 'ticket', username: 'admin', password: 'admin' });
    await Promise.all(Array.from({ length: 3 }, (_, i) => store(c, `ticket-${i}.txt`)));
    expect(count(await requestLog(emu()), 'POST', APPAUTH)).toBe(1);
    emu().store.tickets.clear();
    await store(c, 'ticket-after-drop.txt');
    expect(count(await requestLog(emu()), 'POST', APPAUTH)).toBe(2);
  });

  it('a given ticket that the server does not know: UnauthorizedError (nothing to renew it with)', async () => {
    const err = await failure(store(repo({ type: 'ticket', ticket: 'TICKET_unknown' }), 'never.txt'));
    expect(err).toBeInstanceOf(UnauthorizedError);
  });

  it('a ticket for a user who may not issue one: UnauthorizedError that says why', async () => {
    const err = await failure(store(repo({ type: 'ticket', username: 'tester', password: 'tester' }), 'never.txt'));
    expect(err).toBeInstanceOf(UnauthorizedError);
    // Not /administrator/: the demo password `admin` is a registered secret, redacted wherever it appears.
    expect(err.message).toMatch(/did not issue a ticket .*HTTP 403/);
  });

  it('a wrong password: UnauthorizedError (basic, session)', async () => {
    expect(
      await failure(repo({ type: 'basic', username: 'admin', password: 'wrong' }).validateSession()),
    ).toBeInstanceOf(UnauthorizedError);
    expect(await failure(store(repo({ type: 'basic', username: 'admin', password: 'wrong' }), 'x.txt'))).toBeInstanceOf(
      UnauthorizedError,
    );
    expect(
      await failure(store(repo({ type: 'session', username: 'admin', password: 'wrong' }), 'x.txt')),
    ).toBeInstanceOf(UnauthorizedError);
  });
});
