import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Change, Store } from '../store/store.js';
import { SECURITY_HEADERS } from './layout.js';

/**
 * Server-sent events for open cycle pages: `/ui/events?cycle=<id>` sends `event: runs` when the store's committed
 * changes touch that cycle's runs (a run, its steps, bug links, history or attachments, or the cycle itself).
 *
 * Cost for the API: the commit path hands every batch of changes here; with no page open that is one size check,
 * and with pages open a pass over the batch. Notifications are collected and sent at most every `debounceMs`
 * (250 ms), so a reporter sending 1,000 results a second causes four page refreshes a second, not 1,000. Timers are
 * unref'd and every stream is ended when the emulator closes, so an open page never keeps the process alive.
 */

/** Tables whose rows belong to one run (`runId`): a change to one is a change to that run's cycle. */
const RUN_TABLES = new Set(['runSteps', 'bugLinks', 'history', 'attachments']);

/** Comment line sent this often, so proxies and browsers keep an idle stream open. */
const HEARTBEAT_MS = 15_000;

export class CycleEvents {
  private readonly streams = new Map<number, Set<ServerResponse>>();
  private readonly dirty = new Set<number>();
  private everything = false;
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly store: Store,
    closing: AbortSignal,
    private readonly debounceMs = 250,
  ) {
    if (closing.aborted) this.close();
    else closing.addEventListener('abort', () => this.close(), { once: true });
  }

  /** How many event streams are open. */
  get size(): number {
    let n = 0;
    for (const set of this.streams.values()) n += set.size;
    return n;
  }

  /** Keeps `res` open as the event stream of one cycle until the browser goes away or the emulator closes. */
  subscribe(cycleId: number, req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    if (this.closed) {
      res.writeHead(503, { 'content-length': '0' });
      res.end();
      return;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // `retry`: how long the browser waits before it reconnects after the stream ends (e.g. a restart).
    res.write(`retry: 3000\n: cycle ${cycleId}\n\n`);
    let set = this.streams.get(cycleId);
    if (!set) this.streams.set(cycleId, (set = new Set()));
    set.add(res);
    res.on('close', () => {
      set.delete(res);
      if (set.size === 0 && this.streams.get(cycleId) === set) this.streams.delete(cycleId);
      if (this.streams.size === 0) this.stopHeartbeat();
    });
    this.startHeartbeat();
  }

  /** Called by the commit path with the changes just committed. */
  changed(changes: readonly Change[]): void {
    if (this.streams.size === 0 || changes.length === 0) return;
    for (const c of changes) {
      if (this.everything) break;
      if (c.op === 'seq') continue;
      if (c.table === 'cycles') this.mark(Number(c.id));
      else if (c.table !== 'runs' && !RUN_TABLES.has(c.table)) continue;
      else if (c.op === 'delete') {
        // A deleted row no longer says which run or cycle it belonged to: refresh every open page.
        this.everything = true;
      } else {
        const row = c.row as { cycleId?: number; runId?: number };
        const cycleId = c.table === 'runs' ? row.cycleId : this.store.runs.get(row.runId ?? -1)?.cycleId;
        if (cycleId === undefined) this.everything = true;
        else this.mark(cycleId);
      }
    }
    if (this.everything || this.dirty.size > 0) this.schedule();
  }

  private mark(cycleId: number): void {
    if (this.streams.has(cycleId)) this.dirty.add(cycleId);
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => this.flush(), this.debounceMs);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = undefined;
    const at = Date.now();
    for (const [cycleId, set] of this.streams) {
      if (!this.everything && !this.dirty.has(cycleId)) continue;
      const message = `event: runs\ndata: ${JSON.stringify({ cycle: cycleId, at })}\n\n`;
      for (const res of set) res.write(message);
    }
    this.dirty.clear();
    this.everything = false;
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      for (const set of this.streams.values()) for (const res of set) res.write(': ping\n\n');
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** Ends every stream and stops the timers (the emulator is closing). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stopHeartbeat();
    for (const set of this.streams.values()) for (const res of set) res.end();
    this.streams.clear();
  }
}
