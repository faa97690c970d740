import type { TestManagementClient } from '../../client/tm.js';
import { CasebridgeError } from '../../contract/errors.js';
import { type CycleRef, findCycleRef, SelectionError } from '../cases/select.js';
import { FLIP_WINDOW, flipRule } from '../defects/classify.js';
import { executedAt, executions, resultOfStatus } from '../defects/history.js';
import { readComment } from '../delivery/comment.js';
import { describeSet } from '../kernel/attributes.js';
import type { Classification } from '../kernel/types.js';
import type { StatusMap } from '../kernel/work.js';
import { cycleUrl, issueUrl, runUrl } from '../report/links.js';

/**
 * What the reporters wrote, read back through the engine's own readers, so nothing is classified here (unclassified
 * stays so). A cycle's summary or failures cost 2 requests at any size; no per-test reads.
 */

export interface Reader {
  tm: TestManagementClient;
  /** Jira's base URL: the links are built from it (report/links.ts). */
  baseUrl: string;
  statusMap: StatusMap;
  signal?: AbortSignal;
}

/** A query that cannot be answered as asked: an unknown plan, cycle or case (never a crash, a clear message). */
export class QueryError extends CasebridgeError {
  constructor(message: string) {
    super('config', message);
  }
}

/** A page of a long answer: `cursor` is the `next` of the page before (an offset, opaque to callers). */
export interface Page {
  limit?: number;
  cursor?: string;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

/** One page of `all` (the CLI's queries and the MCP tools page alike); a cursor this did not give is a QueryError. */
export function pageOf<T>(all: readonly T[], page: Page): { items: T[]; next?: string } {
  const limit = Math.min(Math.max(1, Math.trunc(page.limit ?? DEFAULT_LIMIT)), MAX_LIMIT);
  const start = page.cursor === undefined ? 0 : Number(page.cursor);
  if (!Number.isInteger(start) || start < 0) throw new QueryError(`cursor "${page.cursor}" is not one this gave`);
  const items = all.slice(start, start + limit);
  return start + limit < all.length ? { items, next: String(start + limit) } : { items };
}

export type FailureClass = Classification | 'unclassified';

export interface CycleDigest {
  id: number;
  name: string;
  status: string;
  url: string;
}

export interface Counts {
  /** Runs by status, as the service names it (`Passed`, `Failed`, `Not Tested`, custom ones). */
  counts: Record<string, number>;
  total: number;
  /** Passed ÷ runs with a result (passed or failed, as statusMap writes them), in percent; absent when none has one. */
  passRate?: number;
}

export interface CycleSummary extends Counts {
  plan: string;
  cycle: CycleDigest;
  /** Per run attribute set (an advanced cycle), e.g. `Browser=Chrome, OS=Linux`. */
  bySet: Array<{ set: string } & Counts>;
}

export interface Failure {
  key: string;
  title: string;
  classification: FailureClass;
  /** Why, as the reporter wrote it (`failed the same way in run 12`). */
  reason?: string;
  /** The error's first line. */
  error?: string;
  /** Its meaningful lines: a matcher's Expected and Received (kernel/text.ts errorLines). */
  errorLines?: string[];
  /** Where it failed, from the repository's root, as the reporter wrote it. */
  file?: string;
  line?: number;
  /** Where the page state at the failure is (Playwright's error-context.md: `error-context.md (attached)`). */
  context?: string;
  defects: string[];
  run: number;
  /** The run's attribute set, in an advanced cycle. */
  set?: string;
  url: string;
}

export interface Failures {
  plan: string;
  cycle: CycleDigest;
  failures: Failure[];
  /** Failed runs in the cycle, on every page. */
  total: number;
  next?: string;
}

type Run = Awaited<ReturnType<TestManagementClient['cycles']['testRunsByCycleId']>>[number];

/** The plan's cycles (1 request); a plan that is not there is a QueryError. */
export async function cyclesOf(r: Reader, plan: string): Promise<CycleRef[]> {
  try {
    return await r.tm.plans.cycles({ testPlanIssueKey: plan }, r.signal ? { signal: r.signal } : undefined);
  } catch (err) {
    throw notFound(err, `test plan ${plan} is not there (or not a test plan these credentials can read)`);
  }
}

function notFound(err: unknown, message: string): unknown {
  return (err as { status?: number }).status === 404 ? new QueryError(message) : err;
}

/** The cycle `ref` names among the plan's (`#12`, an id, a name; core's findCycleRef, as `cycle keys` finds it). */
export function digestOf(r: Reader, plan: string, cycles: readonly CycleRef[], ref: string): CycleDigest {
  let found: CycleRef;
  try {
    found = findCycleRef(cycles, ref, plan);
  } catch (err) {
    throw err instanceof SelectionError ? new QueryError(err.message) : err;
  }
  return { id: found.id, name: found.name, status: found.status ?? 'Draft', url: cycleUrl(r.baseUrl, plan, found.id) };
}

/** The cycle `ref` names, and its runs: 2 requests. */
async function cycleOf(r: Reader, plan: string, ref: string): Promise<{ cycle: CycleDigest; runs: Run[] }> {
  const cycle = digestOf(r, plan, await cyclesOf(r, plan), ref);
  const runs = await r.tm.cycles.testRunsByCycleId(
    { testPlanIssueKey: plan, cycleId: String(cycle.id) },
    r.signal ? { signal: r.signal } : undefined,
  );
  return { cycle, runs };
}

function countsOf(r: Reader, runs: readonly Run[]): Counts {
  const resultOf = resultOfStatus(r.statusMap);
  const counts: Record<string, number> = {};
  let passed = 0;
  let decided = 0;
  for (const run of runs) {
    counts[run.status] = (counts[run.status] ?? 0) + 1;
    const result = resultOf(run.status);
    if (result) decided += 1;
    if (result === 'passed') passed += 1;
  }
  return {
    counts,
    total: runs.length,
    ...(decided > 0 ? { passRate: Math.round((1000 * passed) / decided) / 10 } : {}),
  };
}

const setOf = (run: Run) =>
  run.attributeValues && Object.keys(run.attributeValues).length > 0 ? describeSet(run.attributeValues) : undefined;

/** A cycle's runs counted by status, and per attribute set. 2 requests. */
export async function cycleSummary(r: Reader, plan: string, ref: string): Promise<CycleSummary> {
  const { cycle, runs } = await cycleOf(r, plan, ref);
  const sets = new Map<string, Run[]>();
  for (const run of runs) {
    const set = setOf(run);
    if (set) sets.set(set, [...(sets.get(set) ?? []), run]);
  }
  const bySet = [...sets].map(([set, list]) => ({ set, ...countsOf(r, list) }));
  return { plan, cycle, ...countsOf(r, runs), bySet };
}

/** The failed runs of a cycle, in run order, with the reporter's classification. 2 requests. */
export async function listFailures(r: Reader, plan: string, ref: string, page: Page = {}): Promise<Failures> {
  const { cycle, runs } = await cycleOf(r, plan, ref);
  const all = failuresOf(r, plan, cycle, runs);
  const { items, next } = pageOf(all, page);
  return { plan, cycle, failures: items, total: all.length, ...(next ? { next } : {}) };
}

/** Every failed run of the cycle read (no paging): the gate counts them all. */
export function failuresOf(r: Reader, plan: string, cycle: CycleDigest, runs: readonly Run[]): Failure[] {
  const resultOf = resultOfStatus(r.statusMap);
  return runs
    .filter((run) => resultOf(run.status) === 'failed')
    .map((run) => {
      const said = readComment(run.comment);
      const set = setOf(run);
      return {
        key: run.testCaseKey,
        title: run.summary,
        classification: said.classification ?? 'unclassified',
        ...(said.reason ? { reason: said.reason } : {}),
        ...(said.error ? { error: said.error } : {}),
        ...(said.errorLines ? { errorLines: said.errorLines } : {}),
        ...(said.file ? { file: said.file } : {}),
        ...(said.line !== undefined ? { line: said.line } : {}),
        ...(said.context ? { context: said.context } : {}),
        defects: (run.bugs ?? []).map((b) => b.key),
        run: run.id,
        ...(set ? { set } : {}),
        url: runUrl(r.baseUrl, plan, cycle.id, run.id),
      };
    });
}

/** The plan's cycles, newest first, each with its counts (one read of its runs). 1 + one request per cycle listed. */
export async function listCycles(
  r: Reader,
  plan: string,
  page: Page = {},
): Promise<{ plan: string; cycles: Array<CycleDigest & Counts>; next?: string }> {
  const all = [...(await cyclesOf(r, plan))].sort((a, b) => b.id - a.id);
  const { items, next } = pageOf(all, { limit: 10, ...page });
  const cycles = await Promise.all(
    items.map(async (c) => {
      const runs = await r.tm.cycles.testRunsByCycleId(
        { testPlanIssueKey: plan, cycleId: String(c.id) },
        r.signal ? { signal: r.signal } : undefined,
      );
      return {
        id: c.id,
        name: c.name,
        status: c.status ?? 'Draft',
        url: cycleUrl(r.baseUrl, plan, c.id),
        ...countsOf(r, runs),
      };
    }),
  );
  return { plan, cycles, ...(next ? { next } : {}) };
}

export interface HistoryRun {
  status: string;
  result?: 'passed' | 'failed';
  /** The cycle's name, or `ad hoc`. */
  cycle: string;
  plan?: string;
  /** When it was executed, ISO 8601 (the server's clock), when the service says. */
  date?: string;
  defects: string[];
  classification?: Classification;
  run: number;
}

export interface CaseHistory {
  key: string;
  url: string;
  /** Newest first. */
  runs: HistoryRun[];
  /** Flips between pass and fail over the last FLIP_WINDOW executed runs, and whether they make it flaky (flipRule). */
  flips: number;
  flaky: boolean;
  /** The cursor of the next (older) page, when there is one. */
  next?: string;
}

/** A case's last runs across cycles and ad hoc, newest first, a page at a time (default 20). 1 request. */
export async function caseHistory(r: Reader, key: string, page: Page = {}): Promise<CaseHistory> {
  let all: Awaited<ReturnType<TestManagementClient['runs']['caseTestRuns']>>;
  try {
    all = await r.tm.runs.caseTestRuns({ testCaseIssueKey: key }, r.signal ? { signal: r.signal } : undefined);
  } catch (err) {
    throw notFound(err, `test case ${key} is not there (or not a test case these credentials can read)`);
  }
  const resultOf = resultOfStatus(r.statusMap);
  const executed = executions(all, r.statusMap);
  const order = new Map(executed.map((e, i) => [e.runId, i]));
  // Executed runs in execution order (newest last), then the others as the service lists them.
  const sorted = [...all].sort((a, b) => (order.get(a.id) ?? -1) - (order.get(b.id) ?? -1));
  const { items, next } = pageOf(sorted.reverse(), { limit: 20, ...page });
  const runs = items.map((run): HistoryRun => {
    const at = executedAt(run.executionOn);
    const result = resultOf(run.status);
    const said = readComment(run.comment);
    return {
      status: run.status,
      ...(result ? { result } : {}),
      cycle: run.testCycleSummary ?? 'ad hoc',
      ...(run.testPlanKey ? { plan: run.testPlanKey } : {}),
      ...(at !== undefined ? { date: new Date(at).toISOString() } : {}),
      defects: run.bugs.map((b) => b.key),
      ...(said.classification ? { classification: said.classification } : {}),
      run: run.id,
    };
  });
  return {
    key,
    url: issueUrl(r.baseUrl, key),
    runs,
    ...flipRule(executed.map((e) => e.result)),
    ...(next ? { next } : {}),
  };
}

export interface FlakyCase {
  key: string;
  title: string;
  /** Runs with a result in the cycles looked at, failed ones, and flips over the last FLIP_WINDOW (flipRule). */
  runs: number;
  failed: number;
  flips: number;
  /** Flips ÷ (runs − 1): 1 when every run flipped. */
  rate: number;
}

/** The plan's flaky cases over its last `cycles` cycles, most flips first (flipRule); 1 + `cycles` requests. */
export async function flakyCases(
  r: Reader,
  plan: string,
  o: { cycles?: number } & Page = {},
): Promise<{ plan: string; cycles: string[]; cases: FlakyCase[]; next?: string }> {
  const n = Math.min(Math.max(2, Math.trunc(o.cycles ?? 10)), 50);
  const last = [...(await cyclesOf(r, plan))].sort((a, b) => a.id - b.id).slice(-n);
  const resultOf = resultOfStatus(r.statusMap);
  const lists = await Promise.all(
    last.map((c) =>
      r.tm.cycles.testRunsByCycleId(
        { testPlanIssueKey: plan, cycleId: String(c.id) },
        r.signal ? { signal: r.signal } : undefined,
      ),
    ),
  );
  const byCase = new Map<string, { title: string; results: Array<'passed' | 'failed'> }>();
  for (const runs of lists) {
    for (const run of runs) {
      const result = resultOf(run.status);
      if (!result) continue;
      const entry = byCase.get(run.testCaseKey) ?? { title: run.summary, results: [] };
      entry.results.push(result);
      byCase.set(run.testCaseKey, entry);
    }
  }
  const all = [...byCase]
    .map(([key, { title, results }]): FlakyCase & { flaky: boolean } => {
      const rule = flipRule(results);
      const looked = Math.min(results.length, FLIP_WINDOW);
      return {
        key,
        title,
        runs: results.length,
        failed: results.filter((x) => x === 'failed').length,
        flips: rule.flips,
        rate: looked > 1 ? rule.flips / (looked - 1) : 0,
        flaky: rule.flaky,
      };
    })
    .filter((c) => c.flaky)
    .map(({ flaky: _flaky, ...c }): FlakyCase => c)
    .sort((a, b) => b.flips - a.flips || b.rate - a.rate || a.key.localeCompare(b.key, 'en', { numeric: true }));
  const { items, next } = pageOf(all, o);
  return { plan, cycles: last.map((c) => c.name), cases: items, ...(next ? { next } : {}) };
}

/** A cycle's runs and failures at once, for the gate (2 requests). */
export async function cycleRead(r: Reader, plan: string, ref: string) {
  const { cycle, runs } = await cycleOf(r, plan, ref);
  const resultOf = resultOfStatus(r.statusMap);
  return { cycle, runs, resultOf, failures: failuresOf(r, plan, cycle, runs), ...countsOf(r, runs) };
}
