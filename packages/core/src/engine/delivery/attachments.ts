import { realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, extname, sep } from 'node:path';
import { AbortedError, AmbiguousError, CasebridgeError, ValidationError } from '../../client/errors.js';
import type { FileInput } from '../../client/multipart.js';
import type { ContentRepositoryClient } from '../../client/repo.js';
import { redact } from '../../client/secrets.js';
import type { CasebridgeConfig } from '../config/schema.js';
import { lastAttempt, outcomeOf, type ResultAttachment, type TestResult } from '../kernel/model.js';
import type { CycleInfo } from '../kernel/types.js';
import { type AttachmentChoice, selectedAttachments, type WorkItem } from '../kernel/work.js';
import { CONTEXT_LINE } from './comment.js';
import type { DeliveryService } from './compose.js';

/** Where a result's files go, and what of them reached it already (kept in the item's progress). */
interface Destination {
  cycle: CycleInfo | undefined;
  runId: number;
  /** File names uploaded to the run (the item's `progress.uploaded`). */
  uploaded: string[];
  /** Links of files stored in the content repository, by file name (the item's `progress.stored`). */
  stored: Record<string, string>;
  /** The files the run holds already (read in a replay). */
  existing?: Set<string>;
}

/** Playwright's failure context (error, source, ARIA snapshot): a few kB of Markdown that people triage from. */
export const ERROR_CONTEXT = 'error-context';

/** A file to send: where it belongs, and whether it is the failure context (the comment names it). */
export interface ChosenFile {
  attachment: ResultAttachment;
  /** The run step (1-based) it belongs to; absent: the run. */
  step?: number;
  errorContext?: true;
}

/** The files the config asks for, plus a failed result's failure context (a few kB) unless it asks for none. */
export function filesToSend(t: TestResult, c: AttachmentChoice): ChosenFile[] {
  const out: ChosenFile[] = selectedAttachments(t, c).map((f) =>
    f.attachment.name === ERROR_CONTEXT ? { ...f, errorContext: true } : f,
  );
  const outcome = outcomeOf(t);
  const noFiles = c.screenshots === 'off' && !c.traces && !c.videos && !c.others;
  if ((outcome !== 'failed' && outcome !== 'interrupted') || noFiles) return out;
  const taken = new Set(out.map((f) => f.attachment));
  for (const a of lastAttempt(t)?.attachments ?? []) {
    if (a.name === ERROR_CONTEXT && (a.path || a.body) && !taken.has(a))
      out.push({ attachment: a, errorContext: true });
  }
  return out;
}

/** A file that passed the checks, to upload under its name. */
interface Upload {
  file: FileInput;
  fileName: string;
}

/** What became of the files of a run: for the summary. */
export interface AttachmentStats {
  uploaded: number;
  skipped: string[];
  stored: string[];
}

/** A result's files: uploaded to its run or step, stored in the content repository when large, or named as unsent. */
export class Attachments {
  /** Why the content repository is not used any more in this run (it refused a file). */
  private repoUnavailable?: string;
  /** Problems with the content repository, for the summary (it is optional: results still arrive). */
  private readonly repoProblems = new Set<string>();
  private readonly counts: AttachmentStats = { uploaded: 0, skipped: [], stored: [] };

  constructor(
    private readonly config: CasebridgeConfig['attachments'],
    private readonly svc: DeliveryService,
    private readonly repo: ContentRepositoryClient | undefined,
    /** Folders files may be uploaded from (real paths); empty: any. */
    private readonly roots: readonly string[],
  ) {}

  stats(): AttachmentStats {
    return { uploaded: this.counts.uploaded, skipped: [...this.counts.skipped], stored: [...this.counts.stored] };
  }

  problems(): string[] {
    return [...this.repoProblems];
  }

  /** Sends the result's files from `item.progress`, one request per run or step; returns the comment's lines. */
  async send(cycle: CycleInfo | undefined, item: WorkItem, runId: number, replaying: boolean): Promise<string[]> {
    const p = item.progress;
    const to: Destination = { cycle, runId, uploaded: (p.uploaded ??= []), stored: (p.stored ??= {}) };
    const chosen = filesToSend(item.test, this.config);
    if (chosen.length === 0) return [];
    if (replaying) to.existing = await this.existingNames(runId);
    const names = new Set<string>();
    const notes = new Map<string, string | undefined>();
    const uploads = new Map<number | undefined, Upload[]>();
    const named = chosen.map((c) => ({ ...c, fileName: uniqueName(fileNameOf(c.attachment), names) }));
    for (const { attachment, step, fileName } of named) {
      const checked = await this.check(to, attachment, fileName);
      if ('note' in checked) notes.set(fileName, checked.note);
      else {
        const files = uploads.get(step) ?? [];
        files.push({ file: checked.file, fileName });
        uploads.set(step, files);
      }
    }
    for (const [step, files] of uploads) {
      if (!this.svc.lacks('attachments')) await this.uploadOnce(to, files, step);
      // The older service variant has no upload (not found even to the run): the comment names the files instead.
      if (this.svc.lacks('attachments')) {
        for (const f of files)
          notes.set(f.fileName, `${f.fileName} not uploaded: the service has no attachment upload`);
        continue;
      }
      for (const f of files) to.uploaded.push(f.fileName);
      this.counts.uploaded += files.length;
    }
    const out: string[] = [];
    for (const { errorContext, fileName } of named) {
      const note = notes.get(fileName);
      if (errorContext) out.push(contextNote(to, fileName, note));
      else if (note) out.push(note);
    }
    return out;
  }

  /** One file through the checks that need no upload: its comment line when it is not to be uploaded, else the file. */
  private async check(
    to: Destination,
    attachment: ResultAttachment,
    fileName: string,
  ): Promise<{ note: string | undefined } | { file: FileInput }> {
    const size = attachment.body ? attachment.body.byteLength : await sizeOf(attachment.path);
    if (size === undefined) return { note: `${fileName}: file not found (${attachment.path})` };
    if (attachment.path && !within(this.roots, attachment.path)) {
      return {
        note: this.skip(
          fileName,
          `${fileName} not uploaded: ${attachment.path} is outside the project folder (allow its folder with attachments.roots)`,
        ),
      };
    }
    if (to.stored[fileName]) return { note: `${fileName}: ${to.stored[fileName]}` };
    if (to.uploaded.includes(fileName) || to.existing?.has(fileName)) return { note: undefined };
    const file: FileInput = attachment.body
      ? { data: Buffer.from(attachment.body), fileName, contentType: attachment.contentType }
      : { path: attachment.path as string, fileName, contentType: attachment.contentType };
    // Large files go to the content repository when one is configured, from disk or from memory alike.
    if (this.repo && !this.repoUnavailable && size >= this.config.repositoryMinBytes) {
      const link = await this.store(this.repo, file, fileName);
      if (link !== undefined) {
        to.stored[fileName] = link;
        this.counts.stored.push(fileName);
        return { note: `${fileName}: ${link}` };
      }
    }
    if (size > this.config.maxBytes) {
      return {
        note: this.skip(
          fileName,
          `${fileName} not uploaded: ${mb(size)} is over attachments.maxBytes (${mb(this.config.maxBytes)})`,
        ),
      };
    }
    return { file };
  }

  private skip(fileName: string, note: string): string {
    this.counts.skipped.push(fileName);
    return note;
  }

  /** The names of the files the run holds (a replay may have uploaded some before it stopped); one request. */
  private async existingNames(runId: number): Promise<Set<string> | undefined> {
    if (this.svc.lacks('attachments')) return undefined;
    // Undefined when the service has no attachment operations (see DeliveryService.lacks).
    const list = await this.svc.tm.attachments.getAttachmentDetails({ runId }, this.svc.o);
    return this.svc.lacks('attachments') ? undefined : new Set(list.map((f) => f.fileName));
  }

  /** A large file stored in the repository: its link, or undefined when refused (then not asked again this run). */
  private async store(repo: ContentRepositoryClient, file: FileInput, fileName: string): Promise<string | undefined> {
    try {
      const node = await repo.storeFile(file, { name: fileName });
      return String((node as { downloadUrl?: string }).downloadUrl ?? '');
    } catch (err) {
      if (err instanceof AbortedError) throw err;
      this.repoUnavailable = redact(err instanceof Error ? err.message : String(err));
      this.repoProblems.add(`the content repository refused files (${this.repoUnavailable}): they went to the runs`);
      return undefined;
    }
  }

  /** One upload to the run or a step; after a lost answer only the files not there yet are sent again. */
  private async uploadOnce(to: Destination, files: Upload[], step: number | undefined): Promise<void> {
    const { runId } = to;
    try {
      await this.sendTo(to.cycle, runId, files, step);
    } catch (err) {
      // A lost answer, or a 500 after which the client did not send it again: the files may be there already.
      const mayBeThere = err instanceof AmbiguousError || (err instanceof ValidationError && err.mayHaveApplied);
      let left = files;
      if (mayBeThere) {
        const list = await this.svc.tm.attachments.getAttachmentDetails({ runId }, this.svc.o);
        if (this.svc.lacks('attachments')) return;
        left = files.filter((f) => !list.some((there) => there.fileName === f.fileName));
        if (left.length === 0) return;
      }
      if (step !== undefined && err instanceof CasebridgeError && (err.status === 404 || err.status === 500)) {
        await this.sendTo(to.cycle, runId, left, undefined);
      } else if (mayBeThere) await this.sendTo(to.cycle, runId, left, step);
      else throw err;
    }
  }

  /** To the run (an optional route, see DeliveryService.lacks), or to one of its steps. */
  private sendTo(
    cycle: CycleInfo | undefined,
    runId: number,
    files: Upload[],
    step: number | undefined,
  ): Promise<unknown> {
    const tm = this.svc.inCycle(cycle);
    const file = files.map((f) => f.file);
    return step === undefined
      ? tm.attachments.addToRun({ runId, file }, this.svc.o)
      : tm.attachments.addToRunStep({ runId, stepno: step, file }, this.svc.o);
  }
}

/** The comment's line for the failure context: where a person (or `list_failures`) finds it, or why it is not there. */
function contextNote(to: Destination, fileName: string, note: string | undefined): string {
  const head = CONTEXT_LINE;
  if (to.stored[fileName]) return `${head} ${fileName} (${to.stored[fileName]})`;
  if (to.uploaded.includes(fileName) || to.existing?.has(fileName)) return `${head} ${fileName} (attached)`;
  return `${head} ${note ?? `${fileName} not uploaded`}`;
}

/** Whether a file lies in one of the allowed folders, symlinks resolved. */
function within(roots: readonly string[], path: string): boolean {
  if (roots.length === 0) return true;
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return true; // missing: reported as "file not found" by the caller
  }
  return roots.some((root) => real === root || real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`));
}

const EXT: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'video/webm': '.webm',
  'application/zip': '.zip',
  'text/plain': '.txt',
  'text/markdown': '.md',
  'application/json': '.json',
};

function fileNameOf(a: ResultAttachment): string {
  const fromPath = a.path ? basename(a.path) : '';
  const ext = extname(fromPath) || EXT[a.contentType] || '';
  const base = a.name.replace(/[\\/:*?"<>|\s]+/g, '-').slice(0, 100) || 'attachment';
  return base.endsWith(ext) ? base : `${base}${ext}`;
}

function uniqueName(name: string, taken: Set<string>): string {
  let out = name;
  const ext = extname(name);
  for (let i = 2; taken.has(out); i++) out = `${name.slice(0, name.length - ext.length)}-${i}${ext}`;
  taken.add(out);
  return out;
}

async function sizeOf(path: string | undefined): Promise<number | undefined> {
  if (!path) return undefined;
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

function mb(n: number): string {
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
