import { createRuntime, RUNTIME_DIR_ENV, type RuntimeApi, type RuntimeTestIdentity } from '@casebridge/core/runtime';

/**
 * The runtime API inside a Jest test (in a worker, or in band). The running test is read from Jest's own state in
 * the test's global: `expect`'s state (shared through a global symbol, so the `expect` global is not needed) names
 * the file and the test as `currentTestName` — the ancestor titles and the title joined by spaces, which is the
 * `fullName` the reporter gets — and jest-circus's state counts the attempt. Only `@casebridge/core/runtime` (Node
 * built-ins) is loaded: Jest evaluates this module again for every test file.
 */

const MATCHERS = Symbol.for('$$jest-matchers-object');
const COUNTS = Symbol.for('casebridge.jest.invocations');

interface ExpectState {
  currentTestName?: string;
  testPath?: string;
}

type Globals = Record<symbol, unknown> & { beforeEach?: (fn: () => void) => void };

/** jest-circus's state symbol on a test file's global: private and unregistered, found by its description. */
function circusState(g: Globals): symbol | undefined {
  return Object.getOwnPropertySymbols(g).find((s) => s.description === 'JEST_STATE_SYMBOL');
}

/** The attempt of the running test: jest-circus's `invocations` (1 for the first try), as the reporter sees it. */
function circusInvocations(g: Globals): number | undefined {
  const sym = circusState(g);
  const state = sym ? (g[sym] as { currentlyRunningTest?: { invocations?: unknown } } | undefined) : undefined;
  const n = state?.currentlyRunningTest?.invocations;
  return typeof n === 'number' && n >= 1 ? n : undefined;
}

/**
 * A fallback when jest-circus's state is not readable: a root `beforeEach` counts how often each test started in
 * this test file (the hook is registered once per test file's global, when this module is first loaded).
 */
function countStarts(g: Globals): Map<string, number> | undefined {
  const known = g[COUNTS] as Map<string, number> | undefined;
  if (known) return known;
  if (typeof g.beforeEach !== 'function') return undefined;
  const counts = new Map<string, number>();
  try {
    g.beforeEach(() => {
      const name = (g[MATCHERS] as { state?: ExpectState } | undefined)?.state?.currentTestName;
      if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
    });
    g[COUNTS] = counts;
    return counts;
  } catch {
    // Loaded inside a test (hooks cannot be added then): the attempt stays unknown, the last one gets the records.
    return undefined;
  }
}

/** The running test, or `undefined` outside a test (at collection, in `beforeAll`, or outside Jest). */
export function identify(g: Globals = globalThis as unknown as Globals): RuntimeTestIdentity | undefined {
  const state = (g[MATCHERS] as { state?: ExpectState } | undefined)?.state;
  if (!state?.testPath || !state.currentTestName) return undefined;
  const invocations =
    circusInvocations(g) ?? (g[COUNTS] as Map<string, number> | undefined)?.get(state.currentTestName);
  return {
    file: state.testPath,
    name: state.currentTestName,
    ...(invocations ? { attempt: invocations - 1 } : {}),
  };
}

/**
 * Makes the attempt of each test knowable in this test file's global: jest-circus (Jest's runner since 27) counts
 * it already, set up before the file is loaded; without it (jest-jasmine2), a root `beforeEach` counts starts. Only
 * then: a hook costs every test of the file jest-circus's events for it (about 20 promises a test, each paying the
 * async hooks of its AsyncLocalStorage, one per test file loaded: a second at 10,000 tests in band). True when it
 * added the hook.
 */
export function watchAttempts(g: Globals): boolean {
  if (circusState(g)) return false;
  return countStarts(g) !== undefined;
}

function runtime(): RuntimeApi {
  try {
    if (process.env[RUNTIME_DIR_ENV]) watchAttempts(globalThis as unknown as Globals);
  } catch {
    // Not in Jest: the API is a no-op without the reporter's channel anyway.
  }
  return createRuntime(() => identify());
}

const api = runtime();

/** Declares the case keys of the running test, in addition to keys in its title. A no-op without the reporter. */
export const caseKey: RuntimeApi['caseKey'] = (...keys) => api.caseKey(...keys);

/** Names the requirements (stories, epics) the running test verifies: the reporter links its case to each, once. */
export const requirement: RuntimeApi['requirement'] = (...keys) => api.requirement(...keys);

/**
 * Runs `body` as a named step of the running test and records its status, duration and error (steps nest); returns
 * what `body` returns and rethrows what it throws. Without the reporter it only runs `body`.
 */
export const step: RuntimeApi['step'] = (title, body) => api.step(title, body);

/**
 * Attaches a file (`{ path }`) or bytes (`{ body }`) to the running test, or to the step it runs in. Bytes are
 * copied to the reporter's channel, so they arrive from any worker. A no-op without the reporter.
 */
export const attach: RuntimeApi['attach'] = (name, content) => api.attach(name, content);

/**
 * Names a parameter of the running test (`test.each` rows: `param('locale', locale)`), for the `${param.<name>}`
 * template of option `attributes`. A no-op without the reporter.
 */
export const param: RuntimeApi['param'] = (name, value) => api.param(name, value);
