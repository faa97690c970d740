import type { StatusMap, StatusMapKey } from './work.js';

/**
 * The rank of run statuses when two results meet on one run (two tests of one case, two machines of one pipeline):
 * the worse status wins. The built-in order is NA < Passed < Not Tested < Blocked < Failed.
 *
 * Run statuses are per instance: administrators rename Passed, Failed, Blocked and NA and add their own, so a
 * `statusMap` may name statuses casebridge has never heard of (`failed: 'Fehlgeschlagen'`, `skipped: 'Übersprungen'`).
 * Such a name ranks as the outcome it is mapped from would with the built-in mapping: a renamed Failed is as bad as
 * Failed, whatever it is called. A name mapped from several outcomes takes the worst of them. A name that is in
 * neither (a status a person set by hand) ranks below all: it never overwrites a mapped one, and one overwrites it.
 * Names are compared case-insensitively, as the service matches them.
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
