import type { TestManagementClient } from '../../client/tm.js';
import { DUPLICATE_LINE, isDone } from '../jira/duplicate.js';
import { keysetSearch } from '../jira/keyset.js';
import { Batcher, type Gathering } from '../kernel/batcher.js';
import { type Clock, systemClock } from '../kernel/clock.js';
import { marker } from './text.js';

/** A defect of a failure group as the search found it. */
export interface GroupDefect {
  key: string;
  open: boolean;
}

/** A group whose early search was taken: later looks search again. */
const USED = 'used';

/** Groups per search: `summary ~ "cb-<16 hex>"` is about 30 characters, so 50 make a query of about 1.5 KB. */
const GROUPS_PER_SEARCH = 50;

/** An early ask: its answer, and the search it joined. */
interface Early {
  answer: Promise<GroupDefect[]>;
  search: Gathering | undefined;
}

/**
 * The project's defects of failure groups, oldest first; asks close together share one search, no cache. Each hit
 * must hold the exact `[cb-<hash>]`, as `~` is a tokenised search; duplicates are left out so machines agree.
 */
export class GroupSearch {
  private readonly batchers = new Map<string, Batcher<string, GroupDefect[]>>();
  /** Asks started as failures came in (`early`), each taken once by its group's first look (`first`). */
  private readonly started = new Map<string, Early | typeof USED>();
  /** Every result is in (`allIn`): no failure is left to join a search, and nothing needs to wait for one. */
  private done = false;
  /** Reads after creates still waiting for the index to take their create in (`afterIndex`). */
  private napping = 0;

  constructor(
    private readonly tm: TestManagementClient,
    private readonly signal: AbortSignal,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The defects of the group `hash` in `project`, oldest first. */
  of(project: string, hash: string): Promise<GroupDefect[]> {
    return this.load(project, hash, this.clock.timing.gatherMs);
  }

  /**
   * The read after a create, once the index had `ms`. While results come it joins the failures' asks; once all are
   * in, the end's creates read back in one search, no later than the last alone.
   */
  async afterIndex(project: string, hash: string, ms: number): Promise<GroupDefect[]> {
    this.napping += 1;
    let answer: Promise<GroupDefect[]> | undefined;
    try {
      await this.clock.sleep(ms, this.signal);
      this.signal.throwIfAborted();
      const { gatherMs, gatherMaxMs } = this.clock.timing;
      answer = this.load(project, hash, !this.done || this.napping > 1 ? gatherMaxMs : gatherMs);
    } finally {
      this.napping -= 1;
      if (this.napping === 0 && this.done) for (const b of this.batchers.values()) b.flush((search) => search.needed);
    }
    return answer;
  }

  private load(project: string, hash: string, within: number): Promise<GroupDefect[]> {
    const { answer, batch } = this.batcher(project).load(hash, within);
    if (batch) batch.needed = true;
    return answer;
  }

  /** Starts the group's search as its failure comes in, so a file's failures within gatherMaxMs share one search. */
  early(project: string, hash: string): void {
    const k = `${project}:${hash}`;
    if (this.started.has(k)) return;
    const { answer, batch } = this.batcher(project).load(hash, this.clock.timing.gatherMaxMs);
    const asked: Early = { answer, search: batch };
    answer.catch(() => this.started.get(k) === asked && this.started.delete(k));
    this.started.set(k, asked);
  }

  /** The group's first look: the early search (taken once), else a new one, sent in time for `dueAt`'s update. */
  first(project: string, hash: string, dueAt?: number): Promise<GroupDefect[]> {
    const k = `${project}:${hash}`;
    const early = this.started.get(k);
    if (!early || early === USED) return this.of(project, hash);
    this.started.set(k, USED);
    const search = early.search;
    if (search) {
      search.needed = true;
      // Once all are in, none will join it; else it goes statusGraceMs before the status is due (answer, create, update;
      // `by` leaves a search already sent alone).
      if (this.done) search.send();
      else {
        const now = this.clock.now();
        const { gatherMs, statusGraceMs } = this.clock.timing;
        const at = dueAt === undefined ? now + gatherMs : Math.max(now + gatherMs, dueAt - statusGraceMs);
        this.batcher(project).by(search, at);
      }
    }
    return early.answer;
  }

  /** Every result is in: a search a look waits for is sent now (early asks alone may never be needed). */
  allIn(): void {
    this.done = true;
    for (const b of this.batchers.values()) b.flush((search) => search.needed);
  }

  /** The run has ended: a search no look took is never sent (it would go out into the process's next run). */
  close(): void {
    for (const b of this.batchers.values()) b.close();
  }

  /** The project's batcher. Unref'd timers: a search nobody waits for must not keep the runner's process alive. */
  private batcher(project: string): Batcher<string, GroupDefect[]> {
    let b = this.batchers.get(project);
    if (!b) {
      const { clock } = this;
      b = new Batcher({
        clock,
        send: (hashes) => this.search(project, hashes),
        waitMs: clock.timing.gatherMs,
        maxSize: GROUPS_PER_SEARCH,
      });
      this.batchers.set(project, b);
    }
    return b;
  }

  private async search(project: string, hashes: readonly string[]): Promise<GroupDefect[][]> {
    const { issues } = await keysetSearch({
      tm: this.tm,
      jql: `project = "${project}" AND (${hashes.map((h) => `summary ~ "${marker(h)}"`).join(' OR ')})`,
      fields: 'summary,status,resolution,description',
      pageSize: 100,
      signal: this.signal,
      clock: this.clock,
      background: true,
    });
    const kept = issues.filter((i) => !DUPLICATE_LINE.test(String(i.fields.description ?? '')));
    return hashes.map((h) => {
      const exact = `[${marker(h)}]`;
      return kept
        .filter((i) => String(i.fields.summary ?? '').includes(exact))
        .map((i) => ({ key: i.key, open: !isDone(i.fields) }));
    });
  }
}
