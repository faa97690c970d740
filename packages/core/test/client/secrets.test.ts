import { inspect } from 'node:util';
import { demoSeed, type SeedInput } from '@casebridge/emulator';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ClientOptions } from '../../src/client/base.js';
import {
  AmbiguousError,
  type AuthOptions,
  type CasebridgeError,
  ConfigError,
  ContentRepositoryClient,
  ForbiddenError,
  HttpError,
  JiraClient,
  NetworkError,
  NotFoundError,
  ResponseShapeError,
  redact,
  registerSecret,
  TestManagementClient,
  TimeoutError,
  UnauthorizedError,
  ValidationError,
} from '../../src/index.js';
import { clearFaults, closedPort, setFaults, useEmulator } from '../support/emulator.js';
import { NO_PROXY_ENV, type RunningProxy, startProxy, withEnv } from '../support/proxy.js';
import { makePki, opensslAvailable, type Pki, startTlsFront, type TlsFront } from '../support/tls.js';

/**
 * No secret ever leaves the client: many failures are provoked against the real emulator (wrong credentials,
 * 401/403/404/500, 503 storms, ambiguous creates, timeouts, malformed answers, TLS and proxy failures, invalid
 * options that carry a secret), and every error's message, stack, JSON, inspection and string form, and every log
 * line, is searched for every secret: passwords, tokens, tickets, Basic values and JSESSIONID values.
 */

const PASSWORD = 'Rep0rter:s3cr%t/pass@word';
const TOKEN = 'pat_Q2FzZWJyaWRnZVNlY3JldFRva2Vu';
const VIEWER_PASSWORD = 'V1ewer-n0-l1cence-pw';
const WRONG_PASSWORD = 'Wr0ng-but-st1ll-secret';
const WRONG_TOKEN = 'pat_WrongTokenStillSecret42';
/** The shape of a Jira DC personal access token (base64 of `<id>:<random>`), given where a password goes. */
const PAT_AS_PASSWORD = Buffer.from('418226370915:Zq8#tY2!mW5@pL0%vR7&').toString('base64');
const PROXY_USER = 'ci-bot';
const PROXY_PASSWORD = 'Pr0xy-s3cret:p@ss/w%rd';
const WRONG_PROXY_PASSWORD = 'Pr0xy-wr0ng-s3cret';
const UNKNOWN_TICKET = 'TICKET_0123456789abcdef0123456789abcdef01234567';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

const seed: SeedInput = {
  ...demoSeed,
  users: [
    ...demoSeed.users,
    { name: 'reporter', password: PASSWORD, tokens: [TOKEN], admin: true },
    { name: 'viewer', password: VIEWER_PASSWORD, licensed: false },
  ],
};

const emu = useEmulator({ seed });
/** Everything the client produced: error renderings and log lines. */
const produced: { source: string; text: string }[] = [];
/** Session ids and tickets the emulator handed out, gathered before they are dropped. */
const issued = new Set<string>();
/** How many errors were recorded. */
let errors = 0;
const clients: { close(): Promise<void> }[] = [];
let proxy: RunningProxy;
let pki: Pki | undefined;
let front: TlsFront | undefined;

beforeAll(async () => {
  proxy = await startProxy({ auth: `${PROXY_USER}:${PROXY_PASSWORD}` });
  if (opensslAvailable) {
    pki = makePki();
    front = await startTlsFront(pki, emu().url);
  }
});
afterAll(async () => {
  await Promise.all([proxy?.close(), front?.close()]);
  pki?.remove();
});
afterEach(async () => {
  harvest();
  await clearFaults(emu());
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function harvest(): void {
  for (const s of emu().store.sessions.all()) issued.add(s.id);
  for (const t of emu().store.tickets.all()) issued.add(t.id);
}

const logger = (source: string) => (level: string, message: string) => {
  produced.push({ source: `log ${source}`, text: `${level} ${message}` });
};

function options(name: string, auth: AuthOptions, o: Partial<ClientOptions> = {}): ClientOptions {
  return {
    baseUrl: emu().url,
    auth,
    retry: { retries: 2, baseDelayMs: 5, maxDelayMs: 20 },
    logger: logger(name),
    ...o,
  };
}
function tm(name: string, auth: AuthOptions, o: Partial<ClientOptions> = {}): TestManagementClient {
  const c = new TestManagementClient(options(name, auth, o));
  clients.push(c);
  return c;
}
function repo(name: string, auth: AuthOptions, o: Partial<ClientOptions> = {}): ContentRepositoryClient {
  const c = new ContentRepositoryClient(options(name, auth, o));
  clients.push(c);
  return c;
}

/** Records every rendering of `err` and returns it. */
function keep(source: string, err: unknown): unknown {
  errors += 1;
  const e = err as Error;
  const forms: [string, string][] = [
    ['String', String(err)],
    ['message', e?.message ?? ''],
    ['stack', e?.stack ?? ''],
    ['JSON', JSON.stringify(err) ?? ''],
    ['inspect', inspect(err, { depth: 10 })],
  ];
  for (const [form, text] of forms) produced.push({ source: `${source} (${form})`, text });
  return err;
}

/** The error `p` rejects with, recorded. */
async function failure(source: string, p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return keep(source, err);
  }
  throw new Error(`${source}: expected a failure`);
}

/** The error a constructor throws, recorded. */
function refused(source: string, build: () => unknown): unknown {
  try {
    build();
  } catch (err) {
    return keep(source, err);
  }
  throw new Error(`${source}: expected the options to be refused`);
}

const BASIC: AuthOptions = { type: 'basic', username: 'reporter', password: PASSWORD };
const SESSION: AuthOptions = { type: 'session', username: 'reporter', password: PASSWORD };
const BEARER: AuthOptions = { type: 'bearer', token: TOKEN };
const members = (c: TestManagementClient, plan = 'DEMO-1') => c.plans.members({ testPlanIssueKey: plan });

describe('failures, each recorded', () => {
  it('wrong credentials: 401 for basic, bearer, session; the session login refused', async () => {
    expect(
      await failure('basic wrong', members(tm('b', { type: 'basic', username: 'reporter', password: WRONG_PASSWORD }))),
    ).toBeInstanceOf(UnauthorizedError);
    expect(await failure('bearer wrong', members(tm('t', { type: 'bearer', token: WRONG_TOKEN })))).toBeInstanceOf(
      UnauthorizedError,
    );
    expect(
      await failure(
        'session wrong',
        members(tm('s', { type: 'session', username: 'reporter', password: WRONG_PASSWORD })),
      ),
    ).toBeInstanceOf(UnauthorizedError);
  });

  it('403 (no licence), 404, 500 with each auth mode', async () => {
    expect(
      await failure('403', members(tm('v', { type: 'basic', username: 'viewer', password: VIEWER_PASSWORD }))),
    ).toBeInstanceOf(ForbiddenError);
    for (const [name, auth] of [
      ['basic', BASIC],
      ['bearer', BEARER],
      ['session', SESSION],
    ] as const) {
      const c = tm(name, auth);
      expect(await failure(`404 ${name}`, members(c, 'DEMO-404'))).toBeInstanceOf(NotFoundError);
      // DEMO-1 is a test plan, not a test case: the service answers 500.
      expect(await failure(`500 ${name}`, c.runs.adhocCreate({ testCaseIssueKey: 'DEMO-1' }))).toBeInstanceOf(
        ValidationError,
      );
    }
  });

  it('503 storms to exhaustion, 429 beyond maxRetryAfterMs', async () => {
    await setFaults(emu(), [{ route: '**/members', errors: { '503': 1 }, retryAfterSeconds: 0 }]);
    for (const [name, auth] of [
      ['basic', BASIC],
      ['session', SESSION],
    ] as const) {
      expect(await failure(`503 ${name}`, members(tm(name, auth)))).toBeInstanceOf(HttpError);
    }
    await setFaults(emu(), [{ route: '**/members', errors: { '429': 1 }, retryAfterSeconds: 600 }]);
    await failure('429', members(tm('429', BEARER)));
  });

  it('ambiguous creates: reset after processing, answer too slow, 504', async () => {
    const c = tm('ambiguous', SESSION, { timeouts: { headersMs: 200 } });
    await setFaults(emu(), [{ route: '**/adhoc/create/*', resetRate: 1, phase: 'after', times: 1 }]);
    expect(await failure('reset after', c.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' }))).toBeInstanceOf(
      AmbiguousError,
    );
    await setFaults(emu(), [{ route: '**/adhoc/create/*', hangRate: 1, hangMs: 2_000, phase: 'after', times: 1 }]);
    expect(await failure('slow create', c.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' }))).toBeInstanceOf(
      AmbiguousError,
    );
    await setFaults(emu(), [{ route: '**/adhoc/create/*', errors: { '504': 1 }, times: 1 }]);
    expect(await failure('504 create', c.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' }))).toBeInstanceOf(
      AmbiguousError,
    );
  });

  it('timeouts and dead connections', async () => {
    await setFaults(emu(), [{ route: '**/members', hangRate: 1, hangMs: 2_000, phase: 'after' }]);
    expect(
      await failure('timeout', members(tm('timeout', BASIC, { timeouts: { headersMs: 200 }, retry: { retries: 1 } }))),
    ).toBeInstanceOf(TimeoutError);
    await setFaults(emu(), [{ route: '**/members', resetRate: 1 }]);
    expect(await failure('resets', members(tm('resets', SESSION)))).toBeInstanceOf(NetworkError);
    const closed = `http://127.0.0.1:${await closedPort()}`;
    expect(await failure('refused', members(tm('refused', BASIC, { baseUrl: closed })))).toBeInstanceOf(NetworkError);
    expect(await failure('refused session', members(tm('refused s', SESSION, { baseUrl: closed })))).toBeInstanceOf(
      NetworkError,
    );
  });

  it('malformed answers, the session login included', async () => {
    await setFaults(emu(), [{ route: '/rest/auth/1/session', malformedRate: 1, malformedKind: 'truncated' }]);
    expect(await failure('truncated login', members(tm('login', SESSION)))).toBeInstanceOf(ResponseShapeError);
    await setFaults(emu(), [{ route: '/rest/auth/1/session', malformedRate: 1, malformedKind: 'wrong-types' }]);
    expect(await failure('wrong-types login', members(tm('login', SESSION)))).toBeInstanceOf(ResponseShapeError);
    await setFaults(emu(), [{ route: '**/members', malformedRate: 1, malformedKind: 'html' }]);
    expect(await failure('html', members(tm('html', BASIC)))).toBeInstanceOf(ResponseShapeError);
  });

  it('sessions dropped by the server, then re-login (JSESSIONID values are secrets)', async () => {
    const c = tm('relogin', SESSION);
    await members(c);
    harvest();
    emu().store.sessions.clear();
    await members(c);
    expect(await failure('after relogin 404', members(c, 'DEMO-404'))).toBeInstanceOf(NotFoundError);
  });

  it('content repository: tickets, sessions, refusals', async () => {
    const obtained = repo('ticket', { type: 'ticket', username: 'reporter', password: PASSWORD });
    await obtained.storeFile({ data: 'hello', fileName: 'hello.txt' });
    harvest();
    expect(
      await failure('repo 404', obtained.storeFile({ data: 'x', fileName: 'x.txt' }, { parentNodeId: 'no-such-node' })),
    ).toBeInstanceOf(NotFoundError);
    expect(
      await failure('repo 415', obtained.storeFile({ data: 'x', fileName: 'x.png' }, { mimetype: 'text/plain' })),
    ).toBeInstanceOf(HttpError);
    const ticket = [...emu().store.tickets.all()].at(-1)?.id as string;
    emu().store.tickets.clear();
    const given = repo('given', { type: 'ticket', ticket });
    expect(await failure('dropped ticket', given.validateSession())).toBeInstanceOf(UnauthorizedError);
    expect(
      await failure('unknown ticket', repo('unknown', { type: 'ticket', ticket: UNKNOWN_TICKET }).validateSession()),
    ).toBeInstanceOf(UnauthorizedError);
    // A ticket answer that cannot be read: the ticket was issued all the same, and must not show.
    await setFaults(emu(), [{ route: '**/appauth/*', malformedRate: 1, malformedKind: 'truncated' }]);
    expect(
      await failure(
        'truncated ticket',
        repo('truncated', { type: 'ticket', username: 'reporter', password: PASSWORD }).validateSession(),
      ),
    ).toBeInstanceOf(UnauthorizedError);
    await clearFaults(emu());
    const session = repo('repo session', SESSION);
    await session.storeFile({ data: 'a', fileName: 'a.txt' });
    harvest();
    expect(
      await failure('repo session 404', session.storeFile({ data: 'b', fileName: 'b.txt' }, { parentNodeId: 'nope' })),
    ).toBeInstanceOf(NotFoundError);
    expect(
      await failure(
        'repo wrong session',
        repo('w', { type: 'session', username: 'reporter', password: WRONG_PASSWORD }).storeFile({
          data: 'c',
          fileName: 'c.txt',
        }),
      ),
    ).toBeInstanceOf(UnauthorizedError);
    expect(
      await failure(
        'repo ticket by non-admin',
        repo('v', { type: 'ticket', username: 'viewer', password: VIEWER_PASSWORD }).validateSession(),
      ),
    ).toBeInstanceOf(UnauthorizedError);
  });

  it('proxies with credentials: wrong credentials, a proxy that is down, through the environment', async () => {
    const right = `http://${PROXY_USER}:${encodeURIComponent(PROXY_PASSWORD)}@127.0.0.1:${proxy.port}`;
    const wrong = `http://${PROXY_USER}:${encodeURIComponent(WRONG_PROXY_PASSWORD)}@127.0.0.1:${proxy.port}`;
    const down = `http://${PROXY_USER}:${encodeURIComponent(PROXY_PASSWORD)}@127.0.0.1:${await closedPort()}`;
    await withEnv(NO_PROXY_ENV, async () => {
      await members(tm('proxy ok', BASIC, { proxy: right }));
      expect(await failure('proxy 407', members(tm('proxy 407', BASIC, { proxy: wrong })))).toBeInstanceOf(
        NetworkError,
      );
      expect(await failure('proxy down', members(tm('proxy down', SESSION, { proxy: down })))).toBeInstanceOf(
        NetworkError,
      );
      // The proxy is fine, the service behind it is not there.
      const gone = `http://127.0.0.1:${await closedPort()}`;
      expect(
        await failure('proxy to nowhere', members(tm('nowhere', BASIC, { proxy: right, baseUrl: gone }))),
      ).toBeInstanceOf(NetworkError);
    });
    await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: wrong }, async () => {
      expect(await failure('env proxy 407', members(tm('env 407', BEARER)))).toBeInstanceOf(NetworkError);
    });
    await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: down }, async () => {
      expect(await failure('env proxy down', members(tm('env down', BEARER)))).toBeInstanceOf(NetworkError);
    });
  });

  it.skipIf(!opensslAvailable)('TLS failures (needs openssl)', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const baseUrl = front?.url as string;
      expect(await failure('tls basic', members(tm('tls', BASIC, { baseUrl })))).toBeInstanceOf(NetworkError);
      expect(await failure('tls session', members(tm('tls s', SESSION, { baseUrl })))).toBeInstanceOf(NetworkError);
      const right = `http://${PROXY_USER}:${encodeURIComponent(PROXY_PASSWORD)}@127.0.0.1:${proxy.port}`;
      expect(await failure('tls via proxy', members(tm('tls p', BEARER, { baseUrl, proxy: right })))).toBeInstanceOf(
        NetworkError,
      );
    });
  });

  it('invalid options that carry a secret', async () => {
    const url = emu().url;
    const bad: [string, () => unknown][] = [
      [
        'baseUrl with credentials',
        () => tm('o1', BASIC, { baseUrl: `http://reporter:${encodeURIComponent(PASSWORD)}@127.0.0.1:1` }),
      ],
      ['baseUrl not a URL', () => tm('o2', BASIC, { baseUrl: `reporter:${PASSWORD}` })],
      [
        'proxy not a URL',
        () => tm('o3', BASIC, { proxy: `http://${PROXY_USER}:${encodeURIComponent(PROXY_PASSWORD)}@` }),
      ],
      ['proxy without scheme', () => tm('o4', BASIC, { proxy: `${PROXY_USER}:${PROXY_PASSWORD}@proxy.corp:3128` })],
      ['auth with an unknown key', () => tm('o5', { ...BASIC, token: TOKEN } as unknown as AuthOptions)],
      ['auth without user name', () => tm('o6', { type: 'session', password: PASSWORD } as unknown as AuthOptions)],
      [
        'auth of an unknown type',
        () => tm('o7', { type: 'basc', username: 'reporter', password: PASSWORD } as unknown as AuthOptions),
      ],
      [
        'ticket with an extra key',
        () => repo('o8', { type: 'ticket', ticket: UNKNOWN_TICKET, password: PASSWORD } as unknown as AuthOptions),
      ],
      ['secret in a number field', () => tm('o9', BASIC, { timeouts: { headersMs: PASSWORD as unknown as number } })],
      ['secret as an unknown option', () => tm('o10', BASIC, { password: PASSWORD } as unknown as ClientOptions)],
      ['ticket auth for test management', () => tm('o11', { type: 'ticket', ticket: UNKNOWN_TICKET })],
      [
        'a personal access token as the Basic password',
        () => tm('o12', { type: 'basic', username: 'reporter', password: PAT_AS_PASSWORD }),
      ],
      [
        'ticket auth for Jira',
        () => new JiraClient({ baseUrl: url, auth: { type: 'ticket', username: 'reporter', password: PASSWORD } }),
      ],
    ];
    for (const [name, build] of bad) expect(refused(name, build), name).toBeInstanceOf(ConfigError);
  });
});

describe('the scan', () => {
  it('finds no secret in anything the client produced', () => {
    harvest();
    const sessions = [...issued];
    const secrets = new Map<string, string>([
      ['password', PASSWORD],
      ['password (URL-encoded)', encodeURIComponent(PASSWORD)],
      ['token', TOKEN],
      ['viewer password', VIEWER_PASSWORD],
      ['wrong password', WRONG_PASSWORD],
      ['wrong token', WRONG_TOKEN],
      ['personal access token given as a password', PAT_AS_PASSWORD],
      ['unknown ticket', UNKNOWN_TICKET],
      ['Basic value (password)', b64(`reporter:${PASSWORD}`)],
      ['Basic value (token)', b64(`reporter:${TOKEN}`)],
      ['Basic value (viewer)', b64(`viewer:${VIEWER_PASSWORD}`)],
      ['Basic value (wrong password)', b64(`reporter:${WRONG_PASSWORD}`)],
      ['proxy password', PROXY_PASSWORD],
      ['proxy password (URL-encoded)', encodeURIComponent(PROXY_PASSWORD)],
      ['wrong proxy password', WRONG_PROXY_PASSWORD],
      ['proxy Basic value', b64(`${PROXY_USER}:${PROXY_PASSWORD}`)],
      ['wrong proxy Basic value', b64(`${PROXY_USER}:${WRONG_PROXY_PASSWORD}`)],
      ...sessions.map((s, i) => [`session id or ticket #${i}`, s] as [string, string]),
    ]);
    // The scan is not vacuous: many failures were recorded, and the service handed out sessions and tickets.
    expect(produced.filter((p) => p.source.startsWith('log')).length).toBeGreaterThan(10);
    expect(errors).toBeGreaterThanOrEqual(opensslAvailable ? 50 : 47);
    expect(sessions.filter((s) => s.startsWith('TICKET_')).length).toBeGreaterThanOrEqual(1);
    expect(sessions.filter((s) => /^[0-9A-F]{32}$/.test(s)).length).toBeGreaterThanOrEqual(5);

    const leaks: string[] = [];
    for (const { source, text } of produced) {
      for (const [what, secret] of secrets) if (text.includes(secret)) leaks.push(`${what} in ${source}`);
    }
    expect(leaks).toEqual([]);
  });
});

describe('short secrets are redacted as whole tokens, long ones anywhere', () => {
  /** The error `p` rejects with (not recorded for the scan: these texts are checked here). */
  async function rejection(p: Promise<unknown>): Promise<CasebridgeError> {
    try {
      await p;
    } catch (err) {
      return err as CasebridgeError;
    }
    throw new Error('expected a failure');
  }

  it('over HTTP: the password `admin` leaves "administrator" readable and is removed where it stands alone', async () => {
    // The demo administrator's password is `admin`; a client using it registers it (and its Basic value).
    const admin = repo('admin', { type: 'basic', username: 'admin', password: 'admin' });
    const tester = repo('tester', { type: 'basic', username: 'tester', password: 'tester' });
    const refusal = await rejection(tester.repo.appAuth({ userId: 'admin' }));
    expect(refusal).toBeInstanceOf(ForbiddenError);
    // The service's own words. The user name `tester` is that user's password too: a whole token, so it goes; the
    // request path ends in the user id `admin`, which is the administrator's password, so it goes as well.
    expect(refusal.message).toMatch(/User \*\*\* may not issue tickets: .* needs an administrator/);
    expect(refusal.bodyExcerpt).toMatch(/User \*\*\* may not issue tickets: .* needs an administrator/);
    expect(refusal.path).toBe('/edu-sharing/rest/authentication/v1/appauth/***');

    const inAdmin = await rejection(
      admin.storeFile({ data: 'x', fileName: 'x.txt' }, { parentNodeId: 'admin', renameIfExists: false }),
    );
    expect(inAdmin).toBeInstanceOf(NotFoundError);
    expect(inAdmin.path).toBe('/edu-sharing/rest/node/v1/nodes/-home-/***/children');
    const inAdministrator = await rejection(
      admin.storeFile({ data: 'x', fileName: 'x.txt' }, { parentNodeId: 'administrator' }),
    );
    expect(inAdministrator.path).toBe('/edu-sharing/rest/node/v1/nodes/-home-/administrator/children');
    expect(inAdministrator.message).toContain('/administrator/');
  });

  it('a short secret is removed between delimiters and kept inside other words', () => {
    registerSecret('admin');
    for (const text of [
      'admin',
      'password=admin&next=1',
      'user:admin@host',
      '"password": "admin"',
      "password 'admin'",
      'a,admin,b',
      '/nodes/admin/children',
      'tab\tadmin\nnext line',
      'admin.',
      '(admin)',
    ]) {
      expect(redact(text), text).not.toMatch(/(^|[^\p{L}\p{N}_])admin($|[^\p{L}\p{N}_])/u);
      expect(redact(text), text).toContain('***');
    }
    for (const text of ['administrator', 'badminton', 'sysadmin', 'admin2', 'admin_user', 'Admin', 'ädmin', 'adminé']) {
      expect(redact(text), text).toBe(text);
    }
    expect(redact('admin administrator admin')).toBe('*** administrator ***');
  });

  it('a short secret that begins or ends with punctuation needs a delimiter only on its word side', () => {
    registerSecret('!pw7');
    expect(redact('key=x!pw7 next')).toBe('key=x*** next');
    expect(redact('x!pw7y')).toBe('x!pw7y');
  });

  it('the percent-encoded form of a short secret is redacted too', () => {
    registerSecret('p@s');
    expect(redact('q=p%40s&r=1 and p@s')).toBe('q=***&r=1 and ***');
    expect(redact('up%40side')).toBe('up%40side');
  });

  it('a secret of 8 characters or more is redacted anywhere, glued to other text too', () => {
    registerSecret('Gl8edSecret');
    expect(redact('xxGl8edSecretyy')).toBe('xx***yy');
  });

  it('Basic values are still redacted: long ones anywhere, short ones as tokens', () => {
    // A client registers the Base64 of `user:password`.
    repo('long basic', { type: 'basic', username: 'admin', password: 'admin' });
    const long = b64('admin:admin');
    expect(redact(`cred=${long}`)).toBe('cred=***');
    expect(redact(`x${long}y`)).toBe('x***y');
    repo('short basic', { type: 'basic', username: 'u', password: 'p' });
    const short = b64('u:p');
    expect(short).toHaveLength(4);
    expect(redact(`credentials ${short} sent`)).toBe('credentials *** sent');
    expect(redact(`Authorization: Basic ${short}`)).toBe('Authorization: ***');
    expect(redact(`"${short}"`)).toBe('"***"');
  });
});

describe('mayNeedRedaction: the fast path of the write-ahead log', () => {
  it('is false for a JSON text with no secret and no credential pattern, true otherwise', async () => {
    const { mayNeedRedaction } = await import('../../src/client/secrets.js');
    const quoted = 'pa"ss\\wörd-0123';
    registerSecret(quoted);
    // (Free of every secret the tests of this file register, 'p' among them: a substring is enough to say true.)
    const clean = JSON.stringify({ title: 'logs in', file: 'tests/a.test.ts', out: ['ok'] });
    expect(mayNeedRedaction(clean)).toBe(false);
    // The secret in a string value: JSON escapes its quote and backslash, and it is still found.
    const holding = JSON.stringify({ out: [`password is ${quoted}`] });
    expect(holding).not.toContain(quoted);
    expect(mayNeedRedaction(holding)).toBe(true);
    expect(redact(`password is ${quoted}`)).not.toContain(quoted);
    for (const text of ['Authorization: Basic dXNlcjpwYXNz', 'Bearer abcdefgh', 'http://u:p@host', '{"ticket": "x"}']) {
      expect(mayNeedRedaction(JSON.stringify({ out: [text] }))).toBe(true);
    }
  });
});
