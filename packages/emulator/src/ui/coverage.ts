import { builtInOf, byId, ISSUE_TYPES, statusDef } from '../rules/domain.js';
import type { Cycle, Issue, Project, Run, Store } from '../store/store.js';
import { cyclesOfPlan, planOf, runsOfCycle } from './model.js';

/**
 * Requirement coverage in one test cycle, as synapseRT traces a requirement to its cases and their runs. The rules,
 * in one place for the project's requirements page and a requirement's own page:
 *
 * - A case's verdict is read from its runs in the cycle (one, or one per attribute set in an advanced cycle):
 *   `failed` when any run failed, `passed` when every run passed, `not run` when no run has a result yet (a status
 *   of the Not Executed category, Not Tested by default), `no run` when the cycle holds none, `other` otherwise
 *   (Blocked, NA, a custom status, or some attribute sets not run yet).
 * - A requirement is judged over its own cases and its descendants' (each case once): `not covered` without a case,
 *   `failing` when a case failed, `passing` when every case passed, `not run` otherwise: no case failed, but not every
 *   case has passed in this cycle (none run yet, or some not run, blocked or not in the cycle). A `passing` gate can
 *   therefore fail on exactly the three other states.
 *
 * Statuses are compared by the built-in they are (a renamed Failed still fails). The cost is one pass over the runs
 * and the bug links, the requirement links and the hierarchy, once per page: a project of 10,000 cases and 2,000
 * requirements is a few hundred thousand map operations, no scan per requirement.
 */

export type CaseVerdict = 'passed' | 'failed' | 'not run' | 'no run' | 'other';

export type RequirementState = 'passing' | 'failing' | 'not run' | 'not covered';

/** The states in the order a header counts them. */
export const STATES: readonly RequirementState[] = ['passing', 'failing', 'not run', 'not covered'];

export interface CaseCoverage {
  tc: Issue;
  /** Its runs in the cycle, in run order. */
  runs: Run[];
  verdict: CaseVerdict;
  /** The defects of its failed runs (linked to a run or one of its steps), once each, by id. */
  defects: Issue[];
}

export interface RequirementCoverage {
  req: Issue;
  /** 0 for a requirement shown at the top of its tree. */
  depth: number;
  /** Its parent requirement, when it has one. */
  parent: Issue | undefined;
  /** The cases linked to it. */
  own: CaseCoverage[];
  /** The cases it is judged over: its own, then its descendants' not already counted, by id. */
  judged: CaseCoverage[];
  /** For a judged case that is not its own: the descendant requirement it is linked to. */
  via: Map<number, Issue>;
  state: RequirementState;
}

/** Which cycle a page shows, or why none could be chosen (the page answers 404 with `error`). */
export type CycleChoice =
  | { plan: Issue; cycle: Cycle; error?: undefined }
  /** The plan has no cycle yet, or the project no plan: every case has `no run`. */
  | { plan: Issue | undefined; cycle: undefined; error?: undefined }
  | { plan?: undefined; cycle?: undefined; error: string };

/** The project's test plans, by id. */
export function plansOf(store: Store, project: Project): Issue[] {
  return store.issues.filter((i) => i.projectId === project.id && i.type === ISSUE_TYPES.testPlan).sort(byId);
}

/**
 * The cycle asked for by `?plan=<KEY>&cycle=<id>`: both, or either (a plan alone is its latest cycle, a cycle alone
 * names its plan); neither is the project's most recently created cycle. A plan or cycle that is not the project's
 * is an error naming it.
 */
export function chooseCycle(store: Store, project: Project, query: URLSearchParams): CycleChoice {
  const planKey = query.get('plan')?.trim() ?? '';
  const cycleId = query.get('cycle')?.trim() ?? '';
  const plans = plansOf(store, project);
  let plan: Issue | undefined;
  if (planKey) {
    plan = plans.find((p) => p.key === planKey || p.key === planKey.toUpperCase());
    if (!plan) return { error: `Project ${project.key} has no test plan ${planKey}.` };
  }
  if (cycleId) {
    const cycle = /^\d{1,15}$/.test(cycleId) ? store.cycles.get(Number(cycleId)) : undefined;
    const owner = cycle && planOf(store, cycle);
    if (!cycle || !owner || owner.projectId !== project.id) {
      return { error: `Project ${project.key} has no test cycle ${cycleId}.` };
    }
    if (plan && owner.id !== plan.id) return { error: `Test plan ${plan.key} has no test cycle ${cycleId}.` };
    return { plan: owner, cycle };
  }
  if (plan) {
    const cycle = cyclesOfPlan(store, plan.id).at(-1);
    return cycle ? { plan, cycle } : { plan, cycle: undefined };
  }
  const latest = plans
    .flatMap((p) => cyclesOfPlan(store, p.id))
    .sort((a, b) => a.createdAt - b.createdAt || a.id - b.id)
    .at(-1);
  const owner = latest && planOf(store, latest);
  return latest && owner ? { plan: owner, cycle: latest } : { plan: plans[0], cycle: undefined };
}

function executed(store: Store, run: Run): boolean {
  const def = statusDef(store, run.status);
  if (!def) return true;
  return (def.category ?? (builtInOf(def) === 'Not Tested' ? 'Not Executed' : 'Executed')) === 'Executed';
}

function verdictOf(store: Store, runs: readonly Run[]): CaseVerdict {
  if (runs.length === 0) return 'no run';
  const builtIns = runs.map((r) => {
    const def = statusDef(store, r.status);
    return def ? builtInOf(def) : undefined;
  });
  if (builtIns.includes('Failed')) return 'failed';
  if (builtIns.every((b) => b === 'Passed')) return 'passed';
  return runs.some((r) => executed(store, r)) ? 'other' : 'not run';
}

function isFailed(store: Store, run: Run): boolean {
  const def = statusDef(store, run.status);
  return def !== undefined && builtInOf(def) === 'Failed';
}

/** Coverage in `cycle` (none: every case has `no run`); build it once per page and ask it per requirement. */
export class CoverageIndex {
  private readonly runsByCase = new Map<number, Run[]>();
  private readonly bugIdsByRun = new Map<number, Set<number>>();
  private readonly casesByReq = new Map<number, number[]>();
  private readonly childrenByReq = new Map<number, number[]>();
  private readonly parentByReq = new Map<number, number>();
  private readonly cases = new Map<number, CaseCoverage>();

  constructor(
    readonly store: Store,
    readonly cycle: Cycle | undefined,
  ) {
    for (const run of cycle ? runsOfCycle(store, cycle.id) : []) {
      const list = this.runsByCase.get(run.tcId);
      if (list) list.push(run);
      else this.runsByCase.set(run.tcId, [run]);
    }
    for (const link of store.bugLinks.rows.values()) {
      const set = this.bugIdsByRun.get(link.runId);
      if (set) set.add(link.issueId);
      else this.bugIdsByRun.set(link.runId, new Set([link.issueId]));
    }
    for (const link of [...store.requirementCases.rows.values()].sort(byId)) {
      push(this.casesByReq, link.reqId, link.tcId);
    }
    for (const edge of [...store.requirementChildren.rows.values()].sort(byId)) {
      push(this.childrenByReq, edge.parentId, edge.childId);
      this.parentByReq.set(edge.childId, edge.parentId);
    }
  }

  /** A case's runs, verdict and defects in the cycle. */
  ofCase(tc: Issue): CaseCoverage {
    const known = this.cases.get(tc.id);
    if (known) return known;
    const runs = this.runsByCase.get(tc.id) ?? [];
    const bugIds = new Set<number>();
    for (const run of runs) {
      if (isFailed(this.store, run)) for (const id of this.bugIdsByRun.get(run.id) ?? []) bugIds.add(id);
    }
    const defects = [...bugIds].flatMap((id) => this.store.issues.get(id) ?? []).sort(byId);
    const made = { tc, runs, verdict: verdictOf(this.store, runs), defects };
    this.cases.set(tc.id, made);
    return made;
  }

  /** The requirement's child requirements, by id. */
  children(reqId: number): Issue[] {
    return (this.childrenByReq.get(reqId) ?? []).flatMap((id) => this.store.issues.get(id) ?? []).sort(byId);
  }

  /** A requirement's coverage; `depth` is where a tree shows it. */
  ofRequirement(req: Issue, depth = 0): RequirementCoverage {
    const parentId = this.parentByReq.get(req.id);
    const own = this.casesOf(req.id);
    const judged = new Map(own.map((c) => [c.tc.id, c]));
    const via = new Map<number, Issue>();
    // The seen set only guards against a seed edited into a loop; the API never makes one.
    const seen = new Set([req.id]);
    const visit = (id: number) => {
      for (const child of this.childrenByReq.get(id) ?? []) {
        if (seen.has(child)) continue;
        seen.add(child);
        const childReq = this.store.issues.get(child);
        for (const c of this.casesOf(child)) {
          if (judged.has(c.tc.id) || !childReq) continue;
          judged.set(c.tc.id, c);
          via.set(c.tc.id, childReq);
        }
        visit(child);
      }
    };
    visit(req.id);
    const inherited = [...judged.values()].filter((c) => via.has(c.tc.id)).sort((a, b) => a.tc.id - b.tc.id);
    const all = [...own, ...inherited];
    return {
      req,
      depth,
      parent: parentId === undefined ? undefined : this.store.issues.get(parentId),
      own,
      judged: all,
      via,
      state: stateOf(all),
    };
  }

  /**
   * The project's requirements as trees, depth first: each top-level requirement (no parent in the project) is
   * followed by its descendants, children by id. A requirement reached by no walk (a seed edited into a loop) is
   * shown at the top as well, so every requirement of the project has its row.
   */
  tree(project: Project): RequirementCoverage[] {
    const reqs = this.store.issues
      .filter((i) => i.projectId === project.id && i.type === ISSUE_TYPES.requirement)
      .sort(byId);
    const inProject = new Set(reqs.map((r) => r.id));
    const out: RequirementCoverage[] = [];
    const shown = new Set<number>();
    const walk = (req: Issue, depth: number) => {
      if (shown.has(req.id)) return;
      shown.add(req.id);
      out.push(this.ofRequirement(req, depth));
      for (const child of this.children(req.id)) walk(child, depth + 1);
    };
    for (const r of reqs) {
      const parent = this.parentByReq.get(r.id);
      if (parent === undefined || !inProject.has(parent)) walk(r, 0);
    }
    for (const r of reqs) walk(r, 0);
    return out;
  }

  private casesOf(reqId: number): CaseCoverage[] {
    return [...new Set(this.casesByReq.get(reqId))]
      .flatMap((id) => this.store.issues.get(id) ?? [])
      .sort(byId)
      .map((tc) => this.ofCase(tc));
  }
}

function push(map: Map<number, number[]>, key: number, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** A requirement's state from the cases it is judged over. */
export function stateOf(cases: readonly CaseCoverage[]): RequirementState {
  if (cases.length === 0) return 'not covered';
  if (cases.some((c) => c.verdict === 'failed')) return 'failing';
  if (cases.every((c) => c.verdict === 'passed')) return 'passing';
  return 'not run';
}

/** Requirements counted per state, every state present. */
export function countStates(rows: readonly RequirementCoverage[]): Record<RequirementState, number> {
  const counts: Record<RequirementState, number> = { passing: 0, failing: 0, 'not run': 0, 'not covered': 0 };
  for (const r of rows) counts[r.state] += 1;
  return counts;
}
