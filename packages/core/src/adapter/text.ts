/**
 * Text that a runner prints: colour codes stripped, output bounded. Runners colour their messages, stacks and
 * diffs; a colour code in Jira is noise, and in a defect's fingerprint it would split one failure into two.
 */

/**
 * An ANSI CSI sequence (ESC `[`, parameter bytes, intermediate bytes, a final byte): colours and cursor moves, with
 * private parameters (`ESC[?25l`) and any final byte (`ESC[3~`), not only letters. Global: use it with `replace`
 * only (`test` and `exec` would keep state between calls). Built from its char code, as a literal ESC in a regular
 * expression is what the linter forbids.
 */
export const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[ -/]*[@-~]`, 'g');

/** `s` without ANSI colour and cursor codes. */
export const stripAnsi = (s: string): string => s.replace(ANSI, '');

/** Shared: `decode` without `stream` keeps no state between calls. */
const utf8 = new TextDecoder();

/** The bound of each of an attempt's stdout and stderr excerpts, in characters (the end is kept). */
export const OUTPUT_EXCERPT_CHARS = 4096;

/**
 * The end of what a test printed, without colour codes, at most `max` characters (`…` then the last ones: the last
 * lines say most); undefined when it printed nothing. The engine holds every result until the run ends, so output
 * is bounded here: 10,000 tests times an unbounded log would not fit in the runner's memory.
 */
export function outputExcerpt(
  chunks: readonly (string | Uint8Array)[],
  max = OUTPUT_EXCERPT_CHARS,
): string | undefined {
  // Most tests print nothing: no decoder and no strings for them.
  if (chunks.length === 0) return undefined;
  const text = stripAnsi(chunks.map((c) => (typeof c === 'string' ? c : utf8.decode(c))).join(''));
  if (!text) return undefined;
  return text.length > max ? `…${text.slice(text.length - max + 1)}` : text;
}

/** How many causes of an error `stackWithCauses` follows: a cycle or a deep chain must not grow the text unbounded. */
export const MAX_CAUSES = 5;

/**
 * `stack` followed by one `[cause]: …` part per error in the `cause` chain (at most `MAX_CAUSES`; a cause that is
 * not an object ends it), each the text `textOf` picks from it (its stack, else its message...), without colour
 * codes. `stack` itself is returned as given: strip it before.
 */
export function stackWithCauses<E extends object>(
  stack: string | undefined,
  cause: unknown,
  textOf: (cause: E) => string,
): string | undefined {
  let out = stack;
  let c = cause;
  for (let depth = 0; c && typeof c === 'object' && depth < MAX_CAUSES; c = (c as { cause?: unknown }).cause, depth++) {
    out = `${out ?? ''}\n[cause]: ${stripAnsi(textOf(c as E))}`;
  }
  return out;
}
