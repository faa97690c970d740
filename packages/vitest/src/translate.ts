import { basename, extname, isAbsolute, resolve } from 'node:path';
import type { Annotation, Attempt, ResultAttachment, ResultError, TestResult } from '@casebridge/core';
import {
  FileNames,
  leavesRoot,
  outputExcerpt,
  relativeFile,
  stableId,
  stackWithCauses,
  stripAnsi,
} from '@casebridge/core/adapter';

/**
 * Pure translation from Vitest's reported tasks (`vitest/node`) to casebridge's result model. The `Vt*` interfaces
 * are the subset this file reads, with every member that a supported version may lack marked optional, so the unit
 * tests can use small literals and Vitest 3.2, 4.x and 5.x `TestCase`s are all assignable to them.
 */

export interface VtError {
  message?: string;
  name?: string;
  stack?: string;
  /** The assertion diff, already formatted by Vitest. */
  diff?: string;
  stacks?: readonly { file: string; line: number; column: number }[];
  cause?: unknown;
}

export interface VtAttachment {
  /** Set when the file is on disk (Vitest copies annotation files into its attachments dir). */
  path?: string;
  body?: string | Uint8Array;
  contentType?: string;
  /** 4.1+: how a string body is encoded; `base64` by default. */
  bodyEncoding?: 'base64' | 'utf-8';
  name?: string;
}

export interface VtAnnotation {
  type: string;
  message: string;
  attachment?: VtAttachment;
}

export interface VtArtifact {
  type: string;
  attachments?: readonly VtAttachment[];
}

/** 5.0+: one entry per try (`attempts()`). */
export interface VtAttempt {
  state: 'passed' | 'failed' | 'skipped';
  errors?: readonly VtError[];
  duration: number;
  startTime: number;
}

export interface VtParent {
  type: string;
  name?: string;
  parent?: VtParent;
}

export interface VtTestCase {
  name: string;
  module: { moduleId: string; relativeModuleId?: string };
  project: { name: string };
  parent: VtParent;
  /** Only with `includeTaskLocation`. */
  location?: { line: number; column: number };
  /** 4.1+. */
  tags?: readonly string[];
  meta(): object;
  result(): { state: string; errors?: readonly VtError[] };
  diagnostic(): { duration: number; startTime: number; retryCount: number; flaky: boolean } | undefined;
  /** 3.2+. */
  annotations?(): readonly VtAnnotation[];
  /** 4.0.11+. */
  artifacts?(): readonly VtArtifact[];
  /** 5.0+. */
  attempts?(): readonly VtAttempt[];
  /** 5.0+. */
  logs?(): readonly { content: string; type: string }[];
}

/** `file` relative to the project root, forward slashes; a path outside the root (a merge recorded elsewhere) as given. */
export function reportedFile(root: string, file: string, fallback?: string): string {
  // Asked once per test, made once per file: `path.relative` was a tenth of the hand-over's time.
  const rel = relatives.of(root, file);
  return fallback && isAbsolute(file) && leavesRoot(rel) ? fallback.replace(/\\/g, '/') : rel;
}
const relatives = new FileNames<string>(relativeFile);

/** Describe blocks and the title, outermost first (the module is not part of it). */
export function titlePathOf(tc: Pick<VtTestCase, 'name' | 'parent'>): string[] {
  const path = [tc.name];
  for (let p: VtParent | undefined = tc.parent; p && p.type === 'suite'; p = p.parent) {
    if (p.name) path.unshift(p.name);
  }
  return path;
}

/**
 * The key the runtime API sets in a test's `task.meta` when it writes records for it (runtime.ts). Vitest sends the
 * meta with the test's result (3.2, 4.x and 5.x alike), so the reporter reads the channel only for tests that wrote
 * to it: the others cost no file check.
 */
export const RECORDED_META = 'casebridgeRecords';

/**
 * The name under which the runtime API files a test's records (see runtime.ts): the project and the title path, as
 * both the worker (from its task) and the reporter (from its `TestCase`) can rebuild it.
 */
export function runtimeName(project: string | undefined, titlePath: readonly string[]): string {
  return JSON.stringify([project || '', ...titlePath]);
}

const asKeys = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string') : [];

/** Annotations (`context.annotate(key, 'testCase')`) and keys set in `task.meta.testCase` / `caseKeys`. */
function annotationsOf(tc: VtTestCase): Annotation[] {
  const out: Annotation[] = (tc.annotations?.() ?? []).map((a) => ({ type: a.type, description: a.message }));
  const meta = (tc.meta() ?? {}) as Record<string, unknown>;
  for (const key of [...asKeys(meta.testCase), ...asKeys(meta.caseKeys)]) {
    if (!out.some((a) => a.type === 'testCase' && a.description === key))
      out.push({ type: 'testCase', description: key });
  }
  return out;
}

export function toTestResult(tc: VtTestCase, root: string): TestResult {
  const file = reportedFile(root, tc.module.moduleId, tc.module.relativeModuleId);
  const titlePath = titlePathOf(tc);
  const project = tc.project.name || undefined;
  const attempts = attemptsOf(tc, root);
  const last = attempts[attempts.length - 1];
  if (last) last.attachments.push(...attachmentsOf(tc, root));
  const logs = tc.logs?.() ?? [];
  if (last && logs.length > 0) {
    const out = outputExcerpt(logs.filter((l) => l.type === 'stdout').map((l) => l.content));
    const err = outputExcerpt(logs.filter((l) => l.type === 'stderr').map((l) => l.content));
    if (out) last.stdout = out;
    if (err) last.stderr = err;
  }
  return {
    // Not Vitest's `id`: that one depends on the order of the tests in the file.
    id: stableId(file, titlePath, project),
    file,
    ...(tc.location ? { line: tc.location.line } : {}),
    titlePath,
    project,
    tags: [...new Set((tc.tags ?? []).map((t) => t.replace(/^@/, '')))],
    annotations: annotationsOf(tc),
    attempts,
  };
}

const TIMEOUT = /^Test timed out in \d+ms/;

function statusOf(state: string, errors: readonly VtError[] | undefined): Attempt['status'] {
  if (state === 'skipped') return 'skipped';
  if (state === 'passed') return 'passed';
  return (errors ?? []).some((e) => TIMEOUT.test(e.message ?? '')) ? 'timedOut' : 'failed';
}

/**
 * The attempts: Vitest 5 lists them (`attempts()`); before, only the final state, the retry count and all errors
 * of all tries together are known, so the earlier tries are rebuilt as failed ones, each with its error when the
 * count of errors allows it.
 */
export function attemptsOf(tc: VtTestCase, root: string): Attempt[] {
  const listed = tc.attempts?.() ?? [];
  if (listed.length > 0) {
    return listed.map((a, i) => ({
      retry: i,
      status: statusOf(a.state, a.errors),
      durationMs: Math.max(0, Math.round(a.duration ?? 0)),
      ...isoOf(a.startTime),
      errors: (a.errors ?? []).map((e) => toError(e, root)),
      steps: [],
      attachments: [],
    }));
  }
  const result = tc.result();
  const diag = tc.diagnostic();
  const errors = result.errors ?? [];
  const state = result.state === 'pending' ? 'skipped' : result.state;
  const retries = state === 'skipped' ? 0 : Math.max(0, diag?.retryCount ?? 0);
  const lastFailed = state === 'failed';
  const oneEach = errors.length === retries + (lastFailed ? 1 : 0);
  const out: Attempt[] = [];
  for (let i = 0; i < retries; i++) {
    const own = oneEach ? errors.slice(i, i + 1) : [];
    out.push({
      retry: i,
      status: statusOf('failed', own),
      durationMs: 0,
      errors: own.map((e) => toError(e, root)),
      steps: [],
      attachments: [],
    });
  }
  const final = lastFailed ? (oneEach ? errors.slice(retries) : errors) : [];
  out.push({
    retry: retries,
    status: statusOf(state, final),
    durationMs: Math.max(0, Math.round(diag?.duration ?? 0)),
    ...isoOf(diag?.startTime),
    errors: final.map((e) => toError(e, root)),
    steps: [],
    attachments: [],
  });
  return out;
}

function isoOf(ms: number | undefined): { startedAt?: string } {
  return typeof ms === 'number' && ms > 0 ? { startedAt: new Date(ms).toISOString() } : {};
}

/** Message, stack with the diff and the causes (no colour codes), location of the first stack frame. */
export function toError(e: VtError, root: string): ResultError {
  let stack = stackWithCauses(
    e.stack === undefined ? undefined : stripAnsi(e.stack),
    e.cause,
    (c: VtError) => c.stack ?? c.message ?? '',
  );
  if (e.diff) stack = `${stack ?? ''}\n\n${stripAnsi(e.diff)}`;
  const out: ResultError = { message: stripAnsi(e.message || e.name || 'Error') };
  if (stack !== undefined) out.stack = stack;
  const frame = e.stacks?.[0];
  if (frame) out.location = { file: reportedFile(root, frame.file), line: frame.line, column: frame.column };
  return out;
}

/**
 * Files of the test: annotation attachments, failure screenshots (`internal:failureScreenshot` artifacts from 4.1,
 * `meta().failScreenshotPath` before) and the attachments of custom artifacts. They belong to the last attempt.
 */
export function attachmentsOf(tc: VtTestCase, root: string): ResultAttachment[] {
  const out: ResultAttachment[] = [];
  for (const a of tc.annotations?.() ?? []) {
    if (a.attachment) push(out, toAttachment(a.attachment, a.message || a.type, root));
  }
  let screenshot = false;
  for (const art of tc.artifacts?.() ?? []) {
    if (art.type === 'internal:failureScreenshot') {
      for (const a of art.attachments ?? []) {
        screenshot = true;
        push(out, toAttachment({ contentType: 'image/png', ...a }, 'screenshot', root));
      }
    } else if (!art.type.startsWith('internal:')) {
      for (const a of art.attachments ?? []) push(out, toAttachment(a, a.name || art.type, root));
    }
  }
  const old = (tc.meta() as { failScreenshotPath?: unknown }).failScreenshotPath;
  if (!screenshot && typeof old === 'string' && old) {
    push(out, toAttachment({ path: old, contentType: 'image/png' }, 'screenshot', root));
  }
  return out;
}

function push(out: ResultAttachment[], a: ResultAttachment | undefined) {
  if (a && !out.some((o) => o.path !== undefined && o.path === a.path)) out.push(a);
}

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.json': 'application/json',
  '.html': 'text/html',
};

export function toAttachment(a: VtAttachment, name: string, root: string): ResultAttachment | undefined {
  const contentType =
    a.contentType || (a.path ? TYPES[extname(a.path).toLowerCase()] : undefined) || 'application/octet-stream';
  if (a.path) return { name: name || basename(a.path), contentType, path: resolve(root, a.path) };
  if (a.body === undefined) return undefined;
  const body =
    typeof a.body !== 'string'
      ? new Uint8Array(a.body.buffer, a.body.byteOffset, a.body.byteLength)
      : a.bodyEncoding === 'utf-8'
        ? new TextEncoder().encode(a.body)
        : new Uint8Array(Buffer.from(a.body, 'base64'));
  return { name, contentType, body };
}
