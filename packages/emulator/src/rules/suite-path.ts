import { invalid } from '../service/context.js';
import type { Store, TestSuite } from '../store/store.js';

/**
 * Test-suite paths as the service writes them: suite names joined by `/`, where a literal `/` inside one name is
 * written `\/`. Shared by the test-suite operations and the two suite-linking test-case operations.
 */

/**
 * Splits a suite path into its suite names. `A/B\/C` is `['A', 'B/C']`. Leading and trailing separators are
 * ignored (`/A/B/` is `A/B`); an empty name in the middle (`A//B`) or an empty path is a validation error, since
 * the service cannot create a suite without a name.
 */
export function parseSuitePath(path: string, field = 'testSuitePath'): string[] {
  const names: string[] = [];
  let current = '';
  for (let i = 0; i < path.length; i += 1) {
    const ch = path[i];
    if (ch === '\\' && path[i + 1] === '/') {
      current += '/';
      i += 1;
    } else if (ch === '/') {
      names.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  names.push(current);
  const trimmed = names.map((n) => n.trim());
  while (trimmed.length > 0 && trimmed[0] === '') trimmed.shift();
  while (trimmed.length > 0 && trimmed[trimmed.length - 1] === '') trimmed.pop();
  if (trimmed.length === 0) throw invalid(`${field} must name at least one suite, got ${JSON.stringify(path)}`, field);
  if (trimmed.includes('')) {
    throw invalid(`${field} has an empty suite name between two "/" in ${JSON.stringify(path)}`, field);
  }
  return trimmed;
}

/** The inverse of {@link parseSuitePath}: names joined by `/`, each literal `/` written `\/`. */
export function formatSuitePath(names: readonly string[]): string {
  return names.map((n) => n.replaceAll('/', '\\/')).join('/');
}

/** The names from the root down to this suite. */
export function suiteNames(store: Store, suite: TestSuite): string[] {
  const names: string[] = [];
  let cur: TestSuite | undefined = suite;
  // Bounded by the table size: a corrupted parent cycle must not hang the server.
  for (let guard = 0; cur && guard <= store.testSuites.size; guard += 1) {
    names.unshift(cur.name);
    cur = cur.parentId === null ? undefined : store.testSuites.get(cur.parentId);
  }
  return names;
}

/** The escaped path of a suite, e.g. `Checkout/Cards\/Wallets`. */
export function suitePathOf(store: Store, suite: TestSuite): string {
  return formatSuitePath(suiteNames(store, suite));
}

/** The suite at this path in the project, or undefined. Names compare exactly (case-sensitive), as Jira does. */
export function findSuite(store: Store, projectId: number, names: readonly string[]): TestSuite | undefined {
  let parentId: number | null = null;
  let found: TestSuite | undefined;
  for (const name of names) {
    const pid: number | null = parentId;
    found = store.testSuites.find((s) => s.projectId === projectId && s.parentId === pid && s.name === name);
    if (!found) return undefined;
    parentId = found.id;
  }
  return found;
}

/**
 * The suite at this path, creating each missing level. `created` is the deepest suite this call created (the
 * documented `createdTestSuiteId`), or null when the whole path existed.
 */
export function ensureSuitePath(
  store: Store,
  projectId: number,
  names: readonly string[],
): { suite: TestSuite; created: TestSuite | null } {
  let parentId: number | null = null;
  let suite: TestSuite | undefined;
  let created: TestSuite | null = null;
  for (const name of names) {
    const pid: number | null = parentId;
    suite = store.testSuites.find((s) => s.projectId === projectId && s.parentId === pid && s.name === name);
    if (!suite) {
      suite = store.testSuites.insert({ projectId, name, parentId: pid });
      created = suite;
    }
    parentId = suite.id;
  }
  if (!suite) throw invalid('testSuitePath must name at least one suite', 'testSuitePath');
  return { suite, created };
}

/** Links a case to a suite once; linking again is a no-op. Returns the membership. */
export function linkCaseToSuite(store: Store, suite: TestSuite, tcId: number) {
  const existing = store.testSuiteMembers.find((m) => m.suiteId === suite.id && m.tcId === tcId);
  if (existing) return existing;
  const seq = store.testSuiteMembers.filter((m) => m.suiteId === suite.id).length + 1;
  return store.testSuiteMembers.insert({ suiteId: suite.id, tcId, seq });
}
