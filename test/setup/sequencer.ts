import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Vitest's order (the longest files first, by the timings of the last run), with the fault campaign's files ahead.
 * They are small (the campaign lives in campaign.ts) but take about two minutes each: on a clean clone, which has no
 * timings, Vitest orders by size and would start them last, to run on alone after every other file. The files that
 * measure latency (a failed run's status within 2 s) go last: by then the unit project, run beside this one, is done
 * and the machine is less crowded (in the middle of `npm test` a 2-core machine runs six test processes).
 */
export class CampaignFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const campaign = (f: TestSpecification) => f.moduleId.includes('/test/chaos/');
    const timed = (f: TestSpecification) => f.moduleId.endsWith('/test/live-results.e2e.test.ts');
    return [...sorted.filter(campaign), ...sorted.filter((f) => !campaign(f) && !timed(f)), ...sorted.filter(timed)];
  }
}
