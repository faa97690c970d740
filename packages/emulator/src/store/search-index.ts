import type { Change, Issue, Store } from './store.js';

/**
 * What each simulated node's search index holds. On a Jira Data Center cluster every node keeps its own index and
 * polls for the others' changes about once a second ("Lucene Index Synchronization in Jira Data Center"), so a
 * search answers what the index held a moment ago: a new issue is missing, an edited one is found by its old text.
 *
 * Each committed write of an issue is kept here with its time, as a copy, beside the copy every node already has
 * (`rebase`); a node with lag L sees, per issue, the newest copy written at least L ms ago (none yet: the issue is
 * not found; a deletion: it is gone). With no lag anywhere nothing is kept and searches read the store.
 */
export class SearchIndex {
  private writes = new Map<number, { at: number; issue: Issue | null }[]>();
  /** Ids of deleted issues whose deletion some node may not have seen yet. */
  private readonly deleted = new Set<number>();

  /** `maxLag()` is the largest lag of any node: older writes are dropped, every node sees them. */
  constructor(private readonly maxLag: () => number) {}

  /**
   * Indexes the store as it is, on every node at once (the seed, after a start or a reset, or when a lag is turned
   * on): the copy an edit's lagging search answers until the edit reaches it.
   */
  rebase(store: Store): void {
    this.deleted.clear();
    this.writes = new Map();
    if (this.maxLag() <= 0) return;
    for (const issue of store.issues.all())
      this.writes.set(issue.id, [{ at: -Infinity, issue: structuredClone(issue) }]);
  }

  /** Keeps the issue writes of one commit. */
  record(changes: readonly Change[], now: number): void {
    const max = this.maxLag();
    if (max <= 0) {
      // No node lags: the store is what every search sees.
      this.writes.clear();
      this.deleted.clear();
      return;
    }
    for (const c of changes) {
      if (c.table !== 'issues' || c.op === 'seq') continue;
      const id = Number(c.id);
      const list = this.writes.get(id) ?? [];
      list.push({ at: now, issue: c.op === 'put' ? structuredClone(c.row as Issue) : null });
      if (c.op === 'delete') this.deleted.add(id);
      // Writes older than the newest one every node already sees are never read again.
      let seenByAll = -1;
      for (let i = 0; i < list.length; i++) if ((list[i]?.at ?? now) + max <= now) seenByAll = i;
      if (seenByAll > 0) list.splice(0, seenByAll);
      this.writes.set(id, list);
    }
  }

  /** The issues as a node with `lag` sees them at `now`. */
  view(store: Store, lag: number, now: number): Issue[] {
    if (this.writes.size === 0) return store.issues.all();
    const out: Issue[] = [];
    for (const issue of store.issues.all()) {
      const seen = this.seen(issue.id, lag, now);
      if (seen === undefined) out.push(issue);
      else if (seen !== null) out.push(seen);
    }
    // Deleted issues that a lagging index still holds.
    for (const id of this.deleted) {
      if (store.issues.get(id)) continue;
      const seen = this.seen(id, lag, now);
      if (seen) out.push(seen);
      else if ((this.writes.get(id)?.at(-1)?.at ?? 0) + this.maxLag() <= now) {
        this.deleted.delete(id);
        this.writes.delete(id);
      }
    }
    return out;
  }

  /** undefined: as in the store (written outside a request, not committed yet); null: not found; else the copy. */
  private seen(id: number, lag: number, now: number): Issue | null | undefined {
    const list = this.writes.get(id);
    if (!list) return undefined;
    let found: Issue | null = null;
    for (const w of list) if (w.at + lag <= now) found = w.issue;
    return found;
  }
}
