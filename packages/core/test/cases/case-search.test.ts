import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, describe, expect, it } from 'vitest';
import { TestManagementClient } from '../../src/client/tm.js';
import { caseIdentity } from '../../src/engine/cases/registry.js';
import { keysetSearch, SearchIncompleteError } from '../../src/engine/jira/keyset.js';
import { Engine, type EngineContext, type TestResult } from '../../src/index.js';

/**
 * The case registry on projects larger than Jira's search window, against the emulator's realistic Jira (search
 * capped per page, a result window, index lag on two nodes, tokenised `~`): the project's casebridge cases are read
 * by keyset paging, so none is missed and none re-created, however many there are.
 */

const TOKEN = 'case-search-token';
const FILE = 'big.spec.ts';
const title = (i: number) => `case ${i}`;

/** A case as casebridge creates it for test `i`. */
function seededCase(i: number) {
  const name = `${FILE} > ${title(i)}`;
  return {
    type: 'Test Case',
    summary: title(i),
    description: [
      `Created by casebridge for ${FILE}`,
      `casebridge-test: ${name}`,
      `casebridge-id: ${caseIdentity({ file: FILE, titlePath: [title(i)] })}`,
    ].join('\n'),
  };
}

function result(i: number, status: 'passed' | 'failed' = 'passed'): TestResult {
  return {
    id: `${FILE}>${title(i)}`,
    file: FILE,
    titlePath: [title(i)],
    tags: [],
    annotations: [],
    attempts: [{ retry: 0, status, durationMs: 1, errors: [], steps: [], attachments: [] }],
  };
}

const ctx = (cwd: string): EngineContext => ({
  cwd,
  runner: { name: 'jest', version: 'test' },
  env: {},
  out: () => {},
});

const running: RunningEmulator[] = [];
afterAll(async () => {
  for (const e of running) await e.close();
});

/** An emulator whose project BIG holds `count` casebridge cases (BIG-2 ...), all in the plan BIG-1. */
async function bigProject(count: number, jira: Record<string, unknown>, lag = 1000): Promise<RunningEmulator> {
  const cases = Array.from({ length: count }, (_, i) => seededCase(i));
  const emu = await startEmulator({
    port: 0,
    profile: 'realistic',
    jira: { ...jira, indexLagMs: 0 },
    seed: {
      users: [{ name: 'ci', displayName: 'CI', password: 'ci', tokens: [TOKEN], admin: true }],
      projects: [
        {
          key: 'BIG',
          name: 'Big',
          issues: [{ type: 'Test Plan', summary: 'Plan', members: cases.map((_, i) => `BIG-${i + 2}`) }, ...cases],
        },
      ],
    },
  });
  running.push(emu);
  // A team's cases were made over months, not in the second before the run: the seed's are backdated a day, then
  // the index lag is turned on (every node has indexed them).
  const yesterday = Date.now() - 86_400_000;
  for (const issue of emu.store.issues.all())
    emu.store.issues.update({ ...issue, created: yesterday + issue.id * 1000 });
  emu.setJira({ indexLagMs: lag });
  return emu;
}

async function run(emu: RunningEmulator, cycle: string, tests: TestResult[]) {
  const dir = mkdtempSync(join(tmpdir(), 'cb-case-search-'));
  const engine = Engine.create(
    {
      url: emu.url,
      token: TOKEN,
      projectKey: 'BIG',
      mode: 'cycle',
      testPlan: 'BIG-1',
      cycle,
      autoCreate: true,
      defects: { enabled: false },
      flushTimeoutMs: 20_000,
    },
    ctx(dir),
  );
  engine.begin({ tests });
  for (const t of tests) engine.add(t);
  const end = await engine.end();
  const mapping = JSON.parse(readFileSync(join(dir, 'casebridge.keys.json'), 'utf8')) as Record<string, string>;
  return { end, mapping };
}

const testCases = (emu: RunningEmulator) => emu.store.issues.filter((i) => i.type === 'Test Case');
const searches = (emu: RunningEmulator) => emu.requests().filter((r) => r.op === 'jira.search');
function cycleRuns(emu: RunningEmulator, cycle: string) {
  const c = emu.store.cycles.find((x) => x.name === cycle);
  return emu.store.runs
    .filter((r) => r.cycleId === c?.id)
    .map((r) => ({ key: emu.store.issues.get(r.tcId)?.key, status: r.status }));
}

async function deepSearch(emu: RunningEmulator, startAt: number) {
  const jql = encodeURIComponent('project = BIG AND issuetype = "Test Case" ORDER BY id ASC');
  const res = await fetch(`${emu.url}/rest/api/2/search?jql=${jql}&startAt=${startAt}&maxResults=100&fields=summary`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  return { status: res.status, body: (await res.json()) as { issues?: unknown[]; total?: number } };
}

describe('cases at any size: keyset paging, never deep startAt', () => {
  it('20,000 casebridge cases on a 10,000 window (500 past it): nothing re-created, every result delivered', async () => {
    const emu = await bigProject(20_000, {
      searchMaxResults: 1000,
      resultWindow: 10_000,
      resultWindowMode: 'error',
    });
    // The window is there: startAt paging past it is refused.
    expect((await deepSearch(emu, 10_000)).status).toBe(500);
    // 600 tests with cases among the first 10,000, 600 past them, 20 new ones.
    const tests = [
      ...Array.from({ length: 600 }, (_, i) => result(i)),
      ...Array.from({ length: 600 }, (_, i) => result(19_400 + i, i % 50 === 0 ? 'failed' : 'passed')),
      ...Array.from({ length: 20 }, (_, i) => result(20_000 + i)),
    ];
    emu.clearRequests();
    const { end, mapping } = await run(emu, 'CI big', tests);
    expect(end.summary.unmapped).toEqual([]);
    expect(end.summary.journaled).toBe(0);
    expect(end.summary.createdCases).toHaveLength(20);
    expect(testCases(emu)).toHaveLength(20_020);
    const runs = cycleRuns(emu, 'CI big');
    expect(runs).toHaveLength(1_220);
    expect(runs.filter((r) => r.status === 'Failed')).toHaveLength(12);
    expect(mapping[`${FILE} > ${title(19_999)}`]).toBe('BIG-20001');
    expect(mapping[`${FILE} > ${title(0)}`]).toBe('BIG-2');
    // The first read is 20 pages of 1,000; the re-reads after the creates read only the last minutes' cases.
    const s = searches(emu);
    console.log(`20,000 cases: ${s.length} searches, ${emu.requests().length} requests for 1,220 results`);
    expect(s.length).toBeGreaterThanOrEqual(20);
    expect(s.length).toBeLessThanOrEqual(26);
    expect(s.every((r) => !/startAt=[1-9]/.test(r.path))).toBe(true);
  }, 180_000);

  it('empty pages past a 1,000 window, 100 a page: 2,500 cases read whole in 25 requests; a second run creates none', async () => {
    const emu = await bigProject(2_500, { searchMaxResults: 100, resultWindow: 1_000, resultWindowMode: 'empty' });
    // Past the window the search answers an empty page with the true total, which deep paging took for the end.
    const deep = await deepSearch(emu, 1_000);
    expect(deep.status).toBe(200);
    expect(deep.body.issues).toEqual([]);
    expect(deep.body.total).toBe(2_500);
    const tests = Array.from({ length: 300 }, (_, i) => result(2_200 + i));
    emu.clearRequests();
    const first = await run(emu, 'CI window 1', tests);
    expect(first.end.summary.createdCases).toEqual([]);
    expect(first.end.summary.journaled).toBe(0);
    expect(searches(emu)).toHaveLength(25);
    expect(cycleRuns(emu, 'CI window 1')).toHaveLength(300);
    const second = await run(emu, 'CI window 2', [...tests, result(9_000)]);
    expect(second.end.summary.createdCases).toHaveLength(1);
    expect(testCases(emu)).toHaveLength(2_501);
    expect(cycleRuns(emu, 'CI window 2')).toHaveLength(301);
  }, 120_000);
});

describe('the re-read after the creates: the cases of others, not its own', () => {
  it('1,500 new cases at 100 a page: the re-read leaves its own out (2 requests, not 15 pages) and still decides them', async () => {
    // Without Jira's time per create (createMs): one wave of creates, so that the re-reads counted are its own; with
    // it, 1,500 creates take about 9 s at 4 at once, and a re-read every index-lag window decides what has settled.
    const emu = await bigProject(0, { searchMaxResults: 100, createMs: 0 });
    const tests = Array.from({ length: 1_500 }, (_, i) => result(i));
    emu.clearRequests();
    const { end, mapping } = await run(emu, 'CI own', tests);
    expect(end.summary.journaled).toBe(0);
    expect(end.summary.createdCases).toHaveLength(1_500);
    expect(Object.keys(mapping)).toHaveLength(1_500);
    expect(cycleRuns(emu, 'CI own')).toHaveLength(1_500);
    const reads = emu.requests().filter((r) => r.op === 'jira.search' || r.op === 'jira.searchPost');
    // The first read (an empty project: one page), then one re-read in two parts of up to 1,000 ids left out each (a
    // query that long goes in a POST body): the second part asks for the newest case, and a read that shows it
    // decides every case made before it. A quiet machine: [search, searchPost, searchPost]. A loaded one stretches the
    // wave of creates past an index-lag window, and a re-read goes in the middle of it (one or two requests more: 5
    // with 5 unit files at a time on 2 cores), still far from the 15 pages of its own cases a re-read would cost.
    const ops = reads.map((r) => r.op).sort();
    expect(ops.slice(-2), ops.join(', ')).toEqual(['jira.searchPost', 'jira.searchPost']);
    expect(ops.length, ops.join(', ')).toBeLessThanOrEqual(5);
  }, 120_000);
});

describe('keyset search: an empty page before total is an error, never the end', () => {
  it('asked again, then SearchIncompleteError naming the query and what is missing; a later page that comes is read', async () => {
    // A search index that answers one page, then empty pages while its total still counts 150 (a broken node).
    let empties = 0;
    let healAfter = Number.POSITIVE_INFINITY;
    const asked: string[] = [];
    const server = createServer((req, res) => {
      const q = new URL(req.url ?? '/', 'http://x').searchParams;
      asked.push(`${q.get('jql')} @${q.get('startAt')}`);
      const after = Number(/id > (\d+)/.exec(q.get('jql') ?? '')?.[1] ?? 0);
      const page = (from: number, n: number, total: number) =>
        JSON.stringify({
          startAt: 0,
          maxResults: 50,
          total,
          issues: Array.from({ length: n }, (_, i) => ({ id: String(from + i), key: `P-${from + i}`, fields: {} })),
        });
      res.setHeader('content-type', 'application/json');
      if (after === 0) return res.end(page(1, 50, 200));
      empties += 1;
      res.end(empties > healAfter ? page(51, 50, 50) : page(51, 0, 150));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const tm = new TestManagementClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      auth: { type: 'bearer', token: 't' },
    });
    try {
      const search = () =>
        keysetSearch({ tm, jql: 'project = P', fields: 'summary', emptyPageRetries: 2, emptyPageDelayMs: 5 });
      const err = await search().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SearchIncompleteError);
      expect((err as SearchIncompleteError).missing).toBe(150);
      expect((err as Error).message).toMatch(/empty page while its total still counted 150 issue\(s\), after 50 read/);
      expect(asked.every((a) => a.endsWith('@0'))).toBe(true);
      // One empty page, then the node catches up: the search goes on.
      empties = 0;
      healAfter = 1;
      const read = await search();
      expect(read.issues).toHaveLength(100);
      expect(read.maxId).toBe(100);
    } finally {
      await tm.close();
      server.close();
    }
  });
});
