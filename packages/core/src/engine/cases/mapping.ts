import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TestResult } from '../kernel/model.js';

/** Mapping a test to case keys: from its title, tags, `testCase` annotations, or the mapping file. */

/** Annotation types that carry a case key (case-insensitive). */
const KEY_ANNOTATIONS = new Set(['testcase', 'case', 'casebridge', 'tms', 'issue']);

/** The key pattern: any `ABC-123` by default; with `projectKeys`, only theirs (so `HTTP-2` is not a key of `PROJ`). */
export function keyPattern(options: { pattern?: string | RegExp; projectKeys?: readonly string[] } = {}): RegExp {
  if (options.pattern) {
    const src = typeof options.pattern === 'string' ? options.pattern : options.pattern.source;
    return new RegExp(src, 'g');
  }
  if (options.projectKeys && options.projectKeys.length > 0) {
    const alts = options.projectKeys.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
    return new RegExp(`(?<![A-Za-z0-9_])(?:${alts})-[1-9][0-9]*(?![0-9A-Za-z_])`, 'g');
  }
  return /(?<![A-Za-z0-9_])[A-Z][A-Z0-9_]+-[1-9][0-9]*(?![0-9A-Za-z_])/g;
}

/** A private global copy of each key pattern, made once (compiling it per test was a measurable cost at 10,000). */
const globalCopies = new WeakMap<RegExp, RegExp>();

function matches(text: string, re: RegExp): string[] {
  let g = globalCopies.get(re);
  if (!g) {
    // Ours alone: its lastIndex moves only here, whatever callers do with `re`.
    g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
    globalCopies.set(re, g);
  }
  // exec on our own copy, not matchAll (which clones the pattern on every call: once per test and tag).
  const found: string[] = [];
  g.lastIndex = 0;
  for (let m = g.exec(text); m; m = g.exec(text)) {
    found.push(m[1] ?? m[0]);
    if (m[0] === '') g.lastIndex += 1;
  }
  return found;
}

/** Keys declared by the test itself, in order of appearance, each once. */
export function keysOfTest(t: Pick<TestResult, 'titlePath' | 'tags' | 'annotations'>, re: RegExp): string[] {
  const found: string[] = [];
  const title = t.titlePath[t.titlePath.length - 1] ?? '';
  found.push(...matches(title, re));
  for (const tag of t.tags) found.push(...matches(tag.replace(/^@/, ''), re));
  for (const a of t.annotations) {
    if (KEY_ANNOTATIONS.has(a.type.toLowerCase()) && a.description) found.push(...matches(a.description, re));
  }
  return [...new Set(found)];
}

/** The mapping file's key for a test: `<file relative to root, forward slashes> > <title path joined with " > ">`. */
export function mappingKey(t: Pick<TestResult, 'file' | 'titlePath'>): string {
  return [t.file.replace(/\\/g, '/'), ...t.titlePath].join(' > ');
}

export type MappingFile = Record<string, string | string[]>;

/** Validates a parsed mapping file; returns the problems (empty when valid). */
export function mappingProblems(value: unknown, re: RegExp): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return ['the mapping file must be a JSON object: { "<file> > <title path>": "PROJ-1" | ["PROJ-1", "PROJ-2"] }'];
  }
  const problems: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    const list = Array.isArray(v) ? v : [v];
    for (const key of list) {
      if (typeof key !== 'string' || matches(key, re).join('') !== key) {
        problems.push(`"${k}": ${JSON.stringify(key)} is not a test-case key`);
      }
    }
  }
  return problems;
}

/** Keys of a test from the mapping file, or an empty list. */
export function keysFromMapping(file: MappingFile, t: Pick<TestResult, 'file' | 'titlePath'>): string[] {
  // Most projects have no mapping file: no name is built for each of their tests.
  let empty = emptiness.get(file);
  if (empty === undefined) {
    empty = Object.keys(file).length === 0;
    emptiness.set(file, empty);
  }
  if (empty) return [];
  const v = file[mappingKey(t)];
  if (v === undefined) return [];
  return [...new Set(Array.isArray(v) ? v : [v])];
}

/** Whether a mapping file (read once per run, never changed after) is empty. */
const emptiness = new WeakMap<MappingFile, boolean>();

/** All case keys of a test: its own first, then the mapping file's; several keys give one run per key. */
export function resolveKeys(t: TestResult, re: RegExp, file: MappingFile = {}): string[] {
  return [...new Set([...keysOfTest(t, re), ...keysFromMapping(file, t)])];
}

/** The title with its keys removed (`[PROJ-1] logs in` → `logs in`), for summaries of auto-created cases. */
export function titleWithoutKeys(title: string, re: RegExp): string {
  const cleaned = title
    .replace(new RegExp(`\\[\\s*(?:${re.source})\\s*\\]`, 'g'), '')
    .replace(new RegExp(`@?(?:${re.source})`, 'g'), '')
    .replace(/\s{2,}/g, ' ')
    .trim()
    .replace(/^[:\-\u2013\u2014|]\s*/, '');
  return cleaned || title.trim();
}

/** Adds keys to the mapping file atomically (merge, temp file, rename), so concurrent writers lose nothing; sorted. */
export function writeMapping(path: string, added: MappingFile): void {
  let current: MappingFile = {};
  try {
    current = JSON.parse(readFileSync(path, 'utf8')) as MappingFile;
  } catch {
    current = {};
  }
  const merged: MappingFile = { ...current, ...added };
  const sorted = Object.fromEntries(
    Object.keys(merged)
      .sort()
      .map((k) => [k, merged[k] as string | string[]]),
  );
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${randomUUID().slice(0, 8)}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(sorted, null, 2)}\n`);
  renameSync(tmp, path);
}

/** Reads and checks the mapping file: `{}` when absent; its problems, with an empty mapping, when unusable. */
export function readMappingFile(path: string, keyRe: RegExp): { mapping: MappingFile; problems: string[] } {
  if (!existsSync(path)) return { mapping: {}, problems: [] };
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
    const problems = mappingProblems(value, keyRe);
    return { mapping: problems.length === 0 ? (value as MappingFile) : {}, problems };
  } catch (err) {
    return { mapping: {}, problems: [`not valid JSON (${(err as Error).message})`] };
  }
}
