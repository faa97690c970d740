import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CasebridgeError,
  HttpError,
  InputError,
  NetworkError,
  NotFoundError,
  ValidationError,
} from '../../src/client/errors.js';
import { settleBulk } from '../../src/engine/delivery/bulk-status.js';
import { CONSECUTIVE, QUIET_MS, RunHealth, ServiceWindow, WINDOW } from '../../src/engine/delivery/health.js';
import { Later, RETRY_AFTER_MS } from '../../src/engine/delivery/later.js';
import { systemClock } from '../../src/engine/kernel/clock.js';
import { NotJiraError, PermanentProblem } from '../../src/engine/kernel/errors.js';
import { splitBatch } from '../../src/engine/kernel/split.js';
import type { WorkItem } from '../../src/engine/kernel/work.js';

/** Pure policies of delivery under faults: when the service is down, and how a failing batch is split. */

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('the service window', () => {
  it('a service that never answered is down at its first failure (the probe finds out)', () => {
    const w = new ServiceWindow(clock().now);
    w.failed('connect ECONNREFUSED');
    expect(w.down).toBe('connect ECONNREFUSED');
  });

  it('30% of calls failing is not down; CONSECUTIVE failures in a row are', () => {
    const c = clock();
    const w = new ServiceWindow(c.now);
    w.ok();
    // 1,000 calls, every third fails (33%), one a second: never down.
    for (let i = 0; i < 1_000; i++) {
      c.advance(1_000);
      if (i % 3 === 0) w.failed('HTTP 503');
      else w.ok();
      expect(w.down, `call ${i}`).toBeUndefined();
    }
    w.ok();
    for (let i = 0; i < CONSECUTIVE - 1; i++) w.failed('HTTP 503');
    expect(w.down).toBeUndefined();
    w.failed('HTTP 503');
    expect(w.down).toBe('HTTP 503');
    w.ok();
    expect(w.down, 'up at the first success').toBeUndefined();
  });

  it('below 10% success over the last WINDOW calls is down, even with a success now and then', () => {
    const c = clock();
    const w = new ServiceWindow(c.now);
    w.ok();
    let downAt = -1;
    for (let i = 0; i < 3 * WINDOW && downAt < 0; i++) {
      // Four failures, then one success: 20% never trips; here one success in 12 (8%) does.
      if (i % 12 === 11) w.ok();
      else w.failed('HTTP 500');
      if (i % 12 === 3) expect(w.down).toBeUndefined();
      if (w.down) downAt = i;
    }
    expect(downAt).toBeGreaterThan(0);
    const twenty = new ServiceWindow(c.now);
    for (let i = 0; i < 5 * WINDOW; i++) {
      if (i % 5 === 4) twenty.ok();
      else if (i % 5 < 3) twenty.failed('x');
      else twenty.ok();
    }
    expect(twenty.down, '40% failing').toBeUndefined();
  });

  it('nothing succeeded for QUIET_MS while calls kept failing is down', () => {
    const c = clock();
    const w = new ServiceWindow(c.now);
    w.ok();
    c.advance(QUIET_MS - 1);
    w.failed('timeout');
    w.failed('timeout');
    expect(w.down).toBeUndefined();
    c.advance(2);
    w.failed('timeout');
    expect(w.down).toBe('timeout');
  });

  it('RunHealth: gives up at the end only when the service has not answered for the wait, or never did', () => {
    const c = clock();
    const lines: string[] = [];
    const h = new RunHealth(new AbortController().signal, (l) => lines.push(l), { ...systemClock, now: c.now });
    h.ok();
    for (let i = 0; i < CONSECUTIVE; i++) h.failed('HTTP 503');
    expect(h.down).toBe('HTTP 503');
    expect(h.gaveUp(30_000)).toBe(false);
    c.advance(30_001);
    expect(h.gaveUp(30_000)).toBe(true);
    h.ok();
    expect(h.down).toBeUndefined();
    expect(lines).toEqual([
      'casebridge: the service is not answering as it should (HTTP 503); asking again every few seconds',
      'casebridge: the service answers again: delivery resumes',
    ]);
    const never = new RunHealth(new AbortController().signal, () => undefined, { ...systemClock, now: c.now });
    never.failed('connect ECONNREFUSED');
    expect(never.gaveUp(30_000)).toBe(true);
  });

  it('RunHealth.classify: a 500 is never dropped, a 400 or 404 is, and nothing is decided on message text', () => {
    const h = new RunHealth(new AbortController().signal, () => undefined);
    const uncertain = new ValidationError('HTTP 500', 'not found', {}, { uncertain: true });
    expect(h.classify(uncertain, 'x')).toBe('later');
    expect(h.classify(new ValidationError('HTTP 400', 'bad', {}), 'x')).toBe('permanent');
    expect(h.classify(new NotFoundError('HTTP 404', {}), 'x')).toBe('permanent');
    expect(h.classify(new NetworkError('socket hang up', 'ECONNRESET', {}), 'x')).toBe('later');
    // An error that is not the client's is an internal error, whatever its text says.
    expect(h.classify(new Error('fetch failed: ECONNREFUSED socket'), 'x')).toBe('later');
    expect(h.problems).toEqual(['x: HTTP 400', 'x: HTTP 404', 'x: internal error: fetch failed: ECONNREFUSED socket']);
    expect(h.down, 'single failures decide nothing').toBeUndefined();
  });

  it('RunHealth.classify on the kind: the engine’s own problems, a URL that is not Jira, a kind it never raises', () => {
    const lines: string[] = [];
    const h = new RunHealth(new AbortController().signal, (l) => lines.push(l));
    expect(h.classify(new PermanentProblem('DEMO-9: no such test case (t)'), 'x')).toBe('permanent');
    expect(h.classify(new InputError('no key', 'key', {}), 'x')).toBe('permanent');
    expect(h.classify(new CasebridgeError('cycle', 'a CLI error'), 'x'), 'not the engine’s: internal').toBe('later');
    expect(h.problems).toEqual(['DEMO-9: no such test case (t)', 'x: no key', 'x: internal error: a CLI error']);
    expect(h.classify(new NotJiraError('http://x does not answer as Jira'), 'x')).toBe('later');
    expect(h.down).toBe('http://x does not answer as Jira');
    expect(lines).toEqual(['casebridge: http://x does not answer as Jira']);
    expect(h.stopped).toBe(true);
  });
});

const e500 = () => new ValidationError('HTTP 500', 'Internal Server Error', { status: 500 }, { uncertain: true });

describe('splitting a failing batch', () => {
  it('one refused item among 60: found, the 59 others sent, about 2·log2(60) extra requests', async () => {
    const calls: number[][] = [];
    const out = await splitBatch(
      Array.from({ length: 60 }, (_, i) => i),
      async (part) => {
        calls.push(part);
        if (part.includes(41)) throw e500();
      },
    );
    expect(out.sent.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i).filter((i) => i !== 41));
    expect(out.refused.map((r) => r.item)).toEqual([41]);
    expect(out.unsent).toEqual([]);
    // The batch, two halves per level down to 41 alone (6 levels), and 41 once more.
    expect(calls.length).toBeLessThanOrEqual(14);
    expect(calls.filter((c) => c.length === 1 && c[0] === 41)).toHaveLength(2);
  });

  it('sends halves depth first, first half first, then each item that failed alone once more, in that order', async () => {
    // The order of the recursive walk the split was before it became one loop (same requests, same order).
    const calls: string[] = [];
    const out = await splitBatch([1, 2, 3, 4, 5, 6, 7], async (part) => {
      calls.push(part.join(''));
      if (part.includes(3) || part.includes(6)) throw e500();
    });
    expect(calls).toEqual(['1234567', '1234', '12', '34', '3', '4', '567', '56', '5', '6', '7', '3', '6']);
    expect(out).toMatchObject({ sent: [1, 2, 4, 5, 7], unsent: [] });
    expect(out.refused.map((r) => r.item)).toEqual([3, 6]);
  });

  it('every item failing alike is an outage: nothing refused, all unsent, three requests', async () => {
    let calls = 0;
    const out = await splitBatch([1, 2, 3, 4, 5, 6, 7, 8], async () => {
      calls += 1;
      throw e500();
    });
    expect(out).toMatchObject({ sent: [], refused: [], unsent: [1, 2, 3, 4, 5, 6, 7, 8] });
    expect(out.error).toBeInstanceOf(ValidationError);
    expect(calls).toBe(3);
  });

  it('a transient 500 on the batch: the halves go through, nothing refused', async () => {
    let failures = 1;
    const out = await splitBatch([1, 2, 3, 4], async () => {
      if (failures-- > 0) throw e500();
    });
    expect(out.sent.sort()).toEqual([1, 2, 3, 4]);
    expect(out.refused).toEqual([]);
  });

  it('an item failing once alone, then going through, is sent, not refused', async () => {
    const seen = new Map<number, number>();
    const out = await splitBatch([1, 2, 3, 4], async (part) => {
      for (const i of part) seen.set(i, (seen.get(i) ?? 0) + 1);
      if (part.includes(3) && (seen.get(3) ?? 0) < 3) throw e500();
    });
    expect(out.sent.sort()).toEqual([1, 2, 3, 4]);
    expect(out.refused).toEqual([]);
  });

  it('a batch of one failing twice: refused only when the service answered other requests meanwhile', async () => {
    const send = async () => {
      throw e500();
    };
    expect((await splitBatch([7], send)).unsent).toEqual([7]);
    const refused = await splitBatch([7], send, { answeredSince: () => true });
    expect(refused.refused.map((r) => r.item)).toEqual([7]);
  });

  it('a certain refusal (404 of a key) is refused at once; other errors are not split but thrown', async () => {
    const out = await splitBatch(['A', 'B'], async (part) => {
      if (part.includes('B')) throw new NotFoundError('HTTP 404: no issue B', {});
    });
    expect(out).toMatchObject({ sent: ['A'], unsent: [] });
    expect(out.refused.map((r) => r.item)).toEqual(['B']);
    const down = new HttpError('HTTP 503', {}, true);
    await expect(
      splitBatch([1, 2], async () => {
        throw down;
      }),
    ).rejects.toBe(down);
  });

  it('certain refusals are never an outage: two bad keys alone in a batch are both refused', async () => {
    const out = await splitBatch(['X', 'Y'], async () => {
      throw new NotFoundError('HTTP 404', {});
    });
    expect(out.refused.map((r) => r.item)).toEqual(['X', 'Y']);
    expect(out.unsent).toEqual([]);
  });
});

const item = (key: string, status: 'passed' | 'skipped' = 'passed'): WorkItem => ({
  id: key,
  key,
  target: { mode: 'cycle', projectKey: 'P' },
  progress: {},
  test: {
    id: key,
    file: 'a.ts',
    titlePath: [key],
    tags: [],
    annotations: [],
    attempts: [{ retry: 0, status, durationMs: 1, errors: [], steps: [], attachments: [] }],
  },
});

describe('settling a bulk', () => {
  it('delivered only when sent or nothing to write; refused and unsent come back; a lost run is never delivered', () => {
    const items = [item('A'), item('B'), item('C'), item('D'), item('BAD'), item('SKIP', 'skipped'), item('LOST')];
    const runs = new Map([
      ['A', 1],
      ['B', 2],
      ['C', 3],
      ['D', 4],
    ]);
    const wanted = new Map([
      [1, 'Passed'],
      [2, 'Passed'],
      [3, 'Passed'],
    ]);
    const refusal = new ValidationError('HTTP 500', 'Test run(s) 2 not found', { status: 500 }, { uncertain: true });
    const out = settleBulk(
      items,
      runs,
      wanted,
      { sent: new Set([1]), refused: new Map([[2, refusal]]), problems: ['p'] },
      new Set(['BAD']),
      (i) => (i.key === 'SKIP' ? undefined : 'Passed'),
    );
    // A: sent; D: nothing wanted (a worse status held by another machine); SKIP: no status to write; BAD: dropped.
    expect(out.delivered.map((i) => i.key)).toEqual(['A', 'D', 'SKIP']);
    expect(out.dropped.map((i) => i.key)).toEqual(['BAD']);
    // An outcome, not a flag set from afar: the pipeline marks them done.
    expect(items.filter((i) => i.progress.done)).toEqual([]);
    expect(out.refused.map((r) => [r.item.key, r.answer])).toEqual([['B', 'HTTP 500: Test run(s) 2 not found']]);
    expect(out.unsent.map((i) => i.key)).toEqual(['C', 'LOST']);
    expect(items.find((i) => i.key === 'C')?.progress.runId, 'no run id kept for a later try').toBeUndefined();
    expect(out.problems).toEqual(['p']);
  });
});

describe('tries within the run', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('after 1, 3 and 6 s, then spent; parked items wait for the service, without spending a try', async () => {
    vi.useFakeTimers();
    const abort = new AbortController();
    const health = new RunHealth(abort.signal, () => undefined);
    const again: string[][] = [];
    const later = new Later({
      health,
      signal: abort.signal,
      track: () => undefined,
      again: (items) => again.push(items.map((i) => i.key)),
    });
    const a = item('A');
    for (const wait of RETRY_AFTER_MS) {
      expect(later.retry([a])).toEqual([]);
      await vi.advanceTimersByTimeAsync(wait - 1);
      const before = again.length;
      await vi.advanceTimersByTimeAsync(1);
      expect(again.length).toBe(before + 1);
    }
    expect(later.retry([a]), 'its tries are spent: it stays for the journal').toEqual([a]);
    // Down: parked, sent when a call succeeds again.
    health.failed('connect ECONNREFUSED');
    const b = item('B');
    later.park([b]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(again.flat()).not.toContain('B');
    health.ok();
    await vi.advanceTimersByTimeAsync(0);
    expect(again.at(-1)).toEqual(['B']);
    expect(later.triesOf(b)).toBe(0);
    abort.abort();
  });
});
