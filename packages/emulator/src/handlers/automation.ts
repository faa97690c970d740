import { ISSUE_TYPES, requireCycleByName, requireIssue } from '../rules/domain.js';
import type { Ctx, Handler } from '../service/context.js';
import { notFound, ServiceError } from '../service/context.js';
import type { Cycle } from '../store/store.js';

/**
 * The automation jobs of a test cycle. One job per cycle: adding another replaces it and keeps its
 * automationBuildId. Triggering records the moment in the job (the emulator has no build server to call); it
 * changes nothing else.
 */

/**
 * The params string of an automation job as the service hands it out: whitespace stripped, then
 * `;SRTCYCLE=<cycleId>` appended to name=value pairs, or `SRTCYCLE=<cycleId>` alone when the params are blank or
 * hold no `=`. An SRTCYCLE pair already present (a job re-added from a retrieval) and empty pairs are dropped, so
 * the pair appears once.
 */
export function automationParams(stored: string, cycleId: number): string {
  const own = `SRTCYCLE=${cycleId}`;
  const s = stored.replace(/\s+/g, '');
  if (!s.includes('=')) return own;
  const pairs = s.split(';').filter((p) => p !== '' && !p.startsWith('SRTCYCLE='));
  return [...pairs, own].join(';');
}

/** The plan and cycle an automation-job call names in its body (404 when either is not found). */
function jobCycle(ctx: Ctx, planKey: string, cycleName: string): Cycle {
  const tp = requireIssue(ctx.store, planKey.trim(), ISSUE_TYPES.testPlan);
  return requireCycleByName(ctx.store, tp, cycleName);
}

export const automationHandlers: Record<string, Handler> = {
  'automation.addJobToTestCycle': (ctx) => {
    const { store } = ctx;
    const b = ctx.body as Record<string, string | undefined>;
    // The real service answers this call's validation failures with 404, unlike the usual 500 (README, "Behaviour
    // the spec leaves open", automation jobs).
    for (const field of ['testPlanKey', 'testCycleName', 'appName', 'jobKey', 'testType']) {
      const value = b[field];
      if (value === undefined || value.trim() === '') {
        throw new ServiceError(404, `${field} is mandatory: got ${value === undefined ? 'none' : 'a blank value'}`, {
          field,
        });
      }
    }
    const cycle = jobCycle(ctx, b.testPlanKey as string, b.testCycleName as string);
    const fields = {
      appName: (b.appName as string).trim(),
      jobKey: (b.jobKey as string).trim(),
      testType: (b.testType as string).trim(),
      params: (b.params ?? '').replace(/\s+/g, ''),
    };
    const job = store.automationJobs.find((j) => j.cycleId === cycle.id);
    if (job) store.automationJobs.update(Object.assign(job, fields));
    else store.automationJobs.insert({ cycleId: cycle.id, ...fields, triggers: [] });
  },

  'automation.jobs': (ctx) => {
    const cycle = jobCycle(ctx, ctx.body.testPlanKey, ctx.body.testCycleName);
    const job = ctx.store.automationJobs.find((j) => j.cycleId === cycle.id);
    if (!job) throw notFound(`Test cycle "${cycle.name}" has no automation job`);
    return {
      automationBuildId: job.id,
      appName: job.appName,
      jobKey: job.jobKey,
      testType: job.testType,
      params: automationParams(job.params, cycle.id),
    };
  },

  'automation.triggerJob': (ctx) => {
    const cycle = jobCycle(ctx, ctx.body.testPlanKey, ctx.body.testCycleName);
    const id = Number(ctx.body.automationBuildId);
    const job = ctx.store.automationJobs.get(id);
    if (!job || job.cycleId !== cycle.id) {
      throw notFound(`Automation job ${id} not found in test cycle "${cycle.name}"`);
    }
    job.triggers.push(ctx.now());
    ctx.store.automationJobs.update(job);
  },
};
