import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/client/errors.js';
import type { TestManagementClient } from '../../src/client/tm.js';
import { CaseIndex } from '../../src/engine/cases/search-index.js';

/**
 * The project's cases as a re-read sees them (search-index.ts): it leaves out the cases this process made but its
 * newest, decides them by the newest, and moves its floor past them by when they were made. Against a fake
 * search that answers what it holds above `id > N`, minus `id not in (…)`.
 */

interface Issue {
  id: string;
  key: string;
  fields: Record<string, unknown>;
}

function fakeSearch({ refuseNotIn = false } = {}) {
  const issues: Issue[] = [];
  const asked: string[] = [];
  const answer = async (input: { jql: string; maxResults: number }) => {
    asked.push(input.jql);
    // A Jira whose JQL validation refuses an id it does not have (a case deleted since it was made).
    if (refuseNotIn && input.jql.includes('not in')) {
      throw new ValidationError('HTTP 400', "An issue with key '1001' does not exist for field 'id'.", {});
    }
    const after = Number(/id > (\d+)/.exec(input.jql)?.[1] ?? 0);
    const out = new Set((/id not in \(([^)]*)\)/.exec(input.jql)?.[1] ?? '').split(',').filter(Boolean));
    const found = issues.filter((i) => Number(i.id) > after && !out.has(i.id));
    return { startAt: 0, maxResults: input.maxResults, total: found.length, issues: found };
  };
  const tm = { jira: { search: answer, searchPost: answer } } as unknown as TestManagementClient;
  /** A case as a create makes it: in the search from now on, created now (one clock for both sides here). */
  const make = (n: number, identity: string): Issue => {
    const issue = {
      id: String(1000 + n),
      key: `P-${n}`,
      fields: { description: `casebridge-id: ${identity}`, created: new Date().toISOString(), status: {} },
    };
    issues.push(issue);
    return issue;
  };
  return { tm, asked, make };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const identityOf = (d: string) => /casebridge-id: (\S+)/.exec(d)?.[1];

describe("a re-read and this process's own cases", () => {
  it('leaves them out but the newest; the newest shown decides the older ones; the floor passes them once old enough', async () => {
    const f = fakeSearch();
    const index = new CaseIndex({ tm: f.tm, project: 'P', identityOf, indexLagMs: 100 });
    await index.ready();
    for (const n of [1, 2]) index.add(`t${n}`, f.make(n, `t${n}`).key, 1000 + n);
    await sleep(150);
    // Another machine's case, then this process's newest.
    f.make(3, 'other');
    index.add('t4', f.make(4, 't4').key, 1004);
    await index.refresh();
    const reread = f.asked[1] as string;
    expect(reread).toContain('id not in (1001,1002)');
    expect(reread).not.toMatch(/not in \([^)]*1004/);
    // The read answered the other machine's case and the newest of this process's: those made before it are shown.
    expect(index.casesOf('other').map((c) => c.key)).toEqual(['P-3']);
    expect(['P-1', 'P-2', 'P-4'].map((k) => index.shown(k))).toEqual([true, true, true]);
    // P-1 and P-2 were made 150 ms before the last read began, more than the index lag (100 ms): the next re-read
    // starts above them, though no read answered their creation time.
    expect(index.floor()).toBe(1002);
  });

  it('a case of its own not yet in the index is not shown by a read that answers only older cases', async () => {
    const f = fakeSearch();
    const index = new CaseIndex({ tm: f.tm, project: 'P', identityOf, indexLagMs: 100 });
    await index.ready();
    f.make(1, 'other');
    // Made, but the (lagging) search does not have it yet.
    index.add('t2', 'P-2', 1002);
    await index.refresh();
    expect(index.shown('P-2')).toBe(false);
    expect(index.shown('P-1')).toBe(true);
  });

  it('a Jira that refuses the ids left out: the re-read reads them all, and so does every later one', async () => {
    const f = fakeSearch({ refuseNotIn: true });
    const index = new CaseIndex({ tm: f.tm, project: 'P', identityOf, indexLagMs: 100 });
    await index.ready();
    for (const n of [1, 2, 3]) index.add(`t${n}`, f.make(n, `t${n}`).key, 1000 + n);
    await index.refresh();
    expect(['P-1', 'P-2', 'P-3'].map((k) => index.shown(k))).toEqual([true, true, true]);
    index.add('t4', f.make(4, 't4').key, 1004);
    await index.refresh();
    expect(index.shown('P-4')).toBe(true);
    // The refused read, then the same read whole, then a later read that leaves nothing out.
    expect(f.asked.slice(1).map((q) => q.includes('not in'))).toEqual([true, false, false]);
  });
});
