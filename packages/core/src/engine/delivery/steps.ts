import { memoByKey } from '../kernel/keyed.js';
import type { ResultStep } from '../kernel/model.js';
import { truncate } from '../kernel/text.js';
import type { CycleInfo } from '../kernel/types.js';
import type { DeliveryService } from './compose.js';

interface RunStepInfo {
  id: number;
  step: string;
}

/** Pairs test steps with run steps: by text when one matches, otherwise by position among the rest. */
export function matchSteps<S extends { title: string }, R extends { step: string }>(
  steps: readonly S[],
  runSteps: readonly R[],
): Array<[S, R]> {
  const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();
  const used = new Set<number>();
  const pairs: Array<[S, R | undefined]> = steps.map((s) => {
    const i = runSteps.findIndex((r, j) => !used.has(j) && norm(r.step) === norm(s.title));
    if (i >= 0) used.add(i);
    return [s, i >= 0 ? runSteps[i] : undefined];
  });
  return pairs
    .map(([s, r], index): [S, R | undefined] => {
      if (r) return [s, r];
      const j = index < runSteps.length && !used.has(index) ? index : -1;
      if (j >= 0) used.add(j);
      return [s, j >= 0 ? runSteps[j] : undefined];
    })
    .filter((pair): pair is [S, R] => pair[1] !== undefined);
}

/** Step results written onto the steps of runs; each run's steps are read once. */
export class RunSteps {
  private readonly ofRun = memoByKey<number, RunStepInfo[]>();

  constructor(private readonly svc: DeliveryService) {}

  /** Writes step results onto the run's steps (one request per step); returns the run step id of the first failed. */
  async write(cycle: CycleInfo | undefined, runId: number, steps: ResultStep[]): Promise<number | undefined> {
    if (steps.length === 0) return undefined;
    const pairs = matchSteps(steps, await this.stepsOf(runId));
    let failed: number | undefined;
    for (const [step, runStep] of pairs) {
      const result = step.status === 'passed' ? 'Passed' : step.status === 'failed' ? 'Failed' : 'Not Tested';
      const input = {
        runStepId: runStep.id,
        result,
        ...(step.error ? { actualResult: truncate(step.error.message, 2000) } : {}),
      };
      await this.svc.inCycle(cycle).runs.updateStep(input, this.svc.o);
      if (result === 'Failed' && failed === undefined) failed = runStep.id;
    }
    return failed;
  }

  private stepsOf(runId: number): Promise<RunStepInfo[]> {
    return this.ofRun(runId, async () => {
      const run = await this.svc.tm.runs.get({ runID: runId }, this.svc.o);
      const steps = (run.testRunDetails?.testRunSteps ?? []) as Array<Record<string, unknown>>;
      return steps.map((r) => ({ id: Number(r.id), step: String(r.step ?? '') }));
    });
  }
}
