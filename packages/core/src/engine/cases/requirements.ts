import { NotFoundError } from '../../client/errors.js';
import { redact } from '../../client/secrets.js';
import type { TestManagementClient } from '../../client/tm.js';
import { displayName, type TestResult } from '../kernel/model.js';

/** The requirement keys a test names (`requirement(...)`, the annotation, or JUnit's `requirements` property). */
export function requirementsOf(t: Pick<TestResult, 'annotations'>): string[] {
  const out = new Set<string>();
  for (const a of t.annotations) {
    if (!/^requirements?$/i.test(a.type) || !a.description) continue;
    for (const k of a.description.split(/[\s,;]+/)) if (/^[A-Z][A-Z0-9_]*-\d+$/.test(k)) out.add(k);
  }
  return [...out];
}

/** What linking did, for the summary. */
export interface RequirementsSummary {
  /** Requirements named by this run's tests. */
  requirements: number;
  /** Case links made (or, in a dry run, that would be made). */
  linked: number;
  /** One line per requirement that could not be linked, and why. */
  problems: string[];
}

/**
 * Links each test's case to the requirements it names: 1 or 2 requests a requirement, never an unlink (a person's
 * links stay). At the end, after the results: a failure here loses no result, and the next run links the rest.
 */
export class RequirementLinks {
  private readonly wanted = new Map<string, Set<string>>();
  /** A test that names each requirement, for the summary's line. */
  private readonly namedBy = new Map<string, string>();

  /** A result with its case key: the requirements its test names are remembered. */
  saw(key: string, test: TestResult): void {
    for (const req of requirementsOf(test)) {
      let cases = this.wanted.get(req);
      if (!cases) {
        cases = new Set();
        this.wanted.set(req, cases);
        this.namedBy.set(req, displayName(test));
      }
      cases.add(key);
    }
  }

  get size(): number {
    return this.wanted.size;
  }

  /** Per requirement, the named cases it has no link to yet (1 read a requirement); refused ones as problems. */
  async missing(
    tm: TestManagementClient,
    signal?: AbortSignal,
  ): Promise<{ missing: Map<string, string[]>; problems: string[] }> {
    const call = signal ? { signal } : undefined;
    const missing = new Map<string, string[]>();
    const problems: string[] = [];
    await Promise.all(
      [...this.wanted].map(async ([req, cases]) => {
        try {
          const linked = await tm.requirements.linkedTestCases({ requirementIssueKey: req }, call);
          const have = new Set(linked.map((c) => c.key));
          const left = [...cases].filter((k) => !have.has(k)).sort();
          if (left.length) missing.set(req, left);
        } catch (err) {
          problems.push(this.why(req, cases, err));
        }
      }),
    );
    return { missing, problems };
  }

  async link(tm: TestManagementClient, signal?: AbortSignal): Promise<RequirementsSummary | undefined> {
    if (this.wanted.size === 0) return undefined;
    const { missing, problems } = await this.missing(tm, signal);
    let linked = 0;
    await Promise.all(
      [...missing].map(async ([req, keys]) => {
        try {
          await tm.requirements.linkTestCase(
            { requirementIssueKey: req, testCaseKeys: keys },
            signal ? { signal } : undefined,
          );
          linked += keys.length;
        } catch (err) {
          problems.push(this.why(req, this.wanted.get(req) ?? new Set(), err));
        }
      }),
    );
    return { requirements: this.wanted.size, linked, problems: problems.sort() };
  }

  private why(req: string, cases: ReadonlySet<string>, err: unknown): string {
    const by = `named by ${this.namedBy.get(req)}${cases.size > 1 ? ` and ${cases.size - 1} more` : ''}`;
    if (err instanceof NotFoundError) {
      return `${req} is not a requirement synapseRT accepts (or a case of it is not a test case): no case linked to it (${by})`;
    }
    const message = redact(err instanceof Error ? err.message : String(err));
    return `${req}: its cases were not linked (${message}); the next run links them (${by})`;
  }
}
