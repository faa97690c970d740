import type {
  Annotation,
  Attempt,
  PlannedTest,
  ResultAttachment,
  ResultError,
  ResultStep,
  TestResult,
} from '@casebridge/core';
import {
  FileNames,
  leavesRoot,
  outputExcerpt,
  relativeFile,
  stableId,
  stackWithCauses,
  stripAnsi,
} from '@casebridge/core/adapter';
import { PARAM_ANNOTATION } from './runtime.js';

/**
 * Pure translation from Playwright's reporter objects to casebridge's result model. The `Pw*` interfaces are the
 * subset of `@playwright/test/reporter` this file reads, so the unit tests can use small literals; Playwright's own
 * `TestCase`, `TestResult` and `TestStep` (1.45+) are assignable to them.
 */

export interface PwLocation {
  file: string;
  line: number;
  column: number;
}

export interface PwAnnotation {
  type: string;
  description?: string;
}

export interface PwAttachment {
  name: string;
  contentType: string;
  path?: string;
  body?: Uint8Array | string;
}

export interface PwError {
  message?: string;
  stack?: string;
  snippet?: string;
  value?: string;
  location?: PwLocation;
  cause?: PwError;
}

export interface PwStep {
  title: string;
  /** `test.step` for the user's steps; other categories (`pw:api`, `expect`, `hook`, ...) are left out. */
  category: string;
  duration: number;
  error?: PwError;
  steps: PwStep[];
  /** 1.50+. */
  attachments?: PwAttachment[];
  annotations?: PwAnnotation[];
}

export interface PwResult {
  retry: number;
  status: Attempt['status'];
  duration: number;
  startTime: Date;
  errors: PwError[];
  error?: PwError;
  steps: PwStep[];
  attachments: PwAttachment[];
  /** 1.52+; before, only `test.annotations`. */
  annotations?: PwAnnotation[];
  stdout: (string | Uint8Array)[];
  stderr: (string | Uint8Array)[];
}

export interface PwSuite {
  project?(): { name: string } | undefined;
  parent?: PwSuite;
}

export interface PwTestCase {
  /** `['', project, file, ...describes, title]`. */
  titlePath(): string[];
  location: PwLocation;
  expectedStatus: string;
  retries: number;
  /** 1.42+; includes `@tokens` from titles. */
  tags?: string[];
  annotations: PwAnnotation[];
  parent: PwSuite;
}

/**
 * Where test files are made relative to: `root` is the project root (the Playwright config's folder); `testDir` is
 * Playwright's `config.rootDir`, used when a file lies outside `root` (a merged report recorded on a machine whose
 * checkout path differs: Playwright rebases paths onto the recorded `testDir`).
 */
export interface Paths {
  root: string;
  testDir?: string;
}

/** `file` relative to the project root, with forward slashes (Playwright's locations are absolute). */
export function reportedFile(paths: Paths, file: string): string {
  // Asked once per test, made once per file (10,000 tests: 10,000 copies of a hundred names otherwise).
  return relatives.of(paths, file);
}
const relatives = new FileNames<Paths>((paths, file) => {
  const rel = relativeFile(paths.root, file);
  return paths.testDir && leavesRoot(rel) ? relativeFile(paths.testDir, file) : rel;
});

/** Describe blocks and the title: `titlePath()` without the root (''), project and file entries. */
export function titlePathOf(test: PwTestCase): string[] {
  return test.titlePath().slice(3);
}

export function projectOf(test: PwTestCase): string | undefined {
  return test.parent.project?.()?.name || undefined;
}

type Identity = { id: string; file: string; titlePath: string[]; project: string | undefined };
/** Per test object: a test is planned at the start and handed over at its end; its identity is made once. */
const identities = new WeakMap<PwTestCase, { paths: Paths; identity: Identity }>();

function identity(test: PwTestCase, paths: Paths): Identity {
  const known = identities.get(test);
  if (known && known.paths === paths) return known.identity;
  const file = reportedFile(paths, test.location.file);
  const titlePath = titlePathOf(test);
  const project = projectOf(test);
  // Not `test.id`: that one hashes the path from the project's testDir and a de-duplicated project id, and
  // merge-reports salts it when the same test comes from several blob reports.
  const made = { id: stableId(file, titlePath, project), file, titlePath, project };
  identities.set(test, { paths, identity: made });
  return made;
}

const tagsOf = (test: PwTestCase) => (test.tags?.length ? [...new Set(test.tags.map((t) => t.replace(/^@/, '')))] : []);
const annotationsOf = (list: PwAnnotation[] | undefined): Annotation[] =>
  (list ?? []).map((a) =>
    a.description === undefined ? { type: a.type } : { type: a.type, description: a.description },
  );

export function toPlanned(test: PwTestCase, paths: Paths): PlannedTest {
  const { id, file, titlePath, project } = identity(test, paths);
  return {
    id,
    file,
    line: test.location.line,
    titlePath,
    project,
    tags: tagsOf(test),
    annotations: annotationsOf(test.annotations),
  };
}

/** One test with all its attempts so far (`test.results`). */
export function toTestResult(test: PwTestCase, results: readonly PwResult[], paths: Paths): TestResult {
  const last = results[results.length - 1];
  const annotations = annotationsOf(last?.annotations ?? test.annotations);
  const params = paramsOf(annotations);
  return {
    ...toPlanned(test, paths),
    // The last attempt's annotations: those added at runtime (caseKey, param) too.
    annotations,
    ...(params ? { params } : {}),
    attempts: results.map((r) => toAttempt(r, paths)),
    expectedToFail: test.expectedStatus === 'failed',
  };
}

/** The parameters the runtime's `param` recorded (`casebridge.param` annotations, `name=value`; the last wins). */
function paramsOf(annotations: readonly Annotation[]): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const a of annotations) {
    if (a.type !== PARAM_ANNOTATION || !a.description) continue;
    const eq = a.description.indexOf('=');
    if (eq <= 0) continue;
    out ??= {};
    out[a.description.slice(0, eq)] = a.description.slice(eq + 1);
  }
  return out;
}

export function toAttempt(result: PwResult, paths: Paths): Attempt {
  const ctx: StepContext = { paths, owned: new Set() };
  const steps: ResultStep[] = [];
  collectSteps(result.steps, ctx, steps, undefined);
  const errors = result.errors.length > 0 ? result.errors : result.error ? [result.error] : [];
  const started = result.startTime instanceof Date ? result.startTime : new Date(result.startTime);
  return {
    retry: result.retry,
    status: result.status,
    durationMs: Math.max(0, result.duration),
    startedAt: Number.isNaN(started.getTime()) ? undefined : started.toISOString(),
    errors: errors.map((e) => toError(e, paths)),
    steps,
    // A file attached inside a step is listed under that step only (Playwright lists it in both places).
    attachments: toAttachments(
      result.attachments.filter((a) => !ctx.owned.has(a)),
      new Set(),
    ),
    stdout: outputExcerpt(result.stdout),
    stderr: outputExcerpt(result.stderr),
  };
}

export function toError(e: PwError, paths: Paths): ResultError {
  const stack = stackWithCauses(
    e.stack === undefined ? undefined : stripAnsi(e.stack),
    e.cause,
    (c: PwError) => c.stack ?? c.message ?? c.value ?? '',
  );
  const out: ResultError = { message: stripAnsi(e.message ?? e.value ?? 'Error') };
  if (stack !== undefined) out.stack = stack;
  if (e.snippet !== undefined) out.snippet = stripAnsi(e.snippet);
  if (e.location) out.location = { ...e.location, file: reportedFile(paths, e.location.file) };
  return out;
}

interface StepContext {
  paths: Paths;
  /** Attachments already placed under a user step. */
  owned: Set<PwAttachment>;
}

/**
 * The user's steps (`test.step`), nested as written, into `out`. Other steps are not kept, but what is inside them
 * is: a `test.step` in a hook or fixture is lifted to the nearest user step or the top (so steps written in
 * `beforeEach` count), and a file attached in a step (`testInfo.attach` makes a `test.attach` child step) goes to
 * the nearest user step around it.
 */
function collectSteps(steps: readonly PwStep[], ctx: StepContext, out: ResultStep[], owner: ResultStep | undefined) {
  for (const s of steps) {
    if (s.category !== 'test.step') {
      if (owner) owner.attachments.push(...toAttachments(s.attachments ?? [], ctx.owned));
      collectSteps(s.steps ?? [], ctx, out, owner);
      continue;
    }
    const skipped = (s.annotations ?? []).some((a) => a.type === 'skip' || a.type === 'fixme');
    const step: ResultStep = {
      title: s.title,
      status: s.error ? 'failed' : skipped ? 'skipped' : 'passed',
      durationMs: Math.max(0, s.duration),
      steps: [],
      attachments: toAttachments(s.attachments ?? [], ctx.owned),
    };
    if (s.error) step.error = toError(s.error, ctx.paths);
    collectSteps(s.steps ?? [], ctx, step.steps, step);
    out.push(step);
  }
}

/**
 * Drops Playwright's internal attachments (names starting with `_`), empty ones and those already in `owned` (then
 * adds them to it); bodies become Uint8Array. The failure context is kept under its 1.53+ name, `error-context`.
 */
function toAttachments(list: readonly PwAttachment[], owned: Set<PwAttachment>): ResultAttachment[] {
  const out: ResultAttachment[] = [];
  for (const a of list) {
    if (owned.has(a)) continue;
    owned.add(a);
    const t = toAttachment(a);
    if (t) out.push(t);
  }
  return out;
}

/**
 * The failure context (`error-context` from 1.53) under its earlier, internal names: 1.51's `_prompt-<n>` (in memory)
 * and 1.52's `_error-context-<n>` (a file).
 */
const EARLY_ERROR_CONTEXT = /^_(?:prompt|error-context)-\d+$/;

function toAttachment(a: PwAttachment): ResultAttachment | undefined {
  const name = EARLY_ERROR_CONTEXT.test(a.name) && a.contentType === 'text/markdown' ? 'error-context' : a.name;
  if (name.startsWith('_') || (a.path === undefined && a.body === undefined)) return undefined;
  const out: ResultAttachment = { name, contentType: a.contentType };
  if (a.path !== undefined) out.path = a.path;
  if (typeof a.body === 'string') out.body = new TextEncoder().encode(a.body);
  else if (a.body) out.body = new Uint8Array(a.body.buffer, a.body.byteOffset, a.body.byteLength);
  return out;
}

/**
 * Whether `result` is the test's last attempt, so the test can be handed to the engine now. Playwright retries a
 * test whose attempt did not end as expected while retries are left; in a serial group it retries the whole group,
 * passed tests included. So an attempt is final when the run was interrupted, no retry is left, or it ended as
 * expected outside a serial group. A test still waiting when the run ends (max failures, a non-retriable error,
 * an unexpected skip) is handed over then.
 */
export function isFinal(test: PwTestCase, result: Pick<PwResult, 'retry' | 'status'>): boolean {
  if (result.status === 'interrupted' || result.retry >= test.retries) return true;
  if (result.status !== test.expectedStatus) return false;
  return !inSerialGroup(test);
}

/**
 * Recent Playwright versions mark tests of serial groups with a `serial` annotation; older ones only have the
 * internal `_parallelMode` on the suite (read defensively; a merged report has neither, and hands every test over at
 * the end anyway).
 */
function inSerialGroup(test: PwTestCase): boolean {
  if (test.annotations.some((a) => a.type === 'serial')) return true;
  for (let s: PwSuite | undefined = test.parent; s; s = s.parent) {
    if ((s as { _parallelMode?: unknown })._parallelMode === 'serial') return true;
  }
  return false;
}
