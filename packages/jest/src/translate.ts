import type { Attempt, AttemptStatus, ResultError, TestResult } from '@casebridge/core';
import { relativeFile, stableId, stripAnsi } from '@casebridge/core/adapter';

/**
 * Pure translation from Jest's reporter objects to casebridge's result model. `JestAssertion` is the subset of
 * `AssertionResult` / `TestCaseResult` (`@jest/test-result`, Jest 29.7 and 30.x) this file reads, so the unit tests
 * can use small literals; Jest's own objects are assignable to it.
 */
export interface JestAssertion {
  ancestorTitles: string[];
  title: string;
  /** `[...ancestorTitles, title].join(' ')`: also the `currentTestName` a test sees in `expect.getState()`. */
  fullName: string;
  /** `jest-circus` reports `test.skip` as `pending`. */
  status: string;
  duration?: number | null;
  /** The per-case event has `startedAt`, the file result `startAt`. */
  startedAt?: number | null;
  startAt?: number | null;
  failureMessages: string[];
  /** Error objects in band; across workers, serialized copies (a thrown `Error` arrives as `{}`). */
  failureDetails: unknown[];
  /** 1 for the first try; the n-th retry's event says n + 1. */
  invocations?: number;
  /** Jest 30: the errors of the attempts that were retried (often empty). */
  retryReasons?: unknown[];
  location?: { line: number; column: number } | null;
}

/** Where a test's events are grouped: its file and full name (what a retried test keeps). */
export const caseKeyOf = (file: string, fullName: string) => `${file}\0${fullName}`;

export function statusOf(a: Pick<JestAssertion, 'status' | 'failureMessages'>): AttemptStatus {
  switch (a.status) {
    case 'passed':
    case 'focused':
      return 'passed';
    case 'failed':
      return a.failureMessages.some((m) => /Exceeded timeout of \d+ ?ms/.test(m)) ? 'timedOut' : 'failed';
    default:
      // pending (test.skip), skipped, todo, disabled
      return 'skipped';
  }
}

/**
 * The errors of one attempt. Jest gives each error twice: `failureMessages` (always a string: the message, then the
 * stack) and `failureDetails` (the error itself in band; a lossy copy from a worker). The message is the text
 * before the stack (`Error: expect(received)...`, with the error's name, as Playwright gives it), or the details'
 * message when there is no text.
 */
export function errorsOf(
  a: Pick<JestAssertion, 'failureMessages' | 'failureDetails'>,
  testFile?: string,
  root?: string,
) {
  const out: ResultError[] = [];
  const count = Math.max(a.failureMessages.length, a.failureDetails.length);
  for (let i = 0; i < count; i++) out.push(toError(a.failureMessages[i], a.failureDetails[i], testFile, root));
  return out;
}

export function toError(text: string | undefined, detail: unknown, testFile?: string, root?: string): ResultError {
  const d = detail && typeof detail === 'object' ? (detail as { message?: unknown; stack?: unknown }) : {};
  const full = stripAnsi(text ?? (typeof d.stack === 'string' ? d.stack : ''));
  const lines = full.split('\n');
  const firstFrame = lines.findIndex((l) => /^\s+at /.test(l));
  const fromText = (firstFrame >= 0 ? lines.slice(0, firstFrame) : lines).join('\n').trim();
  // The text first: it reads the same in band and from a worker (where a matcher error's details have no message).
  const message = fromText || (typeof d.message === 'string' && d.message ? stripAnsi(d.message) : 'Error');
  const out: ResultError = { message };
  if (full) out.stack = full;
  const location = testFile ? locationIn(full, testFile) : undefined;
  if (location && root !== undefined) out.location = { file: relativeFile(root, testFile as string), ...location };
  return out;
}

/** The first stack frame in the test file: where the test failed. */
function locationIn(stack: string, testFile: string): { line: number; column: number } | undefined {
  for (const m of stack.matchAll(/^\s+at (?:.*\()?(.+?):(\d+):(\d+)\)?$/gm)) {
    if (m[1] === testFile) return { line: Number(m[2]), column: Number(m[3]) };
  }
  return undefined;
}

function toAttempt(a: JestAssertion, retry: number, testFile: string, root: string): Attempt {
  const started = a.startedAt ?? a.startAt;
  return {
    retry,
    status: statusOf(a),
    durationMs: Math.max(0, a.duration ?? 0),
    ...(typeof started === 'number' && started > 0 ? { startedAt: new Date(started).toISOString() } : {}),
    errors: errorsOf(a, testFile, root),
    steps: [],
    attachments: [],
  };
}

/**
 * The attempts of one test: one per `onTestCaseResult` event (de-duplicated by `invocations`), the file result
 * deciding the last one. When the events are missing (skipped tests have none; a retry event may be lost), attempts
 * before the last are rebuilt from `invocations` as failures, with `retryReasons` as their errors when Jest has them.
 */
export function attemptsOf(final: JestAssertion, events: readonly JestAssertion[], testFile: string, root: string) {
  const byTry = new Map<number, Attempt>();
  for (const e of events) {
    const retry = Math.max(0, (e.invocations ?? 1) - 1);
    byTry.set(retry, toAttempt(e, retry, testFile, root));
  }
  const lastTry = Math.max(0, (final.invocations ?? 1) - 1, ...byTry.keys());
  for (let retry = 0; retry < lastTry; retry++) {
    if (byTry.has(retry)) continue;
    const reason = final.retryReasons?.[retry];
    const text = typeof reason === 'string' ? reason : undefined;
    byTry.set(retry, {
      retry,
      status: 'failed',
      durationMs: 0,
      errors: reason === undefined ? [] : [toError(text, reason, testFile, root)],
      steps: [],
      attachments: [],
    });
  }
  // The file result is the test's final word (its status, its errors), whatever the events said.
  const last = toAttempt(final, lastTry, testFile, root);
  const seen = byTry.get(lastTry);
  if (seen && last.startedAt === undefined && seen.startedAt) last.startedAt = seen.startedAt;
  byTry.set(lastTry, last);
  return [...byTry.entries()].sort((x, y) => x[0] - y[0]).map(([, a]) => a);
}

export interface TestFile {
  /** Absolute path of the test file. */
  path: string;
  /** The project root: the Jest config's `rootDir`. */
  root: string;
  /** The Jest project's `displayName`, when a multi-project config names it. */
  project?: string;
}

/** One test of a file result, with all its attempts. */
export function toTestResult(final: JestAssertion, events: readonly JestAssertion[], f: TestFile): TestResult {
  const file = relativeFile(f.root, f.path);
  const titlePath = [...final.ancestorTitles, final.title];
  return {
    // The project is the Jest project's `displayName`.
    id: stableId(file, titlePath, f.project),
    file,
    ...(final.location?.line ? { line: final.location.line } : {}),
    titlePath,
    ...(f.project ? { project: f.project } : {}),
    tags: [],
    annotations: [],
    attempts: attemptsOf(final, events, f.path, f.root),
  };
}

/** `displayName` of a Jest project config: a string or `{ name, color }`. */
export function projectName(displayName: unknown): string | undefined {
  if (typeof displayName === 'string') return displayName || undefined;
  if (displayName && typeof displayName === 'object') {
    const name = (displayName as { name?: unknown }).name;
    return typeof name === 'string' && name ? name : undefined;
  }
  return undefined;
}
