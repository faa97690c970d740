import { displayName, lastAttempt, outcomeOf } from '../kernel/model.js';
import { ciBuildUrl, pipelineMarker, truncate } from '../kernel/text.js';
import type { WorkItem } from '../kernel/work.js';

/**
 * The run comment: what failed and where, flaky attempts, `notes` (files that were not uploaded or were stored
 * elsewhere), the CI build, and the pipeline marker (see heldByPipeline in delivery.ts). Empty when there is nothing
 * to say.
 */
export function commentFor(item: WorkItem, notes: string[], pipeline?: string): string {
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
  lines.push(...notes);
  const ci = ciBuildUrl(process.env);
  if (lines.length > 0 && ci) lines.push(`CI: ${ci}`);
  if (lines.length > 0 && pipeline) lines.push(pipelineMarker(pipeline));
  return lines.join('\n');
}
