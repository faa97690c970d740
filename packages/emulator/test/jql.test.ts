import { describe, expect, it } from 'vitest';
import { type JqlClause, jqlDate, parseJql } from '../src/jira/jql.js';
import { stem, terms, textMatcher } from '../src/jira/text-search.js';
import { ServiceError } from '../src/service/context.js';

/**
 * The JQL parser on its own (the search operation's evaluation of a query is tested through the service in
 * jira.test.ts): the subset it reads, and the 400 it answers for anything else, naming what it expected and where.
 */

/** The clauses of a query without OR groups. */
const plain = (jql: string) => parseJql(jql).clauses as JqlClause[];

/** The error `parseJql` throws for `jql`. */
function refusal(jql: string): ServiceError {
  try {
    parseJql(jql);
  } catch (err) {
    expect(err).toBeInstanceOf(ServiceError);
    return err as ServiceError;
  }
  throw new Error(`expected ${JSON.stringify(jql)} to be refused`);
}

describe('parseJql', () => {
  it('reads an empty query as no clauses and no order', () => {
    expect(parseJql('')).toEqual({ clauses: [], orderBy: [] });
    expect(parseJql('   ')).toEqual({ clauses: [], orderBy: [] });
  });

  it('reads = and != clauses joined by AND, in any letter case', () => {
    expect(parseJql('project = DEMO and issuetype != Bug AND Status=Open')).toEqual({
      clauses: [
        { field: 'project', negated: false, values: ['DEMO'] },
        { field: 'issuetype', negated: true, values: ['Bug'] },
        { field: 'status', negated: false, values: ['Open'] },
      ],
      orderBy: [],
    });
  });

  it('maps the field aliases: type, issuekey and id', () => {
    expect(plain('type = Bug AND issuekey = DEMO-1 AND id = 10 AND key = DEMO-2').map((c) => c.field)).toEqual([
      'issuetype',
      'key',
      'key',
      'key',
    ]);
  });

  it('reads ~ and !~ on the text fields', () => {
    expect(parseJql('summary ~ login AND description !~ "flaky test" AND text ~ checkout').clauses).toEqual([
      { field: 'summary', negated: false, values: ['login'] },
      { field: 'description', negated: true, values: ['flaky test'] },
      { field: 'text', negated: false, values: ['checkout'] },
    ]);
  });

  it('reads in (...) and not in (...) with bare and quoted values', () => {
    expect(parseJql('labels in (smoke, "nightly run", \'e2e\') AND resolution NOT IN (Fixed)').clauses).toEqual([
      { field: 'labels', negated: false, values: ['smoke', 'nightly run', 'e2e'] },
      { field: 'resolution', negated: true, values: ['Fixed'] },
    ]);
  });

  it('reads quoted values: double or single quotes, a backslash escapes the next character', () => {
    const q = plain(String.raw`status = "In Progress" AND summary ~ 'don"t' AND labels = "a\"b" AND key = 'x\\y'`);
    expect(q.map((c) => c.values[0])).toEqual(['In Progress', 'don"t', 'a"b', 'x\\y']);
  });

  it('reads a quoted field name', () => {
    expect(parseJql('"project" = DEMO').clauses).toEqual([{ field: 'project', negated: false, values: ['DEMO'] }]);
  });

  it('reads ORDER BY with several fields and directions (key sorts as id; ASC by default)', () => {
    expect(parseJql('project = DEMO ORDER BY created DESC, key, summary asc').orderBy).toEqual([
      { field: 'created', direction: 'DESC' },
      { field: 'id', direction: 'ASC' },
      { field: 'summary', direction: 'ASC' },
    ]);
    expect(parseJql('order by updated desc')).toEqual({
      clauses: [],
      orderBy: [{ field: 'updated', direction: 'DESC' }],
    });
  });

  it('reads a parenthesised group of clauses joined by OR as one clause', () => {
    expect(parseJql('project = P AND (summary ~ "cb-a" OR summary ~ "cb-b") AND id > 7').clauses).toEqual([
      { field: 'project', negated: false, values: ['P'] },
      {
        any: [
          { field: 'summary', negated: false, values: ['cb-a'] },
          { field: 'summary', negated: false, values: ['cb-b'] },
        ],
      },
      { field: 'key', negated: false, values: ['7'], range: '>' },
    ]);
    expect(refusal('project = P AND (summary ~ a AND summary ~ b)').message).toContain("Expecting 'OR' or ')'");
  });

  it('refuses a top-level OR with a hint, and says where', () => {
    const err = refusal('project = DEMO OR project = OTHER');
    expect(err.status).toBe(400);
    expect(err.message).toBe(
      "Error in the JQL Query: Expecting 'AND' or 'ORDER BY' but got 'OR' (the emulator takes OR inside parentheses only: a AND (b OR c)) (line 1, character 16).",
    );
  });

  it('refuses an unknown field, and an operator the field does not take', () => {
    expect(refusal('assignee = me').message).toBe(
      "Field 'assignee' does not exist or you do not have permission to view it.",
    );
    expect(refusal('summary = login').message).toBe("The operator '=' is not supported by the 'summary' field.");
    expect(refusal('status ~ Open').message).toBe("The operator '~' is not supported by the 'status' field.");
    expect(refusal('status > Open').message).toBe("The operator '>' is not supported by the 'status' field.");
  });

  it('names what it expected and the character where it did not find it', () => {
    const cases: [string, string][] = [
      [
        'project',
        "Expecting operator but got the end of the query. The valid operators are '=', '!=', '~', '!~', 'in' and 'not in'; '>', '>=', '<' and '<=' on key, id, created and updated (line 1, character 8)",
      ],
      ['project =', 'Expecting a value but got the end of the query (line 1, character 10)'],
      ['project = (', "Expecting a value but got '(' (line 1, character 11)"],
      ['= DEMO', "Expecting a field name but got '=' (line 1, character 1)"],
      ['labels in smoke', "Expecting '(' but got 'smoke' (line 1, character 11)"],
      ['labels in (a b)', "Expecting ',' or ')' but got 'b' (line 1, character 14)"],
      ['project = DEMO ORDER created', "Expecting 'by' after 'order' but got 'created' (line 1, character 22)"],
      [
        'ORDER BY status',
        "Expecting a sort field (created, updated, key, id, summary) but got 'status' (line 1, character 10)",
      ],
      ['project = DEMO AND', 'Expecting a field name but got the end of the query (line 1, character 19)'],
      ['summary ~ "open', 'the quoted string starting at character 11 is not closed'],
      ['project = DEMO "x"', "Expecting 'AND' or 'ORDER BY' but got 'x' (line 1, character 16)"],
    ];
    for (const [jql, message] of cases) {
      const err = refusal(jql);
      expect(err.status, jql).toBe(400);
      expect(err.message, jql).toContain(message);
      expect(err.message, jql).toMatch(/^(Error in the JQL Query: )/);
    }
  });
});

describe('parseJql: ranges for keyset paging', () => {
  it('reads > >= < <= on id, key, issuekey, created and updated', () => {
    const q = parseJql('project = X AND description ~ "casebridge" AND id > 12345 ORDER BY id ASC');
    expect(q).toEqual({
      clauses: [
        { field: 'project', negated: false, values: ['X'] },
        { field: 'description', negated: false, values: ['casebridge'] },
        { field: 'key', negated: false, values: ['12345'], range: '>' },
      ],
      orderBy: [{ field: 'id', direction: 'ASC' }],
    });
    const r = plain('key >= DEMO-5 AND issuekey < "DEMO-9" AND created <= "-5m" AND updated > "2026/11/25 10:00"');
    expect(r.map((c) => [c.field, c.range, c.values[0]])).toEqual([
      ['key', '>=', 'DEMO-5'],
      ['key', '<', 'DEMO-9'],
      ['created', '<=', '-5m'],
      ['updated', '>', '2026/11/25 10:00'],
    ]);
    expect(parseJql('created = "2026-11-25"').clauses[0]).toEqual({
      field: 'created',
      negated: false,
      values: ['2026-11-25'],
    });
  });

  it('refuses a range on a field without an order, and ~ on a date', () => {
    expect(refusal('labels > a').message).toBe("The operator '>' is not supported by the 'labels' field.");
    expect(refusal('created ~ "-1h"').message).toBe("The operator '~' is not supported by the 'created' field.");
  });
});

describe('jqlDate', () => {
  const now = Date.UTC(2026, 10, 25, 12, 0);
  it('reads periods from now, and dates with or without a time, as UTC', () => {
    expect(jqlDate('-5m', 'created', now).at).toBe(now - 5 * 60_000);
    expect(jqlDate('-1h', 'created', now).at).toBe(now - 3_600_000);
    expect(jqlDate('-2d', 'created', now).at).toBe(now - 2 * 86_400_000);
    expect(jqlDate('4w 2d', 'created', now).at).toBe(now + 30 * 86_400_000);
    expect(jqlDate('2026/11/25 10:00', 'created', now)).toEqual({ at: Date.UTC(2026, 10, 25, 10, 0), width: 60_000 });
    expect(jqlDate('2026-11-25 10:00', 'created', now).at).toBe(Date.UTC(2026, 10, 25, 10, 0));
    expect(jqlDate('2026-11-25', 'created', now)).toEqual({ at: Date.UTC(2026, 10, 25), width: 86_400_000 });
  });

  it("refuses anything else with Jira's 400 naming the value, the field and the formats", () => {
    for (const v of ['yesterday', '2026-13-01', '2026-02-30', '2026/11/25 25:00', '-5x']) {
      expect(() => jqlDate(v, 'updated', now), v).toThrow(`Date value '${v}' for field 'updated' is invalid`);
    }
  });
});

describe('text search (~) as Jira indexes text', () => {
  it('cuts words at reserved characters and spaces, lower-cases and stems them, drops stop words', () => {
    expect(terms('CB-1a2b: Login (fails) on the "checkout" page!')).toEqual([
      'cb',
      '1a2b',
      'login',
      'fail',
      'checkout',
      'page',
    ]);
    expect(['running', 'runs', 'failed', 'failing', 'passes', 'queries', 'stopped'].map(stem)).toEqual([
      'run',
      'run',
      'fail',
      'fail',
      'pass',
      'query',
      'stop',
    ]);
  });

  it('matches whole words in any order, all of them: cb-1a2b finds 1a2b-cb and not cb-1a2c', () => {
    const m = textMatcher('cb-1a2b', 'tokenised');
    expect(m('[cb-1a2b] login fails')).toBe(true);
    expect(m('1a2b and cb, elsewhere')).toBe(true);
    expect(m('cb-1a2c')).toBe(false);
    expect(m('xcb-1a2b')).toBe(false);
    expect(textMatcher('log', 'tokenised')('login')).toBe(false);
    expect(textMatcher('Failing LOGIN', 'tokenised')('login failed')).toBe(true);
    expect(textMatcher('the', 'tokenised')('the end')).toBe(false);
  });

  it('the substring mode (ideal profile) is a case-insensitive contains', () => {
    expect(textMatcher('LOG', 'substring')('login')).toBe(true);
    expect(textMatcher('cb-1a2b', 'substring')('1a2b cb')).toBe(false);
  });
});
