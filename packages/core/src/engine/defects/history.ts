import PQueue from 'p-queue';
import { NotFoundError, ValidationError } from '../../client/errors.js';
import type { TestManagementClient } from '../../client/tm.js';
import { isDone } from '../jira/duplicate.js';
import { keysetSearch } from '../jira/keyset.js';
import { Batcher } from '../kernel/batcher.js';
import { type Clock, systemClock } from '../kernel/clock.js';
import { memoByKey } from '../kernel/keyed.js';
import type { StatusMap } from '../kernel/work.js';
import { type BugState, classify, type Execution, knownBugs, type Verdict } from './classify.js';
import { marker } from './text.js';

/**
 * The failing cases' history (one read per case) and their known bugs' states (batched searches). A failed read
 * leaves the failure unclassified, never held back; any failure but a 404 stops the reads (each retries ~8 s).
 */

/** History reads under way at once: the transport's queue bounds all requests; this keeps room for the writes. */
const READS = 4;
/** Keys per search: `key in (...)` of 100 keys is about 1 KB of query. */
const SEARCH_KEYS = 100;

/** Why an executed run is left out of the history: this run wrote it (its own result, another shard's). */
export type Ours = (runId: number, comment: string) => boolean;

export class KnownFailures {
  private readonly reads = new Map<string, Promise<Execution[] | undefined>>();
  /** History reads, at most READS at a time. */
  private readonly limit = new PQueue({ concurrency: READS });
  /** Bug states by key, the keys asked for together in one search (the run's batcher), each once per run. */
  private readonly states = memoByKey<string, BugState | undefined>(() => true);
  private readonly statesBatch: Batcher<string, BugState | undefined>;
  /** Cases whose history could not be read in this run. */
  readonly unread = new Set<string>();
  /** A read failed for another reason than a 404: no more reads in this run. */
  private stopped = false;

  constructor(
    private readonly tm: TestManagementClient,
    private readonly statusMap: StatusMap,
    private readonly signal: AbortSignal,
    private readonly clock: Clock = systemClock,
  ) {
    const waitMs = clock.timing.gatherMs;
    this.statesBatch = new Batcher({
      clock,
      send: (keys) => this.search(keys),
      waitMs,
      maxSize: SEARCH_KEYS,
      keepAlive: true,
    });
  }

  /**
   * The verdict on a failed or flaky result; undefined when the history could not be read. Start it before the
   * result's first write to its run, so the run's state is the last one.
   */
  async verdict(key: string, outcome: 'failed' | 'flaky', signature: string, ours: Ours): Promise<Verdict | undefined> {
    const read = await this.read(key);
    if (!read) return undefined;
    const history = read.filter((e) => !ours(e.runId, e.comment));
    // The group's own defects' states are left to the defect search that follows; a person's bug among them: all read.
    const own = `[${marker(signature)}]`;
    const isOwn = (k: string) => history.some((e) => e.bugs.some((b) => b.key === k && !!b.summary?.includes(own)));
    const known = knownBugs(history, signature);
    const bugs = known.every(isOwn) ? [] : known;
    const states = new Map<string, BugState>();
    if (bugs.length) {
      const got = await Promise.all(bugs.map((k) => this.state(k)));
      bugs.forEach((k, i) => {
        const s = got[i];
        if (s) states.set(k, s);
      });
    }
    const verdict = classify(outcome, history, signature, states);
    return bugs.length === 0 && known.length > 0 ? { ...verdict, ownDefects: known } : verdict;
  }

  /** The case's executed runs in the cycle, from the read for its verdict: no request of its own (none: not read). */
  async inCycle(key: string, cycleId: number): Promise<Execution[]> {
    return ((await this.reads.get(key)) ?? []).filter((e) => e.cycleId === cycleId);
  }

  /** The case's executed runs, oldest first; undefined when it could not be read. */
  private read(key: string): Promise<Execution[] | undefined> {
    let r = this.reads.get(key);
    if (!r) {
      // Behind the run writes in the transport's queue: it only serves the verdict, a status never waits for it.
      const o = { signal: this.signal, background: true };
      r = this.limited(() => this.tm.runs.caseTestRuns({ testCaseIssueKey: key }, o)).then(
        (items) => {
          if (items) return executions(items, this.statusMap);
          this.unread.add(key);
          return undefined;
        },
        () => {
          this.unread.add(key);
          return undefined;
        },
      );
      this.reads.set(key, r);
    }
    return r;
  }

  /** `read`, at most READS at a time; undefined, not sent, once the reads have stopped. */
  private limited<T>(read: () => Promise<T>): Promise<T | undefined> {
    return this.limit.add(async () => {
      if (this.stopped) return undefined;
      try {
        return await read();
      } catch (err) {
        // Stopped inside the slot: the next read queued starts only after this, and is then not sent.
        if (!(err instanceof NotFoundError)) this.stopped = true;
        throw err;
      }
    });
  }

  /** A bug's state, from the next batched search; undefined when it could not be read. */
  private state(key: string): Promise<BugState | undefined> {
    return this.states(key, () => this.statesBatch.load(key).answer);
  }

  /**
   * The states of `keys`, in order (undefined: unknown). A key the search misses is read by key: the index lags, and a
   * search naming a deleted key answers 400.
   */
  private async search(keys: readonly string[]): Promise<Array<BugState | undefined>> {
    const found = new Map<string, BugState>();
    let byKey = true;
    try {
      const { issues } = await keysetSearch({
        tm: this.tm,
        jql: `key in (${keys.map((key) => `"${key}"`).join(', ')})`,
        fields: 'status,resolution',
        pageSize: SEARCH_KEYS,
        signal: this.signal,
        clock: this.clock,
        background: true,
      });
      for (const i of issues) found.set(i.key, stateOf(i.fields));
    } catch (err) {
      byKey = err instanceof ValidationError;
    }
    if (byKey) {
      const missing = keys.filter((k) => !found.has(k));
      await Promise.all(
        missing.map(async (key) => {
          const issue = await this.tm.jira
            .issue({ issueIdOrKey: key, fields: 'status,resolution' }, { signal: this.signal })
            .catch(() => undefined);
          if (issue) found.set(key, stateOf(issue.fields));
        }),
      );
    }
    return keys.map((key) => found.get(key));
  }
}

/** A bug's state from its Jira fields (a duplicate closed is not a fixed bug). */
function stateOf(fields: Record<string, unknown>): BugState {
  const resolution = (fields.resolution as { name?: unknown } | null | undefined)?.name;
  return { open: !isDone(fields), duplicate: /duplicate/i.test(String(resolution ?? '')) };
}

/** What a run's status says of its result, as `statusMap` writes them: passed, failed, or neither (Not Tested). */
export function resultOfStatus(statusMap: StatusMap): (status: string) => 'passed' | 'failed' | undefined {
  const lower = (s: string | null | undefined) => (s ?? '').toLowerCase();
  const passed = new Set(['passed', lower(statusMap.passed), lower(statusMap.flaky)].filter(Boolean));
  const failed = new Set(['failed', lower(statusMap.failed), lower(statusMap.timedOut)].filter(Boolean));
  return (status) => {
    const s = lower(status);
    return failed.has(s) ? 'failed' : passed.has(s) ? 'passed' : undefined;
  };
}

/** Executed runs of an execution history, oldest first: passed or failed as the run statuses of `statusMap` say. */
export function executions(
  items: ReadonlyArray<{
    id: number;
    status: string;
    comment?: string | null;
    bugs: Array<{ key: string; summary: string }>;
    executionOn?: string | null;
    testCycleId?: number | null;
  }>,
  statusMap: StatusMap,
): Execution[] {
  const resultOf = resultOfStatus(statusMap);
  const out: Array<Execution & { at: number; order: number }> = [];
  items.forEach((r, order) => {
    const result = resultOf(r.status);
    if (!result) return;
    const at = executedAt(r.executionOn) ?? Number.NEGATIVE_INFINITY;
    const cycle = r.testCycleId != null ? { cycleId: r.testCycleId } : {};
    out.push({ runId: r.id, result, comment: r.comment ?? '', bugs: r.bugs, ...cycle, at, order });
  });
  // The history lists runs by creation; a cycle's run created days ago may have been executed last. Only when every
  // run says when (to the second; ties keep the list's order).
  if (out.every((e) => Number.isFinite(e.at))) out.sort((a, b) => a.at - b.at || a.order - b.order);
  return out.map(({ at: _at, order: _order, ...e }) => e);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** `executionOn` (`26-Nov-2026 02:49:03`, the server's time) in ms, or undefined. */
export function executedAt(text: string | null | undefined): number | undefined {
  const m = /^(\d{1,2})-([A-Za-z]{3})-(\d{4}) (\d{1,2}):(\d{2})(?::(\d{2}))?/.exec(text?.trim() ?? '');
  const month = MONTHS.indexOf(m?.[2]?.toLowerCase() ?? '');
  if (!m || month < 0) return undefined;
  return Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
}
