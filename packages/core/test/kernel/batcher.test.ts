import { afterEach, describe, expect, it, vi } from 'vitest';
import { Batcher } from '../../src/engine/kernel/batcher.js';
import { clockOf } from '../../src/engine/kernel/clock.js';

/** The one keyed batcher (kernel/batcher.ts) on a fake clock: which keys go together, and when. */

afterEach(() => {
  vi.useRealTimers();
});

function batcher(maxSize?: number) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  const sent: Array<{ at: number; keys: string[] }> = [];
  const start = Date.now();
  const b = new Batcher<string, string>({
    clock: clockOf(),
    send: async (keys) => {
      sent.push({ at: Date.now() - start, keys: [...keys] });
      return keys.map((k) => k.toUpperCase());
    },
    waitMs: 100,
    ...(maxSize ? { maxSize } : {}),
  });
  return { b, sent };
}

describe('the one keyed batcher', () => {
  it('asks within the wait share one request, each answered by its key', async () => {
    const { b, sent } = batcher();
    const one = b.load('a').answer;
    await vi.advanceTimersByTimeAsync(50);
    const two = b.load('b').answer;
    await vi.advanceTimersByTimeAsync(60);
    expect(await Promise.all([one, two])).toEqual(['A', 'B']);
    // It went when the first ask was due (100 ms), not 100 ms after the second.
    expect(sent).toEqual([{ at: 100, keys: ['a', 'b'] }]);
  });

  it('the most impatient ask decides: a later ask that may wait less brings the batch forward, never back', async () => {
    const { b, sent } = batcher();
    const patient = b.load('a', 2_000);
    await vi.advanceTimersByTimeAsync(500);
    b.load('b', 30);
    await vi.advanceTimersByTimeAsync(30);
    expect(sent).toEqual([{ at: 530, keys: ['a', 'b'] }]);
    // A batch brought forward by `by`, and one `by` may not push back.
    const next = b.load('c', 1_000);
    if (!next.batch) throw new Error('no batch');
    b.by(next.batch, Date.now() + 5_000);
    b.by(next.batch, Date.now() + 10);
    await vi.advanceTimersByTimeAsync(10);
    expect(sent.at(-1)?.keys).toEqual(['c']);
    await expect(patient.answer).resolves.toBe('A');
  });

  it('a full batch leaves the next asks to another; flush sends the waiting ones chosen; close sends none', async () => {
    const { b, sent } = batcher(2);
    const asked = ['a', 'b', 'c'].map((k) => b.load(k, 1_000));
    expect(asked[0]?.batch).toBe(asked[1]?.batch);
    expect(asked[2]?.batch).not.toBe(asked[0]?.batch);
    if (asked[2]?.batch) asked[2].batch.needed = true;
    b.flush((batch) => batch.needed);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([{ at: 0, keys: ['c'] }]);
    b.close();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent).toHaveLength(1);
  });

  it('a failed batch rejects the asks awaited, and leaves no unhandled rejection for an ask nobody awaits', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      const b = new Batcher<string, string>({
        clock: clockOf(),
        send: () => Promise.reject(new Error('the service refused the batch')),
        waitMs: 100,
      });
      b.load('dropped');
      const awaited = b.load('awaited').answer;
      const settled = expect(awaited).rejects.toThrow('the service refused the batch');
      await vi.advanceTimersByTimeAsync(100);
      await settled;
      vi.useRealTimers();
      await new Promise((r) => setTimeout(r, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('serial: asks made while a batch is answered go together into the next, sent when it ends; a failure fails its own asks only', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const sent: string[][] = [];
    let release: () => void = () => undefined;
    const b = new Batcher<string, number>({
      clock: clockOf(),
      waitMs: 0,
      serial: true,
      send: async (keys) => {
        sent.push([...keys]);
        if (sent.length === 1) await new Promise<void>((r) => (release = r));
        if (sent.length === 2) throw new Error('down');
        return keys.map(() => sent.length);
      },
    });
    const first = b.load('a').answer;
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([['a']]);
    const during = [b.load('b').answer, b.load('c', 5_000).answer];
    await vi.advanceTimersByTimeAsync(1_000);
    b.load('d');
    // Due long ago, but held while the first is in flight: it keeps gathering.
    expect(sent).toHaveLength(1);
    release();
    await expect(first).resolves.toBe(1);
    await expect(Promise.all(during)).rejects.toThrow('down');
    expect(sent[1]).toEqual(['b', 'c', 'd']);
    const after = b.load('e').answer;
    await vi.advanceTimersByTimeAsync(0);
    await expect(after).resolves.toBe(3);
    expect(sent).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
  });

  it('a batch due now goes once the asks of this job have joined, without a timer', async () => {
    const sent: string[][] = [];
    // Real timers: a batch due now must not wait for a timer's turn (a test faking setTimeout would have to step it).
    const b = new Batcher<string, string>({
      clock: clockOf(),
      waitMs: 0,
      send: async (keys) => {
        sent.push([...keys]);
        return [...keys];
      },
    });
    const together = [b.load('a').answer, b.load('b').answer];
    await Promise.resolve();
    expect(sent).toEqual([['a', 'b']]);
    await Promise.all(together);
    await b.load('c').answer;
    expect(sent).toEqual([['a', 'b'], ['c']]);
  });
});
