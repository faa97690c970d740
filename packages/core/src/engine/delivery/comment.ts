import { marker } from '../defects/text.js';
import { displayName, lastAttempt, outcomeOf } from '../kernel/model.js';
import { ciBuildUrl, pipelineMarker, truncate } from '../kernel/text.js';
import type { Classification } from '../kernel/types.js';
import type { WorkItem } from '../kernel/work.js';

/** What the run comment says of a failure besides the result: its classification and its signature. */
export interface FailureNote {
  /** `Classification: known (failed the same way in run 12)` (defects/classify.ts); absent: not classified. */
  classification?: { classification: Classification; reason: string } | undefined;
  /** The failure group's hash (defects/groups.ts): written as `casebridge signature: cb-<16 hex>`. */
  signature?: string | undefined;
}

/** The line that carries a failure's signature in a run comment; later runs of the case find it there. */
export const signatureLine = (hash: string) => `casebridge signature: ${marker(hash)}`;

/**
 * The run comment: what failed and where, flaky attempts, the failure's classification, `notes` (files that were not
 * uploaded or were stored elsewhere), the CI build, the failure's signature (a failed or flaky result: a later run
 * of the case matches its failure by it, defects/classify.ts) and the pipeline marker (see heldByPipeline in
 * delivery.ts). Empty when there is nothing to say.
 */
export function commentFor(item: WorkItem, notes: string[], pipeline?: string, failure: FailureNote = {}): string {
  const t = item.test;
  const outcome = outcomeOf(t);
  const lines: string[] = [];
  const where = [t.project ? `[${t.project}]` : '', displayName(t)].filter(Boolean).join(' ');
  if (outcome === 'failed' || outcome === 'interrupted') {
    const err = lastAttempt(t)?.errors[0];
    lines.push(`${outcome === 'failed' ? 'Failed' : 'Interrupted'}: ${where}`);
    if (err) lines.push(truncate(err.message, 4000));
    if (t.attempts.length > 1) lines.push(`Attempts: ${t.attempts.length} (all failed)`);
  } else if (outcome === 'flaky') {
    const failedTries = t.attempts.filter((a) => a.status === 'failed' || a.status === 'timedOut');
    const first = failedTries[0]?.errors[0];
    lines.push(
      `Flaky: passed on attempt ${t.attempts.length} after ${failedTries.length} failed attempt(s) (retry ${failedTries
        .map((a) => a.retry)
        .join(', ')}): ${where}`,
    );
    if (first) lines.push(`First failure: ${truncate(first.message, 2000)}`);
  }
  const c = failure.classification;
  if (c) lines.push(`Classification: ${c.classification} (${c.reason})`);
  lines.push(...notes);
  const ci = ciBuildUrl(process.env);
  if (lines.length > 0 && ci) lines.push(`CI: ${ci}`);
  if (failure.signature && (outcome === 'failed' || outcome === 'flaky')) lines.push(signatureLine(failure.signature));
  if (lines.length > 0 && pipeline) lines.push(pipelineMarker(pipeline));
  return lines.join('\n');
}
