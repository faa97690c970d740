import { compareKeys, type MappingFile } from '@casebridge/core/internal';

/**
 * The runner filter `casebridge cycle keys` prints: one JavaScript regular expression that Playwright's `--grep`,
 * Vitest's `-t` and Jest's `-t` all accept, matching the tests of the selected case keys. Pure functions, no I/O.
 *
 * What each runner matches the pattern against (checked against the runners in the repository):
 * - Playwright (`--grep`, compiled with flags `gi`): `<project> <file> <describe…> <title> <@tag…>`, joined by
 *   single spaces; tags given in `{ tag }` come last, each starting with `@`.
 * - Vitest (`-t`, no flags): the describe titles and the test title joined by spaces (the full name).
 * - Jest (`-t`, flag `i`): the same full name; nothing comes before or after it.
 * Keys written in titles or tags (`DEMO-2 logs in`, `[DEMO-2]`, `@DEMO-2`) are matched as whole words, so `DEMO-2`
 * never selects `DEMO-20` or `XDEMO-2`. Tests keyed only by the mapping file carry no key in their name: they are
 * matched by their title path, anchored so that `logs in` does not also select `logs in twice`.
 */

export type Runner = 'playwright' | 'vitest' | 'jest';

/**
 * Escapes the characters that have a meaning in a JavaScript regular expression outside a character class. `-`
 * is left as it is: it means nothing there, and with the `u` flag `\-` outside a class is a syntax error.
 */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** A test keyed by the mapping file: its mapping name and its title path (describe titles, then the test title). */
export interface MappedTest {
  /** The mapping file's name of the test: `<file> > <describe…> > <title>`. */
  name: string;
  titlePath: string[];
}

/**
 * The tests of the mapping file that carry one of `keys`, in the file's order. A mapping name is the file, then
 * the title path, joined with ` > `; the first part is the file (a title that itself contains ` > ` is split too,
 * which only makes its pattern use a space there, as the runners' full names do anyway).
 */
export function mappedTests(mapping: MappingFile, keys: Iterable<string>): MappedTest[] {
  const wanted = new Set(keys);
  const found: MappedTest[] = [];
  for (const [name, value] of Object.entries(mapping)) {
    const list = Array.isArray(value) ? value : [value];
    if (!list.some((k) => wanted.has(k))) continue;
    const parts = name.split(' > ');
    if (parts.length < 2) continue;
    found.push({ name, titlePath: parts.slice(1) });
  }
  return found;
}

/**
 * The pattern of one mapped test's title path. Jest's full name is exactly the path joined by spaces, so with
 * `runner: 'jest'` it is anchored at both ends; otherwise something may come before it (Playwright's project and
 * file; a file name in some Vitest versions) after a space, and after it only the end or Playwright's ` @tags`.
 */
export function titlePattern(titlePath: readonly string[], runner?: Runner): string {
  const path = escapeRegExp(titlePath.join(' '));
  return runner === 'jest' ? `^${path}$` : `(?:^|\\s)${path}(?=\\s@|$)`;
}

/**
 * One regular expression matching the tests of `keys`: `\b(?:DEMO-2|DEMO-5)\b`, then one alternative per mapped
 * test's title path. Empty when there is nothing to match (the caller prints nothing then). Keys are sorted and
 * duplicates dropped, so the same selection always gives the same pattern.
 */
export function grepPattern(
  keys: Iterable<string>,
  titlePaths: ReadonlyArray<readonly string[]> = [],
  runner?: Runner,
): string {
  const unique = [...new Set(keys)].sort(compareKeys);
  const parts: string[] = [];
  if (unique.length > 0) parts.push(`\\b(?:${unique.map(escapeRegExp).join('|')})\\b`);
  const titles = new Set(titlePaths.filter((p) => p.length > 0).map((p) => titlePattern(p, runner)));
  parts.push(...titles);
  return parts.join('|');
}

/**
 * One regular expression matching every test name that `pattern` does not match, for a runner whose filter cannot
 * be inverted (Jest's and Vitest's `-t` select; only Playwright has `--grep-invert`): `^(?![\s\S]*(?:<pattern>))`.
 * The lookahead tries `pattern` at every position of the name, as an unanchored search does, so its own anchors keep
 * their meaning (`^` still means the start of the name); `[\s\S]` and not `.`, because without the `s` flag `.` stops
 * at a line break and a title with one would escape the exclusion. Valid with Jest's `i`, Vitest's no flags and
 * the `u` flag. Empty when `pattern` is (nothing to leave out: the caller prints nothing then).
 */
export function allBut(pattern: string): string {
  return pattern ? `^(?![\\s\\S]*(?:${pattern}))` : '';
}
