import type { RequestLogEntry } from '@casebridge/emulator';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AbortedError,
  AmbiguousError,
  type ClientOptions,
  HttpError,
  NetworkError,
  RateLimitedError,
  TestManagementClient,
  TimeoutError,
  ValidationError,
} from '../../src/index.js';
import {
  ADMIN,
  clearFaults,
  clearRequestLog,
  closedPort,
  maxOverlap,
  requestLog,
  setFaults,
  useEmulator,
} from '../support/emulator.js';

/**
 * The transport against a real emulator over real HTTP, with faults scripted through its admin endpoints: retries
 * of safe operations, creates that are never sent twice, Retry-After, timeouts, refused connections, aborts, the
 * concurrency limit and the rate cap. Attempts are counted on both sides: `client.transport.stats` and the
 * emulator's request log. Timings on the real clock are asserted as lower bounds only; waits of a second or more
 * (Retry-After, the rate cap) run on a faked clock (`onFakeClock`), where they are exact.
 */

const MEMBERS = '/rest/synapse/latest/public/testPlan/DEMO-1/members';
const MEMBERS_ROUTE = '**/testPlan/*/members';
const CREATE_ROUTE = '**/testRun/adhoc/create/*';
const CASE = 'DEMO-3';
const CREATE = `/rest/synapse/latest/public/testRun/adhoc/create/${CASE}`;
/** Fast retries, so that a test spends its time on what it checks. */
const FAST = { retries: 5, baseDelayMs: 5, maxDelayMs: 20 };

// The emulator reads the clock through this function, so that a faked Date moves its request log too (its default
// keeps the real Date.now it found at start).
const emu = useEmulator({ now: () => Date.now() });
const clients: TestManagementClient[] = [];

function client(options: Partial<ClientOptions> = {}): TestManagementClient {
  const c = new TestManagementClient({ baseUrl: emu().url, auth: ADMIN, retry: FAST, ...options });
  clients.push(c);
  return c;
}

afterEach(async () => {
  await clearFaults(emu());
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await clearRequestLog(emu());
});

const at = (log: RequestLogEntry[], method: string, path: string) =>
  log.filter((e) => e.method === method && e.path === path);

/** The rejection of `p`, which must reject. */
async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/**
 * Runs `run` with setTimeout and Date faked (the transport's waits, p-queue's rate window and the emulator's request
 * log all read them) while HTTP goes over real sockets, and gives its result, when it started and how long it took
 * on the faked clock. The clock
 * jumps to the next timer only once the emulator has answered every request `c` sent and the client has had a few
 * turns of the event loop to read the answers (on loopback an answer is readable on the next turn): it never moves
 * while a request is on its way, so a jump never fires a request's own timeout, and the emulator logs each start at
 * the very time the client made it.
 */
async function onFakeClock<T>(
  c: TestManagementClient,
  run: () => Promise<T>,
): Promise<{ value: T; started: number; ms: number }> {
  const turn = () => new Promise((r) => setImmediate(r));
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  try {
    const started = Date.now();
    let settled = false;
    const done = run().finally(() => {
      settled = true;
    });
    done.catch(() => undefined);
    while (!settled) {
      for (let i = 0; i < 3; i++) await turn();
      if (settled || emu().requests().length < c.transport.stats.requests) continue;
      if (vi.getTimerCount() === 0)
        throw new Error('onFakeClock: nothing left to wait for, yet the call has not ended');
      await vi.advanceTimersToNextTimerAsync();
    }
    const value = await done;
    return { value, started, ms: Date.now() - started };
  } finally {
    vi.useRealTimers();
  }
}

/** On the faked clock a timer of 0 ms still moves it by up to 1 ms: the few on a request's way add up to this. */
const SLACK_MS = 5;
/** Times in ms as expected on the faked clock, each up to SLACK_MS late. */
const onTime = (ms: number[]) => ms.map((t) => expect.toSatisfy((got: number) => got >= t && got <= t + SLACK_MS));

/** How many ad hoc runs DEMO-3 has (read without faults on that route). */
async function adhocRuns(c: TestManagementClient): Promise<number> {
  return (await c.runs.adhocTestRuns({ testCaseIssueKey: CASE })).length;
}

describe('safe operations are retried', () => {
  it('a GET survives a burst of 503s', async () => {
    await setFaults(emu(), [
      { route: MEMBERS_ROUTE, methods: ['GET'], errors: { '503': 1 }, retryAfterSeconds: 0, times: 3 },
    ]);
    const c = client();
    const members = await c.plans.members({ testPlanIssueKey: 'DEMO-1' });
    expect(members.length).toBeGreaterThan(0);
    expect(c.transport.stats).toEqual({ requests: 4, retries: 3, failures: 0 });
    const log = at(await requestLog(emu()), 'GET', MEMBERS);
    expect(log.map((e) => e.status)).toEqual([503, 503, 503, 200]);
  });

  it('a GET survives a burst of connection resets', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, methods: ['GET'], resetRate: 1, phase: 'before', times: 3 }]);
    const c = client();
    const members = await c.plans.members({ testPlanIssueKey: 'DEMO-1' });
    expect(members.length).toBeGreaterThan(0);
    expect(c.transport.stats).toEqual({ requests: 4, retries: 3, failures: 0 });
    const log = at(await requestLog(emu()), 'GET', MEMBERS);
    expect(log.map((e) => e.fault)).toEqual(['reset', 'reset', 'reset', null]);
    expect(log.at(-1)?.status).toBe(200);
  });

  it('a GET survives 502 and 504 from a gateway', async () => {
    await setFaults(emu(), [
      { route: MEMBERS_ROUTE, errors: { '502': 1 }, times: 1 },
      { route: MEMBERS_ROUTE, errors: { '504': 1 }, times: 1 },
    ]);
    const c = client();
    await c.plans.members({ testPlanIssueKey: 'DEMO-1' });
    expect(at(await requestLog(emu()), 'GET', MEMBERS).map((e) => e.status)).toEqual([502, 504, 200]);
    expect(c.transport.stats.requests).toBe(3);
  });

  it('gives up after its retries with a retryable HttpError', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, errors: { '503': 1 }, retryAfterSeconds: 0 }]);
    const c = client({ retry: { ...FAST, retries: 2 } });
    const err = await failure(c.plans.members({ testPlanIssueKey: 'DEMO-1' }));
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ status: 503, retryable: true, retries: 2, operation: 'plans.members' });
    expect(c.transport.stats).toEqual({ requests: 3, retries: 2, failures: 1 });
    expect(at(await requestLog(emu()), 'GET', MEMBERS)).toHaveLength(3);
  });

  it('retries a 500 (a refusal or an internal error: the client cannot tell) a bounded number of times', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, errors: { '500': 1 }, times: 1 }]);
    const c = client();
    expect((await c.plans.members({ testPlanIssueKey: 'DEMO-1' })).length).toBeGreaterThan(0);
    expect(c.transport.stats.requests).toBe(2);
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, errors: { '500': 1 } }]);
    const err = await failure(c.plans.members({ testPlanIssueKey: 'DEMO-1' }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ uncertain: true, retryable: true, mayHaveApplied: false, retries: 2 });
    expect(at(await requestLog(emu()), 'GET', MEMBERS).map((e) => e.status)).toEqual([500, 200, 500, 500, 500]);
  });
});

describe('a 500 to a create, after the write committed', () => {
  it('is not re-sent: mayHaveApplied, the HTML page read, and exactly one run exists', async () => {
    const c = client();
    const before = await adhocRuns(c);
    await setFaults(emu(), [
      { route: CREATE_ROUTE, methods: ['PUT'], errors: { '500': 1 }, body: 'html', phase: 'after', times: 1 },
    ]);
    const err = await failure(c.runs.adhocCreate({ testCaseIssueKey: CASE }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ uncertain: true, mayHaveApplied: true, retries: 0 });
    expect((err as ValidationError).serverMessage).toMatch(/^HTML page: HTTP Status 500/);
    expect((err as ValidationError).serverMessage).not.toMatch(/</);
    await clearFaults(emu());
    expect(await adhocRuns(c)).toBe(before + 1);
    expect(at(await requestLog(emu()), 'PUT', CREATE)).toHaveLength(1);
  });
});

describe('a create is never sent twice', () => {
  it('reset after the service applied it: AmbiguousError, and exactly one run exists', async () => {
    const c = client();
    const before = await adhocRuns(c);
    await setFaults(emu(), [{ route: CREATE_ROUTE, methods: ['PUT'], resetRate: 1, phase: 'after', times: 1 }]);
    const err = await failure(c.runs.adhocCreate({ testCaseIssueKey: CASE }));
    expect(err).toBeInstanceOf(AmbiguousError);
    expect(err).toMatchObject({ kind: 'ambiguous', retryable: false, operation: 'runs.adhocCreate' });
    expect(err.message).toMatch(/may or may not have been applied/);
    await clearFaults(emu());
    expect(await adhocRuns(c)).toBe(before + 1);
    expect(at(await requestLog(emu()), 'PUT', CREATE)).toHaveLength(1);
  });

  it('an answer slower than headersMs: AmbiguousError, and exactly one run exists', async () => {
    const c = client({ timeouts: { headersMs: 300 } });
    const before = await adhocRuns(c);
    await setFaults(emu(), [
      { route: CREATE_ROUTE, methods: ['PUT'], hangRate: 1, hangMs: 3_000, phase: 'after', times: 1 },
    ]);
    const started = performance.now();
    const err = await failure(c.runs.adhocCreate({ testCaseIssueKey: CASE }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(err).toBeInstanceOf(AmbiguousError);
    expect((err as AmbiguousError).reason).toBe('UND_ERR_HEADERS_TIMEOUT');
    await clearFaults(emu());
    expect(await adhocRuns(c)).toBe(before + 1);
    expect(at(await requestLog(emu()), 'PUT', CREATE)).toHaveLength(1);
  });

  it('refused with 503 before it was processed: retried, and exactly one run exists', async () => {
    const c = client();
    const before = await adhocRuns(c);
    await setFaults(emu(), [
      { route: CREATE_ROUTE, methods: ['PUT'], errors: { '503': 1 }, retryAfterSeconds: 0, times: 2 },
    ]);
    const run = await c.runs.adhocCreate({ testCaseIssueKey: CASE });
    expect(typeof run.id).toBe('number');
    await clearFaults(emu());
    expect(await adhocRuns(c)).toBe(before + 1);
    expect(at(await requestLog(emu()), 'PUT', CREATE).map((e) => e.status)).toEqual([503, 503, 200]);
  });

  it('a reset before processing is reported as ambiguous too (the client cannot tell), and nothing was created', async () => {
    const c = client();
    const before = await adhocRuns(c);
    await setFaults(emu(), [{ route: CREATE_ROUTE, methods: ['PUT'], resetRate: 1, phase: 'before', times: 1 }]);
    expect(await failure(c.runs.adhocCreate({ testCaseIssueKey: CASE }))).toBeInstanceOf(AmbiguousError);
    await clearFaults(emu());
    expect(await adhocRuns(c)).toBe(before);
    expect(at(await requestLog(emu()), 'PUT', CREATE)).toHaveLength(1);
  });

  it('a 502 from a gateway is ambiguous and not re-sent', async () => {
    const c = client();
    await setFaults(emu(), [{ route: CREATE_ROUTE, methods: ['PUT'], errors: { '502': 1 } }]);
    const err = await failure(c.runs.adhocCreate({ testCaseIssueKey: CASE }));
    expect(err).toBeInstanceOf(AmbiguousError);
    expect(err).toMatchObject({ status: 502, reason: 'HTTP 502' });
    expect(at(await requestLog(emu()), 'PUT', CREATE)).toHaveLength(1);
  });
});

describe('Retry-After', () => {
  it('429 with Retry-After: 1 is waited for, then the call succeeds', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, errors: { '429': 1 }, retryAfterSeconds: 1, times: 1 }]);
    const c = client();
    const { ms } = await onFakeClock(c, () => c.plans.members({ testPlanIssueKey: 'DEMO-1' }));
    // The second asked for, and not more (the faked clock also runs the few 0 ms timers on the way: SLACK_MS).
    expect(ms).toBeGreaterThanOrEqual(1_000);
    expect(ms).toBeLessThanOrEqual(1_000 + SLACK_MS);
    expect(c.transport.stats).toEqual({ requests: 2, retries: 1, failures: 0 });
    expect(at(await requestLog(emu()), 'GET', MEMBERS).map((e) => e.status)).toEqual([429, 200]);
  });

  it('a Retry-After longer than maxRetryAfterMs fails at once with RateLimitedError', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, errors: { '429': 1 }, retryAfterSeconds: 120 }]);
    const c = client({ retry: { ...FAST, maxRetryAfterMs: 5_000 } });
    const err = await failure(c.plans.members({ testPlanIssueKey: 'DEMO-1' }));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ retryAfterMs: 120_000, status: 429, retryable: true });
    expect(c.transport.stats.requests).toBe(1);
  });
});

describe('timeouts and refused connections', () => {
  it('the headers timeout fires: TimeoutError for a GET after its retries', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, hangRate: 1, hangMs: 3_000, phase: 'after' }]);
    const c = client({ timeouts: { headersMs: 200 }, retry: { ...FAST, retries: 2 } });
    const started = performance.now();
    const err = await failure(c.plans.members({ testPlanIssueKey: 'DEMO-1' }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(3 * 195);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ phase: 'headers', retryable: true, retries: 2 });
    expect(c.transport.stats).toEqual({ requests: 3, retries: 2, failures: 1 });
  });

  it('a closed port: NetworkError after the retries, retryable', async () => {
    const port = await closedPort();
    const c = new TestManagementClient({
      baseUrl: `http://127.0.0.1:${port}`,
      auth: ADMIN,
      retry: { ...FAST, retries: 2 },
    });
    clients.push(c);
    const err = await failure(c.plans.members({ testPlanIssueKey: 'DEMO-1' }));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ code: 'ECONNREFUSED', retryable: true });
    expect(c.transport.stats).toEqual({ requests: 3, retries: 2, failures: 1 });
  });

  it('a refused connection is retried for a create too: nothing was sent', async () => {
    const port = await closedPort();
    const c = new TestManagementClient({
      baseUrl: `http://127.0.0.1:${port}`,
      auth: ADMIN,
      retry: { ...FAST, retries: 2 },
    });
    clients.push(c);
    const err = await failure(c.runs.adhocCreate({ testCaseIssueKey: CASE }));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).not.toBeInstanceOf(AmbiguousError);
    expect(c.transport.stats.requests).toBe(3);
  });
});

describe('AbortSignal', () => {
  it('aborts a call waiting for its answer', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, hangRate: 1, hangMs: 5_000, phase: 'after' }]);
    const c = client();
    const started = performance.now();
    const err = await failure(c.plans.members({ testPlanIssueKey: 'DEMO-1' }, { signal: AbortSignal.timeout(200) }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(err).toBeInstanceOf(AbortedError);
    expect(err).toMatchObject({ kind: 'aborted', retryable: false });
    expect(c.transport.stats.requests).toBe(1);
  });

  it('aborts a call waiting out a Retry-After', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, errors: { '503': 1 }, retryAfterSeconds: 30 }]);
    const c = client();
    const err = await failure(c.plans.members({ testPlanIssueKey: 'DEMO-1' }, { signal: AbortSignal.timeout(200) }));
    expect(err).toBeInstanceOf(AbortedError);
    expect(c.transport.stats.requests).toBe(1);
  });

  it('sends nothing for a signal that has already fired', async () => {
    const c = client();
    const err = await failure(c.plans.members({ testPlanIssueKey: 'DEMO-1' }, { signal: AbortSignal.abort() }));
    expect(err).toBeInstanceOf(AbortedError);
    expect(c.transport.stats.requests).toBe(0);
  });

  it('aborts a call still queued behind the concurrency limit; it is never sent', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, latencyMs: 600 }]);
    const c = client({ concurrency: 1 });
    const first = c.plans.members({ testPlanIssueKey: 'DEMO-1' });
    const second = failure(c.plans.cycles({ testPlanIssueKey: 'DEMO-1' }, { signal: AbortSignal.timeout(100) }));
    expect(await second).toBeInstanceOf(AbortedError);
    await first;
    const log = await requestLog(emu());
    expect(log.filter((e) => e.path.endsWith('/cycles'))).toHaveLength(0);
    expect(c.transport.stats.requests).toBe(1);
  });

  it('a call aborted while under way frees its slot at once: the next call does not wait for the hung answer', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, hangRate: 1, hangMs: 5_000, phase: 'after' }]);
    const c = client({ concurrency: 1 });
    const hung = failure(c.plans.members({ testPlanIssueKey: 'DEMO-1' }, { signal: AbortSignal.timeout(200) }));
    const started = performance.now();
    await c.plans.cycles({ testPlanIssueKey: 'DEMO-1' });
    expect(await hung).toBeInstanceOf(AbortedError);
    // The queued call went once the first was aborted (200 ms), long before the hang would have ended (5 s).
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(c.transport.stats.requests).toBe(2);
  });
});

describe('concurrency limit and rate cap', () => {
  it('never has more than `concurrency` requests in flight', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, latencyMs: 150 }]);
    const c = client({ concurrency: 2 });
    const started = performance.now();
    await Promise.all(Array.from({ length: 8 }, () => c.plans.members({ testPlanIssueKey: 'DEMO-1' })));
    // Eight calls of at least 150 ms, two at a time.
    expect(performance.now() - started).toBeGreaterThanOrEqual(4 * 150 - 5);
    const log = at(await requestLog(emu()), 'GET', MEMBERS);
    expect(log).toHaveLength(8);
    expect(maxOverlap(log)).toBe(2);
  });

  it('a background call (a bulk create) waits behind every other call queued, whatever came first', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, latencyMs: 200 }]);
    const c = client({ concurrency: 1 });
    const bg = { background: true };
    // One background call holds the only slot; two more queue, then a plain call that must go before them.
    const calls = [
      c.plans.members({ testPlanIssueKey: 'DEMO-1' }, bg),
      c.plans.members({ testPlanIssueKey: 'DEMO-1' }, bg),
      c.plans.members({ testPlanIssueKey: 'DEMO-1' }, bg),
      c.plans.cycles({ testPlanIssueKey: 'DEMO-1' }),
    ];
    await Promise.all(calls);
    const order = (await requestLog(emu())).map((e) => (e.path.endsWith('/cycles') ? 'plain' : 'background'));
    expect(order).toEqual(['background', 'plain', 'background', 'background']);
  });

  it('defaults to four requests in flight', async () => {
    await setFaults(emu(), [{ route: MEMBERS_ROUTE, latencyMs: 150 }]);
    const c = client();
    await Promise.all(Array.from({ length: 12 }, () => c.plans.members({ testPlanIssueKey: 'DEMO-1' })));
    expect(maxOverlap(at(await requestLog(emu()), 'GET', MEMBERS))).toBe(4);
  });

  // On the faked clock: the emulator logs each start at the time the client made it (see onFakeClock).
  const startsOf = async (from: number) => at(await requestLog(emu()), 'GET', MEMBERS).map((e) => e.at - from);

  it('requestsPerSecond caps the starts: 11 calls at 5 per second take 2 s', async () => {
    const c = client({ requestsPerSecond: 5, concurrency: 8 });
    const { started, ms } = await onFakeClock(c, () =>
      Promise.all(Array.from({ length: 11 }, () => c.plans.members({ testPlanIssueKey: 'DEMO-1' }))),
    );
    expect(ms).toBeGreaterThanOrEqual(2_000);
    const starts = await startsOf(started);
    expect(starts).toHaveLength(11);
    // Five at once, five a second later, the last one a second after those: the cap, and no wait beyond it.
    expect(starts).toEqual(onTime([0, 0, 0, 0, 0, 1_000, 1_000, 1_000, 1_000, 1_000, 2_000]));
  });

  it('the cap holds in any one-second window, not only in fixed ones', async () => {
    const c = client({ requestsPerSecond: 5, concurrency: 8 });
    const { started } = await onFakeClock(c, async () => {
      await Promise.all(Array.from({ length: 3 }, () => c.plans.members({ testPlanIssueKey: 'DEMO-1' })));
      await new Promise((r) => setTimeout(r, 700));
      await Promise.all(Array.from({ length: 7 }, () => c.plans.members({ testPlanIssueKey: 'DEMO-1' })));
    });
    const starts = await startsOf(started);
    expect(starts).toHaveLength(10);
    // A whole second, but for SLACK_MS: the server sees each start at the time the client made it.
    for (const t of starts) {
      expect(starts.filter((s) => s >= t && s < t + 1_000 - SLACK_MS).length).toBeLessThanOrEqual(5);
    }
    // Two of the seven at 700 ms, three as the first three leave the window, the last two as the two of 700 ms do
    // (fixed windows would have let all seven go at once, the second window starting at 1 s).
    expect(starts).toEqual(onTime([0, 0, 0, 700, 700, 1_000, 1_000, 1_000, 1_700, 1_700]));
  });

  it('a cap below one per second spaces the starts further apart', async () => {
    const c = client({ requestsPerSecond: 0.8 });
    const { started, ms } = await onFakeClock(c, async () => {
      for (let i = 0; i < 3; i += 1) await c.plans.members({ testPlanIssueKey: 'DEMO-1' });
    });
    expect(ms).toBeGreaterThanOrEqual(2_500);
    // 1.25 s between starts.
    const starts = await startsOf(started);
    expect(starts).toEqual(onTime([0, 1_250, 2_500]));
  });
});
