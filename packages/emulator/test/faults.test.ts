import { describe, expect, it } from 'vitest';
import { FaultController } from '../src/behaviour/faults.js';
import { RateLimiter } from '../src/behaviour/ratelimit.js';
import type { RunningEmulator } from '../src/index.js';
import { startEmulator } from '../src/server.js';
import { basic, call, REPO, TM, TM_ALIAS, useEmulator } from './helpers.js';

/**
 * Faults on purpose, over real HTTP: latency, error answers, resets, hangs and malformed bodies, scoped by route,
 * method and count, deterministic per seed, changed live through the admin endpoint. Also the rate limiter.
 * Only test-plan operations and the admin endpoints are used. Timings assert lower bounds only.
 */

const PLAN = `${TM}/testPlan/DEMO-1`;
const AUTH = basic('admin', 'admin');

/** A request that may fail at the connection level: resolves with the status, or with the error it failed with. */
async function attempt(
  emu: RunningEmulator,
  method: string,
  path: string,
  o: { body?: unknown; timeoutMs?: number } = {},
): Promise<{ status?: number; text?: string; headers?: Headers; error?: Error; ms: number }> {
  const started = performance.now();
  try {
    const res = await fetch(emu.url + path, {
      method,
      headers: {
        authorization: AUTH,
        accept: 'application/json',
        ...(o.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
      signal: o.timeoutMs ? AbortSignal.timeout(o.timeoutMs) : undefined,
    });
    const text = await res.text();
    return { status: res.status, text, headers: res.headers, ms: performance.now() - started };
  } catch (err) {
    return { error: err as Error, ms: performance.now() - started };
  }
}

const cycleNames = (emu: RunningEmulator) => emu.store.cycles.all().map((c) => c.name);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('latency', () => {
  const emu = useEmulator();

  it('adds the fixed latency to every matching request (lower bound)', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ latencyMs: 150 }] });
    for (let i = 0; i < 3; i++) {
      const r = await attempt(emu(), 'GET', `${PLAN}/members`);
      expect(r.status).toBe(200);
      expect(r.ms).toBeGreaterThanOrEqual(145);
    }
    await call(emu(), 'DELETE', '/__emulator/faults');
  });

  it('adds jitter drawn from the seeded dice: each request waits at least its planned delay', async () => {
    // Small enough that the eight requests take well under a second in all (at most 8 × 120 ms).
    const rules = [{ latencyMs: 20, jitterMs: 100 }];
    // The same rules and seed in a controller of our own give the delays the server plans, in order.
    const expected = new FaultController(rules, 42);
    const planned = Array.from({ length: 8 }, () => expected.plan('GET', `${PLAN}/members`).delayMs);
    expect(new Set(planned).size).toBeGreaterThan(1);
    for (const d of planned) expect(d).toBeGreaterThanOrEqual(20);
    await call(emu(), 'PUT', '/__emulator/faults', { body: { rules, seed: 42 } });
    for (const d of planned) {
      const r = await attempt(emu(), 'GET', `${PLAN}/members`);
      expect(r.status).toBe(200);
      expect(r.ms).toBeGreaterThanOrEqual(d - 5);
    }
    await call(emu(), 'DELETE', '/__emulator/faults');
  });
});

describe('error answers', () => {
  const emu = useEmulator();

  for (const status of [429, 500, 502, 503, 504] as const) {
    it(`answers ${status} with probability 1, before the handler runs`, async () => {
      await call(emu(), 'PUT', '/__emulator/faults', {
        body: [{ errors: { [String(status)]: 1 }, retryAfterSeconds: 7 }],
      });
      const r = await attempt(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: `never ${status}` } });
      expect(r.status).toBe(status);
      expect(r.headers?.get('content-type')).toMatch(/^text\/plain/);
      if (status === 429) expect(r.text).toBe('Too many Requests');
      else expect(r.text).toContain(String(status));
      // 429 and 503 tell the client when to come back.
      expect(r.headers?.get('retry-after')).toBe(status === 429 || status === 503 ? '7' : null);
      expect(cycleNames(emu())).not.toContain(`never ${status}`);
      const log = (await call(emu(), 'GET', '/__emulator/requests')).json as { fault: string | null }[];
      expect(log.at(-1)?.fault).toBe(`error ${status}`);
      await call(emu(), 'DELETE', '/__emulator/faults');
    });
  }

  it('scopes a rule to a route glob (`*` one segment, `**` anything)', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', {
      body: [{ route: '/rest/*/latest/public/testPlan/*/cycles', errors: { '503': 1 } }],
    });
    expect((await attempt(emu(), 'GET', `${PLAN}/cycles`)).status).toBe(503);
    expect((await attempt(emu(), 'GET', `${TM_ALIAS}/testPlan/DEMO-1/cycles`)).status).toBe(503);
    expect((await attempt(emu(), 'GET', `${PLAN}/members`)).status).toBe(200);
    // `*` does not cross a `/`.
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ route: '/rest/*/cycles', errors: { '503': 1 } }] });
    expect((await attempt(emu(), 'GET', `${PLAN}/cycles`)).status).toBe(200);
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ route: '/rest/**/cycles', errors: { '503': 1 } }] });
    expect((await attempt(emu(), 'GET', `${PLAN}/cycles`)).status).toBe(503);
    expect((await attempt(emu(), 'GET', `${PLAN}/members`)).status).toBe(200);
    await call(emu(), 'DELETE', '/__emulator/faults');
  });

  it('scopes a rule to methods', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ methods: ['POST'], errors: { '502': 1 } }] });
    expect((await attempt(emu(), 'POST', `${PLAN}/addMembers`, { body: { testCaseKeys: ['DEMO-2'] } })).status).toBe(
      502,
    );
    expect((await attempt(emu(), 'GET', `${PLAN}/members`)).status).toBe(200);
    await call(emu(), 'DELETE', '/__emulator/faults');
  });

  it('stops a rule after `times` applications', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ errors: { '503': 1 }, times: 2 }] });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await attempt(emu(), 'GET', `${PLAN}/members`)).status);
    expect(statuses).toEqual([503, 503, 200, 200]);
    const listed = (await call(emu(), 'GET', '/__emulator/faults')).json;
    expect(listed.used).toEqual([2]);
    await call(emu(), 'DELETE', '/__emulator/faults');
  });

  it('checks rules in order: the first failing rule decides, every matching rule adds its latency', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', {
      body: [
        { latencyMs: 60, route: '**/members' },
        { errors: { '504': 1 }, route: '**/members' },
        { errors: { '500': 1 } },
      ],
    });
    const r = await attempt(emu(), 'GET', `${PLAN}/members`);
    expect(r.status).toBe(504);
    expect(r.ms).toBeGreaterThanOrEqual(55);
    expect((await attempt(emu(), 'GET', `${PLAN}/cycles`)).status).toBe(500);
    await call(emu(), 'DELETE', '/__emulator/faults');
  });
});

describe('determinism', () => {
  /** The statuses of 50 requests under a 50 % 503 rule, with the given dice seed. */
  async function sequence(faultSeed: number): Promise<number[]> {
    const emu = await startEmulator({ port: 0, faults: [{ errors: { '503': 0.5 } }], faultSeed });
    try {
      const out: number[] = [];
      for (let i = 0; i < 50; i++) out.push((await attempt(emu, 'GET', `${PLAN}/members`)).status ?? 0);
      return out;
    } finally {
      await emu.close();
    }
  }

  it('gives the same outcomes for the same seed and different ones for another seed', async () => {
    const a = await sequence(7);
    const b = await sequence(7);
    const c = await sequence(8);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
    // Both outcomes occur: the dice are really rolled.
    expect(a).toContain(503);
    expect(a).toContain(200);
  });

  it('restarts the dice when the rules are replaced with a seed', async () => {
    const emu = await startEmulator({ port: 0 });
    try {
      const run = async () => {
        await call(emu, 'PUT', '/__emulator/faults', { body: { rules: [{ errors: { '503': 0.5 } }], seed: 3 } });
        const out: number[] = [];
        for (let i = 0; i < 20; i++) out.push((await attempt(emu, 'GET', `${PLAN}/members`)).status ?? 0);
        return out;
      };
      expect(await run()).toEqual(await run());
    } finally {
      await emu.close();
    }
  });
});

describe('connection resets and hangs', () => {
  const emu = useEmulator();

  it('reset before: the connection dies and nothing changed', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ resetRate: 1, phase: 'before' }] });
    const r = await attempt(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: 'reset before' } });
    expect(r.status).toBeUndefined();
    expect(r.error).toBeInstanceOf(Error);
    await call(emu(), 'DELETE', '/__emulator/faults');
    expect(cycleNames(emu())).not.toContain('reset before');
    const log = (await call(emu(), 'GET', '/__emulator/requests')).json as { fault: string; status: number }[];
    expect(log.find((e) => e.fault === 'reset')).toMatchObject({ status: 0 });
  });

  it('reset after: the write is committed, then the connection dies (an ambiguous failure)', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ resetRate: 1, phase: 'after' }] });
    const r = await attempt(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: 'reset after' } });
    expect(r.status).toBeUndefined();
    expect(r.error).toBeInstanceOf(Error);
    await call(emu(), 'DELETE', '/__emulator/faults');
    expect(cycleNames(emu())).toContain('reset after');
    // A retry by the client finds the cycle already there.
    const retry = await call(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: 'reset after' } });
    expect(retry.status).toBe(500);
    expect(retry.json.message).toContain('already exists');
  });

  it('hang before: the client gives up, and nothing changed even after the hang ends', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ hangRate: 1, hangMs: 600, phase: 'before' }] });
    const r = await attempt(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: 'hang before' }, timeoutMs: 200 });
    expect(r.error?.name).toBe('TimeoutError');
    expect(r.ms).toBeGreaterThanOrEqual(195);
    await call(emu(), 'DELETE', '/__emulator/faults');
    await sleep(600);
    expect(cycleNames(emu())).not.toContain('hang before');
  });

  it('hang after: the write is committed while the client waits in vain', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ hangRate: 1, hangMs: 5_000, phase: 'after' }] });
    const r = await attempt(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: 'hang after' }, timeoutMs: 200 });
    expect(r.error?.name).toBe('TimeoutError');
    await call(emu(), 'DELETE', '/__emulator/faults');
    expect(cycleNames(emu())).toContain('hang after');
  });

  it('a hang shorter than the client timeout ends in a slow answer (after) or a dead connection (before)', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ hangRate: 1, hangMs: 150, phase: 'after' }] });
    const slow = await attempt(emu(), 'GET', `${PLAN}/members`, { timeoutMs: 5_000 });
    expect(slow.status).toBe(200);
    expect(slow.ms).toBeGreaterThanOrEqual(145);
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ hangRate: 1, hangMs: 150, phase: 'before' }] });
    const dead = await attempt(emu(), 'GET', `${PLAN}/members`, { timeoutMs: 5_000 });
    expect(dead.error).toBeInstanceOf(Error);
    expect(dead.error?.name).not.toBe('TimeoutError');
    await call(emu(), 'DELETE', '/__emulator/faults');
  });
});

describe('malformed bodies', () => {
  const emu = useEmulator();
  const malformed = async (malformedKind: string) => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ malformedRate: 1, malformedKind }] });
    const r = await attempt(emu(), 'GET', `${PLAN}/members`);
    await call(emu(), 'DELETE', '/__emulator/faults');
    return r;
  };

  it('html: a proxy error page with status 200', async () => {
    const r = await malformed('html');
    expect(r.status).toBe(200);
    expect(r.headers?.get('content-type')).toMatch(/^text\/html/);
    expect(r.text).toMatch(/^<!DOCTYPE html>/);
  });

  it('truncated: the first half of the real JSON', async () => {
    const real = (await call(emu(), 'GET', `${PLAN}/members`)).text;
    const r = await malformed('truncated');
    expect(r.status).toBe(200);
    expect(r.headers?.get('content-type')).toMatch(/^application\/json/);
    expect(r.text?.length).toBeGreaterThan(0);
    expect(r.text?.length).toBeLessThan(real.length);
    expect(real.startsWith(r.text ?? '-')).toBe(true);
    expect(() => JSON.parse(r.text ?? '')).toThrow();
  });

  it('empty: status 200, JSON content type, no bytes', async () => {
    const r = await malformed('empty');
    expect(r.status).toBe(200);
    expect(r.headers?.get('content-type')).toMatch(/^application\/json/);
    expect(r.text).toBe('');
  });

  it('wrong-types: valid JSON with every leaf of the wrong type', async () => {
    const real = (await call(emu(), 'GET', `${PLAN}/members`)).json as Record<string, unknown>[];
    const r = await malformed('wrong-types');
    expect(r.status).toBe(200);
    const body = JSON.parse(r.text ?? '') as Record<string, unknown>[];
    expect(body).toHaveLength(real.length);
    expect(body[0]?.id).toBe(String(real[0]?.id));
    expect(typeof body[0]?.testCaseKey).toBe('number');
  });

  it('leaves error answers alone', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ malformedRate: 1, malformedKind: 'html' }] });
    const r = await attempt(emu(), 'GET', `${TM}/testPlan/DEMO-404/members`);
    await call(emu(), 'DELETE', '/__emulator/faults');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.text ?? '').message).toContain('DEMO-404');
  });
});

describe('live changes through the admin endpoint', () => {
  const emu = useEmulator();

  it('replaces (PUT), adds (POST), lists (GET) and removes (DELETE) rules', async () => {
    const put = await call(emu(), 'PUT', '/__emulator/faults', {
      body: { rules: [{ route: '**/cycles', errors: { '503': 1 } }], seed: 5 },
    });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ seed: 5, used: [0], rules: [{ route: '**/cycles', errors: { '503': 1 } }] });
    // Defaults are filled in and shown.
    expect(put.json.rules[0]).toMatchObject({ latencyMs: 0, phase: 'before', malformedKind: 'truncated' });
    expect((await attempt(emu(), 'GET', `${PLAN}/cycles`)).status).toBe(503);

    const post = await call(emu(), 'POST', '/__emulator/faults', {
      body: { route: '**/members', errors: { '504': 1 } },
    });
    expect(post.status).toBe(200);
    expect(post.json.rules).toHaveLength(2);
    expect((await attempt(emu(), 'GET', `${PLAN}/members`)).status).toBe(504);
    expect((await call(emu(), 'GET', '/__emulator/faults')).json.used).toEqual([1, 1]);

    // A bare array replaces the rules too.
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ route: '**/members', errors: { '500': 1 } }] });
    expect((await attempt(emu(), 'GET', `${PLAN}/cycles`)).status).toBe(200);
    expect((await attempt(emu(), 'GET', `${PLAN}/members`)).status).toBe(500);

    const del = await call(emu(), 'DELETE', '/__emulator/faults');
    expect(del.json.rules).toEqual([]);
    expect((await attempt(emu(), 'GET', `${PLAN}/members`)).status).toBe(200);
  });

  it('refuses an invalid rule with 400 naming the field, and keeps the rules it had', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ route: '**/cycles', errors: { '503': 1 } }] });
    const cases: [string, unknown, string][] = [
      ['PUT', [{ resetRate: 2 }], '0.resetRate'],
      ['PUT', { rules: [{}, { latencyMs: -1 }] }, 'rules.1.latencyMs'],
      ['PUT', [{ phase: 'during' }], '0.phase'],
      ['PUT', [{ errors: { '503': 'often' } }], '0.errors.503'],
      ['PUT', [{ colour: 'red' }], '0.colour'],
      ['PUT', { rules: [], seed: 'x' }, 'seed'],
      // A single rule where the list belongs: refused rather than read as "no rules".
      ['PUT', { errors: { '503': 1 } }, 'errors'],
      ['POST', { hangRate: 1.5 }, 'hangRate'],
      ['POST', { methods: ['TRACE'] }, 'methods.0'],
      ['POST', { body: 'xml' }, 'body'],
      ['POST', { malformedKind: 'xml' }, 'malformedKind'],
      ['POST', { times: 0 }, 'times'],
    ];
    for (const [method, body, field] of cases) {
      const r = await call(emu(), method, '/__emulator/faults', { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.message).toMatch(/fault/i);
      expect(
        r.json.issues.map((i: { field: string }) => i.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    const bad = await call(emu(), 'PUT', '/__emulator/faults', {
      raw: '{"rules": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toMatch(/JSON/);
    expect((await call(emu(), 'GET', '/__emulator/faults')).json.rules).toHaveLength(1);
    expect((await attempt(emu(), 'GET', `${PLAN}/cycles`)).status).toBe(503);
    await call(emu(), 'DELETE', '/__emulator/faults');
  });
});

describe('faults given at start', () => {
  const emu = useEmulator({
    faults: [{ route: '**/testPlan/*/cycles', methods: ['GET'], errors: { '503': 1 }, retryAfterSeconds: 2 }],
  });

  it('applies them from the first request and lists them', async () => {
    const r = await attempt(emu(), 'GET', `${PLAN}/cycles`);
    expect(r.status).toBe(503);
    expect(r.headers?.get('retry-after')).toBe('2');
    expect((await attempt(emu(), 'GET', `${PLAN}/members`)).status).toBe(200);
    expect((await call(emu(), 'GET', '/__emulator/faults')).json.rules).toHaveLength(1);
  });

  it('never touches the admin endpoints', async () => {
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ errors: { '503': 1 } }] });
    expect((await call(emu(), 'GET', '/__emulator/health')).status).toBe(200);
    expect((await call(emu(), 'GET', '/__emulator/faults')).status).toBe(200);
    await call(emu(), 'DELETE', '/__emulator/faults');
  });

  it('refuses an invalid rule at start with the field named', async () => {
    await expect(startEmulator({ port: 0, faults: [{ resetRate: 3 }] })).rejects.toThrow(/resetRate/);
  });
});

describe('rate limiter', () => {
  // The emulator's injected clock: the bucket refills only when a test moves it, so each test drains and refills the
  // bucket itself, exactly, whatever ran before it and however slowly the machine answers.
  let clock = 1_000_000;
  const emu = useEmulator({ rateLimit: { requestsPerSecond: 5, burst: 5 }, now: () => clock });
  const members = () => attempt(emu(), 'GET', `${PLAN}/members`);
  /** Moves the clock past any refill, then takes the whole bucket (5 tokens): the next request finds it empty. */
  const drain = async () => {
    clock += 60_000;
    for (let i = 0; i < 5; i++) expect((await members()).status).toBe(200);
  };

  it('answers 429 "Too many Requests" with Retry-After to a burst over the limit', async () => {
    clock += 60_000;
    const results = await Promise.all(Array.from({ length: 20 }, () => members()));
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    // The clock stands still during the burst: exactly the bucket's 5 go through.
    expect(ok).toHaveLength(5);
    expect(limited).toHaveLength(15);
    expect(limited[0]?.text).toBe('Too many Requests');
    expect(limited[0]?.headers?.get('retry-after')).toBe('1');
    const log = (await call(emu(), 'GET', '/__emulator/requests')).json as { fault: string | null }[];
    expect(log.filter((e) => e.fault === 'rate-limited')).toHaveLength(limited.length);
  });

  it('lets requests through again once the bucket refills: one per 1/rate seconds, up to the burst', async () => {
    await drain();
    expect((await members()).status).toBe(429);
    clock += 199;
    expect((await members()).status, 'not yet a whole token').toBe(429);
    clock += 1;
    expect((await members()).status, 'one token after 200 ms').toBe(200);
    expect((await members()).status).toBe(429);
    clock += 10_000;
    const after = await Promise.all(Array.from({ length: 7 }, () => members()));
    expect(
      after.filter((r) => r.status === 200),
      'refilled to the burst, not beyond',
    ).toHaveLength(5);
  });

  it('does not apply to the content repository nor to the admin endpoints', async () => {
    await drain();
    const repo = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${emu().url}${REPO}/authentication/v1/validateSession`, { headers: { authorization: AUTH } }).then(
          (r) => r.status,
        ),
      ),
    );
    expect(repo).not.toContain(429);
    const admin = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${emu().url}/__emulator/health`).then((r) => r.status)),
    );
    expect(admin.every((s) => s === 200)).toBe(true);
    // The bucket really was empty all along: the limited service still refuses.
    expect((await members()).status).toBe(429);
  });
});

describe('RateLimiter (unit, fake clock)', () => {
  it('allows a burst, then one request per 1/rate seconds', () => {
    const limiter = new RateLimiter({ requestsPerSecond: 5, burst: 5, retryAfterSeconds: 3 });
    const t0 = 1_000_000;
    const burst = Array.from({ length: 6 }, () => limiter.take(t0));
    expect(burst).toEqual([true, true, true, true, true, false]);
    expect(limiter.take(t0 + 100)).toBe(false);
    expect(limiter.take(t0 + 200)).toBe(true);
    expect(limiter.take(t0 + 200)).toBe(false);
    // A long pause refills to the burst size, not beyond.
    const after = Array.from({ length: 6 }, () => limiter.take(t0 + 60_000));
    expect(after.filter(Boolean)).toHaveLength(5);
    expect(limiter.retryAfter).toBe(3);
  });

  it('refills from the first request on, even with a clock that starts at 0', () => {
    const limiter = new RateLimiter({ requestsPerSecond: 1, burst: 1 });
    expect(limiter.take(0)).toBe(true);
    expect(limiter.take(500)).toBe(false);
    expect(limiter.take(1000)).toBe(true);
  });

  it('defaults the burst to the rate and refuses a rate that is not above 0', () => {
    const limiter = new RateLimiter({ requestsPerSecond: 2.5 });
    expect(Array.from({ length: 4 }, () => limiter.take(1)).filter(Boolean)).toHaveLength(3);
    expect(() => new RateLimiter({ requestsPerSecond: 0 })).toThrow(/requestsPerSecond.*above 0.*got 0/);
  });
});
