import { CasebridgeError, type CycleInfo, loadConfig } from '@casebridge/core';
import {
  CYCLE_STATUS_AFTER,
  type CycleWorkflow,
  clientsFor,
  createCycle,
  cycleNameFor,
  findCycle,
  moveCycle,
  type Service,
  systemClock,
} from '@casebridge/core/internal';

/**
 * `casebridge cycle create|start|complete|abort|resume`: cycle control for pipelines that fan out into shards. Each
 * action is idempotent and safe from several jobs at once: it reads the cycle, acts only when the cycle is not yet
 * where the action leads, and when a concurrent job won the race (the service refuses the create or the move),
 * reads again and accepts the outcome it wanted (the core's cycle lifecycle, which a reporting run uses too).
 */

export const CYCLE_ACTIONS = ['create', 'start', 'complete', 'abort', 'resume'] as const;
export type CycleAction = (typeof CYCLE_ACTIONS)[number];

/** A problem the user can fix: printed as is, exit code 1 (2 for usage). */
export class CycleError extends CasebridgeError {
  declare readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super('cycle', message, {}, false, { exitCode });
  }
}

/** Each move, and the statuses it applies to (it leads to CYCLE_STATUS_AFTER[wf]). */
const WORKFLOW: Record<Exclude<CycleAction, 'create'>, { wf: CycleWorkflow; from: string[] }> = {
  start: { wf: 'Start', from: ['Draft'] },
  complete: { wf: 'Complete', from: ['Active'] },
  abort: { wf: 'Abort', from: ['Active'] },
  resume: { wf: 'Resume', from: ['Completed', 'Aborted'] },
};

export async function cycleCommand(
  action: CycleAction,
  opts: { name?: string; plan?: string },
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<CycleInfo & { created: boolean }> {
  const inline: Record<string, unknown> = { mode: 'cycle' };
  if (opts.plan) inline.testPlan = opts.plan;
  if (opts.name) inline.cycle = opts.name;
  const loaded = loadConfig(inline, { env, cwd });
  if (!loaded.ok)
    throw new CycleError(`the configuration has problems:\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}`, 2);
  const c = loaded.config;
  const plan = c.testPlan as string;
  const name = cycleNameFor(c, env);
  const { tm, repo } = clientsFor(c);
  // Every call is sent: the CLI has no dry run.
  const svc: Service = { tm, dryRun: false, o: {}, clock: systemClock };
  const findOrCreate = async () => {
    const found = await findCycle(svc, plan, name);
    return found
      ? { ...found, created: false }
      : createCycle(svc, { plan, name, environment: c.environment, build: c.build, preloadRuns: c.preloadRuns });
  };
  try {
    if (action === 'create') return await findOrCreate();
    const rule = WORKFLOW[action];
    // start creates the cycle when needed: the first step of a sharded pipeline is usually `cycle start`.
    const cycle = action === 'start' ? await findOrCreate() : await findCycle(svc, plan, name);
    if (!cycle) throw new CycleError(`test plan ${plan} has no cycle "${name}": create or start it first`);
    const created = cycle.created === true;
    if (cycle.status === CYCLE_STATUS_AFTER[rule.wf]) return { ...cycle, created };
    if (!rule.from.includes(cycle.status)) {
      throw new CycleError(
        `cycle "${name}" is ${cycle.status}: ${action} applies only to ${rule.from.join(' or ')} cycles${
          cycle.status === 'Draft' ? ' (start it first)' : ''
        }`,
      );
    }
    await moveCycle(svc, cycle, rule.wf);
    return { ...cycle, created };
  } finally {
    await tm.close();
    await repo?.close();
  }
}
