import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { afterEach, beforeEach, expect } from 'vitest';
import {
  type EndResult,
  Engine,
  type EngineContext,
  type ResultStep,
  TestManagementClient,
  type TestResult,
} from '../../src/index.js';
import { clearFaults, useEmulator } from './emulator.js';

/**
 * The world of the engine's feature tests (defects/, delivery/, report/, engine-secrets): results built as a runner
 * reports them, one run of the engine, and reads of the emulator's final state. Each test file gets its own
 * emulator, reset before each test, so a file runs alone and in any order.
 */

export const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
export const TM_PREFIX = '/rest/synapse/latest/public';

/** A fresh project folder holding `shot.png`. */
export function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cb-features-'));
  writeFileSync(join(dir, 'shot.png'), png);
  return dir;
}

/**
 * A faster clock for the engine (EngineContext.timeScale): its waits (tries again after 1, 3, 6 s, the probe, the
 * batches' timers) FAST times shorter, the same path. For tests whose time goes in those waits; the end's patience
 * (flushTimeoutMs) is on that clock too, so it is given FAST times longer. Not for Jira's index lag, which the
 * emulator keeps in real time.
 */
export const FAST = 20;

export function ctx(cwd: string, lines: string[], env: NodeJS.ProcessEnv = {}, timeScale = 1): EngineContext {
  return { cwd, runner: { name: 'playwright', version: 'test' }, env, out: (t) => lines.push(t), timeScale };
}

export function result(
  title: string,
  status: 'passed' | 'failed' | 'flaky' | 'interrupted',
  extra: Partial<TestResult> = {},
): TestResult {
  const fail = {
    retry: 0,
    status: status === 'interrupted' ? ('interrupted' as const) : ('failed' as const),
    durationMs: 5,
    errors: [{ message: `expected 200, got 500 for ${title}`, stack: 'Error\n at t.spec.ts:7:3' }],
    steps: [],
    attachments: [],
  };
  const pass = {
    retry: status === 'flaky' ? 1 : 0,
    status: 'passed' as const,
    durationMs: 5,
    errors: [],
    steps: [],
    attachments: [],
  };
  return {
    id: `t.spec.ts>${title}`,
    file: 't.spec.ts',
    titlePath: [title],
    tags: [],
    annotations: [],
    attempts: status === 'passed' ? [pass] : status === 'flaky' ? [fail, pass] : [fail],
    ...extra,
  };
}

export function step(title: string, status: ResultStep['status'], extra: Partial<ResultStep> = {}): ResultStep {
  return { title, status, durationMs: 1, steps: [], attachments: [], ...extra };
}

/** The last attempt of a result, to add steps and files to. */
export function last(t: TestResult) {
  const a = t.attempts[t.attempts.length - 1];
  if (!a) throw new Error('no attempt');
  return a;
}

/**
 * The options of a run against the world's emulator. Its Jira has no index lag (the ideal profile), and the option
 * that describes a cluster's lag says so: no read-after-write waits for an index that is never behind.
 */
export const base = (url: string, extra: Record<string, unknown> = {}) => ({
  url,
  token: 'casebridge-dev-token',
  projectKey: 'DEMO',
  flushTimeoutMs: 20_000,
  jira: { indexLagMs: 0 },
  ...extra,
});

/** Polls `done` every 20 ms, or with `tick` (a test with a faked setTimeout polls on setImmediate). */
export async function until(
  what: string,
  done: () => boolean,
  ms = 10_000,
  tick = () => new Promise((r) => setTimeout(r, 20)),
): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await tick();
  }
}

/** One run of the engine: create, begin (with the tests as the plan unless `plan` is false), add each, end. */
export async function report(
  options: Record<string, unknown>,
  tests: TestResult[],
  context: EngineContext = ctx(project(), []),
  plan = true,
): Promise<EndResult> {
  const engine = Engine.create(options, context);
  expect(engine.enabled).toBe(true);
  engine.begin(plan ? { tests } : {});
  for (const t of tests) engine.add(t);
  return engine.end();
}

/** The runs of the cycle called `name` on `server`, with their case keys (the world's fills in its emulator). */
export function runsOfCycle(name: string, server: RunningEmulator) {
  const cycle = server.store.cycles.find((c) => c.name === name);
  if (!cycle) return [];
  return server.store.runs
    .filter((r) => r.cycleId === cycle.id)
    .map((r) => ({ key: server.store.issues.get(r.tcId)?.key, status: r.status, run: r }));
}

/**
 * Starts the file's emulator, resets it before each test and clears its faults after; gives it (`emulator`) and the
 * helpers that read it.
 */
export function useEngineWorld() {
  // The kind Jira (one node, no index lag, substring search): these tests are about the engine's own paths; the
  // realistic profile's lag and workflows have their own tests (engine-faults, first-run, test/harsh.e2e).
  const emulator = useEmulator({ profile: 'ideal' });
  beforeEach(async () => {
    await emulator().reset();
  });
  afterEach(async () => {
    await clearFaults(emulator());
  });

  const keyOf = (issueId: number) => emulator().store.issues.get(issueId)?.key;

  /** Ad hoc runs of a case, oldest first. */
  function adhocRuns(key: string) {
    const emu = emulator();
    return emu.store.runs
      .filter((r) => emu.store.cycles.get(r.cycleId)?.adhocTcId != null && keyOf(r.tcId) === key)
      .sort((a, b) => a.id - b.id);
  }

  const bugs = () =>
    emulator()
      .store.issues.filter((i) => i.type === 'Bug')
      .sort((a, b) => a.id - b.id);
  const bugKeysOfRun = (runId: number) =>
    emulator()
      .store.bugLinks.filter((l) => l.runId === runId)
      .map((l) => keyOf(l.issueId));
  const ops = (name: string) =>
    emulator()
      .requests()
      .filter((r) => r.op === name);

  /** The cycle's runs as sorted [case key, status] pairs. */
  const statusesOf = (name: string) =>
    runsOfCycle(name, emulator())
      .map((r) => [r.key, r.status])
      .sort();
  /** The test-management operations sent, in the order they arrived. */
  const sentOps = () =>
    emulator()
      .requests()
      .filter((r) => r.service === 'tm')
      .sort((a, b) => a.seq - b.seq)
      .map((r) => r.op as string);

  function admin(url = emulator().url): TestManagementClient {
    return new TestManagementClient({ baseUrl: url, auth: { type: 'bearer', token: 'casebridge-dev-token' } });
  }

  return {
    emulator,
    keyOf,
    runsOfCycle: (name: string, server: RunningEmulator = emulator()) => runsOfCycle(name, server),
    adhocRuns,
    bugs,
    bugKeysOfRun,
    ops,
    statusesOf,
    sentOps,
    admin,
  };
}
