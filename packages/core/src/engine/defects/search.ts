import DataLoader from 'dataloader';
import type { TestManagementClient } from '../../client/tm.js';
import { DUPLICATE_LINE, isDone } from '../jira/duplicate.js';
import { keysetSearch } from '../jira/keyset.js';
import { TIMING } from '../kernel/timing.js';
import { marker } from './text.js';

/** A defect of a failure group as the search found it. */
export interface GroupDefect {
  key: string;
  open: boolean;
}

/** A group whose early search was taken: later looks search again. */
const USED: Promise<GroupDefect[]> = Promise.resolve([]);

/** Groups per search: `summary ~ "cb-<16 hex>"` is about 30 characters, so 50 make a query of about 1.5 KB. */
const GROUPS_PER_SEARCH = 50;

/**
 * The project's defects of failure groups, oldest (lowest id) first: the groups asked for within TIMING.gatherMs of
 * each other share one JQL search, `project = "P" AND (summary ~ "cb-…" OR summary ~ "cb-…" …)`, keyset paged. A run
 * whose 100 failures each fail their own way searches a few times, not 100 (dataloader's batch, without its cache:
 * every ask is answered by a search sent after it, so a defect filed a moment ago is looked for again, not
 * remembered missing).
 *
 * Jira's `~` is a tokenised, stemmed word search (`cb-1a2b` finds any summary with the words `cb` and `1a2b`, in any
 * order), so each hit is checked on the client: its summary must hold the exact marker `[cb-<hash>]`, and a defect
 * casebridge labelled as a duplicate (it could not close it: duplicate.ts) is left out, so every machine and every
 * later run picks the same survivor. Open is not resolved and not in a status of the done category (a workflow's
 * Done may set no resolution).
 */
export class GroupSearch {
  private readonly byProject = new Map<string, DataLoader<string, GroupDefect[]>>();
  /** The first looks, started as failures come in: gathered longer (TIMING.gatherMaxMs), see `early`. */
  private readonly earlyByProject = new Map<string, DataLoader<string, GroupDefect[]>>();
  /** Searches started as failures came in (`early`), each taken once by its group's first look (`first`). */
  private readonly started = new Map<string, Promise<GroupDefect[]>>();
  /** The gathered searches not sent yet (each with its timer), each sending itself at the end of its wait or when asked. */
  private readonly waiting = new Map<() => void, ReturnType<typeof setTimeout>>();
  /** Every result is in (`allIn`): no failure is left to join a gathered search. */
  private done = false;
  /** Early searches a first look took and waits for. */
  private taken = 0;

  constructor(
    private readonly tm: TestManagementClient,
    private readonly signal: AbortSignal,
  ) {}

  /** The defects of the group `hash` in `project`, oldest first. */
  of(project: string, hash: string): Promise<GroupDefect[]> {
    return this.loader(this.byProject, project, TIMING.gatherMs).load(hash);
  }

  private loader(
    by: Map<string, DataLoader<string, GroupDefect[]>>,
    project: string,
    gatherMs: number,
  ): DataLoader<string, GroupDefect[]> {
    let loader = by.get(project);
    if (!loader) {
      loader = new DataLoader((hashes) => this.search(project, hashes), {
        cache: false,
        maxBatchSize: GROUPS_PER_SEARCH,
        batchScheduleFn: (go) => {
          const send = () => {
            clearTimeout(this.waiting.get(send));
            this.waiting.delete(send);
            go();
          };
          // Unref'd: a first look nobody waits for must not keep the runner's process alive once the run has ended.
          this.waiting.set(send, setTimeout(send, gatherMs).unref());
        },
      });
      by.set(project, loader);
    }
    return loader;
  }

  /**
   * Starts the group's search as its failure comes in, before its delivery: the failures that come within
   * TIMING.gatherMaxMs of the first (a Jest file at once; Playwright's, whose worker restarts after each failure,
   * about one every half second) share one search, which a delivery at a time could not. Once per group. The
   * failure's run is written once the search answered: at most that long later, while the test run goes on.
   */
  early(project: string, hash: string): void {
    const k = `${project}:${hash}`;
    if (this.started.has(k)) return;
    const p = this.loader(this.earlyByProject, project, TIMING.gatherMaxMs).load(hash);
    p.catch(() => this.started.delete(k));
    this.started.set(k, p);
  }

  /**
   * Every result is in: no other failure will join a gathered search, so one a first look waits for is sent now (one
   * nobody asked for yet waits on: a failure known from its history may never need it).
   */
  allIn(): void {
    this.done = true;
    if (this.taken > 0) this.send();
  }

  private send(): void {
    for (const send of [...this.waiting.keys()]) send();
  }

  /**
   * The run has ended: a gathered search no look took is never sent (it went out after the end, into whatever the
   * process did next: the next run of a long-lived process, a test's next case).
   */
  close(): void {
    for (const timer of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
  }

  /** The group's first look: the search started early, if any (taken once), else a new one. */
  first(project: string, hash: string): Promise<GroupDefect[]> {
    const k = `${project}:${hash}`;
    const p = this.started.get(k);
    if (!p || p === USED) return this.of(project, hash);
    this.started.set(k, USED);
    this.taken++;
    if (this.done) this.send();
    return p;
  }

  private async search(project: string, hashes: readonly string[]): Promise<GroupDefect[][]> {
    const { issues } = await keysetSearch({
      tm: this.tm,
      jql: `project = "${project}" AND (${hashes.map((h) => `summary ~ "${marker(h)}"`).join(' OR ')})`,
      fields: 'summary,status,resolution,description',
      pageSize: 100,
      signal: this.signal,
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
