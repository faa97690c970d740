import { CasebridgeError, ValidationError } from '../../client/errors.js';
import { isResultWindowRefusal } from '../../client/retry-policy.js';
import type { TestManagementClient } from '../../client/tm.js';
import { type Clock, systemClock } from '../kernel/clock.js';

/**
 * A JQL search read to its end at any size by keyset paging on id, as Jira DC on OpenSearch refuses reads past its
 * 10,000-result window (docs/architecture.md). An empty page while `total` says more fails as SearchIncompleteError.
 */

/** An issue of a keyset search: its numeric id, key and the fields asked for. */
export interface SearchedIssue {
  id: number;
  key: string;
  fields: Record<string, unknown>;
}

export interface KeysetSearch {
  tm: TestManagementClient;
  /** The query without ORDER BY (its clauses are ANDed with the id range). */
  jql: string;
  /** The fields to answer (only what is needed: wide answers are slow). */
  fields: string;
  /** Read only issues above this id (an incremental re-read); default: all. */
  afterId?: number;
  /** Read only issues up to this id, inclusive (one slice of a range read at once, see keysetSlices); default: all. */
  upToId?: number;
  signal?: AbortSignal;
  /** Behind the requests that are not (the transport's queue): a read that only serves a failure's verdict or defect. */
  background?: boolean;
  /** The run's clock, for the pause before an empty page is read again (the system's by default). */
  clock?: Clock;
  /** A page arrived (the end of the run keeps waiting while requests succeed). */
  onPage?: () => void;
  /** The page size asked first; later pages ask what the server answered with. Default 1,000. */
  pageSize?: number;
  /** How often an empty page before `total` is asked again, and the pause before the first retry (doubling). */
  emptyPageRetries?: number;
  emptyPageDelayMs?: number;
}

export interface KeysetResult {
  issues: SearchedIssue[];
  /** Requests sent. */
  requests: number;
  /** The highest id read (the `afterId` of the search when nothing was read). */
  maxId: number;
  /** The page size the server answered with: asked first by the next search, so that its first page fits. */
  pageSize: number;
}

/** A search stopped short. Retryable: a short list is never taken as the whole (it would create cases that exist). */
export class SearchIncompleteError extends CasebridgeError {
  constructor(
    readonly jql: string,
    readonly read: number,
    readonly missing: number,
    why = `answered an empty page while its total still counted ${missing} issue(s)`,
  ) {
    super(
      'response-shape',
      `Jira's search ${why}, after ${read} read (query: ${jql}): not taken as the end of the list, tried again on ` +
        'the next read. If it persists, check the Jira search index (Administration > System > Indexing)',
      { operation: 'jira.search', method: 'GET', path: '/rest/api/2/search' },
      true,
    );
    this.name = 'SearchIncompleteError';
  }
}

/**
 * A JQL query longer than this, URL-encoded, goes in a POST body: Tomcat refuses request lines over 8 KB by default.
 */
const LONG_JQL = 3_000;

/** One page of a search from its first result: a GET, or a POST when the query is too long for a URL. */
function searchPage(tm: TestManagementClient, jql: string, fields: string, size: number, o: KeysetSearch) {
  const opts = { ...(o.signal ? { signal: o.signal } : {}), ...(o.background ? { background: true } : {}) };
  if (encodeURIComponent(jql).length > LONG_JQL) {
    return tm.jira.searchPost({ jql, fields: fields.split(','), startAt: 0, maxResults: size }, opts);
  }
  return tm.jira.search({ jql, fields, startAt: 0, maxResults: size }, opts);
}

export async function keysetSearch(o: KeysetSearch): Promise<KeysetResult> {
  const start = o.afterId ?? 0;
  const issues: SearchedIssue[] = [];
  let after = start;
  let size = o.pageSize ?? 1000;
  let requests = 0;
  let empties = 0;
  const retries = o.emptyPageRetries ?? 3;
  const upTo = o.upToId ?? Number.POSITIVE_INFINITY;
  const bound = o.upToId === undefined ? '' : ` AND id <= ${o.upToId}`;
  for (;;) {
    const jql = `${o.jql} AND id > ${after}${bound} ORDER BY id ASC`;
    let page: Awaited<ReturnType<TestManagementClient['jira']['search']>>;
    try {
      requests += 1;
      page = await searchPage(o.tm, jql, o.fields, size, o);
    } catch (err) {
      // A window smaller than the page asked for (an administrator's setting): ask for smaller pages.
      if (err instanceof ValidationError && isResultWindowRefusal(err.serverMessage) && size > 10) {
        size = Math.max(10, Math.floor(size / 10));
        continue;
      }
      throw err;
    }
    o.onPage?.();
    // The server says what applied; asking for more than it gives only risks its window.
    if (page.maxResults > 0 && page.maxResults < size) size = page.maxResults;
    if (page.issues.length === 0) {
      if (page.total <= 0) break;
      if (empties >= retries) throw new SearchIncompleteError(o.jql, issues.length, page.total);
      await (o.clock ?? systemClock).sleep((o.emptyPageDelayMs ?? 500) * 2 ** empties, o.signal);
      empties += 1;
      continue;
    }
    empties = 0;
    let top = after;
    // Past the slice's top (a server that ignores `id <=`): the slice is read, the ids are in order.
    let past = false;
    for (const issue of page.issues) {
      const id = Number(issue.id);
      if (id > upTo) past = true;
      if (!(id > after) || id > upTo) continue;
      issues.push({ id, key: issue.key, fields: (issue as { fields?: Record<string, unknown> }).fields ?? {} });
      if (id > top) top = id;
    }
    if (past) {
      after = top;
      break;
    }
    // A server that ignores the id range would page forever: say so instead.
    if (top === after) {
      throw new SearchIncompleteError(
        o.jql,
        issues.length,
        page.total,
        `answered no issue above id ${after} for "id > ${after} ORDER BY id"`,
      );
    }
    after = top;
    if (page.issues.length >= page.total) break;
  }
  return { issues, requests, maxId: after, pageSize: size };
}

/** A slice of an id range: the issues above `afterId`, up to `upToId` inclusive (none: open above). */
export interface IdSlice {
  afterId: number;
  upToId?: number;
}

/**
 * Cuts the id range above `afterId` into slices of `perSlice` known ids, the last open, to be read at once: the same
 * requests in the round trips of one or two pages.
 */
export function keysetSlices(afterId: number, known: Iterable<number>, perSlice: number): IdSlice[] {
  const ids = [...new Set(known)].filter((id) => id > afterId).sort((a, b) => a - b);
  const per = Math.max(1, Math.floor(perSlice));
  const slices: IdSlice[] = [];
  let from = afterId;
  // The last slice keeps the last (up to) `per` known ids and is open above them: never a slice of its own above.
  for (let k = per; k < ids.length; k += per) {
    const top = ids[k - 1] as number;
    slices.push({ afterId: from, upToId: top });
    from = top;
  }
  slices.push({ afterId: from });
  return slices;
}

export interface SlicedKeysetSearch extends KeysetSearch {
  /** Ids the caller knows are in the range (see keysetSlices); `pageSize` is how many go in one slice. */
  known: Iterable<number>;
  /** Slices read at once. Default 4. */
  concurrency?: number;
}

/** Reads `keysetSlices` `concurrency` at once, issues in id order; a failing slice fails the whole. */
export async function slicedKeysetSearch(o: SlicedKeysetSearch): Promise<KeysetResult> {
  const { known, concurrency, ...search } = o;
  const slices = keysetSlices(o.afterId ?? 0, known, o.pageSize ?? 1000);
  const results: KeysetResult[] = [];
  let next = 0;
  let failure: { err: unknown } | undefined;
  const reader = async () => {
    while (!failure && next < slices.length) {
      const i = next++;
      const { afterId, upToId } = slices[i] as IdSlice;
      try {
        results[i] = await keysetSearch({ ...search, afterId, ...(upToId === undefined ? {} : { upToId }) });
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency ?? 4, slices.length)) }, reader));
  if (failure) throw failure.err;
  return {
    issues: results.flatMap((r) => r.issues),
    requests: results.reduce((n, r) => n + r.requests, 0),
    maxId: results.reduce((m, r) => Math.max(m, r.maxId), o.afterId ?? 0),
    pageSize: Math.min(...results.map((r) => r.pageSize)),
  };
}
