import { marker } from '../defects/text.js';
import { displayName, lastAttempt, outcomeOf } from '../kernel/model.js';
import { ciBuildUrl, errorLines, pipelineMarker, truncate } from '../kernel/text.js';
import type { Classification } from '../kernel/types.js';
import type { WorkItem } from '../kernel/work.js';

/** What the run comment says of a failure besides the result: its classification and its signature. */
export interface FailureNote {
  /** `Classification: known (failed the same way in run 12)` (defects/classify.ts); absent: not classified. */
  classification?: { classification: Classification; reason: string } | undefined;
  /** The failure group's hash (defects/groups.ts): written as `casebridge signature: cb-<16 hex>`. */
  signature?: string | undefined;
  /** Where it failed, `path:line` from the repository's root (kernel/text.ts failureAt): the reads and PRs show it. */
  at?: string | undefined;
}

/** The line that carries a failure's signature in a run comment; later runs of the case find it there. */
export const signatureLine = (hash: string) => `casebridge signature: ${marker(hash)}`;

/**
 * The run comment: what failed and where, flaky attempts, classification, notes, CI build, the signature later runs
 * match the failure by, and the pipeline marker. Empty when there is nothing to say.
 */
export function commentFor(item: WorkItem, notes: string[], pipeline?: string, failure: FailureNote = {}): string {
  const t = item.test;
  const outcome = outcomeOf(t);
  const lines: string[] = [];
  const where = [t.project ? `[${t.project}]` : '', displayName(t)].filter(Boolean).join(' ');
  if (outcome === 'failed' || outcome === 'interrupted') {
    const err = lastAttempt(t)?.errors[0];
    lines.push(`${outcome === 'failed' ? 'Failed' : 'Interrupted'}: ${where}`);
    if (failure.at) lines.push(`${AT}${failure.at}`);
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

/** What a run comment written by `commentFor` says, read back (the CLI's queries and the MCP server read runs so). */
export interface CommentRead {
  /** The first line of the failure's error (`Failed:` or `Interrupted:` comments). */
  error?: string;
  /** Its meaningful lines (kernel/text.ts errorLines): the matcher's Expected and Received. */
  errorLines?: string[];
  /** Where it failed, from the repository's root. */
  file?: string;
  line?: number;
  classification?: Classification;
  /** Why, as `commentFor` wrote it after the classification. */
  reason?: string;
  /** The failure group's marker, `cb-<16 hex>`. */
  signature?: string;
  /** Where Playwright's page state at the failure is (`error-context.md (attached)`, a link), from attachments.ts. */
  context?: string;
}

/** The line that says where a failure is. */
export const AT = 'At: ';
/** Lines commentFor and the notes write after a failure's error. */
export const WRITTEN_AFTER =
  /^(Attempts|Classification|Classification and defect|casebridge signature|casebridge-pipeline|CI|Defect|Defect not filed|Page state at the failure): |^\S+ not uploaded: /;

/** The line attachments.ts writes for the failure context (Playwright's error-context.md). */
export const CONTEXT_LINE = 'Page state at the failure:';

const CLASSIFICATIONS: readonly Classification[] = ['new', 'known', 'flaky', 'regression', 'quarantined'];

/** Reads back a comment `commentFor` wrote; a comment a person wrote gives what it happens to share, often nothing. */
export function readComment(text: string | null | undefined): CommentRead {
  const lines = (text ?? '').split('\n');
  const out: CommentRead = {};
  if (/^(Failed|Interrupted): /.test(lines[0] ?? '')) {
    let i = 1;
    const at = lines[1]?.startsWith(AT) ? /^(.+?)(?::(\d+))?$/.exec(lines[1].slice(AT.length).trim()) : null;
    if (at?.[1]) {
      out.file = at[1];
      if (at[2]) out.line = Number(at[2]);
      i = 2;
    }
    // The error runs to the first line commentFor (or a note) writes after it.
    const end = lines.findIndex((l, n) => n >= i && WRITTEN_AFTER.test(l));
    const block = lines.slice(i, end === -1 ? undefined : end).join('\n');
    const error = block.split('\n')[0]?.trim();
    if (error) {
      out.error = error;
      out.errorLines = errorLines(block);
    }
  }
  for (const line of lines) {
    const c = /^Classification: (\w+) \((.*)\)$/.exec(line);
    if (c && CLASSIFICATIONS.includes(c[1] as Classification)) {
      out.classification = c[1] as Classification;
      out.reason = c[2] as string;
    }
    const s = /^casebridge signature: (cb-[0-9a-f]{16})$/.exec(line);
    if (s) out.signature = s[1] as string;
    if (line.startsWith(CONTEXT_LINE)) out.context = line.slice(CONTEXT_LINE.length).trim();
  }
  return out;
}
