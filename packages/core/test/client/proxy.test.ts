import { createServer, type Server, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AmbiguousError,
  type ClientOptions,
  ConfigError,
  NetworkError,
  TestManagementClient,
} from '../../src/index.js';
import { ADMIN, closedPort, useEmulator } from '../support/emulator.js';
import { NO_PROXY_ENV, type RunningProxy, startProxy, withEnv } from '../support/proxy.js';

/**
 * Proxies, with a real forward proxy in a child process that counts what it carries: the explicit `proxy` option
 * (with and without credentials), HTTP_PROXY from the environment, and NO_PROXY. The proxy tunnels with CONNECT
 * and forwards absolute-URI requests; a tunnel or a forwarded request both count as "through the proxy".
 */

const PROXY_USER = 'ci-bot';
/** Characters that must be percent-encoded in a URL, so that decoding is exercised too. */
const PROXY_PASSWORD = 'Pr0xy:p@ss/w%rd#1';
const credentialsUrl = (proxy: RunningProxy, password = PROXY_PASSWORD) =>
  `http://${PROXY_USER}:${encodeURIComponent(password)}@127.0.0.1:${proxy.port}`;

const emu = useEmulator();
let open: RunningProxy;
let guarded: RunningProxy;
const clients: TestManagementClient[] = [];

beforeAll(async () => {
  [open, guarded] = await Promise.all([startProxy(), startProxy({ auth: `${PROXY_USER}:${PROXY_PASSWORD}` })]);
});
afterAll(async () => {
  await Promise.all([open?.close(), guarded?.close()]);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function client(options: Partial<ClientOptions> = {}): TestManagementClient {
  const c = new TestManagementClient({
    baseUrl: emu().url,
    auth: ADMIN,
    retry: { retries: 2, baseDelayMs: 5, maxDelayMs: 20 },
    ...options,
  });
  clients.push(c);
  return c;
}

const through = (s: { forwarded: number; tunnels: number }) => s.forwarded + s.tunnels;
const emulatorHost = () => new URL(emu().url).host;

/** Every text an error offers a log or a reporter. */
const renderings = (err: unknown) => [
  String(err),
  (err as Error).message,
  (err as Error).stack ?? '',
  JSON.stringify(err),
  inspect(err, { depth: 10 }),
];

describe('explicit proxy option', () => {
  it('routes every call through the proxy', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const before = await open.stats();
      const c = client({ proxy: open.url });
      const members = await c.plans.members({ testPlanIssueKey: 'DEMO-1' });
      expect(members.length).toBeGreaterThan(0);
      expect((await c.jira.myself()).name).toBe('admin');
      const after = await open.stats();
      expect(through(after)).toBeGreaterThan(through(before));
      expect(after.targets).toContain(emulatorHost());
    });
  });

  it('sends the credentials of the proxy URL, percent-encoded characters included', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const before = await guarded.stats();
      const c = client({ proxy: credentialsUrl(guarded) });
      const run = await c.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' });
      expect(typeof run.id).toBe('number');
      const after = await guarded.stats();
      expect(through(after)).toBeGreaterThan(through(before));
      expect(after.refused).toBe(before.refused);
    });
  });

  it('wrong proxy credentials: a NetworkError that says so, not retried, without the password', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const wrong = 'Wr0ng:pr0xy/p@ss';
      const before = await guarded.stats();
      const c = client({ proxy: credentialsUrl(guarded, wrong) });
      const err = await c.plans.members({ testPlanIssueKey: 'DEMO-1' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).toMatchObject({ retryable: false });
      expect((err as Error).message).toMatch(/407/);
      expect(c.transport.stats.requests).toBe(1);
      expect((await guarded.stats()).refused).toBe(before.refused + 1);
      for (const text of renderings(err)) {
        expect(text).not.toContain(wrong);
        expect(text).not.toContain(encodeURIComponent(wrong));
        expect(text).not.toContain(Buffer.from(`${PROXY_USER}:${wrong}`).toString('base64'));
      }
    });
  });

  it('a create refused by the proxy was never sent: not ambiguous', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client({ proxy: credentialsUrl(guarded, 'not-the-password') });
      const err = await c.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).not.toBeInstanceOf(AmbiguousError);
    });
  });

  it('a proxy that is down: NetworkError after the retries, for a create too (nothing was sent)', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client({ proxy: `http://127.0.0.1:${await closedPort()}` });
      const err = await c.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).toMatchObject({ code: 'ECONNREFUSED', retryable: true });
      expect(c.transport.stats.requests).toBe(3);
    });
  });

  it('a target the proxy cannot reach (502 to the CONNECT): retried, then NetworkError; a create is not ambiguous', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client({ proxy: open.url, baseUrl: `http://127.0.0.1:${await closedPort()}` });
      const err = await c.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).not.toBeInstanceOf(AmbiguousError);
      expect((err as Error).message).toMatch(/502/);
      expect(c.transport.stats.requests).toBe(3);
    });
  });

  // undici 7 alone would keep these requests queued for ever (nodejs/undici#3897) or wait 300 s for the CONNECT.
  for (const [behaviour, onData] of [
    ['drops the connection', (s: Socket) => s.destroy()],
    ['never answers', () => {}],
  ] as const) {
    it(`a proxy that ${behaviour} during CONNECT: NetworkError after the retries, a create not ambiguous`, async () => {
      const sockets = new Set<Socket>();
      const bad: Server = createServer((s) => {
        sockets.add(s);
        s.on('error', () => {});
        s.once('data', () => onData(s));
      });
      await new Promise<void>((resolve) => bad.listen(0, '127.0.0.1', resolve));
      try {
        await withEnv(NO_PROXY_ENV, async () => {
          const port = (bad.address() as { port: number }).port;
          const c = client({ proxy: `http://127.0.0.1:${port}`, timeouts: { headersMs: 300 } });
          const err = await c.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' }).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(NetworkError);
          expect(err).toMatchObject({ code: 'UND_ERR_PRX_CONN', retryable: true });
          expect((err as Error).message).toMatch(/proxy failed while opening the tunnel/);
          expect(c.transport.stats.requests).toBe(3);
        });
      } finally {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => bad.close(() => resolve()));
      }
    });
  }

  it('wins over HTTP_PROXY', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`;
    await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: dead }, async () => {
      const before = await open.stats();
      const c = client({ proxy: open.url });
      await c.plans.members({ testPlanIssueKey: 'DEMO-1' });
      expect(through(await open.stats())).toBeGreaterThan(through(before));
    });
  });
});

describe('proxy from the environment', () => {
  it('HTTP_PROXY routes the calls through the proxy', async () => {
    const before = await open.stats();
    await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: open.url }, async () => {
      const c = client();
      await c.plans.members({ testPlanIssueKey: 'DEMO-1' });
      await c.jira.myself();
    });
    const after = await open.stats();
    expect(through(after)).toBeGreaterThan(through(before));
    expect(after.targets).toContain(emulatorHost());
    // The variable is gone again once the test is over.
    expect(process.env.HTTP_PROXY).toBeUndefined();
  });

  it('the lower-case http_proxy works as well', async () => {
    const before = await open.stats();
    await withEnv({ ...NO_PROXY_ENV, http_proxy: open.url }, async () => {
      await client().plans.members({ testPlanIssueKey: 'DEMO-1' });
    });
    expect(through(await open.stats())).toBeGreaterThan(through(before));
  });

  it('HTTP_PROXY with credentials', async () => {
    const before = await guarded.stats();
    await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: credentialsUrl(guarded) }, async () => {
      await client().plans.members({ testPlanIssueKey: 'DEMO-1' });
    });
    const after = await guarded.stats();
    expect(through(after)).toBeGreaterThan(through(before));
    expect(after.refused).toBe(before.refused);
  });

  it('wrong credentials in HTTP_PROXY never show in the error', async () => {
    const wrong = 'env-Wr0ng:pa/ss';
    await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: credentialsUrl(guarded, wrong) }, async () => {
      const err = await client()
        .plans.members({ testPlanIssueKey: 'DEMO-1' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetworkError);
      for (const text of renderings(err)) {
        expect(text).not.toContain(wrong);
        expect(text).not.toContain(encodeURIComponent(wrong));
      }
    });
  });

  for (const noProxy of ['127.0.0.1', 'localhost,127.0.0.1', '*']) {
    it(`NO_PROXY=${noProxy} bypasses the proxy`, async () => {
      const before = await open.stats();
      await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: open.url, NO_PROXY: noProxy }, async () => {
        const c = client();
        await c.plans.members({ testPlanIssueKey: 'DEMO-1' });
        await c.jira.myself();
      });
      expect(await open.stats()).toEqual(before);
    });
  }
});

describe('proxy settings that cannot work', () => {
  // A scheme forgotten (`proxy.corp:3128`) parses as a URL of scheme `proxy.corp:`; so does `user:pass@host`.
  const values = ['proxy.corp:3128', 'ci-bot:Sch3meless-s3cret@proxy.corp:3128'];

  for (const value of values) {
    it(`the proxy option ${value.replace(/:[^:@]*@/, ':***@')}: ConfigError naming the option, value not echoed`, async () => {
      await withEnv(NO_PROXY_ENV, async () => {
        const err = (() => {
          try {
            client({ proxy: value });
          } catch (e) {
            return e;
          }
        })();
        expect(err).toBeInstanceOf(ConfigError);
        expect((err as Error).message).toMatch(/proxy option.*http:\/\/proxy\.example\.com:3128/);
        for (const text of renderings(err)) expect(text).not.toContain('Sch3meless-s3cret');
      });
    });

    it(`HTTPS_PROXY=${value.replace(/:[^:@]*@/, ':***@')}: ConfigError naming the variable`, async () => {
      await withEnv({ ...NO_PROXY_ENV, HTTPS_PROXY: value }, async () => {
        expect(() => client()).toThrow(ConfigError);
        expect(() => client()).toThrow(/HTTPS_PROXY/);
      });
    });
  }
});
