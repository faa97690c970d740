import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, RUNTIME_DIR_ENV, readChannel } from '@casebridge/core/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { identify, watchAttempts } from '../src/runtime.js';

// A stand-in for a Jest test file's global: expect's state under its registered symbol, and jest-circus's state
// under its private, unregistered symbol (as in Jest 29.7 and 30.5).

const MATCHERS = Symbol.for('$$jest-matchers-object');
const FILE = '/work/app/tests/account.test.js';

function jestGlobal(name: string | undefined, invocations?: number) {
  const circus = Symbol('JEST_STATE_SYMBOL');
  const g: Record<symbol, unknown> = {
    [MATCHERS]: { state: { testPath: FILE, ...(name ? { currentTestName: name } : {}) } },
  };
  if (invocations !== undefined) g[circus] = { currentlyRunningTest: { invocations } };
  return g;
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  delete process.env[RUNTIME_DIR_ENV];
  dir = undefined;
});

describe('identify', () => {
  it('names the running test as the reporter does: the test path and currentTestName (= fullName)', () => {
    expect(identify(jestGlobal('outer logs out', 1))).toEqual({ file: FILE, name: 'outer logs out', attempt: 0 });
    expect(identify(jestGlobal('outer logs out', 3))?.attempt).toBe(2);
  });

  it('outside a test (collection, beforeAll) or outside Jest: no test', () => {
    expect(identify(jestGlobal(undefined, 1))).toBeUndefined();
    expect(identify({})).toBeUndefined();
  });

  it('without jest-circus state, the attempt comes from the root beforeEach count', () => {
    const g = jestGlobal('logs out');
    g[Symbol.for('casebridge.jest.invocations')] = new Map([['logs out', 2]]);
    expect(identify(g)).toEqual({ file: FILE, name: 'logs out', attempt: 1 });
    expect(identify(jestGlobal('logs out'))).toEqual({ file: FILE, name: 'logs out' });
  });

  it('adds the counting beforeEach only without jest-circus state (a hook costs every test its events)', () => {
    const hooks: Array<() => void> = [];
    const beforeEach = (fn: () => void) => hooks.push(fn);
    const circus = Object.assign(jestGlobal('logs out', 1), { beforeEach });
    expect(watchAttempts(circus)).toBe(false);
    expect(hooks).toHaveLength(0);
    const jasmine = Object.assign(jestGlobal('logs out'), { beforeEach });
    expect(watchAttempts(jasmine)).toBe(true);
    expect(hooks).toHaveLength(1);
    hooks[0]?.();
    hooks[0]?.();
    expect(identify(jasmine)).toEqual({ file: FILE, name: 'logs out', attempt: 1 });
  });
});

describe('records go to the attempt they were made in', () => {
  it('steps of a failed first try and of the retry are kept apart', async () => {
    dir = mkdtempSync(join(tmpdir(), 'casebridge-jest-runtime-'));
    process.env[RUNTIME_DIR_ENV] = dir;
    let g = jestGlobal('outer logs out', 1);
    const api = createRuntime(() => identify(g));
    api.caseKey('DEMO-3');
    api.param('browser', 'Chrome');
    api.param('browser', 'Firefox');
    api.param(' ', 'no name: dropped');
    await expect(
      api.step('Choose "Log out"', () => {
        throw new Error('menu closed');
      }),
    ).rejects.toThrow('menu closed');
    g = jestGlobal('outer logs out', 2);
    await api.step('Choose "Log out"', () => undefined);
    const data = readChannel(dir, FILE, 'outer logs out');
    expect(data?.keys).toEqual(['DEMO-3']);
    // A parameter named twice keeps its last value; one without a name is not recorded.
    expect(data?.params).toEqual({ browser: 'Firefox' });
    expect(data?.attempts.get(0)?.steps.map((s) => s.status)).toEqual(['failed']);
    expect(data?.attempts.get(1)?.steps.map((s) => s.status)).toEqual(['passed']);
  });
});
