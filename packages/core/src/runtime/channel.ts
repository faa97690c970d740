/**
 * `@casebridge/core/runtime`: code inside a test talks to its reporter through a folder (`CASEBRIDGE_RUNTIME_DIR`),
 * one JSONL file per test, appended synchronously so it is complete when the test ends. Node built-ins only.
 */
import { hash, randomUUID } from 'node:crypto';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import type { CasebridgeOptions } from '../engine/config/options.js';

export type { CasebridgeOptions } from '../engine/config/options.js';

import type { ResultAttachment, ResultStep, TestResult } from '../engine/kernel/model.js';

export const RUNTIME_DIR_ENV = 'CASEBRIDGE_RUNTIME_DIR';

/** Which test a call belongs to: the adapter's runtime works it out from the runner's own state. */
export interface RuntimeTestIdentity {
  /** Absolute path of the test file. */
  file: string;
  /** The runner's full name of the test (each adapter chooses a form it can rebuild in the reporter). */
  name: string;
  /** 0 for the first try, 1 for the first retry... when the runner tells; records of the last attempt win. */
  attempt?: number;
}

export type RuntimeStepStatus = 'passed' | 'failed' | 'skipped';

/** One line of a channel file. */
export type RuntimeRecord =
  | { v: 1; kind: 'keys'; attempt: number; keys: string[] }
  | { v: 1; kind: 'requirements'; attempt: number; keys: string[] }
  | { v: 1; kind: 'param'; attempt: number; name: string; value: string }
  | {
      v: 1;
      kind: 'step';
      attempt: number;
      /** Order of the step's start within its test (parents before children). */
      seq: number;
      parent?: number;
      title: string;
      status: RuntimeStepStatus;
      durationMs: number;
      error?: { message: string; stack?: string };
    }
  | { v: 1; kind: 'attachment'; attempt: number; step?: number; name: string; contentType: string; path: string };

export interface RuntimeAttachment {
  name: string;
  contentType: string;
  path: string;
}

export interface RuntimeStep {
  title: string;
  status: RuntimeStepStatus;
  durationMs: number;
  error?: { message: string; stack?: string };
  steps: RuntimeStep[];
  attachments: RuntimeAttachment[];
}

/** What one test recorded, read back by the reporter. */
export interface RuntimeData {
  /** Case keys declared with `caseKey`, in any attempt. */
  keys: string[];
  /** Requirement keys declared with `requirement` (the test's case is linked to each). */
  requirements?: string[];
  /** Parameters declared with `param` (the last value of a name wins). */
  params: Record<string, string>;
  /** Steps and attachments by attempt number. */
  attempts: Map<number, { steps: RuntimeStep[]; attachments: RuntimeAttachment[] }>;
}

function channelName(file: string, name: string): string {
  return `${hash('sha1', `${file}\0${name}`, 'hex').slice(0, 32)}.jsonl`;
}

export function channelFile(dir: string, file: string, name: string): string {
  return join(dir, channelName(file, name));
}

/** For reporters: creates a channel folder and names it in `process.env` so the workers started later inherit it. */
export function openChannel(): string {
  const dir = mkdtempSync(join(tmpdir(), 'casebridge-runtime-'));
  process.env[RUNTIME_DIR_ENV] = dir;
  return dir;
}

/** For reporters: removes the folder (attachments were read or journalled by then). */
export function closeChannel(dir: string): void {
  if (process.env[RUNTIME_DIR_ENV] === dir) delete process.env[RUNTIME_DIR_ENV];
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // A leftover temp folder is harmless.
  }
}

/**
 * For reporters: the channel folder's file names, in one read; pass them to `readChannel` to skip a `stat` per test.
 */
export function listChannel(dir: string): ReadonlySet<string> {
  try {
    return new Set(readdirSync(dir));
  } catch {
    return new Set();
  }
}

export interface ReadChannelOptions {
  /** Removes the file once read: a rerun of the test (watch mode) starts from an empty file. */
  consume?: boolean;
  /** What `listChannel` gave after the test ended: a test not in it recorded nothing (no `stat`). */
  listed?: ReadonlySet<string>;
}

/** For reporters: what one test recorded, or `undefined`; costs one `stat`, or nothing with `listed`. */
export function readChannel(
  dir: string,
  file: string,
  name: string,
  { consume = false, listed }: ReadChannelOptions = {},
): RuntimeData | undefined {
  const base = channelName(file, name);
  if (listed && !listed.has(base)) return undefined;
  const path = join(dir, base);
  // Not a failing read: a thrown ENOENT builds a stack, for each of a thousand tests.
  if (!listed && !statSync(path, { throwIfNoEntry: false })) return undefined;
  const text = readFileSync(path, 'utf8');
  if (consume) rmSync(path, { force: true });
  const records: RuntimeRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as RuntimeRecord;
      if (r && r.v === 1) records.push(r);
    } catch {
      // A torn line (the worker was killed mid-write): the rest still counts.
    }
  }
  return fromRecords(records);
}

/** Builds the step trees and attachment lists from a test's records (exported for tests). */
export function fromRecords(records: RuntimeRecord[]): RuntimeData {
  const keys: string[] = [];
  const requirements: string[] = [];
  const params: Record<string, string> = {};
  const attempts: RuntimeData['attempts'] = new Map();
  const slot = (attempt: number) => {
    let s = attempts.get(attempt);
    if (!s) {
      s = { steps: [], attachments: [] };
      attempts.set(attempt, s);
    }
    return s;
  };
  const steps = new Map<string, { seq: number; parent?: number; step: RuntimeStep }>();
  for (const r of records) {
    if (r.kind === 'keys') {
      for (const k of r.keys) if (!keys.includes(k)) keys.push(k);
    } else if (r.kind === 'requirements') {
      for (const k of r.keys) if (!requirements.includes(k)) requirements.push(k);
    } else if (r.kind === 'param') {
      params[r.name] = r.value;
    } else if (r.kind === 'step') {
      steps.set(`${r.attempt}:${r.seq}`, {
        seq: r.seq,
        ...(r.parent !== undefined ? { parent: r.parent } : {}),
        step: {
          title: r.title,
          status: r.status,
          durationMs: r.durationMs,
          ...(r.error ? { error: r.error } : {}),
          steps: [],
          attachments: [],
        },
      });
      slot(r.attempt);
    }
  }
  // Steps end children first: put them in start order, then hang each under its parent.
  const ordered = [...steps.entries()].sort((a, b) => a[1].seq - b[1].seq);
  for (const [id, s] of ordered) {
    const attempt = Number(id.split(':')[0]);
    const parent = s.parent !== undefined ? steps.get(`${attempt}:${s.parent}`) : undefined;
    (parent ? parent.step.steps : slot(attempt).steps).push(s.step);
  }
  for (const r of records) {
    if (r.kind !== 'attachment') continue;
    const a = { name: r.name, contentType: r.contentType, path: r.path };
    const owner = r.step !== undefined ? steps.get(`${r.attempt}:${r.step}`) : undefined;
    (owner ? owner.step.attachments : slot(r.attempt).attachments).push(a);
  }
  return { keys, ...(requirements.length ? { requirements } : {}), params, attempts };
}

export interface RuntimeApi {
  /** Declares the case keys of the running test (in addition to keys in its title). */
  caseKey(...keys: string[]): void;
  /** Names the requirements the running test verifies (stories, epics): its case is linked to each. */
  requirement(...keys: string[]): void;
  /** Names a parameter of the running test (`param('locale', 'de')`), for option `attributes`' `${param.<name>}`. */
  param(name: string, value: unknown): void;
  /** Runs `body` as a named step and records its status, duration and error; returns what `body` returns. */
  step<T>(title: string, body: () => T | Promise<T>): Promise<T>;
  /** Attaches a file or bytes to the running test or step; bytes go through the channel folder from any worker. */
  attach(
    name: string,
    content: { path: string; contentType?: string } | { body: string | Uint8Array; contentType?: string },
  ): void;
}

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webm': 'video/webm',
  '.mp4': 'video/mp4',
  '.zip': 'application/zip',
  '.json': 'application/json',
  '.html': 'text/html',
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.xml': 'application/xml',
};

function contentTypeOf(name: string): string {
  return TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The runtime API for a runner; `identify` gives the running test (none: calls are no-ops). Never throws into the
 * test: an unwritable channel loses the record, not the test.
 */
export function createRuntime(identify: () => RuntimeTestIdentity | undefined): RuntimeApi {
  // The open steps of the test running in this process (a worker runs one test at a time).
  let stack: Array<{ seq: number; test: string }> = [];
  const seqs = new Map<string, number>();
  let files = 0;

  const current = () => {
    const dir = process.env[RUNTIME_DIR_ENV];
    if (!dir) return undefined;
    let id: RuntimeTestIdentity | undefined;
    try {
      id = identify();
    } catch {
      id = undefined;
    }
    if (!id) return undefined;
    const test = `${id.file}\0${id.name}\0${id.attempt ?? 0}`;
    if (stack.length > 0 && stack[0]?.test !== test) stack = [];
    return { dir, id, test, attempt: id.attempt ?? 0, path: channelFile(dir, id.file, id.name) };
  };
  const write = (path: string, record: RuntimeRecord) => {
    try {
      appendFileSync(path, `${JSON.stringify(record)}\n`);
    } catch {
      // The channel is gone (the reporter ended): the record is lost, the test is not.
    }
  };

  return {
    caseKey(...keys) {
      const c = current();
      const clean = keys.map((k) => String(k).trim()).filter(Boolean);
      if (c && clean.length > 0) write(c.path, { v: 1, kind: 'keys', attempt: c.attempt, keys: clean });
    },

    requirement(...keys) {
      const c = current();
      const clean = keys.map((k) => String(k).trim()).filter(Boolean);
      if (c && clean.length > 0) write(c.path, { v: 1, kind: 'requirements', attempt: c.attempt, keys: clean });
    },

    param(name, value) {
      const c = current();
      const n = String(name).trim();
      if (c && n) write(c.path, { v: 1, kind: 'param', attempt: c.attempt, name: n, value: String(value) });
    },

    async step(title, body) {
      const c = current();
      if (!c) return body();
      const seq = seqs.get(c.test) ?? 0;
      seqs.set(c.test, seq + 1);
      const parent = stack[stack.length - 1]?.seq;
      const entry = { seq, test: c.test };
      stack.push(entry);
      const started = performance.now();
      const done = (status: RuntimeStepStatus, err?: unknown) => {
        stack = stack.filter((s) => s !== entry);
        write(c.path, {
          v: 1,
          kind: 'step',
          attempt: c.attempt,
          seq,
          ...(parent !== undefined ? { parent } : {}),
          title: String(title),
          status,
          durationMs: Math.round(performance.now() - started),
          ...(err !== undefined
            ? {
                error:
                  err instanceof Error
                    ? { message: err.message, ...(err.stack ? { stack: err.stack } : {}) }
                    : { message: String(err) },
              }
            : {}),
        });
      };
      try {
        const value = await body();
        done('passed');
        return value;
      } catch (err) {
        done('failed', err);
        throw err;
      }
    },

    attach(name, content) {
      const c = current();
      if (!c) return;
      try {
        let path: string;
        if ('path' in content) {
          path = content.path;
        } else {
          const dir = join(c.dir, 'files');
          mkdirSync(dir, { recursive: true });
          path = join(
            dir,
            `${process.pid}-${randomUUID().slice(0, 8)}-${files++}-${basename(String(name)).replace(/[^\w.-]/g, '_')}`,
          );
          writeFileSync(path, content.body);
        }
        const open = stack[stack.length - 1];
        write(c.path, {
          v: 1,
          kind: 'attachment',
          attempt: c.attempt,
          ...(open ? { step: open.seq } : {}),
          name: String(name),
          contentType: content.contentType ?? contentTypeOf('path' in content ? content.path : String(name)),
          path,
        });
      } catch {
        // As above: never fail the test because of casebridge.
      }
    },
  };
}

/**
 * For reporters: merges a test's records into its result. Worker bytes are read into memory here, as the channel
 * folder is removed at the end.
 */
export function mergeRuntime(result: TestResult, data: RuntimeData | undefined, dir: string): TestResult {
  if (!data) return result;
  const own = join(dir, 'files');
  const attachment = (a: RuntimeAttachment): ResultAttachment => {
    if (a.path.startsWith(own)) {
      try {
        return { name: a.name, contentType: a.contentType, body: readFileSync(a.path) };
      } catch {
        // Gone already: hand over the path and let delivery say it is missing.
      }
    }
    return { name: a.name, contentType: a.contentType, path: a.path };
  };
  const step = (s: RuntimeStep): ResultStep => ({
    title: s.title,
    status: s.status,
    durationMs: s.durationMs,
    ...(s.error ? { error: s.error } : {}),
    steps: s.steps.map(step),
    attachments: s.attachments.map(attachment),
  });
  const attempts = result.attempts.map((a, i) => {
    const rec = data.attempts.get(a.retry) ?? (i === result.attempts.length - 1 ? lastRecorded(data) : undefined);
    if (!rec) return a;
    return {
      ...a,
      steps: [...a.steps, ...rec.steps.map(step)],
      attachments: [...a.attachments, ...rec.attachments.map(attachment)],
    };
  });
  const annotations = [...result.annotations];
  for (const key of data.keys) {
    if (!annotations.some((n) => n.type === 'testCase' && n.description === key)) {
      annotations.push({ type: 'testCase', description: key });
    }
  }
  for (const key of data.requirements ?? []) {
    if (!annotations.some((n) => n.type === 'requirement' && n.description === key)) {
      annotations.push({ type: 'requirement', description: key });
    }
  }
  const params = Object.keys(data.params ?? {}).length ? { params: { ...result.params, ...data.params } } : {};
  return { ...result, annotations, attempts, ...params };
}

function lastRecorded(data: RuntimeData) {
  const last = Math.max(-1, ...data.attempts.keys());
  return last >= 0 ? data.attempts.get(last) : undefined;
}

/** Types a configuration in a JavaScript config file (`export default defineCasebridgeConfig({...})`); returns it. */
// In the runtime entry: a config file or test code that imports it does not load the engine.
export function defineCasebridgeConfig(options: CasebridgeOptions): CasebridgeOptions {
  return options;
}
