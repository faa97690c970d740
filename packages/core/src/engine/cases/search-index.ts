import { ValidationError } from '../../client/errors.js';
import type { TestManagementClient } from '../../client/tm.js';
import { isDone } from '../jira/duplicate.js';
import { slicedKeysetSearch } from '../jira/keyset.js';
import { type Clock, systemClock } from '../kernel/clock.js';

/**
 * What the project's casebridge-made test cases are, read from Jira's search and kept up to date during a run.
 *
 * The first read takes every case (keyset paged by id, keyset.ts: any size, never deep `startAt`). Later reads take
 * only what may have changed: the cases above an id floor. Jira's index is eventual on a Data Center cluster (each
 * node polls for changes about once a second, more under load): a case another machine created a moment ago may be
 * missing from one read and appear in a later one, with an id below ones already seen. So the floor is not the
 * highest id seen: it is the highest id of a case created at least `indexLagMs` before the newest case seen
 * (`created`, the server's clock, never this machine's). Every case below it was created that long before the
 * previous read was answered, so that read had it (or an earlier one did): none is skipped, whatever its id (to
 * within the second or two one read of several pages takes: its early pages are read before its newest case). The
 * cases this process made count too, by when it had their create's answer and when its last read began (both its own
 * clock): its re-reads leave them out, so their `created` is hardly ever read. Without `created` in the answers (a
 * proxy stripping fields) and no case of its own, the floor stays 0: every re-read reads everything, correct but
 * slow.
 *
 * Cost: at 10,000 cases the first read is 10 requests at Jira's usual page cap of 1,000 (100 at a cap of 100); a
 * re-read reads the cases created in the last `indexLagMs` (5 s) and since, whatever the size of the project: one
 * request in a second run, one or two per re-read at a page cap of 100 while a first run creates about 30 cases a
 * second (at 15 s it was five: 57 of a 1,000-test adoption's 1,124 requests). A case the index shows more than 5 s
 * late, below the floor, is left to the next run's full read. A re-read leaves out the cases this process made but
 * its newest (`id not in (…)`, up to 1,000 a request, parts): it knows them, and what it reads for is what others made.
 * So the re-read at the end of a first run of 1,400 new cases is 2 requests in one round trip (it was 14 pages of
 * its own cases in 4). The newest it asks for tells whether the index has caught up with its creates (`shown`). What
 * it reads it reads in slices of a page each at once (keyset.ts, slicedKeysetSearch): the cases read before cut them.
 *
 * Cases are ordered by their key's number (in one project, the creation order, as the id is), so a case this
 * process has just created takes its place before any search shows it.
 */

export interface Found {
  key: string;
  /** Resolved, or in a done status (closed): used only when no open case of the identity is left. */
  closed: boolean;
  /** The number of the key: creation order within the project. */
  n: number;
}

/** Default index lag allowed for (see the class comment). */

/**
 * At most this many of its own cases one request of a re-read leaves out (`id not in (…)`, parts): Jira turns each into a clause of
 * its query, and older Lucene-backed versions refuse a query of more than 1,024. More go in further parts of the range.
 */
const MAX_LEFT_OUT = 1_000;

export interface CaseIndexOptions {
  tm: TestManagementClient;
  project: string;
  /** The identity of a case's description (cases.ts), undefined for none (or a labelled duplicate). */
  identityOf: (description: string) => string | undefined;
  signal?: AbortSignal;
  onProgress?: () => void;
  indexLagMs?: number;
  clock?: Clock;
}

const keyNumber = (key: string) => Number(key.slice(key.lastIndexOf('-') + 1)) || 0;

export class CaseIndex {
  private readonly all = new Map<string, Found & { identity: string }>();
  /** Id and creation time (server clock, ms) of every case read: where re-reads start (`floor`). */
  private readonly times = new Map<number, number>();
  /** Keys a search has answered (a case this process added is not among them until one shows it). */
  private readonly seen = new Set<string>();
  /** Ids of the cases read or added by this process: where a re-read cuts its slices. */
  private readonly ids = new Set<number>();
  /**
   * The cases this process created (`add`), by key: their id (a re-read leaves them out but the newest, `parts`) and
   * when it had the create's answer (its own clock, `floor`).
   */
  private readonly own = new Map<string, { id: number; at: number }>();
  /**
   * The highest key number a read answered: the index that answered had every case made before that one (each node
   * takes the cluster's changes in order), so a case this process made with a lower number was in it (`shown`).
   */
  private shownUpTo = 0;
  /** Whether a re-read leaves out this process's cases (parts): off for the run after a refusal of such a read. */
  private leaveOut = true;
  /** The page size the server answered the last read with (unknown before the first). */
  private pageSize?: number;
  private newest = Number.NEGATIVE_INFINITY;
  /** When the last read that ended began (this process's clock): see `floor`. */
  private lastReadBegan = Number.NEGATIVE_INFINITY;
  private byIdentity?: Map<string, Found[]>;
  private first?: Promise<void>;
  private reading?: Promise<void>;
  /** Search requests sent, and reads made (the first one included). */
  requests = 0;
  reads = 0;

  private readonly clock: Clock;

  constructor(private readonly o: CaseIndexOptions) {
    this.clock = o.clock ?? systemClock;
  }

  /** The first read, once (a failed one is tried again by the next caller). */
  ready(): Promise<void> {
    if (!this.first) {
      this.first = this.read(0);
      this.first.catch(() => {
        this.first = undefined;
      });
    }
    return this.first;
  }

  /** A read of what may have changed since the last read (the first read if none was made); callers share one. */
  refresh(): Promise<void> {
    if (!this.first) return this.ready();
    this.reading ??= this.first
      .then(() => this.read(this.floor()))
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  /**
   * The highest id of a case created at least the index lag before the newest case seen (see the class comment), or
   * of a case this process made at least the index lag before the last read began.
   */
  floor(): number {
    const before = this.newest - (this.o.indexLagMs ?? this.clock.timing.indexLagMs);
    let floor = 0;
    for (const [id, created] of this.times) if (created <= before && id > floor) floor = id;
    // This process's cases, which its re-reads leave out (so their `created` is hardly ever read): one made the index
    // lag before the last read began (both on this machine's clock) was made that long before that read, so that
    // read had every case made before it, as above.
    const made = this.lastReadBegan - (this.o.indexLagMs ?? this.clock.timing.indexLagMs);
    for (const { id, at } of this.own.values()) if (at <= made && id > floor) floor = id;
    return floor;
  }

  /** The cases of an identity: open ones first, then the oldest: every machine picks the same first one. */
  casesOf(identity: string): readonly Found[] {
    if (!this.byIdentity) {
      const m = new Map<string, Found[]>();
      for (const f of this.all.values()) {
        const list = m.get(f.identity) ?? [];
        list.push(f);
        m.set(f.identity, list);
      }
      for (const list of m.values()) list.sort((a, b) => Number(a.closed) - Number(b.closed) || a.n - b.n);
      this.byIdentity = m;
    }
    return this.byIdentity.get(identity) ?? [];
  }

  /**
   * Whether a search has shown the case (not only `add`): it answered the case, or, for a case this process made
   * (which a re-read leaves out), a case made after it.
   */
  shown(key: string): boolean {
    return this.seen.has(key) || (this.own.has(key) && keyNumber(key) <= this.shownUpTo);
  }

  /**
   * A case this process created: in the index before a (lagging) search shows it. Its id (when the create answered
   * one) tells a re-read where the cases are, so it reads them in slices at once (keyset.ts, keysetSlices).
   */
  add(identity: string, key: string, id?: number): void {
    if (id !== undefined && Number.isSafeInteger(id) && id > 0) {
      this.ids.add(id);
      this.own.set(key, { id, at: this.clock.now() });
    }
    if (this.all.has(key)) return;
    this.all.set(key, { key, identity, closed: false, n: keyNumber(key) });
    this.byIdentity = undefined;
  }

  /** A case closed (or labelled) as a duplicate by this process: no longer an open case of its identity. */
  closed(key: string, labelled: boolean): void {
    const f = this.all.get(key);
    if (!f) return;
    if (labelled) this.all.delete(key);
    else f.closed = true;
    this.byIdentity = undefined;
  }

  /** Cases known, open or closed. */
  get size(): number {
    return this.all.size;
  }

  /**
   * The range above `afterId` in parts, each with the cases this process made in it that its read leaves out
   * (`id not in (…)`), at most MAX_LEFT_OUT a part: all but the newest. This process knows them (it made them, `add`),
   * and what a re-read is for is the cases of others: at the end of a first run of 1,400 new cases the re-read is two
   * requests, not 14 pages of its own cases. The newest is asked for: a read that shows it shows every case made
   * before it (`shown`), so it decides them all. Without cases of its own above `afterId`, one part, nothing left out.
   */
  private parts(afterId: number): Array<{ afterId: number; upToId?: number; out: number[] }> {
    const mine = this.leaveOut
      ? [...this.own.values()]
          .map((o) => o.id)
          .filter((id) => id > afterId)
          .sort((a, b) => a - b)
      : [];
    mine.pop();
    const parts: Array<{ afterId: number; upToId?: number; out: number[] }> = [];
    let from = afterId;
    for (let i = 0; i < mine.length; i += MAX_LEFT_OUT) {
      const out = mine.slice(i, i + MAX_LEFT_OUT);
      const last = i + MAX_LEFT_OUT >= mine.length;
      const top = out[out.length - 1] as number;
      parts.push(last ? { afterId: from, out } : { afterId: from, upToId: top, out });
      from = top;
    }
    if (parts.length === 0) parts.push({ afterId, out: [] });
    return parts;
  }

  private async read(afterId: number): Promise<void> {
    try {
      await this.readParts(afterId);
    } catch (err) {
      // Refused (400) with ids left out: a Jira whose JQL validation refuses an id it no longer has (a case deleted
      // meanwhile), or a clause limit lower than MAX_LEFT_OUT. Read everything from here on, as before.
      if (!(err instanceof ValidationError) || err.uncertain || !this.leaveOut || this.own.size < 2) throw err;
      this.leaveOut = false;
      await this.readParts(afterId);
    }
  }

  private async readParts(afterId: number): Promise<void> {
    const began = this.clock.now();
    const base = `project = "${this.o.project}" AND issuetype = "Test Case" AND description ~ "casebridge"`;
    const results = await Promise.all(
      this.parts(afterId).map((part) => {
        const out = new Set(part.out);
        const top = part.upToId ?? Number.POSITIVE_INFINITY;
        // The cases known in the part (read before, or made here and asked for) cut it into slices of a page each,
        // read at once: a read of 1,400 cases at a page cap of 100 is 14 requests in about 4 round trips, not 14 in
        // a row.
        return slicedKeysetSearch({
          tm: this.o.tm,
          jql: part.out.length > 0 ? `${base} AND id not in (${part.out.join(',')})` : base,
          fields: 'description,resolution,status,created',
          afterId: part.afterId,
          ...(part.upToId === undefined ? {} : { upToId: part.upToId }),
          known: [...this.ids].filter((id) => id > part.afterId && id <= top && !out.has(id)),
          ...(this.pageSize ? { pageSize: this.pageSize } : {}),
          ...(this.o.signal ? { signal: this.o.signal } : {}),
          ...(this.o.onProgress ? { onPage: this.o.onProgress } : {}),
        });
      }),
    );
    const found = {
      issues: results.flatMap((r) => r.issues),
      requests: results.reduce((n, r) => n + r.requests, 0),
      pageSize: Math.min(...results.map((r) => r.pageSize)),
    };
    this.lastReadBegan = Math.max(this.lastReadBegan, began);
    this.pageSize = found.pageSize;
    this.requests += found.requests;
    this.reads += 1;
    for (const issue of found.issues) {
      this.ids.add(issue.id);
      const created = Date.parse(String(issue.fields.created ?? ''));
      if (!Number.isNaN(created)) {
        this.times.set(issue.id, created);
        if (created > this.newest) this.newest = created;
      }
      this.seen.add(issue.key);
      this.shownUpTo = Math.max(this.shownUpTo, keyNumber(issue.key));
      const identity = this.o.identityOf(String(issue.fields.description ?? ''));
      // Not (or no longer) a case of a test: a labelled duplicate, or a description someone rewrote.
      if (!identity) {
        this.all.delete(issue.key);
        continue;
      }
      this.all.set(issue.key, { key: issue.key, identity, closed: isDone(issue.fields), n: keyNumber(issue.key) });
    }
    this.byIdentity = undefined;
  }
}
