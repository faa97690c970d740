import { beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/index.js';
import { useEmulator } from '../helpers.js';
import { type FilledCycle, fillCycle, page, setResult } from './fixtures.js';

/**
 * Live updates of an open cycle page: `/ui/events?cycle=<id>` sends `event: runs` when a run of that cycle changes
 * through the REST API (debounced), nothing for other cycles, and the stream ends when the emulator closes.
 */

interface EventStream {
  /** Events received so far, parsed. */
  events: { event: string; data: string }[];
  /** Resolves with the next event, or undefined after `ms`. */
  next(ms: number): Promise<{ event: string; data: string } | undefined>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

async function openEvents(url: string, cookie?: string): Promise<EventStream> {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...(cookie ? { cookie } : {}) },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const events: EventStream['events'] = [];
  const waiters: (() => void)[] = [];
  let buffer = '';
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          if (event) {
            events.push({ event, data: /^data: (.*)$/m.exec(block)?.[1] ?? '' });
            for (const w of waiters.splice(0)) w();
          }
          cut = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  let seen = 0;
  return {
    events,
    ended,
    async next(ms) {
      if (events.length > seen) return events[seen++];
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return events.length > seen ? events[seen++] : undefined;
    },
    close: () => abort.abort(),
  };
}

describe('live updates of the cycle page', () => {
  const emu = useEmulator();
  let watched: FilledCycle;
  let other: FilledCycle;
  let cookie: string | undefined;

  beforeAll(async () => {
    other = await fillCycle(emu(), 'Other cycle');
    watched = await fillCycle(emu(), 'Watched cycle');
    cookie = (await page(emu().url, '/')).cookie;
  });

  it('sends an event after a run of the cycle is updated through the REST API, none for another cycle', async () => {
    const stream = await openEvents(`${emu().url}/ui/events?cycle=${watched.cycleId}`, cookie);
    try {
      await setResult(emu(), other.runs['DEMO-3'] as number, 'Passed');
      expect(await stream.next(800), 'a change in another cycle').toBeUndefined();

      const before = Date.now();
      await setResult(emu(), watched.runs['DEMO-3'] as number, 'Blocked', 'blocked by the login outage');
      const event = await stream.next(3000);
      expect(event?.event).toBe('runs');
      expect(JSON.parse(event?.data ?? '{}')).toMatchObject({ cycle: watched.cycleId });
      // Debounced (250 ms), not held back longer than needed.
      expect(Date.now() - before).toBeLessThan(2000);
      // The fragment the page fetches then shows the new state.
      const fragment = await page(emu().url, `/ui/fragments/cycle?cycle=${watched.cycleId}&status=Blocked`, {
        cookie,
      });
      expect(fragment.text).toContain(`id="run-${watched.runs['DEMO-3']}"`);
      expect(fragment.text).toContain('blocked by the login outage');
    } finally {
      stream.close();
    }
  });

  it('folds a burst of updates into a few events', async () => {
    const stream = await openEvents(`${emu().url}/ui/events?cycle=${watched.cycleId}`, cookie);
    try {
      const runs = Object.values(watched.runs);
      const started = Date.now();
      for (let i = 0; i < 20; i++) await setResult(emu(), runs[i % runs.length] as number, i % 2 ? 'Passed' : 'Failed');
      const elapsed = Date.now() - started;
      await new Promise((r) => setTimeout(r, 600));
      expect(stream.events.length).toBeGreaterThanOrEqual(1);
      // At most one event per 250 ms window (plus the window the burst ended in), however many updates.
      expect(stream.events.length).toBeLessThanOrEqual(Math.min(19, Math.ceil(elapsed / 250) + 1));
    } finally {
      stream.close();
    }
  });

  it('sends an event for attachments and bug links too (other tables of the run)', async () => {
    const stream = await openEvents(`${emu().url}/ui/events?cycle=${watched.cycleId}`, cookie);
    try {
      const form = new FormData();
      form.append('file', new Blob(['more output']), 'later.log');
      const res = await fetch(`${emu().url}/rest/synapse/latest/public/attachment/${watched.failedRun}/testrun`, {
        method: 'POST',
        body: form,
        headers: { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` },
      });
      expect(res.status).toBe(200);
      expect((await stream.next(3000))?.event).toBe('runs');
    } finally {
      stream.close();
    }
  });

  it('answers 404 for an unknown cycle', async () => {
    expect((await page(emu().url, '/ui/events?cycle=999999', { cookie })).status).toBe(404);
    expect((await page(emu().url, '/ui/events?cycle=nope', { cookie })).status).toBe(404);
  });
});

describe('closing with an open event stream', () => {
  it('ends the stream, so close() returns and nothing keeps the process alive', async () => {
    const emu = await startEmulator({ port: 0 });
    let closed = false;
    try {
      const filled = await fillCycle(emu, 'Closing');
      const { cookie } = await page(emu.url, '/');
      const stream = await openEvents(`${emu.url}/ui/events?cycle=${filled.cycleId}`, cookie);
      // A change is pending (debounce timer armed) when the emulator closes.
      await setResult(emu, filled.failedRun, 'Passed');
      const started = Date.now();
      await emu.close();
      closed = true;
      await stream.ended;
      expect(Date.now() - started).toBeLessThan(2000);
      const refused = await fetch(`${emu.url}/`).then(
        () => 'answered',
        () => 'refused',
      );
      expect(refused).toBe('refused');
    } finally {
      if (!closed) await emu.close();
    }
  });
});
