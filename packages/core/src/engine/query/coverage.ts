import { NotFoundError, ValidationError } from '../../client/errors.js';
import { keysetSearch } from '../jira/keyset.js';
import { issueUrl } from '../report/links.js';
import { type CycleDigest, cycleRead, type Page, pageOf, QueryError, type Reader } from './results.js';

/**
 * Requirement coverage: each requirement with its cases (linked by anyone) and their results in a cycle, a parent
 * judged over its descendants' too. 3 requests, then 2 per requirement.
 */

export type CoverageState = 'passing' | 'failing' | 'not run' | 'not covered';

export interface CoveredCase {
  key: string;
  /** The case's status in the cycle (its worst run), absent when it has no run there. */
  status?: string;
  result?: 'passed' | 'failed';
  defects: string[];
  /** The requirement it is linked to, when it is a descendant's case. */
  via?: string;
}

export interface RequirementCoverage {
  key: string;
  summary: string;
  url: string;
  state: CoverageState;
  /** Its cases and its descendants' (each once). */
  cases: CoveredCase[];
  /** Its descendants' keys, depth first. */
  children: string[];
}

export interface Coverage {
  plan: string;
  cycle: CycleDigest;
  requirements: RequirementCoverage[];
  counts: Record<CoverageState, number>;
  /** Requirements on every page. */
  total: number;
  next?: string;
}

export interface CoverageQuery extends Page {
  /** Requirement keys to judge (no search but for their summaries). */
  requirements?: readonly string[];
  /** A JQL set (`fixVersion = "2.3" AND issuetype = Story`): also the requirements no test covers. */
  jql?: string;
}

/** The state of a requirement's cases (pure): failing beats not run beats passing; none is not covered. */
export function coverageState(cases: readonly Pick<CoveredCase, 'result'>[]): CoverageState {
  if (cases.length === 0) return 'not covered';
  if (cases.some((c) => c.result === 'failed')) return 'failing';
  return cases.every((c) => c.result === 'passed') ? 'passing' : 'not run';
}

const KEY = /^[A-Z][A-Z0-9_]*-\d+$/;

/** The requirements: the keys asked for, else the JQL's issues, else the project's linked to the cycle's cases. */
async function requirementSet(r: Reader, project: string, q: CoverageQuery): Promise<Map<string, string>> {
  const bad = (q.requirements ?? []).filter((k) => !KEY.test(k));
  if (bad.length) throw new QueryError(`not an issue key: ${bad.join(', ')} (expected keys like PROJ-12)`);
  const jql = q.requirements?.length
    ? `key in (${q.requirements.join(', ')})`
    : (q.jql ?? `project = "${project}" AND issuetype = Requirement`);
  try {
    const found = await keysetSearch({
      tm: r.tm,
      // Bracketed only when it has an OR: the id range ANDed after it must bind to the whole query.
      jql: /\bOR\b/i.test(jql) ? `(${jql})` : jql,
      fields: 'summary',
      ...(r.signal ? { signal: r.signal } : {}),
    });
    const out = new Map(found.issues.map((i) => [i.key, String(i.fields.summary ?? '')]));
    const missing = (q.requirements ?? []).filter((k) => !out.has(k));
    if (missing.length) throw new QueryError(`no such issue: ${missing.join(', ')}`);
    return out;
  } catch (err) {
    if (err instanceof ValidationError) {
      throw new QueryError(`Jira refused the JQL "${jql}": ${err.serverMessage ?? err.message}`);
    }
    throw err;
  }
}

export async function requirementCoverage(
  r: Reader,
  plan: string,
  ref: string,
  project: string,
  q: CoverageQuery = {},
): Promise<Coverage> {
  const [read, set] = await Promise.all([cycleRead(r, plan, ref), requirementSet(r, project, q)]);
  const byCase = new Map<string, CoveredCase>();
  for (const run of read.runs) {
    const result = read.resultOf(run.status);
    const had = byCase.get(run.testCaseKey);
    // A case with several runs (attribute sets): a failed run makes it failed, an unrun one leaves it not passed.
    const worse = !had || result === 'failed' || (had.result === 'passed' && result !== 'passed');
    const defects = [...new Set([...(had?.defects ?? []), ...(run.bugs ?? []).map((b) => b.key)])];
    if (worse)
      byCase.set(run.testCaseKey, { key: run.testCaseKey, status: run.status, ...(result ? { result } : {}), defects });
    else if (had) had.defects = defects;
  }
  const call = r.signal ? { signal: r.signal } : undefined;
  const cases = new Map<string, Promise<string[]>>();
  const casesOf = (key: string) => {
    let p = cases.get(key);
    if (!p) {
      p = r.tm.requirements.linkedTestCases({ requirementIssueKey: key }, call).then((l) => l.map((c) => c.key));
      cases.set(key, p);
    }
    return p;
  };
  const judged = await Promise.all(
    [...set].map(async ([key, summary]): Promise<RequirementCoverage | undefined> => {
      let own: string[];
      let children: string[];
      try {
        [own, children] = await Promise.all([
          casesOf(key),
          r.tm.requirements.getChildren({ requirementIssueKey: key }, call).then((l) => l.map((c) => c.key)),
        ]);
      } catch (err) {
        // Not a requirement (a JQL set may hold other issues): left out unless it was asked for by key.
        if (err instanceof NotFoundError && !q.requirements?.length) return undefined;
        if (err instanceof NotFoundError) throw new QueryError(`${key} is not a requirement`);
        throw err;
      }
      const seen = new Set<string>();
      const list: CoveredCase[] = [];
      const add = (caseKey: string, via?: string) => {
        if (seen.has(caseKey)) return;
        seen.add(caseKey);
        const c = byCase.get(caseKey);
        list.push({ ...(c ?? { key: caseKey, defects: [] }), ...(via ? { via } : {}) });
      };
      for (const k of own) add(k);
      for (const child of children) for (const k of await casesOf(child)) add(k, child);
      return { key, summary, url: issueUrl(r.baseUrl, key), state: coverageState(list), cases: list, children };
    }),
  );
  const planned = new Set(byCase.keys());
  const all = judged
    .filter((x): x is RequirementCoverage => x !== undefined)
    // The default set: the project's requirements that reach a case of the cycle.
    .filter((x) => q.requirements?.length || q.jql || x.cases.some((c) => planned.has(c.key)))
    .sort((a, b) => a.key.localeCompare(b.key, 'en', { numeric: true }));
  const counts: Record<CoverageState, number> = { passing: 0, failing: 0, 'not run': 0, 'not covered': 0 };
  for (const x of all) counts[x.state] += 1;
  const { items, next } = pageOf(all, q);
  return { plan, cycle: read.cycle, requirements: items, counts, total: all.length, ...(next ? { next } : {}) };
}
