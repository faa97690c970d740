import type { Annotation, Attempt, ResultAttachment, ResultError, TestResult } from '@casebridge/core';
import { stableId } from '@casebridge/core/adapter';
import { isAttachmentProperty, MarkerScanner, splitPaths } from './attachments.js';
import { gluedKeys } from './dialect.js';
import { durationMs, errorOf, type Head, LIMITS, Tail } from './text.js';

/** What the reader gathers for one `<testcase>` while it streams by, and how it becomes a `TestResult`. */

/** A Surefire-style extra attempt: `flakyFailure`/`flakyError` (before the pass), `rerunFailure`/`rerunError`. */
export interface Extra {
  kind: 'flaky' | 'rerun';
  element: string;
  attrs: Record<string, string>;
  stack: Head;
  out: Tail;
  err: Tail;
  markers: MarkerScanner;
}

export interface CaseState {
  attrs: Record<string, string>;
  line: number;
  status: 'passed' | 'failed' | 'skipped';
  errors: ResultError[];
  skipMessage?: string;
  extras: Extra[];
  properties: Array<{ name: string; value: string }>;
  out: Tail;
  err: Tail;
  markers: MarkerScanner;
}

export const newStreams = () => ({
  out: new Tail(LIMITS.output),
  err: new Tail(LIMITS.output),
  markers: new MarkerScanner(),
});

/** Resolves referenced paths to attachments (a missing one becomes a note, not an attachment). */
export type Resolve = (refs: string[]) => ResultAttachment[];

function attempt(
  status: Attempt['status'],
  time: string | undefined,
  errors: ResultError[],
  s: { out: Tail; err: Tail; markers: MarkerScanner },
  attachments: ResultAttachment[],
): Attempt {
  // The output of a passing attempt is left out: the engine holds every result until the run ends, and 50,000
  // passing tests times 4 KiB of output each would be 200 MB for nobody to read.
  const out = status === 'passed' ? undefined : s.out.value();
  const err = status === 'passed' ? undefined : s.err.value();
  return {
    retry: 0,
    status,
    durationMs: durationMs(time),
    errors,
    steps: [],
    attachments,
    ...(out ? { stdout: out } : {}),
    ...(err ? { stderr: err } : {}),
  };
}

export function toResult(
  c: CaseState,
  identity: { file: string; titlePath: string[]; project?: string },
  resolve: Resolve,
): TestResult {
  const tags: string[] = [];
  const annotations: Annotation[] = [];
  const propertyFiles: string[] = [];
  for (const p of c.properties) {
    if (isAttachmentProperty(p.name)) propertyFiles.push(...splitPaths(p.value));
    else if (/^tags?$/i.test(p.name)) tags.push(...p.value.split(/[\s,]+/).filter(Boolean));
    else annotations.push(p.value ? { type: p.name, description: p.value } : { type: p.name });
  }
  for (const key of gluedKeys(identity.titlePath[identity.titlePath.length - 1] ?? '')) {
    annotations.push({ type: 'case', description: key });
  }
  if (c.skipMessage) annotations.push({ type: 'skip', description: c.skipMessage });
  c.markers.end();
  const extra = (x: Extra): Attempt => {
    x.markers.end();
    return attempt('failed', x.attrs.time, [errorOf(x.element, x.attrs, x.stack.value())], x, resolve(x.markers.paths));
  };
  const main = attempt(c.status, c.attrs.time, c.errors, c, resolve([...c.markers.paths, ...propertyFiles]));
  // Surefire: flaky* are failed tries before the pass the testcase records; rerun* are further failed tries after
  // the failure it records.
  const flaky = c.extras.filter((x) => x.kind === 'flaky').map(extra);
  const reruns = c.extras.filter((x) => x.kind === 'rerun').map(extra);
  const line = Number(c.attrs.line);
  return {
    // The file is the test's file or its classname: the id is every adapter's (`@casebridge/core/adapter`).
    id: stableId(identity.file, identity.titlePath, identity.project),
    file: identity.file,
    ...(Number.isInteger(line) && line > 0 ? { line } : {}),
    titlePath: identity.titlePath,
    ...(identity.project ? { project: identity.project } : {}),
    tags: [...new Set(tags.map((t) => t.replace(/^@/, '')))],
    annotations,
    attempts: [...flaky, main, ...reruns].map((a, retry) => ({ ...a, retry })),
  };
}
