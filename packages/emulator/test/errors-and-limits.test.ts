import { afterEach, describe, expect, it } from 'vitest';
import { RateLimiter } from '../src/behaviour/ratelimit.js';
import { type EmulatorOptions, type RunningEmulator, startEmulator } from '../src/index.js';
import { basic, call, TM } from './helpers.js';

/**
 * What a real Jira Data Center does beyond refusals: 500s that are not validation errors, in JSON, plain text or a
 * servlet container's HTML page, before or after the write committed; and Jira 8.6+'s rate limits per user with
 * `X-RateLimit-*` headers and a `Retry-After` from 0 to hours.
 */

let emu: RunningEmulator | undefined;

async function start(options: EmulatorOptions): Promise<RunningEmulator> {
  emu = await startEmulator({ port: 0, profile: 'ideal', ...options });
  return emu;
}

afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const MYSELF = '/rest/api/2/myself';
const issue = (summary: string) => ({
  fields: { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary },
});

describe('injected 500s and other errors', () => {
  it('answer in the body asked for: JSON in the service’s shape, plain text, or an HTML error page', async () => {
    const e = await start({});
    e.faults.set([
      { route: `${TM}/testPlan/**`, errors: { '500': 1 }, body: 'json', message: 'Lock wait timeout exceeded' },
      { route: '/rest/api/2/myself', errors: { '500': 1 }, body: 'json', times: 1 },
      { route: '/rest/api/2/myself', errors: { '502': 1 }, body: 'html', times: 1 },
      { route: '/rest/api/2/project/**', errors: { '503': 1 }, retryAfterSeconds: 0 },
    ]);
    const tm = await call(e, 'GET', `${TM}/testPlan/DEMO-1/members`);
    expect(tm.status).toBe(500);
    expect(tm.headers.get('content-type')).toMatch(/^application\/json/);
    expect(tm.json).toEqual({ message: 'Lock wait timeout exceeded' });
    const jira = await call(e, 'GET', MYSELF);
    expect(jira.status).toBe(500);
    expect(jira.json).toEqual({ errorMessages: ['Injected fault: 500'], errors: {} });
    const page = await call(e, 'GET', MYSELF);
    expect(page.status).toBe(502);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toMatch(/^<!doctype html>.*<h1>HTTP Status 502 – Bad Gateway<\/h1>.*Apache Tomcat/);
    const text = await call(e, 'GET', '/rest/api/2/project/DEMO');
    expect(text).toMatchObject({ status: 503, text: 'Injected fault: 503' });
    expect(text.headers.get('retry-after')).toBe('0');
    expect((await call(e, 'GET', MYSELF)).status).toBe(200);
  });

  it("phase 'after': the write is committed, then the answer is the error (PATCH and methods filter as before)", async () => {
    const e = await start({});
    e.faults.set([
      { route: '/rest/api/2/issue', methods: ['POST'], errors: { '500': 1 }, phase: 'after', body: 'text', times: 1 },
      { route: '/rest/api/2/issue', methods: ['PATCH'], errors: { '503': 1 } },
    ]);
    const before = e.store.issues.size;
    const r = await call(e, 'POST', '/rest/api/2/issue', { body: issue('written, then 500') });
    expect(r).toMatchObject({ status: 500, text: 'Injected fault: 500' });
    expect(e.store.issues.size).toBe(before + 1);
    expect(e.store.issues.all().some((i) => i.summary === 'written, then 500')).toBe(true);
    expect(e.requests().at(-1)).toMatchObject({ status: 500, fault: 'error 500', op: 'jira.createIssue' });
    // `times` spent: the next create answers; PATCH matches only PATCH (405 here, behind its 503).
    expect((await call(e, 'POST', '/rest/api/2/issue', { body: issue('fine') })).status).toBe(201);
    expect((await call(e, 'PATCH', '/rest/api/2/issue')).status).toBe(503);
    expect(() => e.faults.add({ body: 'xml' as never })).toThrow(/body/);
  });
});

describe('rate limits per user (Jira 8.6+)', () => {
  it('one bucket per user with X-RateLimit-* headers; 429 with Retry-After until the bucket refills', async () => {
    let now = 1_000_000;
    const e = await start({
      now: () => now,
      rateLimit: { perUser: true, fillRate: 2, intervalSeconds: 60, burst: 2 },
    });
    const first = await call(e, 'GET', MYSELF);
    expect(first.status).toBe(200);
    expect(Object.fromEntries([...first.headers].filter(([k]) => k.startsWith('x-ratelimit')))).toEqual({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-interval-seconds': '60',
      'x-ratelimit-fillrate': '2',
    });
    expect((await call(e, 'GET', `${TM}/testPlan/DEMO-1/members`)).headers.get('x-ratelimit-remaining')).toBe('0');
    const limited = await call(e, 'GET', MYSELF);
    expect(limited).toMatchObject({ status: 429, text: 'Too many Requests' });
    expect(limited.headers.get('retry-after')).toBe('30');
    expect(e.requests().at(-1)?.fault).toBe('rate-limited');
    // Another user has a bucket of their own; a request without credentials is not limited (it is a 401).
    expect((await call(e, 'GET', MYSELF, { auth: basic('tester', 'tester') })).status).toBe(200);
    expect((await call(e, 'GET', MYSELF, { auth: null })).status).toBe(401);
    now += 30_000;
    expect((await call(e, 'GET', MYSELF)).status).toBe(200);
  });

  it('Retry-After as configured, from 0 to hours; the shared bucket sends the headers too', async () => {
    const e = await start({ rateLimit: { requestsPerSecond: 1, burst: 1, retryAfterSeconds: 0 } });
    const ok = await call(e, 'GET', MYSELF);
    expect(ok.headers.get('x-ratelimit-limit')).toBe('1');
    const limited = await call(e, 'GET', MYSELF);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('0');
    const hours = new RateLimiter({ fillRate: 100, intervalSeconds: 3600, burst: 1, retryAfterSeconds: 7200 });
    expect(hours.takeFor('a', 0).ok).toBe(true);
    expect(hours.takeFor('a', 0).headers['retry-after']).toBe('7200');
    const computed = new RateLimiter({ fillRate: 1, intervalSeconds: 3600, burst: 1 });
    computed.takeFor('a', 0);
    expect(computed.takeFor('a', 0).headers['retry-after']).toBe('3600');
    expect(() => new RateLimiter({ requestsPerSecond: 1, retryAfterSeconds: -1 })).toThrow(
      /retryAfterSeconds must be a whole number from 0 to 86400, got -1/,
    );
  });
});
