import { ANSI } from '../../adapter/text.js';
import { AT, readComment, WRITTEN_AFTER } from '../delivery/comment.js';
import { describeSet } from '../kernel/attributes.js';
import { issueUrl, runUrl } from '../report/links.js';
import {
  type CaseHistory,
  type CycleDigest,
  caseHistory,
  cycleRead,
  type FailureClass,
  QueryError,
  type Reader,
} from './results.js';

/**
 * One failure's whole story (`casebridge failure KEY`, MCP `failure_detail`): run and comment, the error as written,
 * steps and files, its defects as Jira has them now, the case's last results.
 */

export interface DetailStep {
  /** 1-based, as the service numbers a run's steps. */
  step: number;
  text: string;
  expected: string;
  /** As the service names it (`Passed`, `Failed`, `Not Tested`, ...). */
  status: string;
  actual?: string;
  defects: string[];
}

/** What a file is, for a reader: Playwright's error-context.md, a screenshot, a trace, a video, anything else. */
export type AttachmentKind = 'screenshot' | 'error-context' | 'trace' | 'video' | 'other';

export interface DetailAttachment {
  name: string;
  kind: AttachmentKind;
  mimeType?: string;
  /** The download link the service hands out (authenticated like its API), or the content repository's link. */
  url?: string;
  /** The run step (1-based) it is attached to; absent: the run. */
  step?: number;
  /** Stored in the content repository (too large for the run); the run comment names the link. */
  stored?: true;
}

export interface DetailDefect {
  key: string;
  summary?: string;
  /** The issue's status as Jira names it now, and whether that status is in the done category. */
  status?: string;
  done?: boolean;
  /** Display name; null when unassigned. Absent with status when the issue could not be found. */
  assignee?: string | null;
  /** The issue is linked to the run but Jira does not know it any more (deleted, or not visible to these credentials). */
  missing?: true;
  url: string;
}

export interface FailureDetail {
  plan: string;
  cycle: CycleDigest;
  key: string;
  title: string;
  /** The case's page. */
  url: string;
  run: {
    id: number;
    status: string;
    result?: 'passed' | 'failed';
    /** The run's attribute set, in an advanced cycle. */
    set?: string;
    url: string;
    /** The run comment, as written (the reporter's lines and any a person added). */
    comment?: string;
  };
  /** The reporter's classification of a failed run (`unclassified` when it wrote none); absent for other runs. */
  classification?: FailureClass;
  reason?: string;
  /** The failure group's marker (`cb-<16 hex>`): two failures with one signature failed the same way. */
  signature?: string;
  file?: string;
  line?: number;
  /** The error, every line as the comment has it (colours removed), its stack frames apart. */
  error?: string[];
  /** Its meaningful lines, as `failures` gives them: a matcher's Expected and Received. */
  errorLines?: string[];
  /** The stack's frames in the project (the test's own), paths from the repository's root where they can be made so. Absent: the comment carries the message only. */
  stack?: string[];
  steps: DetailStep[];
  attachments: DetailAttachment[];
  defects: DetailDefect[];
  /** The case's last 10 results across cycles and ad hoc, newest first, and its flips (caseHistory). */
  history: Pick<CaseHistory, 'runs' | 'flips' | 'flaky'>;
}

/** The defects read one by one (a request each); more are listed by key only. */
export const MAX_DEFECT_READS = 10;
/** How many of the case's results the story shows. */
export const HISTORY_RESULTS = 10;

type Run = Awaited<ReturnType<typeof cycleRead>>['runs'][number];

/**
 * `key`'s run in the cycle (a failed one first), told whole: 4 requests plus one per defect (at most
 * MAX_DEFECT_READS), whatever the cycle's size. An unknown case, or one with no run there, is a QueryError.
 */
export async function failureDetail(r: Reader, plan: string, ref: string, key: string): Promise<FailureDetail> {
  const o = r.signal ? { signal: r.signal } : undefined;
  const [read, history] = await Promise.allSettled([
    cycleRead(r, plan, ref),
    caseHistory(r, key, { limit: HISTORY_RESULTS }),
  ]);
  if (read.status === 'rejected') throw read.reason;
  const { cycle, runs, resultOf } = read.value;
  const wanted = key.trim().toUpperCase();
  const mine = runs.filter((x) => x.testCaseKey.toUpperCase() === wanted);
  const run = mine.find((x) => resultOf(x.status) === 'failed') ?? mine[0];
  if (!run) {
    // An unknown key says so in the history's own words (`test case X is not there`).
    if (history.status === 'rejected') throw history.reason;
    throw new QueryError(
      `test case ${key} has no run in cycle "${cycle.name}" of ${plan} (casebridge failures --cycle "${cycle.name}" lists the failed ones)`,
    );
  }
  if (history.status === 'rejected') throw history.reason;

  const details = await r.tm.runs.get({ runID: run.id }, o);
  const runSteps = details.testRunDetails?.testRunSteps ?? [];
  const steps = runSteps.map(
    (s, i): DetailStep => ({
      step: i + 1,
      text: s.step,
      expected: s.expectedResult,
      status: s.status,
      ...(s.actualResult ? { actual: s.actualResult } : {}),
      defects: (s.testRunStepBugsWrapper ?? []).map((b) => b.key),
    }),
  );
  const said = readComment(run.comment);
  const result = resultOf(run.status);
  const bugs = new Map<string, string | undefined>();
  for (const b of [...(run.bugs ?? []), ...(details.bugs ?? [])]) bugs.set(b.key, b.summary);
  for (const s of runSteps) for (const b of s.testRunStepBugsWrapper ?? []) bugs.set(b.key, b.summary);
  const [attachments, defects] = await Promise.all([
    attachmentsOf(r, run.id, details, run.comment),
    defectsOf(r, bugs),
  ]);
  const error = errorOfComment(run.comment, said.file);
  const set = setOf(run);
  return {
    plan,
    cycle,
    key: run.testCaseKey,
    title: run.summary,
    url: issueUrl(r.baseUrl, run.testCaseKey),
    run: {
      id: run.id,
      status: run.status,
      ...(result ? { result } : {}),
      ...(set ? { set } : {}),
      url: runUrl(r.baseUrl, plan, cycle.id, run.id),
      ...(run.comment ? { comment: run.comment } : {}),
    },
    ...(result === 'failed' ? { classification: said.classification ?? 'unclassified' } : {}),
    ...(said.reason ? { reason: said.reason } : {}),
    ...(said.signature ? { signature: said.signature } : {}),
    ...(said.file ? { file: said.file } : {}),
    ...(said.line !== undefined ? { line: said.line } : {}),
    ...(error ? { error: error.message } : {}),
    ...(said.errorLines ? { errorLines: said.errorLines } : {}),
    ...(error?.stack ? { stack: error.stack } : {}),
    steps,
    attachments,
    defects,
    history: { runs: history.value.runs, flips: history.value.flips, flaky: history.value.flaky },
  };
}

const setOf = (run: Run) =>
  run.attributeValues && Object.keys(run.attributeValues).length > 0 ? describeSet(run.attributeValues) : undefined;

type RunDetails = Awaited<ReturnType<Reader['tm']['runs']['get']>>;

/**
 * The run's and its steps' files with their links, then those the comment links to; without links in the run
 * details (the `ID` variant) one read of the attachment details gives them.
 */
async function attachmentsOf(
  r: Reader,
  runId: number,
  details: RunDetails,
  comment: string | null | undefined,
): Promise<DetailAttachment[]> {
  const d = details.testRunDetails;
  const listed = [
    ...(d?.testRunAttachments ?? []).map((a) => ({ a, step: undefined as number | undefined })),
    ...(d?.testRunSteps ?? []).flatMap((s, i) => s.testRunStepAttachments.map((a) => ({ a, step: i + 1 }))),
  ];
  let links = new Map<number, string>();
  if (listed.some(({ a }) => !a.filePath)) {
    const all = await r.tm.attachments.getAttachmentDetails({ runId }, r.signal ? { signal: r.signal } : undefined);
    links = new Map((all ?? []).map((a) => [a.id, a.filePath]));
  }
  const out = listed.map(({ a, step }): DetailAttachment => {
    const url = a.filePath ?? links.get(a.id);
    return {
      name: a.fileName,
      kind: attachmentKind(a.fileName, a.mimeType),
      mimeType: a.mimeType,
      ...(url ? { url } : {}),
      ...(step !== undefined ? { step } : {}),
    };
  });
  return [...out, ...storedFiles(comment)];
}

/** What kind of file a run's attachment is, by its name and type. */
export function attachmentKind(name: string, mimeType = ''): AttachmentKind {
  const base = name.toLowerCase();
  if (base.startsWith('error-context')) return 'error-context';
  if (base.includes('trace') && (base.endsWith('.zip') || mimeType.includes('zip'))) return 'trace';
  if (mimeType.startsWith('image/') || /\.(png|jpe?g|webp|gif)$/.test(base)) return 'screenshot';
  if (mimeType.startsWith('video/') || /\.(webm|mp4)$/.test(base)) return 'video';
  return 'other';
}

/** Files the reporter stored in the content repository, by the lines it wrote for them in the run comment. */
export function storedFiles(comment: string | null | undefined): DetailAttachment[] {
  const out: DetailAttachment[] = [];
  for (const line of (comment ?? '').split('\n')) {
    const m =
      /^Page state at the failure: (\S+) \((https?:\/\/\S+)\)$/.exec(line) ??
      /^([^\s:]+\.\w+): (https?:\/\/\S+)$/.exec(line);
    if (m) out.push({ name: m[1] as string, kind: attachmentKind(m[1] as string), url: m[2] as string, stored: true });
  }
  return out;
}

/** Each defect as Jira has it now: one issue read each (fields status, assignee, summary), at once. */
async function defectsOf(r: Reader, bugs: ReadonlyMap<string, string | undefined>): Promise<DetailDefect[]> {
  const o = r.signal ? { signal: r.signal } : undefined;
  return Promise.all(
    [...bugs].map(async ([key, summary], i): Promise<DetailDefect> => {
      const url = issueUrl(r.baseUrl, key);
      const known = { key, ...(summary ? { summary } : {}), url };
      if (i >= MAX_DEFECT_READS) return known;
      try {
        const issue = await r.tm.jira.issue({ issueIdOrKey: key, fields: 'summary,status,assignee' }, o);
        const f = issue.fields;
        return {
          key,
          ...((f.summary ?? summary) ? { summary: f.summary ?? summary } : {}),
          ...(f.status ? { status: f.status.name, done: f.status.statusCategory.key === 'done' } : {}),
          assignee: f.assignee ? f.assignee.displayName || f.assignee.name : null,
          url,
        };
      } catch (err) {
        if ((err as { status?: number }).status === 404) return { ...known, missing: true };
        throw err;
      }
    }),
  );
}

/** A V8 stack frame line (`    at fn (file:line:col)`). */
const FRAME = /^\s+at \S/;

/**
 * The error of a comment `commentFor` wrote: its message as written, uncoloured, with the project's frames when it
 * holds a stack; undefined when it names no failure.
 */
export function errorOfComment(
  comment: string | null | undefined,
  file?: string,
): { message: string[]; stack?: string[] } | undefined {
  const lines = (comment ?? '').replace(ANSI, '').split('\n');
  if (!/^(Failed|Interrupted): /.test(lines[0] ?? '')) return undefined;
  const start = lines[1]?.startsWith(AT) ? 2 : 1;
  const end = lines.findIndex((l, n) => n >= start && WRITTEN_AFTER.test(l));
  const block = lines.slice(start, end === -1 ? undefined : end).map((l) => l.trimEnd());
  const first = block.findIndex((l) => FRAME.test(l));
  const message = trimBlank(first === -1 ? block : block.slice(0, first));
  if (message.length === 0) return undefined;
  if (first === -1) return { message };
  const stack = ownFrames(
    block.slice(first).filter((l) => FRAME.test(l)),
    file,
  );
  return stack.length ? { message, stack } : { message };
}

function trimBlank(lines: string[]): string[] {
  let from = 0;
  let to = lines.length;
  while (from < to && !lines[from]?.trim()) from++;
  while (to > from && !lines[to - 1]?.trim()) to--;
  return lines.slice(from, to);
}

/** A frame's place in the runtime or a dependency, not the project (as defects/groups.ts judges a frame). */
const FOREIGN = /node_modules|^node:|\binternal\/|^native$|\/jest-circus\/|\/@vitest\//;
const FRAME_PATH = /^\s*at (?:.*?\()?((?:[A-Za-z]:)?[^\s()]+?):(\d+)(?::\d+)?\)?\s*$/;

/**
 * The project's frames of a stack, trimmed, the absolute root cut off for the test's `file`; with none of the
 * project's, the first 3 as they are, where it threw.
 */
export function ownFrames(frames: readonly string[], file?: string): string[] {
  const parsed = frames.map((raw) => {
    const line = raw.trim();
    const path = FRAME_PATH.exec(raw.replace(/\\/g, '/'))?.[1]?.replace(/^file:\/\//, '');
    return { line, path };
  });
  const test = file?.replace(/\\/g, '/');
  const root = test ? parsed.find((f) => f.path?.endsWith(`/${test}`))?.path?.slice(0, -test.length) : undefined;
  const own = parsed.filter((f) => f.path !== undefined && !FOREIGN.test(f.path));
  if (own.length === 0) return parsed.slice(0, 3).map((f) => f.line);
  return own.map((f) => (root && f.path?.startsWith(root) ? f.line.replace(root, '') : f.line));
}
