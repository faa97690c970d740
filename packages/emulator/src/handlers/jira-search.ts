import { type JiraBehaviour, lagOf, PROFILES } from '../behaviour/profile.js';
import { type JqlClause, type JqlQuery, jqlDate, parseJql } from '../jira/jql.js';
import { textMatcher } from '../jira/text-search.js';
import { type Ctx, type Handler, Reply, ServiceError } from '../service/context.js';
import type { Issue, Store } from '../store/store.js';
import { presentScreenFields } from './jira-fields.js';
import {
  issueTypeOf,
  knownStatuses,
  knownTypes,
  lower,
  presentIssue,
  projectByIdOrKey,
  selectFields,
} from './jira-model.js';

/**
 * Jira's issue search (`GET` and `POST /rest/api/2/search`): the JQL of ../jira/jql.ts evaluated against what the
 * node's search index holds (../store/search-index.ts), a page size clamped to the server's cap, and OpenSearch's
 * result window. The settings come from the Jira behaviour (../behaviour/profile.ts).
 */

function noSuchValue(value: string, field: string): ServiceError {
  return new ServiceError(400, `The value '${value}' does not exist for the field '${field}'.`);
}

function compare(range: NonNullable<JqlClause['range']>, x: number, y: number): boolean {
  switch (range) {
    case '>':
      return x > y;
    case '>=':
      return x >= y;
    case '<':
      return x < y;
    default:
      return x <= y;
  }
}

/**
 * `key > DEMO-5` (and `issuekey`) compares issue numbers within that project, as Jira does; a number (`id > 10042`)
 * compares issue ids.
 */
function keyRange(store: Store, c: JqlClause): (i: Issue) => boolean {
  const range = c.range as NonNullable<JqlClause['range']>;
  const v = c.values[0] ?? '';
  if (/^\d+$/.test(v)) return (i) => compare(range, i.id, Number(v));
  const m = /^([A-Za-z][A-Za-z0-9_]*)-(\d+)$/.exec(v);
  const project = m ? projectByIdOrKey(store, m[1] as string) : undefined;
  if (!m || !project) throw new ServiceError(400, `The issue key '${v}' for field 'key' is invalid.`);
  const n = Number(m[2]);
  return (i) => i.projectId === project.id && compare(range, Number(i.key.slice(i.key.lastIndexOf('-') + 1)), n);
}

function dateTest(c: JqlClause, now: number): (i: Issue) => boolean {
  const field = c.field as 'created' | 'updated';
  const dates = c.values.map((v) => jqlDate(v, field, now));
  if (c.range) {
    const range = c.range;
    const at = dates[0]?.at ?? 0;
    return (i) => compare(range, i[field], at);
  }
  // `=` and `in`: within the minute (or the day) the value names.
  return (i) => dates.some((d) => i[field] >= d.at && i[field] < d.at + d.width);
}

/** Turns a clause into a predicate, refusing values Jira would not know (Jira answers 400 for those too). */
function predicate(store: Store, c: JqlClause, b: JiraBehaviour, now: number): (i: Issue) => boolean {
  const values = c.values;
  let test: (i: Issue) => boolean;
  switch (c.field) {
    case 'project': {
      const ids = values.map((v) => {
        const p = projectByIdOrKey(store, v);
        if (!p) throw noSuchValue(v, 'project');
        return p.id;
      });
      test = (i) => ids.includes(i.projectId);
      break;
    }
    case 'issuetype': {
      const known = knownTypes(store);
      const wanted = values.map((v) => {
        if (/^\d+$/.test(v)) {
          const byId = known.find((n) => issueTypeOf(n).id === v);
          if (!byId) throw noSuchValue(v, 'issuetype');
          return lower(byId);
        }
        if (!known.some((n) => lower(n) === lower(v))) throw noSuchValue(v, 'issuetype');
        return lower(v);
      });
      test = (i) => wanted.includes(lower(i.type));
      break;
    }
    case 'status': {
      const known = knownStatuses(store);
      for (const v of values) if (!known.some((n) => lower(n) === lower(v))) throw noSuchValue(v, 'status');
      const wanted = values.map(lower);
      test = (i) => wanted.includes(lower(i.status));
      break;
    }
    case 'resolution': {
      const wanted = values.map(lower);
      test = (i) => wanted.includes(i.resolution === null ? 'unresolved' : lower(i.resolution));
      break;
    }
    case 'labels':
      test = (i) => i.labels.some((l) => values.includes(l));
      break;
    case 'fixVersion': {
      // A name matches that version in every project that has one; an id, that version.
      const ids = new Set(
        values.flatMap((v) => {
          const hits = store.projects
            .all()
            .flatMap((p) => p.versions ?? [])
            .filter((x) => x.id === v || lower(x.name) === lower(v));
          if (hits.length === 0) throw noSuchValue(v, 'fixVersion');
          return hits.map((x) => x.id);
        }),
      );
      const versionsOf = (i: Issue) => ((i.fields?.fixVersions ?? []) as { id: string }[]).map((x) => x.id);
      // Jira's `!=` and `not in` never match an issue without a fix version.
      if (c.negated) return (i) => versionsOf(i).length > 0 && !versionsOf(i).some((id) => ids.has(id));
      test = (i) => versionsOf(i).some((id) => ids.has(id));
      break;
    }
    case 'key':
      if (c.range) test = keyRange(store, c);
      else {
        // A set: `id not in (…)` may name a thousand issues (a re-read leaving out the cases its caller made).
        const wanted = new Set(values.map(lower));
        test = (i) => wanted.has(lower(i.key)) || wanted.has(String(i.id));
      }
      break;
    case 'created':
    case 'updated':
      test = dateTest(c, now);
      break;
    case 'summary': {
      const match = textMatcher(values[0] ?? '', b.textSearch);
      test = (i) => match(i.summary);
      break;
    }
    case 'description': {
      const match = textMatcher(values[0] ?? '', b.textSearch);
      test = (i) => match(i.description ?? '');
      break;
    }
    case 'text': {
      const match = textMatcher(values[0] ?? '', b.textSearch);
      test = (i) => match(i.summary) || match(i.description ?? '');
      break;
    }
  }
  return c.negated ? (i) => !test(i) : test;
}

function sortKey(issue: Issue, field: string): number | string {
  switch (field) {
    case 'created':
      return issue.created;
    case 'updated':
      return issue.updated;
    case 'summary':
      return lower(issue.summary);
    default:
      return issue.id;
  }
}

/** The issues of `pool` that match, in the query's order (by id when it names none). */
export function runJql(store: Store, pool: Issue[], q: JqlQuery, b: JiraBehaviour, now: number): Issue[] {
  const tests = q.clauses.map((c) => {
    if (!('any' in c)) return predicate(store, c, b, now);
    const any = c.any.map((one) => predicate(store, one, b, now));
    return (i: Issue) => any.some((t) => t(i));
  });
  const hits = pool.filter((i) => tests.every((t) => t(i)));
  const order = q.orderBy.length ? q.orderBy : [{ field: 'id', direction: 'ASC' as const }];
  return hits.sort((a, b) => {
    for (const o of order) {
      const x = sortKey(a, o.field);
      const y = sortKey(b, o.field);
      if (x !== y) return (x < y ? -1 : 1) * (o.direction === 'DESC' ? -1 : 1);
    }
    // Ties (issues created in the same millisecond) follow creation order in the requested direction.
    return (a.id - b.id) * (order[0]?.direction === 'DESC' ? -1 : 1);
  });
}

/** Jira's default page size when `maxResults` is not given. */
const DEFAULT_PAGE = 50;

interface SearchInput {
  jql?: string;
  startAt?: number;
  maxResults?: number;
  /** Comma-separated (GET) or a list (POST). */
  fields?: string | string[];
}

function search(ctx: Ctx, input: SearchInput): unknown {
  const b = ctx.cluster?.jira ?? PROFILES.ideal;
  const query = parseJql(input.jql ?? '');
  const now = ctx.now();
  const pool = ctx.cluster
    ? ctx.cluster.index.view(ctx.store, lagOf(b, ctx.cluster.node), now)
    : ctx.store.issues.all();
  const hits = runJql(ctx.store, pool, query, b, now);
  const startAt = input.startAt ?? 0;
  const maxResults = Math.min(input.maxResults ?? DEFAULT_PAGE, b.searchMaxResults);
  const answer = { expand: 'schema,names', startAt, maxResults, total: hits.length };
  if (b.resultWindow !== null && startAt + maxResults > b.resultWindow) {
    if (b.resultWindowMode === 'error') {
      // OpenSearch-backed Jira 10/11 (Atlassian KB "Handling JQL REST API searching exceeding max_result_window").
      return new Reply(500, {
        errorMessages: [
          `Search limit exceeded: startAt + maxResults (${startAt} + ${maxResults}) is over the result window of ${b.resultWindow}. Narrow the query (for example id > N ORDER BY id) instead of paging deeper.`,
        ],
        errors: {},
      });
    }
    return { ...answer, issues: [] };
  }
  const fields = selectFields(Array.isArray(input.fields) ? input.fields.join(',') : input.fields);
  return {
    ...answer,
    issues: hits
      .slice(startAt, startAt + maxResults)
      .map((i) => presentIssue(ctx, i, fields, presentScreenFields(ctx, i))),
  };
}

export const jiraSearchHandlers: Record<string, Handler> = {
  'jira.search': (ctx) => search(ctx, ctx.query as SearchInput),
  // The same search with its parameters in a JSON body, for JQL too long for a URL.
  'jira.searchPost': (ctx) => search(ctx, (ctx.body ?? {}) as SearchInput),
};
