import type { TestManagementClient } from '../../client/tm.js';
import { CasebridgeError } from '../../contract/errors.js';
import { RUN_STATUSES } from '../kernel/work.js';

/** A cycle's cases by run status and tester: two requests at any size, three for the tester `me`. */

/** A cycle or a run status, compared as a person reads it: case and inner spaces do not matter. */
export const sameName = (s: string): string => s.trim().replace(/\s+/g, ' ').toLowerCase();

/** A selection that cannot be made as asked; `usage`: the request is wrong (an unknown status), not the cycle. */
export class SelectionError extends CasebridgeError {
  readonly usage: boolean;
  constructor(message: string, usage: boolean) {
    super('config', message);
    this.usage = usage;
  }
}

/** The statuses asked for, canonical; an unknown one throws a SelectionError naming the valid ones. */
export function matchStatuses(asked: readonly string[], seen: readonly string[], option: string): Set<string> {
  const known = new Map<string, string>();
  for (const s of [...RUN_STATUSES, ...seen]) if (!known.has(sameName(s))) known.set(sameName(s), s);
  const out = new Set<string>();
  const unknown: string[] = [];
  for (const a of asked) {
    const hit = known.get(sameName(a));
    if (hit) out.add(sameName(hit));
    else unknown.push(a);
  }
  if (unknown.length > 0) {
    const expected = [...known.values()].map((s) => `"${s}"`).join(', ');
    throw new SelectionError(
      `${option}: ${unknown.map((u) => `"${u}"`).join(', ')} is not a run status; expected one or more of ${expected}, comma-separated (case does not matter)`,
      true,
    );
  }
  return out;
}

export interface CycleRef {
  id: number;
  name: string;
  status?: string;
}

/** The cycle `ref` names: `#12` is id 12; digits a name if one matches, else an id; else a name. */
export function findCycleRef(cycles: readonly CycleRef[], ref: string, plan: string): CycleRef {
  const byId = (id: number) => cycles.find((c) => c.id === id);
  const hash = /^#(\d+)$/.exec(ref.trim());
  const loose = cycles.filter((c) => sameName(c.name) === sameName(ref));
  const found = hash
    ? byId(Number(hash[1]))
    : (cycles.find((c) => c.name === ref) ??
      (/^\d+$/.test(ref.trim()) ? byId(Number(ref)) : undefined) ??
      (loose.length === 1 ? loose[0] : undefined));
  if (found) return found;
  const names = cycles.map((c) => `"${c.name}" (#${c.id})`);
  const list =
    names.length === 0
      ? 'it has none'
      : `it has ${names.slice(0, 10).join(', ')}${names.length > 10 ? `, and ${names.length - 10} more` : ''}`;
  throw new SelectionError(
    `test plan ${plan} has no cycle ${hash ? `with id ${hash[1]}` : `"${ref}"`}: ${list}`,
    false,
  );
}

export interface CycleQuery {
  plan: string;
  /** Cycle name, `#<id>` or an id. */
  cycle: string;
  /** Run statuses as typed (any case); empty: every status. */
  statuses: readonly string[];
  /** `me` (the user of the credentials) or a user name; absent: any tester. */
  tester?: string | undefined;
  /** Where the statuses came from, for the message naming an unknown one (`--status`, `select.status`). */
  statusOption: string;
}

export interface CycleCases {
  plan: string;
  cycle: { id: number; name: string; status: string };
  /** Runs in the cycle, before the filters. */
  runs: number;
  /** The selected cases, each once, in the cycle's order of runs. */
  keys: string[];
  /** The filters applied, in words (`status failed or blocked`, `tester jane`); empty: none. */
  filters: string[];
  /** Requests the read cost. */
  requests: number;
}

/**
 * The cycle's cases `q` asks for (any of a case's runs may match). Throws the client's errors, and SelectionError for
 * a missing cycle or status.
 */
export async function readCycleCases(
  tm: TestManagementClient,
  q: CycleQuery,
  signal?: AbortSignal,
): Promise<CycleCases> {
  const o = signal ? { signal } : undefined;
  const cycles = await tm.plans.cycles({ testPlanIssueKey: q.plan }, o);
  let requests = 1;
  const ref = findCycleRef(cycles, q.cycle, q.plan);
  const me =
    q.tester !== undefined && q.tester.toLowerCase() === 'me'
      ? tm.jira.myself({}, o).then((u) => u.name)
      : Promise.resolve(q.tester);
  // Both at once: `me` does not wait for the runs.
  const [runs, testerName] = await Promise.all([
    tm.cycles.testRunsByCycleId({ testPlanIssueKey: q.plan, cycleId: String(ref.id) }, o),
    me,
  ]);
  requests += q.tester?.toLowerCase() === 'me' ? 2 : 1;
  const statuses =
    q.statuses.length > 0
      ? matchStatuses(
          q.statuses,
          runs.map((r) => r.status),
          q.statusOption,
        )
      : undefined;
  const tester = testerName === undefined ? undefined : sameName(testerName);
  const chosen = runs.filter(
    (r) => (!statuses || statuses.has(sameName(r.status))) && (!tester || sameName(r.testerName ?? '') === tester),
  );
  const filters = [
    ...(statuses ? [`status ${[...statuses].join(' or ')}`] : []),
    ...(tester ? [`tester ${tester}`] : []),
  ];
  return {
    plan: q.plan,
    cycle: { id: ref.id, name: ref.name, status: ref.status ?? 'Draft' },
    runs: runs.length,
    keys: [...new Set(chosen.map((r) => r.testCaseKey))],
    filters,
    requests,
  };
}

/** What a run selected of its planned tests. */
export interface Selected<T> {
  /** The planned tests to run. */
  tests: T[];
  /** Selected cases no planned test maps, in the cycle's order. */
  uncovered: string[];
}

/** The planned tests of the selected `keys`, by their own keys or the case casebridge created for them. Pure. */
export function selectPlanned<T>(
  tests: readonly T[],
  keys: readonly string[],
  keysOf: (t: T) => readonly string[],
  createdKey: (t: T) => string | undefined = () => undefined,
): Selected<T> {
  const wanted = new Set(keys);
  const covered = new Set<string>();
  const out: T[] = [];
  for (const t of tests) {
    const own = keysOf(t);
    const hits = own.length > 0 ? own.filter((k) => wanted.has(k)) : [createdKey(t)].filter((k) => k !== undefined);
    const selected = hits.filter((k) => wanted.has(k));
    if (selected.length === 0) continue;
    out.push(t);
    for (const k of selected) covered.add(k);
  }
  return { tests: out, uncovered: keys.filter((k) => !covered.has(k)) };
}
