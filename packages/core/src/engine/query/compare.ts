import { resultOfStatus } from '../defects/history.js';
import { readComment } from '../delivery/comment.js';
import { describeSet } from '../kernel/attributes.js';
import {
  type CycleDigest,
  cyclesOf,
  digestOf,
  type Failure,
  type FailureClass,
  failuresOf,
  pageOf,
  type Reader,
} from './results.js';

/**
 * What changed between two cycles of a plan (`casebridge diff`, MCP `compare_cycles`): newly failing, fixed, still
 * failing (by signature), new tests and tests not run any more. 3 requests at any size.
 */

/** A failure as the comparison shows it (the reporter's words, read back by readComment). */
export interface FailureDigest {
  classification: FailureClass;
  file?: string;
  line?: number;
  /** The error's meaningful lines: a matcher's Expected and Received. */
  errorLines?: string[];
  /** The failure group's marker: equal markers, the same failure. */
  signature?: string;
  defects: string[];
  run: number;
  url: string;
}

/** One test's change. A test is its case, and in an advanced cycle its attribute set: each set's run is compared. */
export interface CycleChange {
  key: string;
  title: string;
  set?: string;
  /** Its run's status in the base and in the cycle as the service names it; absent: no run there. */
  base?: string;
  cycle?: string;
  /** The failure the change is about: the cycle's (newly and still failing), the base's (fixed). */
  failure?: FailureDigest;
  /** Still failing another way: how it failed in the base. */
  before?: FailureDigest;
}

export interface CycleComparison {
  plan: string;
  base: CycleDigest;
  cycle: CycleDigest;
  /** Failed in the cycle; passed, not run or absent in the base. */
  newlyFailing: CycleChange[];
  /** Failed in the base, passed in the cycle. */
  fixed: CycleChange[];
  /** Failed in both: with the same signature, or another. */
  stillFailing: { same: CycleChange[]; other: CycleChange[] };
  /** In the cycle, not in the base. */
  newTests: CycleChange[];
  /** With a result in the base; absent or without a result in the cycle. */
  notRunAnyMore: CycleChange[];
  /** How many of each, every one counted (each list holds at most `limit`). */
  counts: {
    newlyFailing: number;
    fixed: number;
    stillFailingSame: number;
    stillFailingOther: number;
    newTests: number;
    notRunAnyMore: number;
  };
}

/** One run as the comparison sees it. */
export interface ComparedRun {
  key: string;
  title: string;
  set?: string;
  status: string;
  result?: 'passed' | 'failed';
  failure?: FailureDigest;
}

type Lists = Omit<CycleComparison, 'plan' | 'base' | 'cycle' | 'counts'>;

/** Two failures are the same by signature when both runs carry one, else by where they failed and their first line. */
export function sameFailure(a: FailureDigest, b: FailureDigest): boolean {
  if (a.signature && b.signature) return a.signature === b.signature;
  const where = (f: FailureDigest) => `${f.file ?? ''}:${f.line ?? ''}\n${f.errorLines?.[0] ?? ''}`;
  return where(a) === where(b);
}

/** The comparison of two cycles' runs (each in run order): pure, the lists in the cycle's order, then the base's. */
export function compareRuns(base: readonly ComparedRun[], cycle: readonly ComparedRun[]): Lists {
  const before = byTest(base);
  const now = byTest(cycle);
  const out: Lists = {
    newlyFailing: [],
    fixed: [],
    stillFailing: { same: [], other: [] },
    newTests: [],
    notRunAnyMore: [],
  };
  const change = (b: ComparedRun | undefined, c: ComparedRun | undefined, failure?: FailureDigest): CycleChange => {
    const t = (c ?? b) as ComparedRun;
    return {
      key: t.key,
      title: t.title,
      ...(t.set ? { set: t.set } : {}),
      ...(b ? { base: b.status } : {}),
      ...(c ? { cycle: c.status } : {}),
      ...(failure ? { failure } : {}),
    };
  };
  for (const [id, c] of now) {
    const b = before.get(id);
    if (!b) out.newTests.push(change(b, c, c.failure));
    if (c.result === 'failed') {
      const failure = c.failure ?? digestless(c);
      if (b?.result !== 'failed') out.newlyFailing.push(change(b, c, failure));
      else {
        const was = b.failure ?? digestless(b);
        if (sameFailure(was, failure)) out.stillFailing.same.push(change(b, c, failure));
        else out.stillFailing.other.push({ ...change(b, c, failure), before: was });
      }
    } else if (c.result === 'passed' && b?.result === 'failed') {
      out.fixed.push(change(b, c, b.failure ?? digestless(b)));
    }
  }
  for (const [id, b] of before) {
    const c = now.get(id);
    if (b.result && !c?.result) out.notRunAnyMore.push(change(b, c));
  }
  return out;
}

/** A failed run whose comment said nothing of its failure (a status set by hand). */
const digestless = (_: ComparedRun): FailureDigest => ({
  classification: 'unclassified',
  defects: [],
  run: 0,
  url: '',
});

/** Runs by test (case and attribute set); of two runs of one test, a failed one counts. */
function byTest(runs: readonly ComparedRun[]): Map<string, ComparedRun> {
  const out = new Map<string, ComparedRun>();
  for (const run of runs) {
    const id = `${run.key.toUpperCase()}\n${run.set ?? ''}`;
    const had = out.get(id);
    if (!had || (had.result !== 'failed' && run.result === 'failed')) out.set(id, run);
  }
  return out;
}

/**
 * `cycle` against `base`, both of `plan`, in 3 requests at any size; each list holds at most `limit` (default 50,
 * at most 500), `counts` count them all. A missing plan or cycle is a QueryError.
 */
export async function compareCycles(
  r: Reader,
  plan: string,
  base: string,
  cycle: string,
  o: { limit?: number } = {},
): Promise<CycleComparison> {
  const signal = r.signal ? { signal: r.signal } : undefined;
  const cycles = await cyclesOf(r, plan);
  const [b, c] = [digestOf(r, plan, cycles, base), digestOf(r, plan, cycles, cycle)];
  const [baseRuns, cycleRuns] = await Promise.all(
    [b, c].map((d) => r.tm.cycles.testRunsByCycleId({ testPlanIssueKey: plan, cycleId: String(d.id) }, signal)),
  );
  const lists = compareRuns(comparedRuns(r, plan, b, baseRuns ?? []), comparedRuns(r, plan, c, cycleRuns ?? []));
  const page = <T>(all: T[]) => pageOf(all, o.limit !== undefined ? { limit: o.limit } : {}).items;
  return {
    plan,
    base: b,
    cycle: c,
    newlyFailing: page(lists.newlyFailing),
    fixed: page(lists.fixed),
    stillFailing: { same: page(lists.stillFailing.same), other: page(lists.stillFailing.other) },
    newTests: page(lists.newTests),
    notRunAnyMore: page(lists.notRunAnyMore),
    counts: {
      newlyFailing: lists.newlyFailing.length,
      fixed: lists.fixed.length,
      stillFailingSame: lists.stillFailing.same.length,
      stillFailingOther: lists.stillFailing.other.length,
      newTests: lists.newTests.length,
      notRunAnyMore: lists.notRunAnyMore.length,
    },
  };
}

type Run = Parameters<typeof failuresOf>[3][number];

/** A cycle's runs as the comparison sees them: failures read from their comments as `failures` reads them. */
function comparedRuns(r: Reader, plan: string, cycle: CycleDigest, runs: readonly Run[]): ComparedRun[] {
  const resultOf = resultOfStatus(r.statusMap);
  const failed = new Map<number, Failure>(failuresOf(r, plan, cycle, runs).map((f) => [f.run, f]));
  return runs.map((run): ComparedRun => {
    const result = resultOf(run.status);
    const f = failed.get(run.id);
    const set =
      run.attributeValues && Object.keys(run.attributeValues).length > 0 ? describeSet(run.attributeValues) : undefined;
    const signature = f ? readComment(run.comment).signature : undefined;
    return {
      key: run.testCaseKey,
      title: run.summary,
      ...(set ? { set } : {}),
      status: run.status,
      ...(result ? { result } : {}),
      ...(f
        ? {
            failure: {
              classification: f.classification,
              ...(f.file ? { file: f.file } : {}),
              ...(f.line !== undefined ? { line: f.line } : {}),
              ...(f.errorLines ? { errorLines: f.errorLines } : {}),
              ...(signature ? { signature } : {}),
              defects: f.defects,
              run: f.run,
              url: f.url,
            },
          }
        : {}),
    };
  });
}
