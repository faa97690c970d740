import type { Env } from '../kernel/exchange.js';
import type { Change } from '../store/store.js';
import { CycleEvents } from './events.js';

/**
 * The UI's state per emulator, kept beside the request environment (made on the first UI request, so an emulator
 * nobody looks at pays nothing): the live-update streams, whether the emulator listens on the loopback only, and
 * the session of the loopback viewer.
 */
export interface UiState {
  events: CycleEvents;
  /** Listening on a loopback address: pages are open, as the admin endpoints are. */
  loopback: boolean;
  /** The session a browser gets on the loopback without logging in (one per emulator, made again after a reset). */
  viewerSession: string | undefined;
}

const states = new WeakMap<Env, UiState>();

/**
 * Whether a listen address reaches this machine only. A host name other than `localhost` counts as beyond the
 * loopback: when in doubt, the UI asks for a login.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return (
    h === 'localhost' ||
    h === '::1' ||
    h === '0:0:0:0:0:0:0:1' ||
    /^127(\.\d{1,3}){3}$/.test(h) ||
    /^::ffff:127(\.\d{1,3}){3}$/.test(h)
  );
}

export function uiState(env: Env): UiState {
  let state = states.get(env);
  if (!state) {
    state = {
      events: new CycleEvents(env.store, env.closing),
      loopback: isLoopbackHost(env.host),
      viewerSession: undefined,
    };
    states.set(env, state);
  }
  return state;
}

/** The commit path's hook: committed changes, for open cycle pages. No UI request yet: nothing to do. */
export function uiChanged(env: Env, changes: readonly Change[]): void {
  states.get(env)?.events.changed(changes);
}

/** Whether the emulator's own pages and `/__emulator/*` are open without credentials. */
export function isOpen(env: Env): boolean {
  return states.get(env)?.loopback ?? isLoopbackHost(env.host);
}
