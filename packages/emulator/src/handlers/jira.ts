import { openSession, parseCookies } from '../auth.js';
import { type Ctx, type Handler, notFound, Reply, ServiceError } from '../context.js';
import type { Issue, Project, Store, Transition, User } from '../store.js';

/**
 * The Jira platform subset (REST API 2 and the cookie session) that the test-management add-on lives in. Every
 * authenticated user may use it, the unlicensed one included: only the add-on refuses him.
 *
 * Ids are numeric strings as Jira writes them; issue and project ids are the emulator's row ids, so they agree with
 * the ids the test-management operations report.
 */

const NOT_VISIBLE = 'Issue does not exist or you do not have permission to see it.';

type CategoryKey = 'new' | 'indeterminate' | 'done';

const CATEGORIES: Record<CategoryKey, { id: number; colorName: string; name: string }> = {
  new: { id: 2, colorName: 'blue-gray', name: 'To Do' },
  indeterminate: { id: 4, colorName: 'yellow', name: 'In Progress' },
  done: { id: 3, colorName: 'green', name: 'Done' },
};

/** Jira's default statuses; other names (from a seed) get a stable id and a category guessed from the name. */
const STATUSES: Record<string, { id: string; category: CategoryKey }> = {
  Open: { id: '1', category: 'new' },
  'In Progress': { id: '3', category: 'indeterminate' },
  Reopened: { id: '4', category: 'new' },
  Resolved: { id: '5', category: 'done' },
  Closed: { id: '6', category: 'done' },
  'To Do': { id: '10000', category: 'new' },
  Done: { id: '10001', category: 'done' },
};

/** Issue types of every project; a project also offers any other type name its issues use. */
const ISSUE_TYPES: readonly { id: string; name: string; description: string }[] = [
  { id: '1', name: 'Bug', description: 'A problem which impairs or prevents the functions of the product.' },
  { id: '3', name: 'Task', description: 'A task that needs to be done.' },
  { id: '10001', name: 'Story', description: 'A user story.' },
  { id: '10100', name: 'Requirement', description: 'A requirement (test management).' },
  { id: '10101', name: 'Test Case', description: 'A test case (test management).' },
  { id: '10102', name: 'Test Plan', description: 'A test plan (test management).' },
];

const RESOLUTIONS: Record<string, string> = {
  Fixed: '1',
  "Won't Fix": '2',
  Duplicate: '3',
  Incomplete: '4',
  'Cannot Reproduce': '5',
  Done: '10000',
};

/** A small stable number for a name (FNV-1a), so unknown statuses and types keep their id across restarts. */
function stableId(base: number, name: string): string {
  let h = 0x811c9dc5;
  for (const ch of name) h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  return String(base + (h % 10000));
}

/** Jira's timestamp: `2026-01-31T12:00:00.000+0000`. */
export function jiraTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}

const lower = (s: string) => s.toLowerCase();

function statusInfo(name: string): { id: string; category: CategoryKey } {
  const known = Object.entries(STATUSES).find(([n]) => lower(n) === lower(name));
  if (known) return known[1];
  const category: CategoryKey = /done|closed|resolved|complete/i.test(name)
    ? 'done'
    : /progress|review|testing/i.test(name)
      ? 'indeterminate'
      : 'new';
  return { id: stableId(20000, name), category };
}

function presentStatus(ctx: Ctx, name: string): Record<string, unknown> {
  const info = statusInfo(name);
  const cat = CATEGORIES[info.category];
  return {
    self: `${ctx.origin}/rest/api/2/status/${info.id}`,
    description: '',
    iconUrl: `${ctx.origin}/images/icons/statuses/generic.png`,
    name,
    id: info.id,
    statusCategory: {
      self: `${ctx.origin}/rest/api/2/statuscategory/${cat.id}`,
      id: cat.id,
      key: info.category,
      colorName: cat.colorName,
      name: cat.name,
    },
  };
}

function issueTypeOf(name: string): { id: string; name: string; description: string } {
  return ISSUE_TYPES.find((t) => lower(t.name) === lower(name)) ?? { id: stableId(30000, name), name, description: '' };
}

function presentIssueType(ctx: Ctx, name: string): Record<string, unknown> {
  const t = issueTypeOf(name);
  return {
    self: `${ctx.origin}/rest/api/2/issuetype/${t.id}`,
    id: t.id,
    description: t.description,
    iconUrl: `${ctx.origin}/secure/viewavatar?size=xsmall&avatarType=issuetype`,
    name: t.name,
    subtask: false,
  };
}

/** The issue types a project offers: the defaults plus any other type its issues use. */
function projectIssueTypes(store: Store, project: Project): string[] {
  const names = ISSUE_TYPES.map((t) => t.name);
  for (const i of store.issues.filter((x) => x.projectId === project.id)) {
    if (!names.some((n) => lower(n) === lower(i.type))) names.push(i.type);
  }
  return names;
}

function avatarUrls(ctx: Ctx, kind: 'user' | 'project'): Record<string, string> {
  const path = kind === 'user' ? '/secure/useravatar?avatarId=10122' : '/secure/projectavatar?avatarId=10324';
  const out: Record<string, string> = {};
  for (const size of ['48x48', '24x24', '16x16', '32x32']) out[size] = `${ctx.origin}${path}&size=${size}`;
  return out;
}

function presentUser(ctx: Ctx, user: User): Record<string, unknown> {
  return {
    self: `${ctx.origin}/rest/api/2/user?username=${encodeURIComponent(user.name)}`,
    key: lower(user.name),
    name: user.name,
    emailAddress: user.email,
    avatarUrls: avatarUrls(ctx, 'user'),
    displayName: user.displayName,
    active: true,
    timeZone: 'UTC',
  };
}

function groupsOf(user: User): string[] {
  return user.admin ? ['jira-administrators', 'jira-software-users'] : ['jira-software-users'];
}

function presentProjectRef(ctx: Ctx, p: Project): Record<string, unknown> {
  return {
    self: `${ctx.origin}/rest/api/2/project/${p.id}`,
    id: String(p.id),
    key: p.key,
    name: p.name,
    projectTypeKey: 'software',
    avatarUrls: avatarUrls(ctx, 'project'),
  };
}

const ALL_FIELDS = [
  'summary',
  'description',
  'status',
  'issuetype',
  'labels',
  'project',
  'resolution',
  'resolutiondate',
  'reporter',
  'created',
  'updated',
] as const;

/** Jira's `fields=` selection: names, `*all` / `*navigable`, `-name` to leave one out; default all. */
function selectFields(spec: string | undefined): Set<string> {
  const tokens = (spec ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const includes = tokens.filter((t) => !t.startsWith('-'));
  const all = includes.length === 0 || includes.includes('*all') || includes.includes('*navigable');
  const out = new Set<string>(all ? ALL_FIELDS : includes);
  for (const t of tokens) if (t.startsWith('-')) out.delete(t.slice(1));
  return out;
}

function presentIssue(ctx: Ctx, issue: Issue, fields: Set<string>): Record<string, unknown> {
  const project = ctx.store.projects.get(issue.projectId);
  const reporter = ctx.store.users.find((u) => u.name === issue.reporter);
  const all: Record<string, unknown> = {
    summary: issue.summary,
    description: issue.description === '' ? null : issue.description,
    status: presentStatus(ctx, issue.status),
    issuetype: presentIssueType(ctx, issue.type),
    labels: issue.labels,
    project: project ? presentProjectRef(ctx, project) : undefined,
    resolution: issue.resolution
      ? {
          self: `${ctx.origin}/rest/api/2/resolution/${RESOLUTIONS[issue.resolution] ?? stableId(40000, issue.resolution)}`,
          id: RESOLUTIONS[issue.resolution] ?? stableId(40000, issue.resolution),
          description: '',
          name: issue.resolution,
        }
      : null,
    // The emulator keeps no resolution date; the last update is when a resolving transition happened.
    resolutiondate: issue.resolution ? jiraTime(issue.updated) : null,
    reporter: reporter ? presentUser(ctx, reporter) : null,
    created: jiraTime(issue.created),
    updated: jiraTime(issue.updated),
  };
  const out: Record<string, unknown> = {};
  for (const f of ALL_FIELDS) if (fields.has(f) && all[f] !== undefined) out[f] = all[f];
  return {
    expand: 'renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations',
    id: String(issue.id),
    self: `${ctx.origin}/rest/api/2/issue/${issue.id}`,
    key: issue.key,
    fields: out,
  };
}

/** An issue by numeric id or by key (keys match case-insensitively, as in Jira URLs); 404 otherwise. */
function requireJiraIssue(ctx: Ctx): Issue {
  const ref = String(ctx.params.issueIdOrKey);
  const issue = /^\d+$/.test(ref)
    ? ctx.store.issues.get(Number(ref))
    : ctx.store.issues.find((i) => lower(i.key) === lower(ref));
  if (!issue) throw notFound(NOT_VISIBLE);
  return issue;
}

function projectByIdOrKey(store: Store, ref: string): Project | undefined {
  return /^\d+$/.test(ref) ? store.projects.get(Number(ref)) : store.projects.find((p) => lower(p.key) === lower(ref));
}

/** Transitions offered from the issue's status: those listing it, and global ones that lead elsewhere. */
function offeredTransitions(store: Store, issue: Issue): Transition[] {
  const from = lower(issue.status);
  return store.transitions
    .filter((t) => lower(t.to) !== from && (t.from.length === 0 || t.from.some((s) => lower(s) === from)))
    .sort((a, b) => a.id - b.id);
}

function cannotBeSet(field: string): ServiceError {
  return new ServiceError(400, `Field '${field}' cannot be set. It is not on the appropriate screen, or unknown.`, {
    field,
  });
}

function loginInfo(store: Store, user: User): Record<string, unknown> {
  const sessions = store.sessions.filter((s) => s.userId === user.id).sort((a, b) => a.createdAt - b.createdAt);
  const previous = sessions.at(-2);
  return {
    failedLoginCount: 0,
    loginCount: sessions.length,
    ...(previous ? { previousLoginTime: jiraTime(previous.createdAt) } : {}),
  };
}

// -------------------------------------------------------------------------------------------------------------
// JQL: the subset a reporter needs. `field op value` clauses joined by AND, then an optional ORDER BY.

/** One `field op value(s)` clause; `negated` for `!=`, `!~` and `not in`. */
export interface JqlClause {
  field: 'project' | 'issuetype' | 'status' | 'resolution' | 'labels' | 'key' | 'summary' | 'description' | 'text';
  negated: boolean;
  values: string[];
}

export interface JqlQuery {
  clauses: JqlClause[];
  orderBy: { field: string; direction: 'ASC' | 'DESC' }[];
}

interface Token {
  kind: 'word' | 'string' | 'op' | 'punct' | 'end';
  text: string;
  /** 0-based character offset. */
  pos: number;
}

const JQL_FIELDS: Record<string, JqlClause['field']> = {
  project: 'project',
  issuetype: 'issuetype',
  type: 'issuetype',
  status: 'status',
  resolution: 'resolution',
  labels: 'labels',
  key: 'key',
  issuekey: 'key',
  id: 'key',
  summary: 'summary',
  description: 'description',
  text: 'text',
};

const SORT_FIELDS = new Set(['created', 'updated', 'key', 'id', 'summary']);

function jqlError(message: string, at?: Token): ServiceError {
  const where = at ? ` (line 1, character ${at.pos + 1})` : '';
  return new ServiceError(400, `Error in the JQL Query: ${message}${where}.`);
}

const shown = (t: Token) => (t.kind === 'end' ? 'the end of the query' : `'${t.text}'`);

function tokenize(jql: string): Token[] {
  const out: Token[] = [];
  const word = /[^\s"'=!~<>(),]+/y;
  let i = 0;
  while (i < jql.length) {
    const ch = jql[i] ?? '';
    if (/\s/.test(ch)) {
      i += 1;
    } else if (ch === '"' || ch === "'") {
      let j = i + 1;
      let text = '';
      while (j < jql.length && jql[j] !== ch) {
        if (jql[j] === '\\' && j + 1 < jql.length) {
          text += jql[j + 1];
          j += 2;
        } else {
          text += jql[j];
          j += 1;
        }
      }
      if (j >= jql.length) throw jqlError(`the quoted string starting at character ${i + 1} is not closed`);
      out.push({ kind: 'string', text, pos: i });
      i = j + 1;
    } else if (['!=', '!~', '>=', '<='].includes(jql.slice(i, i + 2))) {
      out.push({ kind: 'op', text: jql.slice(i, i + 2), pos: i });
      i += 2;
    } else if ('=~<>'.includes(ch)) {
      out.push({ kind: 'op', text: ch, pos: i });
      i += 1;
    } else if ('(),'.includes(ch)) {
      out.push({ kind: 'punct', text: ch, pos: i });
      i += 1;
    } else {
      word.lastIndex = i;
      const m = word.exec(jql);
      if (!m) throw jqlError(`the character '${ch}' is not expected here`, { kind: 'op', text: ch, pos: i });
      out.push({ kind: 'word', text: m[0], pos: i });
      i += m[0].length;
    }
  }
  out.push({ kind: 'end', text: '', pos: jql.length });
  return out;
}

/**
 * Parses the JQL subset: `project`, `issuetype` (or `type`), `status`, `resolution`, `labels`, `key` with `=`, `!=`,
 * `in (...)` and `not in (...)`; `summary`, `description` and `text` (either) with `~` and `!~` (case-insensitive contains); values bare or quoted;
 * clauses joined by AND; `ORDER BY created|updated|key|id|summary [ASC|DESC], ...`. Anything else is a 400 naming
 * what was expected and where.
 */
export function parseJql(jql: string): JqlQuery {
  const tokens = tokenize(jql);
  let at = 0;
  const peek = (): Token => tokens[at] ?? (tokens[tokens.length - 1] as Token);
  const next = (): Token => {
    const t = peek();
    if (t.kind !== 'end') at += 1;
    return t;
  };
  const isWord = (t: Token, w: string) => t.kind === 'word' && t.text.toLowerCase() === w;

  const value = (): string => {
    const t = next();
    if (t.kind !== 'word' && t.kind !== 'string') throw jqlError(`Expecting a value but got ${shown(t)}`, t);
    return t.text;
  };

  const clause = (): JqlClause => {
    const f = next();
    if (f.kind !== 'word' && f.kind !== 'string') throw jqlError(`Expecting a field name but got ${shown(f)}`, f);
    const field = JQL_FIELDS[f.text.toLowerCase()];
    if (!field) {
      throw new ServiceError(400, `Field '${f.text}' does not exist or you do not have permission to view it.`);
    }
    const o = next();
    let op: string;
    if (o.kind === 'op') op = o.text;
    else if (isWord(o, 'in')) op = 'in';
    else if (isWord(o, 'not') && isWord(peek(), 'in')) {
      next();
      op = 'not in';
    } else {
      throw jqlError(
        `Expecting operator but got ${shown(o)}. The valid operators are '=', '!=', '~', '!~', 'in' and 'not in'`,
        o,
      );
    }
    const textField = field === 'summary' || field === 'description' || field === 'text';
    const allowed = textField ? ['~', '!~'] : ['=', '!=', 'in', 'not in'];
    if (!allowed.includes(op))
      throw new ServiceError(400, `The operator '${op}' is not supported by the '${f.text}' field.`);
    const values: string[] = [];
    if (op === 'in' || op === 'not in') {
      const open = next();
      if (open.text !== '(' || open.kind !== 'punct') throw jqlError(`Expecting '(' but got ${shown(open)}`, open);
      values.push(value());
      while (peek().kind === 'punct' && peek().text === ',') {
        next();
        values.push(value());
      }
      const close = next();
      if (close.text !== ')' || close.kind !== 'punct') {
        throw jqlError(`Expecting ',' or ')' but got ${shown(close)}`, close);
      }
    } else values.push(value());
    return { field, negated: op === '!=' || op === '!~' || op === 'not in', values };
  };

  const clauses: JqlClause[] = [];
  const orderBy: JqlQuery['orderBy'] = [];
  if (peek().kind !== 'end' && !isWord(peek(), 'order')) {
    clauses.push(clause());
    while (isWord(peek(), 'and')) {
      next();
      clauses.push(clause());
    }
  }
  if (isWord(peek(), 'order')) {
    next();
    const by = next();
    if (!isWord(by, 'by')) throw jqlError(`Expecting 'by' after 'order' but got ${shown(by)}`, by);
    do {
      const f = next();
      const field = f.text.toLowerCase();
      if ((f.kind !== 'word' && f.kind !== 'string') || !SORT_FIELDS.has(field)) {
        throw jqlError(`Expecting a sort field (${[...SORT_FIELDS].join(', ')}) but got ${shown(f)}`, f);
      }
      let direction: 'ASC' | 'DESC' = 'ASC';
      if (isWord(peek(), 'asc') || isWord(peek(), 'desc')) direction = next().text.toUpperCase() as 'ASC' | 'DESC';
      orderBy.push({ field: field === 'key' ? 'id' : field, direction });
    } while (peek().kind === 'punct' && peek().text === ',' && next());
  }
  const rest = peek();
  if (rest.kind !== 'end') {
    const hint = isWord(rest, 'or') ? ' (OR is not supported by the emulator: use AND or in (...))' : '';
    throw jqlError(`Expecting 'AND' or 'ORDER BY' but got ${shown(rest)}${hint}`, rest);
  }
  return { clauses, orderBy };
}

// -------------------------------------------------------------------------------------------------------------
// JQL evaluation

function knownStatuses(store: Store): string[] {
  const names = new Set<string>(Object.keys(STATUSES));
  for (const i of store.issues.all()) names.add(i.status);
  for (const t of store.transitions.all()) names.add(t.to);
  return [...names];
}

function knownTypes(store: Store): string[] {
  const names = new Set<string>(ISSUE_TYPES.map((t) => t.name));
  for (const i of store.issues.all()) names.add(i.type);
  return [...names];
}

function noSuchValue(value: string, field: string): ServiceError {
  return new ServiceError(400, `The value '${value}' does not exist for the field '${field}'.`);
}

/** Turns a clause into a predicate, refusing values Jira would not know (Jira answers 400 for those too). */
function predicate(store: Store, c: JqlClause): (i: Issue) => boolean {
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
    case 'key':
      test = (i) => values.some((v) => lower(v) === lower(i.key) || v === String(i.id));
      break;
    case 'summary': {
      const text = lower(values[0] ?? '');
      test = (i) => lower(i.summary).includes(text);
      break;
    }
    case 'description': {
      const text = lower(values[0] ?? '');
      test = (i) => lower(i.description ?? '').includes(text);
      break;
    }
    case 'text': {
      const text = lower(values[0] ?? '');
      test = (i) => lower(i.summary).includes(text) || lower(i.description ?? '').includes(text);
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

function runJql(store: Store, q: JqlQuery): Issue[] {
  const tests = q.clauses.map((c) => predicate(store, c));
  const hits = store.issues.filter((i) => tests.every((t) => t(i)));
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

const MAX_RESULTS = 1000;

export const jiraHandlers: Record<string, Handler> = {
  'jira.myself': (ctx) => {
    const user = ctx.user;
    const expand = String(ctx.query.expand ?? '').split(',');
    const groups = groupsOf(user);
    return {
      ...presentUser(ctx, user),
      deleted: false,
      locale: 'en_US',
      // Like Jira, the items are listed only when expanded; the size always.
      groups: {
        size: groups.length,
        items: expand.includes('groups')
          ? groups.map((name) => ({ name, self: `${ctx.origin}/rest/api/2/group?groupname=${name}` }))
          : [],
      },
      applicationRoles: {
        size: 1,
        items: expand.includes('applicationRoles') ? [{ key: 'jira-software', name: 'Jira Software' }] : [],
      },
      expand: 'groups,applicationRoles',
    };
  },

  'jira.project': (ctx) => {
    const ref = String(ctx.params.projectIdOrKey);
    const p = projectByIdOrKey(ctx.store, ref);
    if (!p) {
      throw notFound(`No project could be found with ${/^\d+$/.test(ref) ? 'id' : 'key'} '${ref}'.`);
    }
    const lead = ctx.store.users.find((u) => u.admin) ?? ctx.store.users.all()[0];
    return {
      expand: 'description,lead,url,projectKeys',
      ...presentProjectRef(ctx, p),
      description: '',
      lead: lead ? presentUser(ctx, lead) : undefined,
      components: [],
      issueTypes: projectIssueTypes(ctx.store, p).map((name) => presentIssueType(ctx, name)),
      assigneeType: 'UNASSIGNED',
      versions: [],
      roles: {},
      archived: false,
    };
  },

  'jira.createIssue': (ctx) => {
    const f = ctx.body.fields as Record<string, any>;
    const settable = new Set(['project', 'summary', 'description', 'issuetype', 'labels']);
    for (const k of Object.keys(f)) if (!settable.has(k)) throw cannotBeSet(k);

    if (!f.project || (f.project.key === undefined && f.project.id === undefined)) {
      throw new ServiceError(400, 'project is required', { field: 'project' });
    }
    const project =
      f.project.id !== undefined
        ? ctx.store.projects.get(Number(f.project.id))
        : projectByIdOrKey(ctx.store, String(f.project.key));
    if (!project) throw new ServiceError(400, 'valid project is required', { field: 'project' });

    if (!f.issuetype || (f.issuetype.id === undefined && f.issuetype.name === undefined)) {
      throw new ServiceError(400, 'issue type is required', { field: 'issuetype' });
    }
    const offered = projectIssueTypes(ctx.store, project);
    const type =
      f.issuetype.id !== undefined
        ? offered.find((n) => issueTypeOf(n).id === String(f.issuetype.id))
        : offered.find((n) => lower(n) === lower(String(f.issuetype.name)));
    if (!type) throw new ServiceError(400, 'valid issue type is required', { field: 'issuetype' });

    const summary = typeof f.summary === 'string' ? f.summary.trim() : '';
    if (summary === '') throw new ServiceError(400, 'You must specify a summary of the issue.', { field: 'summary' });
    if (/[\r\n]/.test(summary)) {
      throw new ServiceError(400, 'The summary is invalid because it contains newline characters.', {
        field: 'summary',
      });
    }
    if (summary.length > 255) {
      throw new ServiceError(400, 'Summary must be less than 255 characters.', { field: 'summary' });
    }
    const labels = (f.labels ?? []) as string[];
    for (const label of labels) {
      if (/\s/.test(label) || label === '') {
        throw new ServiceError(400, `The label '${label}' contains spaces which is invalid.`, { field: 'labels' });
      }
    }

    project.issueCounter += 1;
    ctx.store.projects.update(project);
    const now = ctx.now();
    const issue = ctx.store.issues.insert({
      key: `${project.key}-${project.issueCounter}`,
      projectId: project.id,
      type,
      summary,
      description: f.description ?? '',
      status: 'Open',
      resolution: null,
      labels: [...new Set(labels)],
      reporter: ctx.user.name,
      created: now,
      updated: now,
      automationReference: null,
    });
    return new Reply(201, {
      id: String(issue.id),
      key: issue.key,
      self: `${ctx.origin}/rest/api/2/issue/${issue.id}`,
    });
  },

  'jira.issue': (ctx) => presentIssue(ctx, requireJiraIssue(ctx), selectFields(ctx.query.fields)),

  'jira.transitions': (ctx) => {
    const issue = requireJiraIssue(ctx);
    const only = ctx.query.transitionId as string | undefined;
    return {
      expand: 'transitions',
      transitions: offeredTransitions(ctx.store, issue)
        .filter((t) => only === undefined || String(t.id) === only)
        .map((t) => ({
          id: String(t.id),
          name: t.name,
          to: presentStatus(ctx, t.to),
          hasScreen: false,
          isGlobal: t.from.length === 0,
          isInitial: false,
          isAvailable: true,
          isConditional: false,
        })),
    };
  },

  'jira.transition': (ctx) => {
    const issue = requireJiraIssue(ctx);
    const wanted = String(ctx.body.transition.id);
    const t = offeredTransitions(ctx.store, issue).find((x) => String(x.id) === wanted);
    if (!t) throw new ServiceError(400, `Transition id '${wanted}' is not valid for this issue.`);
    const fields = (ctx.body.fields ?? {}) as Record<string, any>;
    let resolution = t.resolution;
    for (const k of Object.keys(fields)) if (k !== 'resolution') throw cannotBeSet(k);
    if (fields.resolution !== undefined) {
      // Only a resolving transition has the resolution on its screen.
      if (t.resolution === null) throw cannotBeSet('resolution');
      const r = fields.resolution as { id?: string | number; name?: string };
      const name = Object.keys(RESOLUTIONS).find((n) =>
        r.id !== undefined ? RESOLUTIONS[n] === String(r.id) : lower(n) === lower(String(r.name)),
      );
      if (!name) {
        throw new ServiceError(400, `Resolution '${r.name ?? r.id}' does not exist.`, { field: 'resolution' });
      }
      resolution = name;
    }
    issue.status = t.to;
    issue.resolution = resolution;
    issue.updated = ctx.now();
    ctx.store.issues.update(issue);
    return new Reply(204, undefined);
  },

  'jira.search': (ctx) => {
    const query = parseJql(String(ctx.query.jql ?? ''));
    const hits = runJql(ctx.store, query);
    const startAt = (ctx.query.startAt as number | undefined) ?? 0;
    const maxResults = Math.min((ctx.query.maxResults as number | undefined) ?? 50, MAX_RESULTS);
    const fields = selectFields(ctx.query.fields);
    return {
      expand: 'schema,names',
      startAt,
      maxResults,
      total: hits.length,
      issues: hits.slice(startAt, startAt + maxResults).map((i) => presentIssue(ctx, i, fields)),
    };
  },

  'jira.login': (ctx) => {
    const { username, password } = ctx.body as { username: string; password: string };
    const user = ctx.store.users.find((u) => u.name === username);
    // A session login takes the password only (a personal access token is a Bearer credential).
    if (!user || user.password !== password) throw new ServiceError(401, 'Login failed');
    const session = openSession(ctx.store, user, ctx.now());
    return new Reply(
      200,
      { session: { name: 'JSESSIONID', value: session.id }, loginInfo: loginInfo(ctx.store, user) },
      { 'set-cookie': session.cookie },
    );
  },

  'jira.session': (ctx) => ({
    self: `${ctx.origin}/rest/api/latest/user?username=${encodeURIComponent(ctx.user.name)}`,
    name: ctx.user.name,
    loginInfo: loginInfo(ctx.store, ctx.user),
  }),

  'jira.logout': (ctx) => {
    const sid = parseCookies(typeof ctx.headers.cookie === 'string' ? ctx.headers.cookie : undefined).JSESSIONID;
    if (sid && ctx.store.sessions.get(sid)?.userId === ctx.user.id) ctx.store.sessions.remove(sid);
    return new Reply(204, undefined, { 'set-cookie': 'JSESSIONID=; Path=/; Max-Age=0; HttpOnly' });
  },
};
