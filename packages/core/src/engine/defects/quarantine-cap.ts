import type { TestManagementClient } from '../../client/tm.js';
import { compareKeys } from '../kernel/issue-keys.js';

/** The quarantine's cap (`quarantine.max`): how many cases at once, of what count, and which apply past it. */

/** `max` (a share, 0..1) of `total`, rounded down; the epsilon keeps 0.29 × 100 at 29, not 28.999…. */
export function quarantineCap(max: number, total: number): number {
  // A share of a small plan still allows one: 5 % of 12 cases is 0.6, and no quarantine at all is not what it means.
  return max <= 0 ? 0 : Math.max(1, Math.floor(max * total + 1e-9));
}

/** The cases the cap counts: the plan's (one request), else the project's test cases (one search for its total). */
export async function countCases(
  o: { tm: TestManagementClient; projectKey: string; caseType: string; plan?: string | undefined },
  signal?: AbortSignal,
): Promise<number> {
  const r = signal ? { signal } : undefined;
  if (o.plan) return (await o.tm.plans.members({ testPlanIssueKey: o.plan }, r)).length;
  const jql = `project = "${o.projectKey}" AND issuetype = "${o.caseType}"`;
  return (await o.tm.jira.search({ jql, maxResults: '0', fields: 'key' }, r)).total;
}

/** The active quarantines past the first `allowed`: `quarantine add`'s first (they passed the cap), by bug key. */
export function pastTheCap<T extends { entry: { key: string; bug?: string }; added: boolean }>(
  active: readonly T[],
  allowed: number,
): T[] {
  const first = [...active].sort(
    (a, b) =>
      Number(b.added) - Number(a.added) ||
      compareKeys(a.entry.bug ?? a.entry.key, b.entry.bug ?? b.entry.key) ||
      compareKeys(a.entry.key, b.entry.key),
  );
  return first.slice(allowed);
}
