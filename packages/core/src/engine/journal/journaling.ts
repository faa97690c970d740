import { redact } from '../../client/secrets.js';
import type { ResultAttachment, ResultStep, TestResult } from '../kernel/model.js';
import type { Problems } from '../kernel/problems.js';
import type { EngineContext } from '../kernel/types.js';
import type { RefusalMark, WorkItem } from '../kernel/work.js';
import type { Journal, WriteAheadLog } from './store.js';

/** The journal's result entries, as listed before a replay claims them. */
export interface Listed {
  entries: Array<{ id: string; kind: string; payload: WorkItem; refused?: RefusalMark }>;
  total: number;
}

/**
 * A run's disk: each result to the write-ahead log, the undelivered rest to the journal at the end, earlier runs'
 * journal replayed first. A dry run touches no disk.
 */
export class Journaling {
  /** Items replayed from the journal, with their entry ids (removed when delivered). */
  private readonly ids = new Map<WorkItem, string>();
  private tick?: (key: string, ok: boolean) => void;
  /** Results of earlier runs taken from the journal. */
  replayed = 0;
  /** Of those, entries marked refused by an earlier run (tried again). */
  replayedRefused = 0;

  constructor(
    readonly journal: Journal,
    private readonly wal: WriteAheadLog | undefined,
    private readonly problems: Problems,
    private readonly out: (text: string) => void,
    private readonly onReplay?: EngineContext['onReplay'],
  ) {}

  /** Whether the item came from the journal (a replay: its run may exist already). */
  has(item: WorkItem): boolean {
    return this.ids.has(item);
  }

  /** A result was taken in: it goes to the write-ahead log at once. */
  taken(item: WorkItem): void {
    this.wal?.taken(item);
  }

  /**
   * The journal's waiting results, after journaling the logs of killed runs; undefined (and a problem) if unreadable.
   */
  async list(): Promise<Listed | undefined> {
    const journal = this.journal;
    let listed: { entries: Listed['entries']; corrupt: string[] };
    try {
      const recovered = await journal.recoverWals();
      if (recovered > 0) this.out(`casebridge: ${recovered} result(s) of a run that was killed were recovered`);
      listed = await journal.list<WorkItem>();
    } catch (err) {
      this.problems.add('run', `journal ${journal.dir}: ${redact(String(err))}`);
      return undefined;
    }
    for (const path of listed.corrupt) this.problems.add('run', `journal entry ${path} is unreadable: moved aside`);
    return { entries: listed.entries, total: listed.entries.filter((e) => e.kind === 'result').length };
  }

  /** Claims each result entry for `take` (a concurrent replay gets the others) until the service stopped. */
  async claim(listed: Listed, take: (item: WorkItem) => void, stopped: () => boolean): Promise<void> {
    let settled = 0;
    this.tick = (key: string, ok: boolean) => {
      settled += 1;
      try {
        this.onReplay?.({ done: settled, total: listed.total, key, ok });
      } catch {
        // A progress display must not stop the replay.
      }
    };
    for (const entry of listed.entries) {
      if (entry.kind !== 'result' || stopped()) continue;
      if (!(await this.journal.claim(entry.id))) continue;
      const item = entry.payload;
      // A marked entry is tried again (once per run): refused again, it goes back to the journal marked.
      if (entry.refused) {
        item.refused = entry.refused;
        this.replayedRefused += 1;
      }
      this.ids.set(item, entry.id);
      this.replayed += 1;
      take(item);
    }
  }

  /** Marks a settled item in the write-ahead log (synchronously: a bulk settles thousands) or drops its entry. */
  settled(item: WorkItem): Promise<void> | undefined {
    const journalId = this.ids.get(item);
    if (journalId === undefined) {
      this.wal?.delivered(item.id);
      return undefined;
    }
    return this.journal.remove(journalId).then(() => this.tick?.(item.key, !item.progress.dropped));
  }

  /** Journals the undelivered items with the run's options (for `replay`); returns how many were written. */
  async write(items: WorkItem[], inline: Record<string, unknown>, runner: string): Promise<number> {
    if (items.length === 0) return 0;
    const journal = this.journal;
    let n = 0;
    for (const item of items) {
      try {
        const old = this.ids.get(item);
        const { refused, ...rest } = item;
        await journal.add('result', { ...rest, test: await this.withBlobs(item.test) }, refused);
        if (old) {
          await journal.remove(old);
          // A replayed entry going back (refused again, or the service failed): the progress counts it, not delivered.
          this.tick?.(item.key, false);
        }
        n += 1;
      } catch (err) {
        this.problems.add('run', `could not write ${item.key} to the journal: ${redact(String(err))}`);
      }
    }
    if (n > 0) {
      await journal.saveRunOptions(inline, runner).catch((err: unknown) => {
        this.problems.add('run', `could not record the run's options in ${journal.dir}: ${redact(String(err))}`);
      });
    }
    return n;
  }

  /** Everything left is in the journal now: the write-ahead log (kept for a run that dies) is not needed. */
  async discardWal(): Promise<void> {
    await this.wal?.discard().catch(() => undefined);
  }

  /** In-memory files (of the attempts and of their steps) become blobs beside the entries: JSON has no bytes. */
  private async withBlobs(t: TestResult): Promise<TestResult> {
    const toBlob = async (f: ResultAttachment): Promise<ResultAttachment> =>
      f.body ? { name: f.name, contentType: f.contentType, path: await this.journal.putBlob(f.body) } : f;
    const steps = (list: ResultStep[]): Promise<ResultStep[]> =>
      Promise.all(
        list.map(async (st) => ({
          ...st,
          attachments: await Promise.all(st.attachments.map(toBlob)),
          steps: await steps(st.steps),
        })),
      );
    return {
      ...t,
      attempts: await Promise.all(
        t.attempts.map(async (a) => ({
          ...a,
          attachments: await Promise.all(a.attachments.map(toBlob)),
          steps: await steps(a.steps),
        })),
      ),
    };
  }
}
