import type { StatusMap, StatusMapKey } from './work.js';

/**
 * When two results meet on one run the worse status wins (NA < Passed < Not Tested < Blocked < Failed); a mapped name
 * ranks as its outcome, an unmapped one below all. Case-insensitive, as the service.
 */

const BUILT_IN: Record<string, number> = { na: 1, passed: 2, 'not tested': 3, blocked: 4, failed: 5 };

/** The built-in status each outcome writes without a `statusMap` (skipped: Not Tested, as the run starts). */
const OUTCOME_RANK: Record<StatusMapKey, number> = {
  passed: 2,
  flaky: 2,
  skipped: 3,
  interrupted: 4,
  failed: 5,
  timedOut: 5,
};

export type StatusRank = (status: string) => number;

/** A rank for the statuses of `map` (built-in names keep their own rank). Pure; build it once per run. */
export function statusRanker(map?: Partial<StatusMap>): StatusRank {
  const mapped = new Map<string, number>();
  for (const [key, status] of Object.entries(map ?? {}) as Array<[StatusMapKey, string | null | undefined]>) {
    if (!status) continue;
    const name = status.toLowerCase();
    if (BUILT_IN[name] !== undefined) continue;
    mapped.set(name, Math.max(mapped.get(name) ?? 0, OUTCOME_RANK[key]));
  }
  return (status) => {
    const name = status.toLowerCase();
    return BUILT_IN[name] ?? mapped.get(name) ?? 0;
  };
}

/** The worse of two statuses under `rank` (an absent one loses; on a tie the first stays). */
export function worseOf(rank: StatusRank, a: string | undefined, b: string | undefined): string | undefined {
  if (!a) return b;
  if (!b) return a;
  return rank(b) > rank(a) ? b : a;
}
