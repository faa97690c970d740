import type { CasebridgeConfig } from '../config/schema.js';
import { type GateRules, type GateVerdict, gateCycle, rulesOf, type Tally } from '../query/gate.js';
import type { CycleDigest, Failure, FailureClass, Reader } from '../query/results.js';
import { issueUrl } from '../report/links.js';

/**
 * A cycle's report for the pull request, by the gate's own read-and-judge: the same verdict as `casebridge gate`, over
 * every shard's results so far (the last shard posts the whole).
 */
export interface CycleReport {
  plan: string;
  cycle: CycleDigest;
  verdict: GateVerdict;
  tally: Tally;
  /** Failures by classification. */
  classes: Record<FailureClass, number>;
  /** Worst first (regression, new, unclassified, flaky, known, quarantined), then by key. */
  failures: ReportFailure[];
  /** The run's wall time, when a reporter publishes at its end. */
  durationMs?: number;
}

export interface ReportFailure extends Failure {
  /** The defect's link, when the failure has one (else the run's). */
  link: string;
}

const WORST: readonly FailureClass[] = ['regression', 'new', 'unclassified', 'flaky', 'known', 'quarantined'];

/** Worst first, the order every rendering keeps when it must leave some out. */
export function worstFirst<T extends Pick<Failure, 'classification' | 'key'>>(fs: readonly T[]): T[] {
  return [...fs].sort(
    (a, b) =>
      WORST.indexOf(a.classification) - WORST.indexOf(b.classification) ||
      a.key.localeCompare(b.key, 'en', { numeric: true }),
  );
}

/** The report of a cycle: 2 requests (3 with `requireAllPlanned`), as the gate reads it. */
export async function cycleReport(
  r: Reader,
  config: Pick<CasebridgeConfig, 'gate'>,
  plan: string,
  cycle: string,
  o: { rules?: Partial<GateRules>; durationMs?: number } = {},
): Promise<CycleReport> {
  const read = await gateCycle(r, plan, cycle, rulesOf(config.gate, o.rules));
  const classes = Object.fromEntries(WORST.map((c) => [c, 0])) as Record<FailureClass, number>;
  for (const f of read.failures) classes[f.classification] += 1;
  const failures = worstFirst(read.failures).map((f) => {
    const defect = f.defects[0];
    return { ...f, link: defect ? issueUrl(r.baseUrl, defect) : f.url };
  });
  return {
    plan,
    cycle: read.cycle,
    verdict: read.verdict,
    tally: read.tally,
    classes,
    failures,
    ...(o.durationMs !== undefined ? { durationMs: o.durationMs } : {}),
  };
}

/** `3 failed (2 new, 1 known) of 40 runs, 5 not run` */
export function countsLine(rep: CycleReport): string {
  const { tally, classes } = rep;
  const parts = WORST.filter((c) => classes[c] > 0).map((c) => `${classes[c]} ${c}`);
  const failed = `${tally.failed} failed${parts.length ? ` (${parts.join(', ')})` : ''}`;
  return `${tally.passed} passed, ${failed} of ${tally.total} runs${tally.notRun ? `, ${tally.notRun} not run` : ''}`;
}
