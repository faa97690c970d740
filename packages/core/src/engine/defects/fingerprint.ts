import { createHash } from 'node:crypto';
import { ANSI } from '../../adapter/text.js';
import type { ResultError, TestResult } from '../kernel/model.js';

/** A failure's fingerprint, stable across runs and machines: test id, normalised message, first frame in its file. */

/** The message with run-specific details replaced by placeholders. */
export function normaliseMessage(message: string): string {
  return (
    message
      .replace(ANSI, '')
      // Timestamps and dates before numbers, so they collapse whole.
      .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/g, '<time>')
      .replace(/\d{4}-\d{2}-\d{2}/g, '<date>')
      .replace(/\b\d{1,2}:\d{2}(:\d{2})?(\.\d+)?\b/g, '<time>')
      .replace(/https?:\/\/[^\s'"<>)]+/g, '<url>')
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
      .replace(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, '<hex>')
      // Absolute and relative paths (POSIX and Windows).
      .replace(/(?:[A-Za-z]:)?(?:[\\/][\w.@-]+){2,}(?::\d+)*(?::\d+)?/g, '<path>')
      .replace(/\b0x[0-9a-f]+\b/gi, '<n>')
      .replace(/\d+(\.\d+)?/g, '<n>')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 2000)
  );
}

/** `file:line` of the first stack frame that points into the test's file, or undefined. */
export function firstFrameIn(stack: string | undefined, testFile: string): string | undefined {
  if (!stack) return undefined;
  const file = testFile.replace(/\\/g, '/');
  const base = file.split('/').pop() ?? file;
  for (const raw of stack.split('\n')) {
    const line = raw.replace(/\\/g, '/');
    if (!line.includes(base)) continue;
    const m = /([^\s(]*?)([^\s(/:]+):(\d+)(?::\d+)?\)?\s*$/.exec(line.trim());
    if (!m) continue;
    const path = `${m[1]}${m[2]}`;
    if (path.endsWith(file) || file.endsWith(path) || m[2] === base) return `${file}:${m[3]}`;
  }
  return undefined;
}

/** The first error of the last attempt, or of the last attempt that has one (a flaky test's defect is its failure). */
export function primaryError(t: TestResult): ResultError | undefined {
  const last = t.attempts[t.attempts.length - 1];
  if (last?.status !== 'passed') return last?.errors[0];
  return [...t.attempts].reverse().find((a) => a.errors.length > 0)?.errors[0];
}

export interface Fingerprint {
  /** 16 hex characters. */
  hash: string;
  /** The Jira label that marks a defect with this fingerprint. */
  label: string;
  normalisedMessage: string;
  frame?: string;
}

export function fingerprintOf(t: TestResult, error: ResultError | undefined = primaryError(t)): Fingerprint {
  const normalisedMessage = normaliseMessage(error?.message ?? '(no error message)');
  const frame =
    firstFrameIn(error?.stack, t.file) ??
    (error?.location?.file.replace(/\\/g, '/').endsWith(t.file.replace(/\\/g, '/'))
      ? `${t.file}:${error.location.line ?? 0}`
      : undefined);
  const hash = createHash('sha256')
    .update(`${t.id}\n${normalisedMessage}\n${frame ?? ''}`)
    .digest('hex')
    .slice(0, 16);
  return { hash, label: `casebridge-${hash}`, normalisedMessage, frame };
}
