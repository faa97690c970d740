import { describe, expect, it } from 'vitest';
import type { TestManagementClient } from '../../src/client/tm.js';
import { CaseRegistry } from '../../src/engine/cases/registry.js';
import type { TestResult } from '../../src/index.js';

/**
 * When the re-read that decides this run's new cases goes (registry.ts, scheduleRecheck): while creates go on, once
 * the oldest has settled; when they end, the index lag after the newest (a timer set for the oldest is brought
 * forward); and a gap between two waves of creates is not their end (the timer goes back when creates start again).
 * Against a fake Jira that shows every case at once and answers the bulk create after a chosen delay.
 */

const SETTLE = 600;
const EVERY = 200;

function fakeJira(createDelays: number[]) {
  const issues: Array<{ id: string; key: string; fields: Record<string, unknown> }> = [];
  const searches: number[] = [];
  const links: Array<{ path: string; keys: number }> = [];
  const t0 = Date.now();
  let creates = 0;
  const batches: number[] = [];
  const tm = {
    jira: {
      search: async (input: { jql: string; maxResults: number }) => {
        searches.push(Date.now() - t0);
        const after = Number(/id > (\d+)/.exec(input.jql)?.[1] ?? 0);
        const found = issues.filter((i) => Number(i.id) > after);
        return { startAt: 0, maxResults: input.maxResults, total: found.length, issues: found };
      },
      bulkCreateIssues: async (input: { issueUpdates: Array<{ fields: { description: string } }> }) => {
        batches.push(input.issueUpdates.length);
        await new Promise((r) => setTimeout(r, createDelays[creates++] ?? 10));
        const made = input.issueUpdates.map((u) => {
          const id = String(1000 + issues.length);
          const issue = {
            id,
            key: `P-${issues.length + 1}`,
            fields: { description: u.fields.description, created: new Date().toISOString(), status: {} },
          };
          issues.push(issue);
          return { id, key: issue.key, self: '' };
        });
        return { issues: made, errors: [] };
      },
    },
    cases: {
      linkTestCaseToSuite: async (input: { testSuitePath: string; testCaseKeys: string[] }) => {
        links.push({ path: input.testSuitePath, keys: input.testCaseKeys.length });
      },
      addSteps: async () => [],
    },
  } as unknown as TestManagementClient;
  return { tm, searches, links, batches, since: () => Date.now() - t0 };
}

const test = (i: number, file = 'tests/a.spec.ts'): TestResult => ({
  id: `t${i}`,
  file,
  titlePath: [`does thing ${i}`],
  tags: [],
  annotations: [],
  attempts: [{ retry: 0, status: 'passed', durationMs: 1, errors: [], steps: [], attachments: [] }],
});

const registry = (tm: TestManagementClient) =>
  new CaseRegistry({ tm, project: 'P', batchSize: 2, recheckEveryMs: EVERY, indexLagMs: SETTLE });

describe('the re-read that decides new cases', () => {
  it('creates that end after the oldest was answered: the read goes the index lag after the newest, not when the oldest settles', async () => {
    // Two batches at once: the first answered at once, the second 250 ms later (the end of the creates).
    const f = fakeJira([10, 250]);
    const r = registry(f.tm);
    const keys = await Promise.all([0, 1, 2, 3].map((i) => r.keyOf(test(i))));
    const decided = f.since();
    expect(new Set(keys).size).toBe(4);
    expect(f.searches).toHaveLength(2);
    // The newest create was answered at about 250 ms: read at about 450, not at the oldest's 10 + 600.
    expect(f.searches[1]).toBeGreaterThanOrEqual(250 + EVERY - 20);
    expect(f.searches[1]).toBeLessThan(10 + SETTLE - 50);
    expect(decided).toBeLessThan(10 + SETTLE - 50);
    expect(r.created).toHaveLength(4);
  });

  it('a gap between two waves of creates: no read in the gap, one read after the second wave decides both', async () => {
    // The second wave's create takes 150 ms: a read brought forward for the end of the first would go during it.
    const f = fakeJira([10, 150]);
    const r = registry(f.tm);
    const first = Promise.all([0, 1].map((i) => r.keyOf(test(i))));
    // The next tests come 140 ms after the first wave ended (before its read would go at +200 ms).
    await new Promise((res) => setTimeout(res, 150));
    const second = Promise.all([2, 3].map((i) => r.keyOf(test(i))));
    const keys = [...(await first), ...(await second)];
    expect(new Set(keys).size).toBe(4);
    // The first read of the project, then one re-read: none in the gap.
    expect(f.searches).toHaveLength(2);
    expect(r.created).toHaveLength(4);
  });
});

describe('filing new cases in their suites', () => {
  it("three files of 6 tests, a file's results together, 2 a create: one link per file, all its cases in it", async () => {
    const f = fakeJira([]);
    const r = new CaseRegistry({ tm: f.tm, project: 'P', batchSize: 2, recheckEveryMs: EVERY, indexLagMs: SETTLE });
    const files = ['tests/a.spec.ts', 'tests/b.spec.ts', 'tests/c.spec.ts'];
    const all: Array<Promise<string>> = [];
    for (const [n, file] of files.entries()) {
      for (let i = 0; i < 6; i++) all.push(r.keyOf(test(n * 10 + i, file)));
      await new Promise((res) => setTimeout(res, 30));
    }
    await Promise.all(all);
    expect(f.links.map((l) => l.path).sort()).toEqual(['tests/a', 'tests/b', 'tests/c']);
    expect(f.links.every((l) => l.keys === 6)).toBe(true);
  });
});

describe('gathering new tests into batches', () => {
  it('tests one by one (Playwright), faster than GATHER_MS apart: full batches of 50, the rest once they stop', async () => {
    const f = fakeJira([]);
    const r = new CaseRegistry({ tm: f.tm, project: 'P', recheckEveryMs: EVERY, indexLagMs: SETTLE });
    const all: Array<Promise<string>> = [];
    for (let i = 0; i < 120; i++) {
      all.push(r.keyOf(test(i)));
      await new Promise((res) => setTimeout(res, 4));
    }
    await Promise.all(all);
    // Sent whenever a create ended, the batches held what came in a round trip and 100 ms: 20 or so each.
    expect(f.batches.reduce((a, b) => a + b, 0)).toBe(120);
    expect(f.batches.length).toBeLessThanOrEqual(4);
    expect(f.batches.slice(0, 2)).toEqual([50, 50]);
  });
});
