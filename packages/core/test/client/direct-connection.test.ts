import { spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpError, TestManagementClient, TimeoutError } from '../../src/index.js';
import { needsBuild } from '../support/built.js';
import { ADMIN } from '../support/emulator.js';
import { NO_PROXY_ENV, withEnv } from '../support/proxy.js';

/**
 * The direct connection (no proxy), which runs on `node:http` rather than undici: keep-alive reuse, the body
 * timeout, the response size cap, and that undici is not even loaded. Raw servers play the misbehaving service.
 */

const servers: Server[] = [];
const clients: TestManagementClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{
  url: string;
  sockets: Set<Socket>;
}> {
  const sockets = new Set<Socket>();
  const server = createServer(handler);
  server.on('connection', (s) => sockets.add(s));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

function client(baseUrl: string, extra: Record<string, unknown> = {}): TestManagementClient {
  const c = new TestManagementClient({
    baseUrl,
    auth: ADMIN,
    retry: { retries: 1, baseDelayMs: 5, maxDelayMs: 10 },
    ...extra,
  });
  clients.push(c);
  return c;
}

const members = (c: TestManagementClient) => c.plans.members({ testPlanIssueKey: 'DEMO-1' });

describe('the direct connection', () => {
  it('keeps connections alive: 20 calls one after another use one socket', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('[]');
    });
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(s.url);
      for (let i = 0; i < 20; i += 1) expect(await members(c)).toEqual([]);
    });
    expect(s.sockets.size).toBe(1);
  });

  it('a body that stops arriving: TimeoutError (body) after the retries', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      // ...and nothing more.
    });
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(s.url, { timeouts: { bodyMs: 150 } });
      const err = await members(c).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TimeoutError);
      expect((err as TimeoutError).message).toMatch(/body/);
      expect(c.transport.stats.requests).toBe(2);
    });
  });

  it('an answer larger than maxResponseBytes is cut off with a clear error', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(`[${'"x",'.repeat(100_000)}"x"]`);
    });
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(s.url, { maxResponseBytes: 10_000 });
      const err = await members(c).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HttpError);
      expect((err as Error).message).toMatch(/larger than maxResponseBytes/);
    });
  });
});

describe('undici is loaded only for a proxy', () => {
  const built = needsBuild('index.js');
  const dist = built('index.js');
  const script = `
    const { TestManagementClient } = await import(${JSON.stringify(dist)});
    const c = new TestManagementClient({ baseUrl: 'http://127.0.0.1:9', auth: { type: 'bearer', token: 't' } });
    await c.close();
    const { createRequire } = await import('node:module');
    const cache = createRequire(${JSON.stringify(dist)}).cache;
    console.log(Object.keys(cache).some((k) => k.includes('/undici/')) ? 'undici' : 'none');
  `;
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
    });

  it('a direct connection never loads it', () => {
    const r = run({});
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('none');
  });

  it('HTTPS_PROXY does', () => {
    const r = run({ HTTPS_PROXY: 'http://127.0.0.1:3128' });
    expect(r.stdout.trim()).toBe('undici');
  });
});
