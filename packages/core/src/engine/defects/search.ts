import DataLoader from 'dataloader';
import type { TestManagementClient } from '../../client/tm.js';
import { DUPLICATE_LINE, isDone } from '../jira/duplicate.js';
import { keysetSearch } from '../jira/keyset.js';
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

/** A search not sent yet: it goes at `due`, sooner when an ask that may wait less joins it. */
interface Gathering {
  due: number;
  /** Its timer's cancel. */
  timer?: () => void;
  send: () => void;
  /** A look waits for its answer (not only failures' early asks, which a look may never take). */
  needed: boolean;
}

/** An early ask: its answer, and the search it joined. */
interface Early {
  answer: Promise<GroupDefect[]>;
  search: Gathering | undefined;
}

/**
 * The project's defects of failure groups, oldest first: groups asked for close together share one search, sent when
 * its most impatient ask is due (100 distinct failures: a few searches, not 100). No cache: a defect filed a moment
 * ago is looked for again. Jira's `~` is a tokenised word search, so each hit must hold the exact `[cb-<hash>]`;
 * defects labelled as duplicates are left out, so every machine picks the same survivor.
 */
export class GroupSearch {
  private readonly loaders = new Map<string, DataLoader<string, GroupDefect[]>>();
  /** Per project, the search that asks join now (a full or sent one is replaced by the next). */
  private readonly gathering = new Map<string, Gathering>();
  /** Every search not sent yet. */
  private readonly waiting = new Set<Gathering>();
  /** Asks started as failures came in (`early`), each taken once by its group's first look (`first`). */
  private readonly started = new Map<string, Early | typeof USED>();
  /** Every result is in (`allIn`): no failure is left to join a search, and nothing needs to wait for one. */
  private done = false;
  /** How long the ask being made may wait: read by the loader when the ask starts a new search. */
  private patience = 0;

  constructor(
    private readonly tm: TestManagementClient,
    private readonly signal: AbortSignal,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * The defects of the group `hash` in `project`, oldest first. `patient`: nothing waits on the answer while the run
   * goes on (the read after a create), so it may join the failures' early asks.
   */
  of(project: string, hash: string, patient = false): Promise<GroupDefect[]> {
    const { gatherMs, gatherMaxMs } = this.clock.timing;
    const wait = patient && !this.done ? gatherMaxMs : gatherMs;
    const { answer, search } = this.ask(project, hash, wait);
    if (search) search.needed = true;
    return answer;
  }

  /**
   * Starts the group's search as its failure comes in, once per group: failures within gatherMaxMs of the first (a
   * Jest file at once; Playwright about one every half second) share one search, which deliveries one by one could not.
   */
  early(project: string, hash: string): void {
    const k = `${project}:${hash}`;
    if (this.started.has(k)) return;
    const asked = this.ask(project, hash, this.clock.timing.gatherMaxMs);
    asked.answer.catch(() => this.started.get(k) === asked && this.started.delete(k));
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
      // Once all are in, none will join it; else it goes statusGraceMs before the status is due (answer, create, update).
      if (this.done) search.send();
      else if (this.waiting.has(search)) {
        const now = this.clock.now();
        const { gatherMs, statusGraceMs } = this.clock.timing;
        const by = dueAt === undefined ? now + gatherMs : Math.max(now + gatherMs, dueAt - statusGraceMs);
        if (by < search.due) this.arm(search, by - now);
      }
    }
    return early.answer;
  }

  /** Every result is in: a search a look waits for is sent now (early asks alone may never be needed). */
  allIn(): void {
    this.done = true;
    for (const search of [...this.waiting]) if (search.needed) search.send();
  }

  /** The run has ended: a search no look took is never sent (it would go out into the process's next run). */
  close(): void {
    for (const search of this.waiting) search.timer?.();
    this.waiting.clear();
    this.gathering.clear();
  }

  /** Asks for the group in the project's gathering search (a new one when there is none), due within `wait`. */
  private ask(project: string, hash: string, wait: number): Early {
    const before = this.gathering.get(project);
    this.patience = wait;
    const answer = this.loader(project).load(hash);
    const search = this.gathering.get(project);
    // Joined a search already gathering: it goes no later than this ask may wait.
    if (search && search === before && this.clock.now() + wait < search.due) this.arm(search, wait);
    return { answer, search };
  }

  /** Sends the search `wait` from now. Unref'd: a search nobody waits for must not keep the runner's process alive. */
  private arm(search: Gathering, wait: number): void {
    search.timer?.();
    search.due = this.clock.now() + wait;
    search.timer = this.clock.after(wait, search.send);
  }

  private loader(project: string): DataLoader<string, GroupDefect[]> {
    let loader = this.loaders.get(project);
    if (!loader) {
      loader = new DataLoader((hashes) => this.search(project, hashes), {
        cache: false,
        maxBatchSize: GROUPS_PER_SEARCH,
        batchScheduleFn: (go) => {
          const search: Gathering = {
            due: 0,
            needed: false,
            send: () => {
              search.timer?.();
              if (!this.waiting.delete(search)) return;
              if (this.gathering.get(project) === search) this.gathering.delete(project);
              go();
            },
          };
          this.arm(search, this.patience);
          this.waiting.add(search);
          this.gathering.set(project, search);
        },
      });
      this.loaders.set(project, loader);
    }
    return loader;
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
