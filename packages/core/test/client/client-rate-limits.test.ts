import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RatePacer, readRateLimit } from '../../src/client/rate-pacer.js';
import { type ClientOptions, TestManagementClient } from '../../src/index.js';
import { ADMIN, requestLog, useEmulator } from '../support/emulator.js';
import { NO_PROXY_ENV, withEnv } from '../support/proxy.js';

/**
 * Rate limits as Jira Data Center applies them: a token bucket per user announced by `X-RateLimit-*` headers, and
 * 429 / 503 with a `Retry-After` that may be 0. The pacing arithmetic runs on a fake clock; the transport against a
 * raw server on port 0 that keeps a real bucket and answers 429 when it is empty.
 */

const headers = (remaining: number, fillRate = 10, interval = 1, limit?: number) => ({
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-fillrate': String(fillRate),
  'x-ratelimit-interval-seconds': String(interval),
  ...(limit !== undefined ? { 'x-ratelimit-limit': String(limit) } : {}),
});

describe('the pacing arithmetic (fake clock)', () => {
  it('reads the headers, and ignores answers without a usable set', () => {
    expect(readRateLimit(headers(3, 10, 2, 20))).toEqual({ remaining: 3, fillRate: 10, intervalMs: 2000, limit: 20 });
    expect(readRateLimit({})).toBeUndefined();
    expect(readRateLimit({ ...headers(3), 'x-ratelimit-fillrate': '0' })).toBeUndefined();
    expect(readRateLimit({ ...headers(3), 'x-ratelimit-remaining': 'lots' })).toBeUndefined();
  });

  it('no headers seen: nothing waits', () => {
    const p = new RatePacer(() => 0);
    for (let i = 0; i < 100; i += 1) expect(p.reserve()).toBe(0);
    expect(p.limited).toBe(false);
  });

  it('waits once the tokens are used up, one refill interval per token (10 per second: 100 ms each)', () => {
    let now = 0;
    const p = new RatePacer(() => now);
    p.reserve();
    p.observe(headers(3, 10, 1));
    // 3 tokens left: three requests go at once, the next ones are spaced by the refill.
    expect([p.reserve(), p.reserve(), p.reserve()]).toEqual([0, 0, 0]);
    expect(p.reserve()).toBe(100);
    expect(p.reserve()).toBe(200);
    now = 200;
    // Both reservations have refilled by now: the next waits one more token.
    expect(p.reserve()).toBe(100);
  });

  it('counts the requests still in flight against the tokens the server reports', () => {
    const now = 0;
    const p = new RatePacer(() => now);
    for (let i = 0; i < 4; i += 1) p.reserve();
    // The first answer says 4 remain, but 3 requests of ours are still on their way: 1 is really left.
    p.observe(headers(4, 5, 1));
    expect(p.reserve()).toBe(0);
    expect(p.reserve()).toBe(200);
  });

  it('refills up to the bucket size only, and a request that got no answer gives its token back', () => {
    let now = 0;
    const p = new RatePacer(() => now);
    p.reserve();
    p.observe(headers(0, 1, 1, 2));
    now = 60_000;
    // A minute later the bucket holds 2 (its size), not 60.
    expect([p.reserve(), p.reserve()]).toEqual([0, 0]);
    expect(p.reserve()).toBe(1000);
    p.release();
    expect(p.reserve()).toBe(1000);
  });
});

const servers: Server[] = [];
const clients: TestManagementClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/**
 * A server with a continuous token bucket (`size` tokens, `fillRate` per second) that announces it on every answer
 * and answers 429 with `Retry-After: 0` when it is empty, as Jira does for a bucket that refills within the second.
 */
async function limited(size: number, fillRate: number): Promise<{ url: string; statuses: number[] }> {
  let tokens = size;
  let at = performance.now();
  const statuses: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    const now = performance.now();
    tokens = Math.min(size, tokens + ((now - at) / 1000) * fillRate);
    at = now;
    const ok = tokens >= 1;
    if (ok) tokens -= 1;
    statuses.push(ok ? 200 : 429);
    const announced = {
      'content-type': 'application/json',
      'x-ratelimit-limit': String(size),
      'x-ratelimit-remaining': String(Math.floor(tokens)),
      'x-ratelimit-fillrate': String(fillRate),
      'x-ratelimit-interval-seconds': '1',
    };
    res.writeHead(ok ? 200 : 429, ok ? announced : { ...announced, 'retry-after': '0' });
    res.end(ok ? '[]' : '{"message":"Too many requests"}');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, statuses };
}

function client(url: string, extra: Partial<ClientOptions> = {}): TestManagementClient {
  const c = new TestManagementClient({ baseUrl: url, auth: ADMIN, concurrency: 4, ...extra });
  clients.push(c);
  return c;
}

const members = (c: TestManagementClient) => c.plans.members({ testPlanIssueKey: 'DEMO-1' });

describe('pacing against a real bucket', () => {
  it('30 calls on a bucket of 5 refilling 20 a second: paced to the refill, no 429', async () => {
    const s = await limited(5, 20);
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(s.url);
      const started = performance.now();
      await Promise.all(Array.from({ length: 30 }, () => members(c)));
      // 25 calls beyond the bucket at 20 a second: at least 1.25 s (less the first answer's round trip).
      expect(performance.now() - started).toBeGreaterThanOrEqual(1150);
      expect(c.transport.pacer.limited).toBe(true);
    });
    expect(s.statuses.filter((x) => x === 429)).toEqual([]);
    expect(s.statuses).toHaveLength(30);
  });

  it('without pacing the same load hits 429s (what the headers save)', async () => {
    const s = await limited(5, 20);
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(s.url, { retry: { retries: 2, baseDelayMs: 5, maxDelayMs: 20 } });
      // A pacer that never sees the headers: the transport as it was.
      (c.transport.pacer as unknown as { observe: () => void }).observe = () => undefined;
      await Promise.allSettled(Array.from({ length: 30 }, () => members(c)));
    });
    expect(s.statuses.filter((x) => x === 429).length).toBeGreaterThan(0);
  });
});

describe("the emulator's per-user limiter (Jira's headers and 429 with Retry-After: 0)", () => {
  const emu = useEmulator({
    rateLimit: { fillRate: 20, intervalSeconds: 1, burst: 5, perUser: true, retryAfterSeconds: 0 },
  });

  it('40 calls: paced by the headers, no 429', async () => {
    // The first wave (concurrency 4) leaves before any answer has told the limit; the bucket holds 5.
    const c = client(emu().url, { concurrency: 4 });
    await Promise.all(Array.from({ length: 40 }, () => members(c)));
    const statuses = (await requestLog(emu())).map((e) => e.status);
    expect(statuses).toHaveLength(40);
    expect(statuses.filter((x) => x === 429)).toEqual([]);
  });
});

describe('Retry-After: 0 still backs off', () => {
  it('a 429 and a 503 with Retry-After: 0 are retried after at least half the backoff bound', async () => {
    const statuses = [429, 503, 200];
    const at: number[] = [];
    const server = createServer((req, res) => {
      req.resume();
      at.push(performance.now());
      const status = statuses[at.length - 1] ?? 200;
      res.writeHead(status, { 'content-type': 'application/json', ...(status === 200 ? {} : { 'retry-after': '0' }) });
      res.end(status === 200 ? '[]' : '{}');
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
        retry: { baseDelayMs: 200, maxDelayMs: 1000 },
      });
      await members(c);
    });
    expect(at).toHaveLength(3);
    // Attempt 0: bound 200 ms, at least 100; attempt 1: bound 400 ms, at least 200.
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(95);
    expect((at[2] as number) - (at[1] as number)).toBeGreaterThanOrEqual(195);
  });
});
