import { ValidationError } from '../../client/errors.js';
import type { TestManagementClient } from '../../client/tm.js';
import { isDone } from '../jira/duplicate.js';
import { slicedKeysetSearch } from '../jira/keyset.js';
import { type Clock, systemClock } from '../kernel/clock.js';

/**
 * The project's casebridge-made cases, read from Jira's search and kept up to date: the first read takes all, re-reads
 * the cases above an id floor that allows for the index lag (docs/architecture.md). Ordered by key (creation order).
 */

export interface Found {
  key: string;
  /** Resolved, or in a done status (closed): used only when no open case of the identity is left. */
  closed: boolean;
  /** The number of the key: creation order within the project. */
  n: number;
}

/** Default index lag allowed for. */

/** Own cases left out per re-read request (`id not in (…)`): older Lucene Jira refuses 1,024 clauses. */
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
  /** The cases this process created, by key: their id and when it had the create's answer (its own clock). */
  private readonly own = new Map<string, { id: number; at: number }>();
  /** The highest key number a read answered: that index had every earlier case, so lower own cases are `shown`. */
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
   * The floor of a re-read: the highest id created at least the index lag before the newest case seen (or own case).
   */
  floor(): number {
    const before = this.newest - (this.o.indexLagMs ?? this.clock.timing.indexLagMs);
    let floor = 0;
    for (const [id, created] of this.times) if (created <= before && id > floor) floor = id;
    // Own cases, which re-reads leave out: one made the index lag before the last read began was in that read.
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

  /** Whether a search has shown the case: answered it, or (for an own case) answered a case made after it. */
  shown(key: string): boolean {
    return this.seen.has(key) || (this.own.has(key) && keyNumber(key) <= this.shownUpTo);
  }

  /** A case this process created, indexed before a search shows it; its id lets a re-read slice its range. */
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
   * The range above `afterId` in parts, each leaving out the own cases but the newest, which is asked for: a read that
   * shows it shows every case made before it.
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
      // Refused (400) with ids left out (a deleted id, or a lower clause limit): read everything from here on.
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
        // Known cases cut the part into page-sized slices read at once (1,400 cases: 4 round trips, not 14).
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
