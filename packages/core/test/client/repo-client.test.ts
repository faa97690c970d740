import type { RequestLogEntry } from '@casebridge/emulator';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { setRepoQuota } from '../../../emulator/src/handlers/repo.js';
import { type AuthOptions, ContentRepositoryClient, HttpError, UnauthorizedError } from '../../src/index.js';
import { ADMIN, clearFaults, clearRequestLog, requestLog, setFaults, useEmulator } from '../support/emulator.js';

// The emulator's per-owner storage quota (one per process), small enough for a 4 KiB file to exceed it while this
// file runs; the one before comes back after.
const QUOTA = 2048;
let quotaBefore: number | undefined;
beforeAll(() => {
  quotaBefore = setRepoQuota(QUOTA);
});
afterAll(() => {
  if (quotaBefore !== undefined) setRepoQuota(quotaBefore);
});

/**
 * ContentRepositoryClient against the emulator: validateSession renews a session or ticket that the server dropped
 * (the service answers 200 with `isValidLogin: false` then, never 401), once and only when it has credentials to do
 * so; an upload refused for the storage quota (503 without Retry-After) is not sent again.
 */

const VALIDATE = '/edu-sharing/rest/authentication/v1/validateSession';
const APPAUTH = '/edu-sharing/rest/authentication/v1/appauth/admin';
const SESSION: AuthOptions = { type: 'session', username: 'admin', password: 'admin' };
const OBTAINED_TICKET: AuthOptions = { type: 'ticket', username: 'admin', password: 'admin' };

const emu = useEmulator();
const clients: ContentRepositoryClient[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  await clearFaults(emu());
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await clearRequestLog(emu());
});

function repo(auth: AuthOptions): ContentRepositoryClient {
  const c = new ContentRepositoryClient({ baseUrl: emu().url, auth, retry: { retries: 1, baseDelayMs: 5 } });
  clients.push(c);
  return c;
}

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** The log as `[method, what, user]`: a check, a session login (a check with Basic) or a ticket issuance. */
async function trace(): Promise<[string, string, string | null][]> {
  const log: RequestLogEntry[] = await requestLog(emu());
  return log.map((e) => [e.method, e.path === VALIDATE ? 'validate' : e.path === APPAUTH ? 'appauth' : e.path, e.user]);
}

describe('validateSession renews a dropped session or ticket once', () => {
  it('session: after the server dropped the session, one re-login and the check succeeds', async () => {
    const c = repo(SESSION);
    await c.validateSession();
    emu().store.sessions.clear();
    await clearRequestLog(emu());
    expect(await c.validateSession()).toMatchObject({ isValidLogin: true, authorityName: 'admin' });
    expect(await trace()).toEqual([
      ['GET', 'validate', null],
      ['GET', 'validate', 'admin'],
      ['GET', 'validate', 'admin'],
    ]);
  });

  it('ticket obtained with user name and password: after the server dropped it, one new ticket and the check succeeds', async () => {
    const c = repo(OBTAINED_TICKET);
    await c.validateSession();
    emu().store.tickets.clear();
    await clearRequestLog(emu());
    expect(await c.validateSession()).toMatchObject({ isValidLogin: true, authorityName: 'admin' });
    expect(await trace()).toEqual([
      ['GET', 'validate', null],
      ['POST', 'appauth', 'admin'],
      ['GET', 'validate', 'admin'],
    ]);
  });

  it('checks in parallel after the drop share one renewal', async () => {
    const c = repo(SESSION);
    await c.validateSession();
    emu().store.sessions.clear();
    await clearRequestLog(emu());
    const answers = await Promise.all(Array.from({ length: 4 }, () => c.validateSession()));
    expect(answers.every((a) => a.isValidLogin)).toBe(true);
    // One login (the only check that carries Basic credentials and so runs as admin without a cookie).
    const log = await requestLog(emu());
    expect(log.filter((e) => e.user === null)).toHaveLength(4);
    expect(log.filter((e) => e.user === 'admin')).toHaveLength(1 + 4);
  });

  // A server that forgets each session or ticket as soon as it issued it (a cluster node that does not share them):
  // the renewed check fails too, and that answer is final.
  for (const [name, auth, table] of [
    ['session', SESSION, 'sessions'],
    ['ticket obtained', OBTAINED_TICKET, 'tickets'],
  ] as const) {
    it(`${name}: a renewed check that still fails is UnauthorizedError after exactly one renewal`, async () => {
      const c = repo(auth);
      const forget = vi.spyOn(emu().store[table], 'insert').mockImplementation((row: unknown) => row as never);
      const err = await failure(c.validateSession());
      expect(err).toBeInstanceOf(UnauthorizedError);
      expect(err.message).toMatch(/INVALID_CREDENTIALS/);
      // First use: obtain, check (invalid), renew, check (invalid); no third attempt.
      expect(forget).toHaveBeenCalledTimes(2);
      const renewal: [string, string, string | null] =
        table === 'sessions' ? ['GET', 'validate', 'admin'] : ['POST', 'appauth', 'admin'];
      expect(await trace()).toEqual([renewal, ['GET', 'validate', null], renewal, ['GET', 'validate', null]]);
    });
  }

  const unrenewable: [string, AuthOptions][] = [
    ['basic with a wrong password', { type: 'basic', username: 'admin', password: 'wrong' }],
    ['bearer with an unknown token', { type: 'bearer', token: 'not-a-token' }],
    ['a given ticket the server does not know', { type: 'ticket', ticket: 'TICKET_unknown' }],
  ];
  for (const [name, auth] of unrenewable) {
    it(`${name}: checked once, no renewal`, async () => {
      const err = await failure(repo(auth).validateSession());
      expect(err).toBeInstanceOf(UnauthorizedError);
      expect(await trace()).toEqual([['GET', 'validate', null]]);
    });
  }

  it('basic with the right password: one check', async () => {
    expect(await repo(ADMIN).validateSession()).toMatchObject({ isValidLogin: true });
    expect(await trace()).toEqual([['GET', 'validate', 'admin']]);
  });
});

describe('uploads: a quota refusal is final, other 503s are retried', () => {
  const CONTENT = '/edu-sharing/rest/node/v1/nodes/*/*/content';
  const uploads = (log: RequestLogEntry[]) => log.filter((e) => e.method === 'POST' && e.path.endsWith('/content'));
  const big = { data: Buffer.alloc(2 * QUOTA, 'x'), fileName: 'too-big.bin' };

  it('503 without Retry-After (quota exceeded): HttpError at once, the file sent once', async () => {
    const c = repo(ADMIN);
    let err: unknown;
    try {
      await c.storeFile(big);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ status: 503, retryable: false, retries: 0 });
    expect((err as Error).message).toMatch(/quota/i);
    expect(uploads(await requestLog(emu())).map((e) => e.status)).toEqual([503]);
    expect(c.transport.stats.retries).toBe(0);
  });

  it('the same refusal through repo.uploadContent directly', async () => {
    const c = repo(ADMIN);
    const { node } = await c.repo.createChild({
      repository: '-home-',
      parentNodeId: '-userhome-',
      type: 'ccm:io',
      renameIfExists: 'true',
      body: { 'cm:name': ['direct.bin'] },
    });
    await expect(
      c.repo.uploadContent({
        repository: '-home-',
        nodeId: node.ref.id,
        mimetype: 'application/octet-stream',
        file: big,
      }),
    ).rejects.toMatchObject({ kind: 'http', status: 503, retryable: false });
    expect(uploads(await requestLog(emu()))).toHaveLength(1);
  });

  it('503 with Retry-After (an overloaded server): retried, and the upload succeeds', async () => {
    await setFaults(emu(), [
      { route: CONTENT, methods: ['POST'], errors: { '503': 1 }, retryAfterSeconds: 0, times: 1 },
    ]);
    const c = repo(ADMIN);
    const node = await c.storeFile({ data: 'small', fileName: 'small.txt' });
    expect(node.size).toBe('5');
    expect(uploads(await requestLog(emu())).map((e) => e.status)).toEqual([503, 200]);
  });
});
