import { CasebridgeError, ValidationError } from '../../client/errors.js';
import { isResultWindowRefusal } from '../../client/retry-policy.js';
import type { TestManagementClient } from '../../client/tm.js';

/**
 * A JQL search read to its end at any size: keyset paging by issue id (`<jql> AND id > N ORDER BY id ASC`, every page
 * from `startAt` 0), never deep `startAt`. Jira Data Center 10/11 on OpenSearch refuses `startAt + maxResults` past
 * its result window (10,000 by default) with a 500 "Search limit exceeded", or answers an empty page while `total`
 * says more; a keyset page never goes past the first window, so a project of 20,000 or 200,000 issues reads the same
 * way. Each page asks for the page size the server answered with (its `maxResults`: Jira caps what it is asked for,
 * often at 1,000, and administrators lower it), so a small window is never overrun by the size either.
 *
 * Cost: one request per page: 10,000 issues are 10 requests at Jira's usual cap of 1,000, 100 at a cap of 100.
 *
 * An empty page while `total` says more is never the end: it is asked again (a lagging node, a window) a few times,
 * then `SearchIncompleteError`, which names the query and how many issues were not read.
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
  signal?: AbortSignal;
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
}

/**
 * A search stopped before its end: an empty page while Jira's `total` still counted issues (after the retries), or a
 * page that did not follow the id range. Retryable: the engine keeps the results (journal) and a later read tries
 * again; it never takes a short list as the whole (it would create cases that exist).
 */
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

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((done) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      done();
    });
  });

export async function keysetSearch(o: KeysetSearch): Promise<KeysetResult> {
  const start = o.afterId ?? 0;
  const issues: SearchedIssue[] = [];
  let after = start;
  let size = o.pageSize ?? 1000;
  let requests = 0;
  let empties = 0;
  const retries = o.emptyPageRetries ?? 3;
  for (;;) {
    const jql = `${o.jql} AND id > ${after} ORDER BY id ASC`;
    let page: Awaited<ReturnType<TestManagementClient['jira']['search']>>;
    try {
      requests += 1;
      page = await o.tm.jira.search(
        { jql, fields: o.fields, startAt: 0, maxResults: size },
        o.signal ? { signal: o.signal } : undefined,
      );
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
      await sleep((o.emptyPageDelayMs ?? 500) * 2 ** empties, o.signal);
      empties += 1;
      continue;
    }
    empties = 0;
    let top = after;
    for (const issue of page.issues) {
      const id = Number(issue.id);
      if (!(id > after)) continue;
      issues.push({ id, key: issue.key, fields: (issue as { fields?: Record<string, unknown> }).fields ?? {} });
      if (id > top) top = id;
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
  return { issues, requests, maxId: after };
}
