import {
  AmbiguousError,
  type CasebridgeConfig,
  clientsFor,
  cycleNameFor,
  loadConfig,
  type TestManagementClient,
  ValidationError,
} from '@casebridge/core';

/**
 * `casebridge cycle create|start|complete|abort|resume`: cycle control for pipelines that fan out into shards. Each
 * action is idempotent and safe from several jobs at once: it reads the cycle, acts only when the cycle is not yet
 * where the action leads, and when a concurrent job won the race (the service refuses the create or the move),
 * reads again and accepts the outcome it wanted.
 */

export const CYCLE_ACTIONS = ['create', 'start', 'complete', 'abort', 'resume'] as const;
export type CycleAction = (typeof CYCLE_ACTIONS)[number];

export interface CycleInfo {
  id: number;
  name: string;
  plan: string;
  status: string;
  /** This call created the cycle. */
  created: boolean;
}

/** A problem the user can fix: printed as is, exit code 1 (2 for usage). */
export class CycleError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

const WORKFLOW: Record<Exclude<CycleAction, 'create'>, { wf: string; from: string[]; to: string }> = {
  start: { wf: 'Start', from: ['Draft'], to: 'Active' },
  complete: { wf: 'Complete', from: ['Active'], to: 'Completed' },
  abort: { wf: 'Abort', from: ['Active'], to: 'Aborted' },
  resume: { wf: 'Resume', from: ['Completed', 'Aborted'], to: 'Active' },
};

async function find(tm: TestManagementClient, plan: string, name: string) {
  const all = await tm.plans.cycles({ testPlanIssueKey: plan });
  const c = all.find((x) => x.name === name);
  return c ? { id: c.id, name: c.name, plan, status: c.status ?? 'Draft' } : undefined;
}

async function findOrCreate(tm: TestManagementClient, c: CasebridgeConfig, plan: string, name: string) {
  const found = await find(tm, plan, name);
  if (found) return { ...found, created: false };
  const input = {
    testPlanIssueKey: plan,
    name,
    ...(c.environment ? { environment: c.environment } : {}),
    ...(c.build ? { build: c.build } : {}),
  };
  let created = true;
  try {
    await tm.plans.addCycle(input);
  } catch (err) {
    // Another job created it first (the service refuses a second cycle of the name), or the answer was lost.
    if (!(err instanceof ValidationError || err instanceof AmbiguousError)) throw err;
    created = false;
  }
  const now = await find(tm, plan, name);
  if (!now) throw new CycleError(`cycle "${name}" could not be created in test plan ${plan}`);
  return { ...now, created };
}

export async function cycleCommand(
  action: CycleAction,
  opts: { name?: string; plan?: string },
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<CycleInfo> {
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
  try {
    if (action === 'create') return await findOrCreate(tm, c, plan, name);
    const rule = WORKFLOW[action];
    // start creates the cycle when needed: the first step of a sharded pipeline is usually `cycle start`.
    const cycle = action === 'start' ? await findOrCreate(tm, c, plan, name) : await find(tm, plan, name);
    if (!cycle) throw new CycleError(`test plan ${plan} has no cycle "${name}": create or start it first`);
    const created = 'created' in cycle && cycle.created === true;
    if (cycle.status === rule.to) return { ...cycle, created };
    if (!rule.from.includes(cycle.status)) {
      throw new CycleError(
        `cycle "${name}" is ${cycle.status}: ${action} applies only to ${rule.from.join(' or ')} cycles${
          cycle.status === 'Draft' ? ' (start it first)' : ''
        }`,
      );
    }
    try {
      await tm.cycles.workflow({ testPlanIssueKey: plan, cycleName: name, action: rule.wf as 'Start' });
    } catch (err) {
      if (!(err instanceof ValidationError || err instanceof AmbiguousError)) throw err;
      // A concurrent job moved it: fine when it is where we wanted it.
      const now = await find(tm, plan, name);
      if (now?.status !== rule.to) throw err;
    }
    return { ...cycle, status: rule.to, created };
  } finally {
    await tm.close();
    await repo?.close();
  }
}
