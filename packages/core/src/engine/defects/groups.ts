import { createHash } from 'node:crypto';
import type { ResultError, TestResult } from '../kernel/model.js';
import type { Fingerprint } from './fingerprint.js';
import { fingerprintOf, normaliseMessage, primaryError } from './fingerprint.js';

/**
 * Failure groups, one defect each, the same on every machine: an environment error by kind and hostless message;
 * another by type, message and first project frame (one message is not necessarily one bug); else per test.
 */

export type EnvironmentKind =
  | 'connection refused'
  | 'connection reset'
  | 'connection timed out'
  | 'network unreachable'
  | 'DNS'
  | 'TLS'
  | 'hook timeout';

export interface FailureGroup extends Fingerprint {
  /** Set for an environment error: it groups regardless of the test. */
  environment?: EnvironmentKind;
  /** The error's type: its name (`TypeError`), or its system code (`ECONNREFUSED`) when it has one. */
  type: string;
  /** Whether the test id is part of the group (no frame in the project, or grouping is off). */
  perTest: boolean;
}

const ENVIRONMENT: Array<[EnvironmentKind, RegExp]> = [
  ['connection refused', /\bECONNREFUSED\b|connection refused/i],
  ['connection reset', /\bECONNRESET\b|\bEPIPE\b|socket hang up|connection reset/i],
  ['DNS', /\bENOTFOUND\b|\bEAI_AGAIN\b|getaddrinfo/i],
  ['connection timed out', /\bETIMEDOUT\b|\bESOCKETTIMEDOUT\b|\bECONNABORTED\b/],
  ['network unreachable', /\bE(?:HOST|NET)UNREACH\b/],
  [
    'TLS',
    /\bCERT_[A-Z_]+\b|\bERR_TLS_[A-Z_]+\b|\bERR_SSL_[A-Z_]+\b|\bEPROTO\b|UNABLE_TO_(?:VERIFY|GET)_|SELF_SIGNED_CERT|self[- ]signed certificate|certificate has expired|TLS handshake|SSL routines/i,
  ],
];

/** A timeout of a before/after hook: Jest, Vitest and Playwright word it differently. */
const HOOK_TIMEOUT = [
  /exceeded timeout of .* for a hook/i, // Jest
  /hook timed out in/i, // Vitest
  /"(?:before|after)(?:All|Each)" hook timeout/i, // Playwright
  /\b(?:before|after)(?:All|Each)?\b.*\btime(?:d ?out|out)\b/i,
];

/** The environment kind of an error (from its first lines and system code), or undefined. */
export function environmentKind(message: string): EnvironmentKind | undefined {
  // The first lines only: an assertion diff that happens to print "ECONNREFUSED" is not a refused connection.
  const head = message.split('\n').slice(0, 3).join('\n');
  if (HOOK_TIMEOUT.some((r) => r.test(head))) return 'hook timeout';
  return ENVIRONMENT.find(([, r]) => r.test(head))?.[0];
}

/** The system code of an error message (`ECONNREFUSED`, `ERR_TLS_CERT_ALTNAME_INVALID`), or undefined. */
function codeOf(message: string): string | undefined {
  return /\b(E[A-Z]{3,}(?:_[A-Z]+)*|ERR_[A-Z_]+|CERT_[A-Z_]+)\b/.exec(message.split('\n')[0] ?? '')?.[1];
}

/** The error's name: the `Name:` its message or stack starts with (`AssertionError [ERR_ASSERTION]:`), else `Error`. */
export function errorType(error: ResultError | undefined): string {
  const first = (text: string | undefined) =>
    /^\s*(?:thrown:\s*)?([A-Za-z_$][\w$.]*(?:Error|Exception|Failure))\b(?:\s*\[[^\]]*\])?:/.exec(text ?? '')?.[1];
  return first(error?.message) ?? first(error?.stack) ?? 'Error';
}

/** The message of an environment error without hosts, addresses and ports (then normalised as any message). */
export function hostlessMessage(message: string): string {
  const first = message.split('\n').find((l) => l.trim() !== '') ?? '';
  return normaliseMessage(
    first
      .replace(/\[[0-9a-f:]*:[0-9a-f:.]*\](?::\d+)?/gi, '<host>') // [::1]:5432
      .replace(/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b/g, '<host>')
      .replace(/\b(ENOTFOUND|EAI_AGAIN|getaddrinfo(?: \w+)?)\s+[\w.-]+(?::\d+)?/g, '$1 <host>')
      .replace(/\b(?:localhost|[\w-]+(?:\.[\w-]+)+):\d+\b/g, '<host>'),
  );
}

/** A stack frame that belongs to the runtime or a dependency, not to the project. */
const FOREIGN = /node_modules|\bnode:|\binternal\/|<anonymous>|\(native\)|\/jest-circus\/|\/@vitest\//;

/** `file:line` of the first project frame, relative to the root: absolute paths differ between machines. */
export function projectFrame(stack: string | undefined, testFile: string): string | undefined {
  if (!stack) return undefined;
  const test = testFile.replace(/\\/g, '/');
  const frames: Array<{ path: string; line: string }> = [];
  for (const raw of stack.split('\n')) {
    const m = /^\s*at (?:.*?\()?((?:[A-Za-z]:)?[^\s()]+?):(\d+)(?::\d+)?\)?\s*$/.exec(raw.replace(/\\/g, '/'));
    if (m?.[1] && m[2]) frames.push({ path: m[1].replace(/^file:\/\//, ''), line: m[2] });
  }
  const root = frames.find((f) => f.path.endsWith(`/${test}`))?.path.slice(0, -test.length);
  for (const f of frames) {
    if (FOREIGN.test(f.path)) continue;
    if (root !== undefined && f.path.startsWith(root)) return `${f.path.slice(root.length)}:${f.line}`;
    if (root === undefined && !/^(?:[A-Za-z]:)?\//.test(f.path)) return `${f.path}:${f.line}`;
    // An absolute path outside the root (a linked package, another checkout): its file name is what is shared.
    if (root !== undefined || f.path.endsWith(test)) return `${f.path.split('/').pop()}:${f.line}`;
  }
  return undefined;
}

const hash16 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/** The group of a test's failure; with `group` false, the test's own fingerprint. */
export function groupOf(t: TestResult, group = true, error?: ResultError): FailureGroup {
  if (error !== undefined) return groupOfError(t, group, error);
  // Once per result: the cap, the search, the history and the run comment all ask for a failure's group.
  const key = group ? 'grouped' : 'perTest';
  let memo = groups.get(t);
  if (!memo) groups.set(t, (memo = {}));
  memo[key] ??= groupOfError(t, group, primaryError(t));
  return memo[key];
}

const groups = new WeakMap<TestResult, { grouped?: FailureGroup; perTest?: FailureGroup }>();

function groupOfError(t: TestResult, group: boolean, error: ResultError | undefined): FailureGroup {
  const message = error?.message ?? '(no error message)';
  const code = codeOf(message);
  const type = code ?? errorType(error);
  const environment = group ? environmentKind(message) : undefined;
  if (environment) {
    const normalisedMessage = hostlessMessage(message);
    const hash = hash16(`environment\n${environment}\n${normalisedMessage}`);
    return { hash, label: `casebridge-${hash}`, normalisedMessage, environment, type, perTest: false };
  }
  const frame = group
    ? (projectFrame(error?.stack, t.file) ??
      (error?.location ? `${error.location.file.replace(/\\/g, '/')}:${error.location.line ?? 0}` : undefined))
    : undefined;
  if (!frame) return { ...fingerprintOf(t, error), type, perTest: true };
  const normalisedMessage = normaliseMessage(message);
  const hash = hash16(`group\n${type}\n${normalisedMessage}\n${frame}`);
  return { hash, label: `casebridge-${hash}`, normalisedMessage, frame, type, perTest: false };
}
