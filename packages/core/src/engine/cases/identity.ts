import { createHash } from 'node:crypto';
import { DUPLICATE_LINE } from '../jira/duplicate.js';
import type { TestResult } from '../kernel/model.js';
import { truncate } from '../kernel/text.js';
import { mappingKey } from './mapping.js';

/**
 * A test's case identity and a new case's text: the mapping name's hash in the description, matched exactly, never by
 * Jira's fuzzy `~` (`parses` finds `parses dates`).
 */

/** The identity hash of a mapping name: 20 hex characters. */
export function caseIdentity(t: Pick<TestResult, 'file' | 'titlePath'>): string {
  return createHash('sha256').update(mappingKey(t)).digest('hex').slice(0, 20);
}

const ID_LINE = /^casebridge-id: ([0-9a-f]{20})\s*$/m;
const LEGACY_LINE = /^casebridge-test: (.*)$/m;

/** The identity a case's description carries (or, for cases of earlier versions, its mapping-name line). */
export function identityInDescription(description: string): string | undefined {
  // A duplicate casebridge could not close (duplicate.ts) belongs to no test: every read ignores it.
  if (DUPLICATE_LINE.test(description)) return undefined;
  const id = ID_LINE.exec(description)?.[1];
  if (id) return id;
  const legacy = LEGACY_LINE.exec(description)?.[1];
  return legacy === undefined ? undefined : createHash('sha256').update(legacy).digest('hex').slice(0, 20);
}

/** The suite path of a test file: its folders and its name without `.spec.ts` / `.test.js` and the like. */
export function suitePathOf(file: string): string {
  const parts = file.replace(/\\/g, '/').split('/').filter(Boolean);
  const last = (parts.pop() ?? 'tests').replace(/(\.(spec|test|e2e|cy))?\.[cm]?[jt]sx?$/i, '');
  return [...parts, last].map((p) => p.replace(/\//g, '\\/')).join('/');
}

/**
 * A summary Jira accepts for any title: one line, at most 255 characters, never blank (then describe path and file).
 */
export function caseSummary(t: Pick<TestResult, 'file' | 'titlePath'>, title?: string): string {
  const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
  const own = oneLine(title ?? t.titlePath[t.titlePath.length - 1] ?? '');
  if (own) return truncate(own, 255);
  const describes = t.titlePath.slice(0, -1).map(oneLine).filter(Boolean);
  return truncate(`${[...describes, '(untitled test)'].join(' > ')} in ${t.file}`, 255);
}
