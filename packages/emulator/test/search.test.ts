import { afterEach, describe, expect, it } from 'vitest';
import { type EmulatorOptions, type RunningEmulator, startEmulator } from '../src/index.js';
import { call } from './helpers.js';

/**
 * Jira's search as a Data Center cluster answers it (the realistic profile): the page size clamped to the server's
 * cap, OpenSearch's result window, the index lag of each node, keyset paging by id/key/created, and `~` as a
 * tokenised, stemmed word search. A test clock (`now`) stands in for waiting out the lag.
 */

const API = '/rest/api/2';
let emu: RunningEmulator | undefined;
let clock = Date.UTC(2026, 10, 25, 12, 0);

async function start(options: EmulatorOptions): Promise<RunningEmulator> {
  clock = Date.UTC(2026, 10, 25, 12, 0);
  emu = await startEmulator({ port: 0, now: () => clock, ...options });
  return emu;
}

afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const node = (n: number) => ({ cookie: `ROUTEID=node${n}` });

const create = (e: RunningEmulator, summary: string, description = '', headers: Record<string, string> = {}) =>
  call(e, 'POST', `${API}/issue`, {
    body: { fields: { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary, description } },
    headers,
  });

const search = (e: RunningEmulator, jql: string, query: Record<string, string | number> = {}, headers = {}) =>
  call(e, 'GET', `${API}/search`, { query: { jql, ...query }, headers });

const keys = (r: { json: { issues: { key: string }[] } }) => r.json.issues.map((i) => i.key);

describe('search on the realistic profile', () => {
  it('clamps maxResults to the cap (100) and says so; 50 when not asked', async () => {
    // Jira's time per create (createMs) is not what this is about: 120 creates at 25 ms were 3 s of waiting.
    const e = await start({ profile: 'realistic', jira: { indexLagMs: 0, createMs: 0 } });
    for (let i = 0; i < 120; i++) expect((await create(e, `issue ${i}`)).status).toBe(201);
    expect((await search(e, '', { maxResults: 5000 })).json).toMatchObject({ maxResults: 100, startAt: 0 });
    expect((await search(e, '', { maxResults: 5000 })).json.issues).toHaveLength(100);
    expect((await search(e, '')).json.maxResults).toBe(50);
    const small = await start({ profile: 'realistic', jira: { searchMaxResults: 7, indexLagMs: 0 } });
    await e.close();
    expect((await search(small, '', { maxResults: 50 })).json).toMatchObject({ maxResults: 7 });
  });

  it("past the result window: 500 'Search limit exceeded' (error mode) or an empty page with the true total", async () => {
    const e = await start({ profile: 'realistic', jira: { resultWindow: 5, indexLagMs: 0 } });
    // The default page (50) is past a window of 5 already.
    expect((await search(e, 'project = DEMO')).status).toBe(500);
    const total = (await search(e, 'project = DEMO', { maxResults: 5 })).json.total;
    expect(total).toBeGreaterThan(5);
    expect((await search(e, 'project = DEMO', { startAt: 0, maxResults: 5 })).json.issues).toHaveLength(5);
    const refused = await search(e, 'project = DEMO', { startAt: 3, maxResults: 3 });
    expect(refused.status).toBe(500);
    expect(refused.json.errorMessages[0]).toMatch(/^Search limit exceeded: startAt \+ maxResults \(3 \+ 3\)/);
    e.setJira({ resultWindowMode: 'empty' });
    const empty = await search(e, 'project = DEMO', { startAt: 5, maxResults: 3 });
    expect(empty.status).toBe(200);
    expect(empty.json).toMatchObject({ startAt: 5, maxResults: 3, total, issues: [] });
  });

  it('pages by keyset at any depth: id > N ORDER BY id, key ranges, created ranges', async () => {
    const e = await start({ profile: 'realistic', jira: { resultWindow: 4, indexLagMs: 0 } });
    const search = (e: RunningEmulator, jql: string, query: Record<string, number> = {}) =>
      call(e, 'GET', `${API}/search`, { query: { jql, maxResults: 4, ...query } });
    for (let i = 0; i < 6; i++) {
      await create(e, `case ${i}`, `[casebridge] marker ${i}`);
      clock += 60_000;
    }
    const seen: string[] = [];
    let last = 0;
    for (;;) {
      const page = await search(e, `project = DEMO AND description ~ "casebridge" AND id > ${last} ORDER BY id ASC`, {
        maxResults: 2,
      });
      expect(page.status).toBe(200);
      if (page.json.issues.length === 0) break;
      seen.push(...keys(page));
      last = Number(page.json.issues.at(-1).id);
    }
    expect(seen).toHaveLength(6);
    const [first, , third, , , sixth] = seen as [string, string, string, string, string, string];
    expect(keys(await search(e, `key >= ${third} AND key < ${sixth} ORDER BY key DESC`, { maxResults: 4 }))).toEqual(
      [...seen.slice(2, 5)].reverse(),
    );
    expect(keys(await search(e, `issuekey <= ${first} AND description ~ casebridge`))).toEqual([first]);
    // Created a minute apart from 12:00: the ones of 12:03 and later, and the last two hours by a period.
    expect(keys(await search(e, 'created >= "2026/11/25 12:03" AND description ~ casebridge'))).toEqual(seen.slice(3));
    expect(keys(await search(e, 'created > "2026-11-25 12:04" AND description ~ casebridge'))).toEqual(seen.slice(5));
    expect((await search(e, 'description ~ casebridge AND updated >= "-3m"')).json.total).toBe(3);
    expect((await search(e, 'created = "2026-11-25" AND description ~ casebridge')).json.total).toBe(6);
    expect(keys(await search(e, 'description ~ casebridge ORDER BY created DESC', { maxResults: 2 }))).toEqual([
      sixth,
      seen[4],
    ]);
    const bad = await search(e, 'created > yesterday');
    expect(bad.status).toBe(400);
    expect(bad.json.errorMessages[0]).toMatch(/Date value 'yesterday' for field 'created' is invalid/);
  });

  it('~ finds whole words in any order, stemmed, reserved characters dropped (the client must check exactly)', async () => {
    const e = await start({ profile: 'realistic', jira: { indexLagMs: 0 } });
    const a = (await create(e, '[cb-1a2b] Checkout fails')).json.key;
    const b = (await create(e, 'Payments: 1a2b cb failing again')).json.key;
    await create(e, '[cb-1a2c] Checkout fails');
    expect(keys(await search(e, 'summary ~ "cb-1a2b"'))).toEqual([a, b]);
    expect(keys(await search(e, 'summary ~ "failed checkout"'))).toEqual(expect.arrayContaining([a]));
    expect((await search(e, 'summary ~ "eckou"')).json.total).toBe(0);
    const ideal = await start({ profile: 'ideal' });
    await e.close();
    await create(ideal, '[cb-1a2b] Checkout fails');
    await create(ideal, 'Payments: 1a2b cb failing again');
    expect((await search(ideal, 'summary ~ "cb-1a2b"')).json.total).toBe(1);
    expect((await search(ideal, 'summary ~ "eckou"')).json.total).toBe(2);
  });

  it('POST /rest/api/2/search takes the same parameters as JSON', async () => {
    const e = await start({ profile: 'realistic', jira: { indexLagMs: 0 } });
    const r = await call(e, 'POST', `${API}/search`, {
      body: { jql: 'project = DEMO ORDER BY key DESC', startAt: 1, maxResults: 500, fields: ['summary'] },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ startAt: 1, maxResults: 100 });
    expect(Object.keys(r.json.issues[0].fields)).toEqual(['summary']);
    const bad = await call(e, 'POST', `${API}/search`, { body: { jql: 'project = DEMO OR x = y' } });
    expect(bad.status).toBe(400);
  });
});

describe('index lag per node', () => {
  it('a new issue is found only after each node’s lag; an edited one by its old text until then', async () => {
    const e = await start({ profile: 'realistic', jira: { nodes: 2, indexLagMs: [1000, 2500] } });
    const key = (await create(e, 'lagging summary', '', node(1))).json.key;
    const find = (n: number) => search(e, 'summary ~ lagging', {}, node(n)).then((r) => r.json.total);
    // The answer holds the issue at once (GET issue reads the database), search does not.
    expect((await call(e, 'GET', `${API}/issue/${key}`)).status).toBe(200);
    expect([await find(1), await find(2)]).toEqual([0, 0]);
    clock += 1000;
    expect([await find(1), await find(2)]).toEqual([1, 0]);
    clock += 1500;
    expect([await find(1), await find(2)]).toEqual([1, 1]);

    await call(e, 'PUT', `${API}/issue/${key}`, { body: { fields: { summary: 'renamed summary' } }, headers: node(2) });
    const renamed = (n: number) => search(e, 'summary ~ renamed', {}, node(n)).then((r) => r.json.total);
    expect([await find(1), await renamed(1), await find(2), await renamed(2)]).toEqual([1, 0, 1, 0]);
    clock += 1000;
    expect([await find(1), await renamed(1), await find(2), await renamed(2)]).toEqual([0, 1, 1, 0]);
    clock += 1500;
    expect([await find(2), await renamed(2)]).toEqual([0, 1]);
  });

  it('POST /__emulator/jira/index: every node catches up at once; later writes lag as before', async () => {
    const e = await start({ profile: 'realistic', jira: { nodes: 2, indexLagMs: [1000, 2500] } });
    const key = (await create(e, 'caught summary', '', node(1))).json.key;
    await call(e, 'PUT', `${API}/issue/${key}`, { body: { fields: { summary: 'caught renamed' } }, headers: node(2) });
    const find = (n: number, word: string) => search(e, `summary ~ ${word}`, {}, node(n)).then((r) => r.json.total);
    expect([await find(1, 'caught'), await find(2, 'caught')]).toEqual([0, 0]);
    expect((await call(e, 'POST', '/__emulator/jira/index')).status).toBe(200);
    expect([await find(1, 'renamed'), await find(2, 'renamed')], 'no clock moved').toEqual([1, 1]);
    await create(e, 'after summary', '', node(1));
    expect([await find(1, 'after'), await find(2, 'after')]).toEqual([0, 0]);
    clock += 2500;
    expect([await find(1, 'after'), await find(2, 'after')]).toEqual([1, 1]);
  });

  it('the ideal profile (and indexLagMs 0) finds a new issue at once; a reset indexes the seed at once', async () => {
    const e = await start({ profile: 'ideal' });
    await create(e, 'instant issue');
    expect((await search(e, 'summary ~ instant')).json.total).toBe(1);
    e.setJira({ indexLagMs: 5000 });
    await create(e, 'sluggish issue');
    expect((await search(e, 'summary ~ sluggish')).json.total).toBe(0);
    await e.reset();
    expect((await search(e, 'project = DEMO')).json.total).toBe(e.store.issues.all().length);
  });
});
