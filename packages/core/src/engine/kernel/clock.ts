import { now, pause, timer } from '../../client/time.js';
import { TIMING } from './timing.js';

/** The waits of the engine (TIMING), as one run resolves them: the defaults with the configuration's settings. */
export type Timing = {
  -readonly [K in keyof typeof TIMING]: (typeof TIMING)[K] extends readonly number[] ? readonly number[] : number;
};

/**
 * The engine's one source of time (now, pauses, timers, the waits), handed to every part; tests give a faster one
 * instead of sleeping the real waits.
 */
export interface Clock {
  readonly timing: Timing;
  now(): number;
  /** Resolves after `ms`, or as soon as `signal` aborts; never rejects. Keeps the process alive (work waits on it). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` after `ms` and returns its cancel; keeps the process alive only with `keepAlive` (e.g. `sync`). */
  after(ms: number, fn: () => void, keepAlive?: boolean): () => void;
}

/** The clock of a run: the system's, or for tests one `scale` times faster (shorter waits, faster `now`). */
export function clockOf(settings: Partial<Timing> = {}, scale = 1): Clock {
  const start = now();
  const real = (ms: number) => Math.max(0, ms / scale);
  return {
    timing: { ...TIMING, ...settings },
    now: () => (scale === 1 ? now() : start + (now() - start) * scale),
    sleep: (ms, signal) => pause(real(ms), signal),
    after: (ms, fn, keepAlive = false) => timer(real(ms), fn, keepAlive),
  };
}

/** The system clock with the default waits: for what runs outside a session (journal file names, the runtime API). */
export const systemClock = clockOf();
