import { redact } from '../../client/secrets.js';
import { displayName, lastAttempt, outcomeOf } from '../kernel/model.js';
import { errorLines } from '../kernel/text.js';
import type { Classification, FailureLine } from '../kernel/types.js';
import type { WorkItem } from '../kernel/work.js';

/** Where a person reads results: `/browse/<KEY>`; synapseRT shows cycles and runs on their plan's page. */
export function issueUrl(base: string, key: string): string {
  return `${trimSlash(base)}/browse/${encodeURIComponent(key)}`;
}

export function cycleUrl(base: string, plan: string, cycleId: number): string {
  return `${issueUrl(base, plan)}?cycle=${cycleId}`;
}

export function runUrl(base: string, plan: string | undefined, cycleId: number | undefined, runId: number): string {
  // An ad hoc run has no plan: the case's page lists it in its execution history.
  if (!plan || cycleId === undefined) return '';
  return `${cycleUrl(base, plan, cycleId)}&run=${runId}#run-${runId}`;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** How many failures the summary names; the rest are counted. */
export const MAX_FAILURES = 200;

/** The failed results of a run, in the order they failed, with their case, run and defect links. */
export function failuresOf(
  items: readonly WorkItem[],
  base: string | undefined,
  cycle: { id: number; plan: string; name: string } | undefined,
  classifications: ReadonlyMap<string, Classification> = new Map(),
): { failures: FailureLine[]; omitted: number } {
  const failed = items.filter((i) => outcomeOf(i.test) === 'failed');
  const failures = failed.slice(0, MAX_FAILURES).map((i): FailureLine => {
    const t = i.test;
    const error = lastAttempt(t)?.errors[0];
    const message = error?.message.split('\n').find((l) => l.trim() !== '');
    const location = error?.location && error.location.file === t.file ? error.location : undefined;
    // The test's own error may print a credential the run uses: redacted like every other output.
    const line: FailureLine = { test: redact(displayName(t)), file: t.file, key: i.key };
    const at = location?.line ?? t.line;
    if (at !== undefined) line.line = at;
    if (message) line.message = redact(message.trim()).slice(0, 300);
    const details = error ? errorLines(error.message).slice(1) : [];
    if (details.length) line.details = details.map((l) => redact(l).slice(0, 200));
    if (i.progress.runId !== undefined) line.runId = i.progress.runId;
    const classification = classifications.get(i.id);
    if (classification) line.classification = classification;
    if (i.progress.defect) {
      line.defect = i.progress.defect;
      line.defectCreated = i.progress.defectCreated === true;
    }
    if (base) {
      line.caseUrl = issueUrl(base, i.key);
      // A result of an earlier run (replayed from the journal) may belong to another cycle: no run link then.
      const inCycle =
        i.target.mode === 'cycle' && i.target.plan === cycle?.plan && i.target.cycleName === cycle?.name
          ? cycle
          : undefined;
      if (i.progress.runId !== undefined) {
        const url = runUrl(base, inCycle?.plan, inCycle?.id, i.progress.runId);
        if (url) line.runUrl = url;
      }
      if (line.defect) line.defectUrl = issueUrl(base, line.defect);
    }
    return line;
  });
  return { failures, omitted: failed.length - failures.length };
}
