import { createRuntime, type RuntimeApi, type RuntimeTestIdentity } from '@casebridge/core/runtime';
import { RECORDED_META, runtimeName } from './translate.js';

/**
 * The runtime API for code inside Vitest tests. The running test comes from Vitest's worker state
 * (`globalThis.__vitest_worker__.current`, set before each test in 3.x, 4.x and 5.x): its file, title path and
 * project name, and its retry number so that each try's steps go to that try. The reporter rebuilds the same pair
 * from its `TestCase` (`runtimeName`). Tests run with `test.concurrent` share one worker state: their records may go
 * to the test that started last.
 */

interface WorkerTask {
  type?: string;
  name?: string;
  suite?: WorkerTask;
  file?: { filepath?: string };
  filepath?: string;
  result?: { retryCount?: number };
  meta?: Record<string, unknown>;
}

interface WorkerState {
  current?: WorkerTask;
  config?: { name?: string };
}

/** The running test, as the worker sees it (exported for tests; not part of the package entry). */
export function identify(): RuntimeTestIdentity | undefined {
  const state = (globalThis as { __vitest_worker__?: WorkerState }).__vitest_worker__;
  const task = state?.current;
  const file = task?.file?.filepath;
  if (task?.type !== 'test' || !file) return undefined;
  const titlePath: string[] = [];
  // Suites up to the file task (the one with `filepath`); unnamed ones do not count, as in the reporter.
  for (let t: WorkerTask | undefined = task; t && t.filepath === undefined; t = t.suite) {
    if (t.name) titlePath.unshift(t.name);
  }
  // The test's meta travels to the reporter with its result: the mark tells it this test has records to read.
  if (task.meta && typeof task.meta === 'object') task.meta[RECORDED_META] = true;
  return { file, name: runtimeName(state?.config?.name, titlePath), attempt: task.result?.retryCount ?? 0 };
}

const runtime: RuntimeApi = createRuntime(identify);

/** Declares the case keys of the running test, in addition to keys in its title, tags and annotations. */
export const caseKey: RuntimeApi['caseKey'] = (...keys) => runtime.caseKey(...keys);

/** Names the requirements (stories, epics) the running test verifies: the reporter links its case to each, once. */
export const requirement: RuntimeApi['requirement'] = (...keys) => runtime.requirement(...keys);

/**
 * Runs `body` as a named step of the running test and records its status, duration and error; returns what `body`
 * returns (and rethrows what it throws). Steps nest.
 */
export const step: RuntimeApi['step'] = (title, body) => runtime.step(title, body);

/** Attaches a file (`{ path }`) or bytes (`{ body }`) to the running test, or to the step it runs in. */
export const attach: RuntimeApi['attach'] = (name, content) => runtime.attach(name, content);

/**
 * Names a parameter of the running test (`test.each` rows: `param('locale', locale)`), for the `${param.<name>}`
 * template of option `attributes`. A no-op without the reporter.
 */
export const param: RuntimeApi['param'] = (name, value) => runtime.param(name, value);
