import { AmbiguousError, NotFoundError, ValidationError } from '../../client/errors.js';
import { PermanentProblem } from '../kernel/errors.js';
import { memoByKey } from '../kernel/keyed.js';
import type { Service } from '../kernel/service.js';
import type { CycleInfo } from '../kernel/types.js';
import type { Target } from '../kernel/work.js';

/** The cycle lifecycle, each step safe from several processes at once: a refusal after a lost race reads it again. */

/** Which cycle: its test plan and name, and what a new one is created with. */
export interface CycleSpec {
  plan: string;
  name: string;
  environment?: string;
  build?: string;
  /** Whether the new cycle gets a run per case of the plan. Always sent: the service's default is undocumented. */
  preloadRuns?: boolean;
  /** An advanced cycle (`testCycleType: Advanced`): its runs carry run attributes (option `attributes`). */
  advanced?: boolean;
}

/** The workflow actions of a cycle (case-sensitive, as the service matches them) and the status each leads to. */
export const CYCLE_STATUS_AFTER = {
  Start: 'Active',
  Resume: 'Active',
  Complete: 'Completed',
  Abort: 'Aborted',
} as const;
export type CycleWorkflow = keyof typeof CYCLE_STATUS_AFTER;

/** A preloaded cycle's runs listed by name as this process created it (its id still unknown), and when. */
export interface ListedRuns {
  runs: Awaited<ReturnType<Service['tm']['cycles']['testRuns']>>;
  at: number;
}

/** A refusal that means another process got there first (500: already exists, not allowed from this state). */
function lostRace(err: unknown): boolean {
  return err instanceof ValidationError || err instanceof AmbiguousError;
}

/** The cycle of the plan with this name; undefined when there is none. One request (the plan's cycle list). */
export async function findCycle(svc: Service, plan: string, name: string): Promise<CycleInfo | undefined> {
  const all = await svc.tm.plans.cycles({ testPlanIssueKey: plan }, svc.o);
  const c = all.find((x) => x.name === name);
  if (!c) return undefined;
  const startedAt = c.cycleStartedDate ? Date.parse(c.cycleStartedDate) : Number.NaN;
  return { id: c.id, name: c.name, plan, status: c.status ?? 'Draft', ...(startedAt >= 0 ? { startedAt } : {}) };
}

/** A cycle started this long before a run began is another process's of the same moment (a job of the same matrix). */
const SHARED_WITHIN_MS = 10 * 60_000;

/**
 * Whether another process reports into the cycle now (CycleInfo.shared), as this run opens it at `now`; `sharded`:
 * this process is one shard of a run, and the other shards report into the same cycle.
 */
export function sharedNow(cycle: CycleInfo, now: number, sharded = false): boolean {
  if (sharded || cycle.created === false) return true;
  return cycle.created === undefined && cycle.startedAt !== undefined && now - cycle.startedAt <= SHARED_WITHIN_MS;
}

/**
 * Creates the cycle and reads it back, taking another process's when it won (`created: false`); throws
 * PermanentProblem when it is still not there. `start` and `listRuns` share the read-back's round trip.
 */
export async function createCycle(
  svc: Service,
  spec: CycleSpec,
  { start = false, listRuns = false }: { start?: boolean; listRuns?: boolean } = {},
): Promise<CycleInfo & { created: boolean; listed?: ListedRuns }> {
  const { plan, name } = spec;
  const input = {
    testPlanIssueKey: plan,
    name,
    ...(spec.environment ? { environment: spec.environment } : {}),
    ...(spec.build ? { build: spec.build } : {}),
    preloadRuns: spec.preloadRuns ? 'yes' : 'no',
    ...(spec.advanced ? { testCycleType: 'Advanced' } : {}),
  };
  let created = false;
  let failure: unknown;
  try {
    await svc.tm.plans.addCycle(input, svc.o);
    created = true;
  } catch (err) {
    if (!lostRace(err)) throw err;
    failure = err;
  }
  const listing = listRuns && created && spec.preloadRuns ? listByName(svc, plan, name) : undefined;
  // A dry run's read would find no cycle: the cycle it would have made, id 0.
  if (svc.dryRun) {
    const cycle = { id: 0, name, plan, status: 'Draft', created };
    if (start && created) await moveCycle(svc, cycle, 'Start');
    const listed = await listing;
    return { ...cycle, ...(listed ? { preloaded: true, listed } : {}) };
  }
  const started = start && created ? moveCycle(svc, { id: 0, name, plan, status: 'Draft' }, 'Start') : undefined;
  // All settle before any failure is thrown: a start left running would be a request nobody waits for.
  const [read, moved, listed] = await Promise.allSettled([findCycle(svc, plan, name), started, listing]);
  if (read.status === 'rejected') throw read.reason;
  if (moved.status === 'rejected') throw moved.reason;
  const cycle = read.value;
  if (!cycle) {
    // Maybe a fault, not a refusal: thrown as it is, the results are tried again; a PermanentProblem drops them all.
    if (failure instanceof AmbiguousError || (failure instanceof ValidationError && failure.uncertain)) throw failure;
    throw new PermanentProblem(`cycle "${name}" could not be created in test plan ${plan}`);
  }
  // The read may have been answered before the start took effect.
  if (started) cycle.status = CYCLE_STATUS_AFTER.Start;
  return {
    ...cycle,
    created,
    ...(created && spec.preloadRuns ? { preloaded: true } : {}),
    ...(listed.status === 'fulfilled' && listed.value ? { listed: listed.value } : {}),
  };
}

/** The cycle's runs by name (one request); undefined when it fails for any reason: they are then read by id. */
async function listByName(svc: Service, plan: string, name: string): Promise<ListedRuns | undefined> {
  try {
    const runs = await svc.tm.cycles.testRuns({ testPlanIssueKey: plan, cycleName: name }, svc.o);
    return { runs, at: svc.clock.now() };
  } catch {
    return undefined;
  }
}

/** Moves the cycle through its workflow; refused because another process moved it, fine if it is where this leads. */
export async function moveCycle(svc: Service, cycle: CycleInfo, action: CycleWorkflow): Promise<void> {
  const input = { testPlanIssueKey: cycle.plan, cycleName: cycle.name, action };
  const want = CYCLE_STATUS_AFTER[action];
  try {
    await svc.tm.cycles.workflow(input, svc.o);
  } catch (err) {
    if (!lostRace(err)) throw err;
    const now = await findCycle(svc, cycle.plan, cycle.name);
    if (now?.status !== want) throw err;
  }
  cycle.status = want;
}

/** Resumes a cycle someone completed or aborted; the run completes it again at its end (see Cycles.complete). */
export async function resumeCycle(svc: Service, cycle: CycleInfo): Promise<void> {
  await moveCycle(svc, cycle, 'Resume');
  cycle.resumed = true;
}

/** The cycles one reporting run reports into, each found or created, and started or resumed, once. */
export class Cycles {
  /** A permanent answer (no such plan) is kept: every result of the run would get the same one. */
  private readonly open = memoByKey<string, CycleInfo>((err) => err instanceof PermanentProblem);
  private readonly seen: CycleInfo[] = [];
  /** Run lists read while creating a cycle (see createCycle's `listRuns`), until CycleRuns takes them, by key. */
  private readonly listed = new Map<string, ListedRuns>();

  constructor(
    private readonly svc: Service,
    /** Throws NotJiraError when the URL is not Jira's (see jiraCheck): a 404 then means the URL, not the plan. */
    private readonly checkJira: () => Promise<void>,
    /** A cycle this run creates is advanced (option `attributes`): its runs are made per attribute set. */
    private readonly advanced = false,
    /** List a preloaded cycle's runs at its create; not in CI with a pipeline id, where the bulk reads them anyway. */
    private readonly listAtCreate = true,
    /** One shard of a run: the others report into the cycle it makes too (CycleInfo.shared). */
    private readonly sharded = false,
  ) {}

  /** Results with the same key go to the same cycle. */
  key(t: Target): string {
    return `${t.plan}\u0000${t.cycleName}`;
  }

  /**
   * Finds or creates the cycle, starts a Draft, resumes a completed one. A per-run name is created first (2 round
   * trips, not 3); if another process made it, the create is refused and theirs is taken.
   */
  ensure(t: Target): Promise<CycleInfo> {
    return this.open(this.key(t), () => this.openNow(t));
  }

  /** The runs listed when this process created the cycle, handed once to CycleRuns' first read. */
  takeListed(t: Target): ListedRuns | undefined {
    const k = this.key(t);
    const listed = this.listed.get(k);
    this.listed.delete(k);
    return listed;
  }

  private async openNow(t: Target): Promise<CycleInfo> {
    const spec = {
      plan: t.plan as string,
      name: t.cycleName as string,
      environment: t.environment,
      build: t.build,
      preloadRuns: t.preloadRuns,
      ...(this.advanced ? { advanced: true } : {}),
    };
    let cycle = t.perRunCycle ? await this.createFirst(t, spec) : undefined;
    cycle ??= (await this.find(spec.plan, spec.name)) ?? (await this.create(t, spec));
    if (sharedNow(cycle, this.svc.clock.now(), this.sharded)) cycle.shared = true;
    if (cycle.status === 'Draft') await moveCycle(this.svc, cycle, 'Start');
    else if (cycle.status === 'Completed' || cycle.status === 'Aborted') await resumeCycle(this.svc, cycle);
    this.seen.push(cycle);
    return cycle;
  }

  /** Creates a cycle of a per-run name; undefined on a 404, left to the find that tells a bad plan from a bad URL. */
  private async createFirst(t: Target, spec: CycleSpec): Promise<CycleInfo | undefined> {
    try {
      return await this.create(t, spec);
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  private async create(t: Target, spec: CycleSpec): Promise<CycleInfo> {
    const { listed, ...cycle } = await createCycle(this.svc, spec, { start: true, listRuns: this.listAtCreate });
    if (listed) this.listed.set(this.key(t), listed);
    return cycle;
  }

  private async find(plan: string, name: string): Promise<CycleInfo | undefined> {
    try {
      return await findCycle(this.svc, plan, name);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      // Every path answers 404 when the URL is not Jira's (a wrong context path): say so, not that the plan is missing.
      await this.checkJira();
      throw new PermanentProblem(
        `test plan ${plan} was not found (HTTP 404): check testPlan (CASEBRIDGE_TEST_PLAN); no result of this run can go to a cycle`,
      );
    }
  }

  /** The first cycle this run reported into (the summary names it). */
  first(): CycleInfo | undefined {
    return this.seen[0];
  }

  /** Whether this run reports into a cycle that another process created (a shard that came second). */
  madeElsewhere(): boolean {
    return this.seen.some((c) => !c.created);
  }

  /** Whether this run had to resume a cycle (then it completes it again at the end). */
  resumedAny(): boolean {
    return this.seen.some((c) => c.resumed);
  }

  /** Completes the cycles this run reported into (`all`: option `completeCycle`), or only those it resumed. */
  async complete(all: boolean): Promise<void> {
    for (const c of this.seen) {
      if ((all || c.resumed) && c.status === 'Active') await moveCycle(this.svc, c, 'Complete');
    }
  }
}
