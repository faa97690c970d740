import { readFileSync, writeFileSync } from 'node:fs';
import type { ListedTest } from './list.js';

/**
 * What the source of a test file tells beyond the runner's list: the titles of its steps (to give a new test case
 * its steps) and where its title is written (to put a key into it). Plain text search, no parser: a title is found
 * as a string literal equal to it; when the same literal appears more than once, the one nearest the test's line
 * wins, and without a line the test is left alone (and named).
 */

interface Literal {
  /** Offset of the opening quote. */
  at: number;
  line: number;
  quote: string;
  text: string;
}

const LITERAL = /(['"`])((?:\\.|(?!\1)[^\\\n])*)\1/g;

function unquote(body: string): string {
  return body.replace(/\\(.)/g, '$1');
}

/**
 * The literals of the last source read: finding a test's steps looks up the title of every other test of its file,
 * so without this a file of n tests was scanned n² times (sync --update reads every keyed test).
 */
let lastScan: { source: string; found: Literal[] } | undefined;

function literals(source: string): Literal[] {
  if (lastScan?.source === source) return lastScan.found;
  const found = scanLiterals(source);
  lastScan = { source, found };
  return found;
}

function scanLiterals(source: string): Literal[] {
  const lines: number[] = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === '\n') lines.push(i + 1);
  const lineOf = (offset: number) => {
    let lo = 0;
    let hi = lines.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lines[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const out: Literal[] = [];
  for (const m of source.matchAll(LITERAL)) {
    const body = m[2] ?? '';
    if (m[1] === '`' && body.includes('${')) continue;
    out.push({ at: m.index ?? 0, line: lineOf(m.index ?? 0), quote: m[1] ?? "'", text: unquote(body) });
  }
  return out;
}

function titleLiteral(source: string, t: ListedTest): Literal | undefined {
  const title = t.titlePath[t.titlePath.length - 1] ?? '';
  const all = literals(source).filter((l) => l.text === title);
  if (all.length === 1) return all[0];
  if (all.length === 0 || t.line === undefined) return undefined;
  const line = t.line;
  return [...all].sort((a, b) => Math.abs(a.line - line) - Math.abs(b.line - line))[0];
}

/** What the source tells about a test's steps. */
export interface SourceSteps {
  /** The titles of the `step('…')` calls written as plain string literals, in order. */
  steps: string[];
  /**
   * A `step(` call whose title is built at run time (a variable, or a template literal with `${}`): the list above
   * is incomplete, and only a run knows the real steps.
   */
  dynamic: boolean;
  /** The test's title was found in its file (else nothing is known about its steps). */
  found: boolean;
}

/**
 * The steps written in a test's body: `test.step('…'` and the runtime API's `step('…'`, between the test's title and
 * the next test of the file. Steps in helpers (page objects, shared functions) are not seen.
 */
export function stepsOfTest(t: ListedTest, siblings: readonly ListedTest[]): SourceSteps {
  let source: string;
  try {
    source = readFileSync(t.absFile, 'utf8');
  } catch {
    return { steps: [], dynamic: false, found: false };
  }
  const own = titleLiteral(source, t);
  if (!own) return { steps: [], dynamic: false, found: false };
  const next = siblings
    .filter((s) => s !== t && s.absFile === t.absFile)
    .map((s) => titleLiteral(source, s)?.at)
    .filter((at): at is number => at !== undefined && at > own.at)
    .sort((a, b) => a - b)[0];
  const body = source.slice(own.at, next ?? source.length);
  const steps: string[] = [];
  let dynamic = false;
  // A helper declared in the file (`async function step(title, body)`) is not a call.
  for (const m of body.matchAll(/(?<!function\s+)\bstep\(\s*(?:(['"`])((?:\\.|(?!\1)[^\\\n])*)\1)?/g)) {
    if (m[1] === undefined || (m[1] === '`' && (m[2] ?? '').includes('${'))) {
      dynamic = true;
      continue;
    }
    steps.push(unquote(m[2] ?? ''));
  }
  return { steps, dynamic, found: true };
}

/** The step titles written in a test's body (see {@link stepsOfTest}); empty when the test cannot be found. */
export function stepsInSource(t: ListedTest, siblings: readonly ListedTest[]): string[] {
  return stepsOfTest(t, siblings).steps;
}

export interface KeyEdit {
  test: ListedTest;
  key: string;
  line?: number;
  before?: string;
  after?: string;
  /** Why the title was not changed. */
  skipped?: string;
}

/**
 * Puts `KEY ` in front of each test's title in its source. One pass per file, edits from the end so offsets hold.
 * Idempotent: a title that already holds the key is left as it is.
 */
export function writeKeys(edits: Array<{ test: ListedTest; key: string }>, dryRun: boolean): KeyEdit[] {
  const byFile = new Map<string, Array<{ test: ListedTest; key: string }>>();
  for (const e of edits) {
    const list = byFile.get(e.test.absFile);
    if (list) list.push(e);
    else byFile.set(e.test.absFile, [e]);
  }
  const out: KeyEdit[] = [];
  for (const [file, list] of byFile) {
    let source = readFileSync(file, 'utf8');
    const planned: Array<{ lit: Literal; edit: KeyEdit; text: string }> = [];
    for (const { test, key } of list) {
      const title = test.titlePath[test.titlePath.length - 1] ?? '';
      if (title.includes(key)) {
        out.push({ test, key, skipped: 'the title already holds the key' });
        continue;
      }
      const lit = titleLiteral(source, test);
      if (!lit) {
        out.push({ test, key, skipped: 'the title was not found as a plain string literal in the source' });
        continue;
      }
      const text = `${key} ${title}`.replace(/\\/g, '\\\\').replaceAll(lit.quote, `\\${lit.quote}`);
      planned.push({ lit, text, edit: { test, key, line: lit.line, before: title, after: `${key} ${title}` } });
    }
    planned.sort((a, b) => b.lit.at - a.lit.at);
    for (const { lit, edit, text } of planned) {
      const length = source.slice(lit.at).match(LITERAL_AT)?.[0].length ?? 0;
      source = `${source.slice(0, lit.at)}${lit.quote}${text}${lit.quote}${source.slice(lit.at + length)}`;
      out.push(edit);
    }
    if (!dryRun && planned.length > 0) writeFileSync(file, source);
  }
  return out;
}

const LITERAL_AT = /^(['"`])((?:\\.|(?!\1)[^\\\n])*)\1/;
