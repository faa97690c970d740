/** The framework-neutral result model: every adapter turns its runner's events into these types. */

/** Status of one attempt, in Playwright's words (the richest of the three runners). */
export type AttemptStatus = 'passed' | 'failed' | 'timedOut' | 'skipped' | 'interrupted';

/** The final outcome of a test over all its attempts. */
export type Outcome = 'passed' | 'failed' | 'flaky' | 'skipped' | 'interrupted';

export interface SourceLocation {
  file: string;
  line?: number;
  column?: number;
}

export interface ResultError {
  message: string;
  stack?: string;
  /** The source excerpt around the failing line, when the runner gives one. */
  snippet?: string;
  location?: SourceLocation;
}

/** A file the test produced: on disk (`path`) or in memory (`body`). */
export interface ResultAttachment {
  name: string;
  contentType: string;
  path?: string;
  body?: Uint8Array;
}

export interface ResultStep {
  title: string;
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  error?: ResultError;
  steps: ResultStep[];
  attachments: ResultAttachment[];
}

/** One run of a test (the first try or a retry). */
export interface Attempt {
  /** 0 for the first try. */
  retry: number;
  status: AttemptStatus;
  durationMs: number;
  /** ISO 8601 start time. */
  startedAt?: string;
  errors: ResultError[];
  steps: ResultStep[];
  attachments: ResultAttachment[];
  /** Excerpts of what the test printed (bounded by the adapter). */
  stdout?: string;
  stderr?: string;
}

export interface Annotation {
  type: string;
  description?: string;
}

/** One test with all its attempts: what an adapter hands to the engine when the test is finished. */
export interface TestResult {
  /** Stable across runs of the same source: file, title path and project (not the runner's run-local id). */
  id: string;
  /** Path relative to the project root, with forward slashes. */
  file: string;
  line?: number;
  /** Describe blocks and the test title (no project, no file). */
  titlePath: string[];
  project?: string;
  /** Tags without the leading `@`. */
  tags: string[];
  annotations: Annotation[];
  /** A data-driven test's row (`{ locale: 'de' }`), read by the `${param.<name>}` attribute template. */
  params?: Record<string, string>;
  attempts: Attempt[];
  /** Whether the test was expected to fail (Playwright `test.fail()`): a failure is then the expected outcome. */
  expectedToFail?: boolean;
  /**
   * Why the test is quarantined, when the adapter ran it expected-to-fail for that (reported classified `quarantined`).
   */
  quarantined?: string;
}

export function lastAttempt(t: TestResult): Attempt | undefined {
  return t.attempts[t.attempts.length - 1];
}

/** The final outcome: the last attempt decides, a pass after a failure is flaky, an expected failure is a pass. */
export function outcomeOf(t: TestResult): Outcome {
  const last = lastAttempt(t);
  if (!last) return 'skipped';
  if (last.status === 'skipped') return 'skipped';
  if (last.status === 'interrupted') return 'interrupted';
  const ok = (s: AttemptStatus) => (t.expectedToFail ? s === 'failed' || s === 'timedOut' : s === 'passed');
  if (!ok(last.status)) return 'failed';
  return t.attempts.some((a) => a.status !== 'skipped' && !ok(a.status)) ? 'flaky' : 'passed';
}

/** `file > describe > title`, the human name of a test in summaries. */
export function displayName(t: Pick<TestResult, 'file' | 'titlePath'>): string {
  return [t.file, ...t.titlePath].join(' > ');
}
