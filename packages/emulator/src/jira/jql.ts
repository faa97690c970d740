import { ServiceError } from '../service/context.js';

/**
 * JQL, the subset a reporter needs: `field op value` clauses joined by AND (a clause may be a parenthesised group of
 * clauses joined by OR: `a AND (b OR c)`), then an optional ORDER BY. The parser is pure (text in, query out); the
 * Jira search handler evaluates the query against the store. A query outside the subset is Jira's 400 naming what
 * was expected and where (a top-level OR included: the emulator takes OR inside parentheses only).
 */

/**
 * One `field op value(s)` clause; `negated` for `!=`, `!~` and `not in`. `range` is set for the comparisons
 * `>`, `>=`, `<`, `<=` (on `key`/`issuekey`/`id`, `created` and `updated`), which keyset paging uses.
 */
export interface JqlClause {
  field:
    | 'project'
    | 'issuetype'
    | 'status'
    | 'resolution'
    | 'labels'
    | 'fixVersion'
    | 'key'
    | 'summary'
    | 'description'
    | 'text'
    | 'created'
    | 'updated';
  negated: boolean;
  values: string[];
  range?: '>' | '>=' | '<' | '<=';
}

/** A parenthesised group of clauses joined by OR: true when any of them is. */
export interface JqlAny {
  any: JqlClause[];
}

export interface JqlQuery {
  /** Joined by AND. */
  clauses: Array<JqlClause | JqlAny>;
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
  fixversion: 'fixVersion',
  key: 'key',
  issuekey: 'key',
  id: 'key',
  summary: 'summary',
  description: 'description',
  text: 'text',
  created: 'created',
  createddate: 'created',
  updated: 'updated',
  updateddate: 'updated',
};

const RANGE_OPS = ['>', '>=', '<', '<='] as const;

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
 * Parses the JQL subset: `project`, `issuetype` (or `type`), `status`, `resolution`, `labels`, `fixVersion` (a
 * version's name or id), `key` with `=`, `!=`, `in (...)` and `not in (...)`; `key` (`issuekey`, `id`), `created`
 * and `updated` also with `>`, `>=`, `<`, `<=`; `summary`, `description` and `text` (either) with `~` and `!~` (see
 * text-search.ts); values bare or quoted; clauses joined by AND, a parenthesised group of clauses joined by OR as one
 * of them; `ORDER BY created|updated|key|id|summary [ASC|DESC], ...`. Anything else is a 400 naming what was expected
 * and where.
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
        `Expecting operator but got ${shown(o)}. The valid operators are '=', '!=', '~', '!~', 'in' and 'not in'; '>', '>=', '<' and '<=' on key, id, created and updated`,
        o,
      );
    }
    const textField = field === 'summary' || field === 'description' || field === 'text';
    const ordered = field === 'key' || field === 'created' || field === 'updated';
    const allowed = textField
      ? ['~', '!~']
      : ordered
        ? ['=', '!=', 'in', 'not in', ...RANGE_OPS]
        : ['=', '!=', 'in', 'not in'];
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
    const clause: JqlClause = { field, negated: op === '!=' || op === '!~' || op === 'not in', values };
    if ((RANGE_OPS as readonly string[]).includes(op)) clause.range = op as JqlClause['range'];
    return clause;
  };

  /** A clause, or `( clause OR clause ... )`. */
  const term = (): JqlClause | JqlAny => {
    const open = peek();
    if (open.kind !== 'punct' || open.text !== '(') return clause();
    next();
    const any = [clause()];
    while (isWord(peek(), 'or')) {
      next();
      any.push(clause());
    }
    const close = next();
    if (close.kind !== 'punct' || close.text !== ')')
      throw jqlError(`Expecting 'OR' or ')' but got ${shown(close)}`, close);
    return { any };
  };

  const clauses: Array<JqlClause | JqlAny> = [];
  const orderBy: JqlQuery['orderBy'] = [];
  if (peek().kind !== 'end' && !isWord(peek(), 'order')) {
    clauses.push(term());
    while (isWord(peek(), 'and')) {
      next();
      clauses.push(term());
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
    const hint = isWord(rest, 'or') ? ' (the emulator takes OR inside parentheses only: a AND (b OR c))' : '';
    throw jqlError(`Expecting 'AND' or 'ORDER BY' but got ${shown(rest)}${hint}`, rest);
  }
  return { clauses, orderBy };
}

const UNIT_MS: Record<string, number> = { w: 7 * 86_400_000, d: 86_400_000, h: 3_600_000, m: 60_000 };

/**
 * A date value of JQL (`created >= "-5m"`) as the instant it names and how wide it is (for `=`): a period from now
 * (`-5m`, `-1h`, `-2d`, `-1w`, `4w 2d`, `+1d`), a date and time (`2026/11/25 10:00`, `2026-11-25 10:00`) or a date
 * (`2026/11/25`, `2026-11-25`). Dates and times are read as UTC, the time zone the emulator writes. Anything else
 * is Jira's 400 naming the value, the field and the formats.
 */
export function jqlDate(value: string, field: string, now: number): { at: number; width: number } {
  const v = value.trim();
  const period = /^([+-]?)\s*((?:\d+\s*[wdhm]\s*)+)$/i.exec(v);
  if (period) {
    let ms = 0;
    for (const m of (period[2] ?? '').matchAll(/(\d+)\s*([wdhm])/gi)) {
      ms += Number(m[1]) * (UNIT_MS[(m[2] ?? '').toLowerCase()] ?? 0);
    }
    return { at: now + (period[1] === '-' ? -ms : ms), width: 60_000 };
  }
  const abs = /^(\d{4})[/-](\d{1,2})[/-](\d{1,2})(?:\s+(\d{1,2}):(\d{2}))?$/.exec(v);
  if (abs) {
    const [y, mo, d, h, mi] = abs.slice(1).map((p) => Number(p ?? 0)) as [number, number, number, number, number];
    const at = Date.UTC(y, mo - 1, d, h, mi);
    const date = new Date(at);
    if (h < 24 && mi < 60 && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d) {
      return { at, width: abs[4] === undefined ? 86_400_000 : 60_000 };
    }
  }
  throw new ServiceError(
    400,
    `Date value '${value}' for field '${field}' is invalid. Valid formats include: 'yyyy/MM/dd HH:mm', 'yyyy-MM-dd HH:mm', 'yyyy/MM/dd', 'yyyy-MM-dd', or a period format e.g. '-5d', '4w 2d'.`,
  );
}
