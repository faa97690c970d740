/** Runner text without colour codes (noise in Jira, and they would split a defect's fingerprint), output bounded. */

/** Any ANSI CSI sequence; global, for `replace` only. Built from a char code: the linter forbids a literal ESC. */
export const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[ -/]*[@-~]`, 'g');

export const stripAnsi = (s: string): string => s.replace(ANSI, '');

/** Shared: `decode` without `stream` keeps no state. */
const utf8 = new TextDecoder();

/** The bound of each of an attempt's stdout and stderr excerpts, in characters (the end is kept). */
export const OUTPUT_EXCERPT_CHARS = 4096;

/** The last `max` characters a test printed, uncoloured; bounded, as the engine holds every result to the end. */
export function outputExcerpt(
  chunks: readonly (string | Uint8Array)[],
  max = OUTPUT_EXCERPT_CHARS,
): string | undefined {
  if (chunks.length === 0) return undefined;
  const text = stripAnsi(chunks.map((c) => (typeof c === 'string' ? c : utf8.decode(c))).join(''));
  if (!text) return undefined;
  return text.length > max ? `…${text.slice(text.length - max + 1)}` : text;
}

/** How many causes `stackWithCauses` follows: a cycle or deep chain must not grow the text unbounded. */
export const MAX_CAUSES = 5;

/** `stack`, as given, then one uncoloured `[cause]: …` per error of the `cause` chain (at most `MAX_CAUSES`). */
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
