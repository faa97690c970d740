import type { CasebridgeConfig, TestManagementClient } from '@casebridge/core';
import type { Check } from './check.js';

const ADVICE =
  "The service cannot list its statuses, and a name nobody has used yet looks the same: check the spelling against the instance's run statuses (synapseRT administration, Test Run Status); a name the service does not have is refused when results are written";

/** The plan's newest cycles whose runs are read for the statuses in use (one request each). */
const CYCLES_READ = 3;

/**
 * `statusMap` against the statuses the instance shows. Run statuses are per instance (renamed, disabled, custom) and
 * the service has no call that lists them, so the map is checked against the statuses the plan's newest cycles'
 * runs show: a mapped name none of them shows is named as a hint (it may simply be unused so far, or misspelt, or
 * renamed by an administrator; a name the service does not have is refused when results are written). Never fails
 * the doctor. `Not Tested` is not checked: every instance has it, under that name. Costs up to three requests.
 */
export async function statusMapCheck(
  tm: TestManagementClient,
  c: CasebridgeConfig,
  cycles: ReadonlyArray<{ id: number; name: string }>,
): Promise<Check> {
  const name = 'run statuses';
  const mapped = new Map<string, string[]>();
  for (const [outcome, status] of Object.entries(c.statusMap)) {
    if (!status || status.toLowerCase() === 'not tested') continue;
    mapped.set(status, [...(mapped.get(status) ?? []), outcome]);
  }
  if (mapped.size === 0)
    return { name, ok: true, detail: 'statusMap writes only Not Tested or leaves runs as they are' };
  const newest = [...cycles].sort((a, b) => b.id - a.id).slice(0, CYCLES_READ);
  const seen = new Map<string, string>();
  let runs = 0;
  try {
    for (const cycle of newest) {
      const list = await tm.cycles.testRunsByCycleId({
        testPlanIssueKey: c.testPlan as string,
        cycleId: String(cycle.id),
      });
      runs += list.length;
      for (const r of list) if (r.status) seen.set(r.status.toLowerCase(), r.status);
    }
  } catch (err) {
    return {
      name,
      ok: true,
      warning: true,
      detail: `not checked: the runs could not be read (${(err as Error).message})`,
    };
  }
  const where = `${runs} run(s) of the ${newest.length} newest cycle(s) of ${c.testPlan}`;
  const unseen = [...mapped].filter(([status]) => !seen.has(status.toLowerCase()));
  const shown = [...seen.values()].join(', ') || 'none';
  if (unseen.length === 0) {
    return { name, ok: true, detail: `every status statusMap writes is in use on ${where}` };
  }
  return {
    name,
    ok: true,
    warning: true,
    // A warning prints no fix line: the advice is in the detail.
    detail: `a hint, not an error: ${unseen
      .map(([status, outcomes]) => `"${status}" (statusMap.${outcomes.join(', statusMap.')})`)
      .join(', ')} not seen on ${where} (they show ${shown}). ${ADVICE}`,
  };
}
