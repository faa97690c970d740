import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AmbiguousError,
  type ClientOptions,
  ConfigError,
  JiraClient,
  NetworkError,
  TestManagementClient,
} from '../../src/index.js';
import { ADMIN, useEmulator } from '../support/emulator.js';
import { NO_PROXY_ENV, type RunningProxy, startProxy, withEnv } from '../support/proxy.js';
import { makePki, opensslAvailable, type Pki, startTlsFront, type TlsFront } from '../support/tls.js';

/**
 * TLS verification against a real HTTPS server whose certificate a private CA signed (made with openssl at test
 * time; the server forwards to the emulator): refused by default, with a message that names the fix, and accepted
 * with that CA given as `caFile`, directly, through a proxy, and beside NODE_EXTRA_CA_CERTS.
 */

if (!opensslAvailable) {
  console.warn('tls.test.ts: skipped, `openssl` is not on PATH (needed to issue the test certificates)');
}

describe.skipIf(!opensslAvailable)('TLS (needs openssl to issue the test certificates)', () => {
  const emu = useEmulator();
  let pki: Pki;
  let front: TlsFront;
  let proxy: RunningProxy;
  const clients: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    pki = makePki();
    [front, proxy] = await Promise.all([startTlsFront(pki, emu().url), startProxy()]);
  });
  afterAll(async () => {
    await Promise.all([front?.close(), proxy?.close()]);
    pki?.remove();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  const options = (o: Partial<ClientOptions> = {}): ClientOptions => ({
    baseUrl: front.url,
    auth: ADMIN,
    retry: { retries: 2, baseDelayMs: 5, maxDelayMs: 20 },
    ...o,
  });
  function jira(o: Partial<ClientOptions> = {}): JiraClient {
    const c = new JiraClient(options(o));
    clients.push(c);
    return c;
  }
  function tm(o: Partial<ClientOptions> = {}): TestManagementClient {
    const c = new TestManagementClient(options(o));
    clients.push(c);
    return c;
  }

  it('refuses the server by default: NetworkError, not retried, naming caFile', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const c = jira();
      const err = await c.jira.myself().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).toMatchObject({ kind: 'network', retryable: false });
      expect((err as NetworkError).code).toMatch(/CERT|VERIFY|SELF_SIGNED/);
      expect((err as Error).message).toMatch(/caFile/);
      expect((err as Error).message).toMatch(/NODE_EXTRA_CA_CERTS/);
      expect(c.transport.stats).toMatchObject({ requests: 1, retries: 0, failures: 1 });
    });
  });

  it('a create refused by TLS was never sent: not ambiguous', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const err = await tm()
        .runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).not.toBeInstanceOf(AmbiguousError);
    });
  });

  it('accepts the server with its CA as caFile', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const before = front.handshakes();
      expect((await jira({ caFile: pki.caFile }).jira.myself()).name).toBe('admin');
      const members = await tm({ caFile: pki.caFile }).plans.members({ testPlanIssueKey: 'DEMO-1' });
      expect(members.length).toBeGreaterThan(0);
      expect(front.handshakes()).toBeGreaterThan(before);
    });
  });

  it('a caFile of another CA does not make the server trusted', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const err = await jira({ caFile: pki.otherCaFile })
        .jira.myself()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect((err as Error).message).toMatch(/caFile/);
    });
  });

  it('keeps NODE_EXTRA_CA_CERTS when caFile is given too', async () => {
    await withEnv({ ...NO_PROXY_ENV, NODE_EXTRA_CA_CERTS: pki.caFile }, async () => {
      expect((await jira({ caFile: pki.otherCaFile }).jira.myself()).name).toBe('admin');
    });
  });

  it('reaches the HTTPS server through a proxy tunnel, verifying it with caFile', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      const before = await proxy.stats();
      expect((await jira({ caFile: pki.caFile, proxy: proxy.url }).jira.myself()).name).toBe('admin');
      const refused = await jira({ proxy: proxy.url })
        .jira.myself()
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(NetworkError);
      expect((refused as Error).message).toMatch(/caFile/);
      expect((await proxy.stats()).tunnels).toBeGreaterThanOrEqual(before.tunnels + 2);
    });
  });

  it('HTTPS_PROXY applies to the HTTPS server, with caFile', async () => {
    const before = await proxy.stats();
    await withEnv({ ...NO_PROXY_ENV, HTTPS_PROXY: proxy.url }, async () => {
      expect((await jira({ caFile: pki.caFile }).jira.myself()).name).toBe('admin');
    });
    expect((await proxy.stats()).tunnels).toBeGreaterThan(before.tunnels);
  });

  it('verification can be turned off explicitly', async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      expect((await jira({ rejectUnauthorized: false }).jira.myself()).name).toBe('admin');
    });
  });

  it('a caFile that cannot be read, or holds no certificate, is a ConfigError naming it', () => {
    const missing = join(pki.dir, 'missing.pem');
    expect(() => jira({ caFile: missing })).toThrow(ConfigError);
    expect(() => jira({ caFile: missing })).toThrow(/caFile .*missing\.pem cannot be read/);
    const notPem = join(pki.dir, 'not-a-cert.pem');
    writeFileSync(notPem, 'hello');
    expect(() => jira({ caFile: notPem })).toThrow(/holds no PEM certificate/);
  });
});
