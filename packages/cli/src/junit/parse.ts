import { createReadStream } from 'node:fs';
import { dirname } from 'node:path';
import type { ResultAttachment, TestResult } from '@casebridge/core';
import { CasebridgeError } from '@casebridge/core';
import { SaxesParser } from 'saxes';
import { resolveAttachment } from './attachments.js';
import { type CaseState, type Extra, newStreams, toResult } from './build.js';
import { type CaseContext, type Dialect, dialectOfRoot, identify, projectPath } from './dialect.js';
import { errorOf, firstMeaningfulLine, Head, LIMITS, ownAttrs } from './text.js';

/**
 * A streaming JUnit XML reader: the file is read in 64 KiB chunks through a SAX parser and each `<testcase>` becomes
 * one framework-neutral `TestResult` as soon as its suite closes (or falls out of a small window), so a 200 MB file
 * is read in bounded memory. Every text a test carries is bounded too (see `LIMITS`), an attempt that passed carries
 * no output excerpt, and no string of a result shares memory with the parser's chunks (see `own`): the engine holds
 * every result until the run ends.
 */

/** Why a file could not be read: `missing`/`unreadable` (I/O), `malformed` (not well-formed XML), `not-junit`. */
export class JunitError extends CasebridgeError {
  constructor(
    readonly code: 'missing' | 'unreadable' | 'malformed' | 'not-junit',
    message: string,
  ) {
    super('junit', message);
  }
}

export interface JunitFileStats {
  /** The file as given, relative to the working directory. */
  file: string;
  dialect?: Dialect;
  testcases: number;
  /** Things worth a line that did not stop the read (a referenced file that is not there). */
  notes: string[];
}

export interface ReadOptions {
  /** The project root: test files are made relative to it; attachments are looked up here after the XML's folder. */
  cwd: string;
}

/**
 * Same-named test cases of one suite within this many are merged into one test with several attempts: gotestsum's
 * `--rerun-fails` and similar tools append a rerun as another `<testcase>`. The bound keeps memory flat.
 */
const MERGE_WINDOW = 200;
const MAX_NOTES = 100;
const MAX_PROPERTIES = 100;

interface Open {
  name: string;
  line: number;
  sink?: (text: string) => void;
  onClose?: () => void;
}

/** Reads one JUnit XML file. Iterate it for the results; `stats` is complete once the iteration ends. */
export function readJunit(path: string, options: ReadOptions): AsyncIterable<TestResult> & { stats: JunitFileStats } {
  const stats: JunitFileStats = { file: projectPath(options.cwd, path), testcases: 0, notes: [] };
  return { stats, [Symbol.asyncIterator]: () => read(path, options, stats) };
}

async function* read(path: string, options: ReadOptions, stats: JunitFileStats): AsyncGenerator<TestResult> {
  const { cwd } = options;
  const xmlDir = dirname(path);
  const parser = new SaxesParser({ fileName: stats.file, position: true });
  const ready: TestResult[] = [];
  const window = new Map<string, TestResult>();
  const stack: Open[] = [];
  const suites: Array<{ name: string; file?: string; hostname?: string; go: boolean }> = [];
  let dialect: Dialect | undefined;
  let rootFile: string | undefined;
  let current: CaseState | undefined;
  let failure: Error | undefined;

  const note = (text: string) => {
    if (stats.notes.length < MAX_NOTES) stats.notes.push(text);
  };
  const emit = (t: TestResult) => {
    const seen = window.get(t.id);
    if (seen) {
      seen.attempts = [...seen.attempts, ...t.attempts].map((a, retry) => ({ ...a, retry }));
      return;
    }
    window.set(t.id, t);
    if (window.size > MERGE_WINDOW) flush(1);
  };
  const flush = (n = window.size) => {
    for (const [id, t] of window) {
      if (n-- <= 0) break;
      window.delete(id);
      ready.push(t);
    }
  };

  const attachmentsOf = (refs: string[], where: string): ResultAttachment[] => {
    const found = new Map<string, ResultAttachment>();
    for (const ref of refs) {
      const r = resolveAttachment(ref, xmlDir, cwd);
      if ('attachment' in r) found.set(r.attachment.path as string, r.attachment);
      else note(`${where}: ${r.missing}`);
    }
    return [...found.values()];
  };

  const finish = (c: CaseState) => {
    stats.testcases += 1;
    const name = c.attrs.name ?? '';
    const suiteFile = [...suites].reverse().find((s) => s.file)?.file ?? (dialect === 'mocha' ? rootFile : undefined);
    const ctx: CaseContext = {
      dialect,
      suites: suites.map((s) => s.name),
      suiteFile,
      go: suites.some((s) => s.go),
      hostname: suites[suites.length - 1]?.hostname,
      cwd,
    };
    const id = identify(ctx, { name, classname: c.attrs.classname ?? '', file: c.attrs.file });
    stats.dialect ??= id.dialect;
    emit(toResult(c, id, (refs) => attachmentsOf(refs, `${stats.file}:${c.line}`)));
  };

  const open = (name: string, attrs: Record<string, string>): Open => {
    const entry: Open = { name, line: parser.line };
    const parent = stack[stack.length - 1]?.name;
    if (stack.length === 0) {
      if (name !== 'testsuites' && name !== 'testsuite') {
        throw new JunitError(
          'not-junit',
          `${stats.file}: not JUnit XML: the root element is <${name}>, expected <testsuites> or <testsuite>`,
        );
      }
      dialect = dialectOfRoot(name, attrs);
    }
    if (name === 'testsuite') {
      if (attrs.name === 'Root Suite' && attrs.file) rootFile = attrs.file;
      suites.push({ name: attrs.name ?? '', file: attrs.file, hostname: attrs.hostname, go: false });
      entry.onClose = () => {
        suites.pop();
        flush();
      };
    } else if (name === 'testcase' && parent !== 'testcase') {
      const c: CaseState = {
        attrs,
        line: parser.line,
        status: 'passed',
        errors: [],
        extras: [],
        properties: [],
        ...newStreams(),
      };
      current = c;
      entry.onClose = () => {
        current = undefined;
        finish(c);
      };
    } else if (current && parent === 'testcase') {
      const c = current;
      if (name === 'failure' || name === 'error') {
        const text = new Head(LIMITS.stack);
        entry.sink = (s) => text.push(s);
        entry.onClose = () => {
          c.status = 'failed';
          c.errors.push(errorOf(name, attrs, text.value()));
        };
      } else if (name === 'skipped') {
        if (c.status !== 'failed') c.status = 'skipped';
        const why = firstMeaningfulLine(attrs.message ?? '');
        if (why) c.skipMessage = why.slice(0, LIMITS.message);
      } else if (name === 'system-out' || name === 'system-err') {
        const tail = name === 'system-out' ? c.out : c.err;
        entry.sink = (s) => {
          tail.push(s);
          c.markers.push(s);
        };
      } else {
        const m = /^(flaky|rerun)(Failure|Error)$/.exec(name);
        if (m) {
          const x: Extra = {
            kind: m[1] as 'flaky' | 'rerun',
            element: name,
            attrs,
            stack: new Head(LIMITS.stack),
            ...newStreams(),
          };
          c.extras.push(x);
          entry.sink = (s) => x.stack.push(s);
        }
      }
    } else if (current && /^(?:flaky|rerun)(?:Failure|Error)$/.test(parent ?? '')) {
      const x = current.extras[current.extras.length - 1] as Extra;
      if (name === 'stackTrace') entry.sink = (s) => x.stack.push(s);
      else if (name === 'system-out' || name === 'system-err') {
        const tail = name === 'system-out' ? x.out : x.err;
        entry.sink = (s) => {
          tail.push(s);
          x.markers.push(s);
        };
      }
    } else if (name === 'property' && parent === 'properties') {
      const owner = stack[stack.length - 2]?.name;
      const pname = attrs.name ?? '';
      if (owner === 'testsuite' && pname === 'go.version') {
        const s = suites[suites.length - 1];
        if (s) s.go = true;
      } else if (owner === 'testcase' && current && current.properties.length < MAX_PROPERTIES) {
        // Long values are written as the element's text (Playwright does for multi-line annotations).
        const text = new Head(LIMITS.message);
        const c = current;
        entry.sink = (s) => text.push(s);
        entry.onClose = () => c.properties.push({ name: pname, value: (attrs.value ?? text.value()).trim() });
      }
    }
    return entry;
  };

  parser.on('opentag', (tag) => {
    if (failure) return;
    try {
      stack.push(open(tag.name, ownAttrs(tag.attributes as Record<string, string>)));
    } catch (err) {
      failure = err as Error;
    }
  });
  parser.on('closetag', () => {
    if (failure) return;
    stack.pop()?.onClose?.();
  });
  const text = (s: string) => {
    if (!failure) stack[stack.length - 1]?.sink?.(s);
  };
  parser.on('text', text);
  parser.on('cdata', text);
  parser.on('error', (err) => {
    failure ??= malformed(err, stack);
  });

  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 64 * 1024 });
  try {
    let first = true;
    for await (const chunk of stream as AsyncIterable<string>) {
      parser.write(first ? chunk.replace(/^\uFEFF/, '') : chunk);
      first = false;
      drainText(parser, stack[stack.length - 1]?.sink);
      if (failure) throw failure;
      yield* ready.splice(0);
    }
    parser.close();
    if (failure) throw failure;
    flush();
    yield* ready.splice(0);
  } catch (err) {
    // The test cases completed before the problem are still results: hand them over, then report the problem.
    flush();
    yield* ready.splice(0);
    throw ioError(err, stats.file);
  } finally {
    stream.destroy();
  }
}

/** saxes 6's states in which its `text` field holds the text node or CDATA section being read. */
const S_TEXT = 13;
const S_CDATA = 20;
const DRAIN_CHARS = 64 * 1024;

/**
 * saxes keeps a text node whole until the tag after it: one test's output can be tens of megabytes. Between chunks,
 * what it holds is handed to the element's sink (or dropped where nobody reads it), so memory stays flat whatever
 * one element holds. This reads saxes internals; should they change, the guard does nothing and only memory grows.
 */
function drainText(parser: SaxesParser, sink: ((text: string) => void) | undefined): void {
  const p = parser as unknown as { state?: number; text?: unknown };
  if ((p.state === S_TEXT || p.state === S_CDATA) && typeof p.text === 'string' && p.text.length > DRAIN_CHARS) {
    sink?.(p.text);
    p.text = '';
  }
}

/** A saxes error, with what was open and what was expected, so the user can find the spot. */
function malformed(err: Error, stack: Open[]): JunitError {
  const inside = stack.length
    ? ` (inside ${stack.map((o) => `<${o.name}>`).join(' > ')} opened at line ${stack[stack.length - 1]?.line})`
    : '';
  const unclosed = /unclosed tag: (\S+)/.exec(err.message);
  const hint = unclosed
    ? `; expected </${unclosed[1]}> before the end of the file: is it truncated?`
    : '; expected well-formed XML (escape & and < in text as &amp; and &lt;, or use CDATA)';
  return new JunitError('malformed', `malformed XML: ${err.message}${inside}${hint}`);
}

function ioError(err: unknown, file: string): Error {
  if (err instanceof JunitError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new JunitError('missing', `${file}: no such file`);
  if (code) return new JunitError('unreadable', `${file}: cannot be read (${code})`);
  return err as Error;
}
