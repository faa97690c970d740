import { AmbiguousError, NotFoundError, ValidationError } from '../../client/errors.js';
import { PermanentProblem } from '../kernel/errors.js';
import { memoByKey } from '../kernel/keyed.js';
import type { Service } from '../kernel/service.js';
import type { CycleInfo } from '../kernel/types.js';
import type { Target } from '../kernel/work.js';

/**
 * The cycle lifecycle: find, create, start, resume, complete. The functions are each safe from several processes at
 * once (shards, CI jobs): when the service refuses a create or a move because another process won the race, they
 * read the cycle again and accept the outcome they wanted. `casebridge cycle` uses them as they are; a reporting
 * run goes through `Cycles`, which does each once per cycle and remembers what it must complete at the end.
 */

/** Which cycle: its test plan and name, and what a new one is created with. */
export interface CycleSpec {
  plan: string;
  name: string;
  environment?: string;
  build?: string;
  /**
   * Whether the new cycle gets a run for every case of the plan (`preloadRuns: yes`, runs Not Tested), or starts
   * empty. Always sent: the service's default when it is left out is not documented.
   */
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

/**
 * A cycle's runs as listed by name (cycles.testRuns) right after this process created it preloaded, and when the
 * answer came: the list the run would read next anyway (see CycleRuns), read while the cycle's id is still unknown.
 */
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
  return c ? { id: c.id, name: c.name, plan, status: c.status ?? 'Draft' } : undefined;
}

/**
 * Creates the cycle and reads it back; when another process created it first (or the answer was lost), takes
 * theirs (`created: false`). Throws PermanentProblem when it is still not there.
 *
 * `start`: a cycle this process created is started at the same time as it is read back (the create answers no id:
 * the read is needed anyway, and the start goes by name), one round trip instead of two. A cycle another process
 * made is left as it was read: the caller decides.
 *
 * `listRuns`: a cycle this process created preloaded has its runs listed by name in that same round trip
 * (`listed`); when the list fails (a 404, a name the server's path rules refuse), `listed` is left out and the
 * caller lists by id once it knows the id: the list is an early read, never a result's only way through.
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
  // A dry run's read would find no cycle (and show one more call): the cycle it would have made, id 0. Its list
  // answers no runs: the cases it reports are added to the cycle, as they are to one created empty.
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
    // A 500 or a lost answer, and no cycle: maybe a fault, not a refusal. Thrown as it is, the results are tried
    // again (or journaled); a PermanentProblem would drop every result of the run.
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

/**
 * The cycle's runs by name (one request; the client encodes the name as one path segment, `/` included); undefined
 * when the list fails for any reason: the runs are then read by id (cycles.testRunsByCycleId), whose errors go up.
 */
async function listByName(svc: Service, plan: string, name: string): Promise<ListedRuns | undefined> {
  try {
    const runs = await svc.tm.cycles.testRuns({ testPlanIssueKey: plan, cycleName: name }, svc.o);
    return { runs, at: svc.clock.now() };
  } catch {
    return undefined;
  }
}

/**
 * Moves the cycle through its workflow and sets its status. When the service refuses because another process
 * moved it first, reads it again: fine when it is where this move leads, otherwise the refusal is thrown.
 */
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
    /**
     * A preloaded cycle this run creates has its runs listed by name as it is created. Not in CI with a pipeline id:
     * the bulk reads the list again right before it goes (another job of the pipeline may have failed some runs,
     * delivery.ts), so a list read at the start would be read twice (a steady run 6 requests instead of 5).
     */
    private readonly listAtCreate = true,
  ) {}

  /** Results with the same key go to the same cycle. */
  key(t: Target): string {
    return `${t.plan}\u0000${t.cycleName}`;
  }

  /**
   * Finds the cycle by name or creates it; starts it when it is a Draft; resumes it when someone completed it. A
   * per-run name (Target.perRunCycle) is created first: find, create, {start, read back} is 4 requests in 3 round
   * trips; create, {start, read back} is 3 in 2. When another process made it (shards of one pipeline run, a re-run),
   * the create is refused and createCycle finds theirs, as after a lost race.
   */
  ensure(t: Target): Promise<CycleInfo> {
    return this.open(this.key(t), () => this.openNow(t));
  }

  /**
   * The runs listed by name when this process created the cycle preloaded (undefined: not listed, or taken): handed
   * over once, to the first read of the cycle's runs (CycleRuns), which would send that same list otherwise.
   */
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
    if (cycle.status === 'Draft') await moveCycle(this.svc, cycle, 'Start');
    else if (cycle.status === 'Completed' || cycle.status === 'Aborted') await resumeCycle(this.svc, cycle);
    this.seen.push(cycle);
    return cycle;
  }

  /**
   * Creates a cycle of a per-run name. A 404 (no such plan, or a URL that is not Jira's) is left to the find that
   * follows, which tells the two apart: undefined then.
   */
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
      // Every path answers 404 when the URL is not Jira's (a wrong context path such as /jira): say so, and keep
      // the results for when the URL is right, instead of calling the plan missing.
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
