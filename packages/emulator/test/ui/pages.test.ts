import { beforeAll, describe, expect, it } from 'vitest';
import { call, enc, TM, useEmulator } from '../helpers.js';
import { type FilledCycle, fillCycle, page, runCardHtml, setResult } from './fixtures.js';

/**
 * The web UI's pages over HTTP, on the default loopback emulator (pages open without a login): each issue type's
 * page, the cycle page with its status filter and run anchors, escaping of stored text, 404s, and that the API
 * around the pages answers as before.
 */

describe('web UI pages (loopback)', () => {
  const emu = useEmulator();
  let filled: FilledCycle;
  let cookie: string | undefined;
  const get = (path: string) => page(emu().url, path, { cookie });

  beforeAll(async () => {
    await fillCycle(emu(), 'Sprint 1 nightly', undefined, { environment: 'qa', build: '0.9' });
    filled = await fillCycle(emu(), 'Sprint 2 nightly');
    // A browser's first visit gets the loopback viewer's session; later ones send it back.
    const first = await page(emu().url, '/');
    expect(first.status).toBe(200);
    expect(first.cookie).toMatch(/^JSESSIONID=[0-9A-F]{32}$/);
    cookie = first.cookie;
  });

  it('serves the home page: projects, plans, the latest cycle with counts as text', async () => {
    const r = await get('/');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(r.text).toContain('<a class="skip" href="#main">Skip to main content</a>');
    expect(r.text).toContain('Demo shop');
    expect(r.text).toContain('<a href="/browse/DEMO-1">DEMO-1</a>');
    expect(r.text).toContain('Release 1.0 regression');
    // The latest cycle, not the first one.
    expect(r.text).toContain(`<a href="/browse/DEMO-1?cycle=${filled.cycleId}">Sprint 2 nightly</a>`);
    expect(r.text).toMatch(/Passed 1<\/li>/);
    expect(r.text).toMatch(/Failed 1<\/li>/);
    expect(r.text).toMatch(/Blocked 1<\/li>/);
    expect(r.text).toMatch(/Not Tested 3<\/li>/);
    expect(r.text).toContain('aria-label="Runs of Sprint 2 nightly by status: 6 runs"');
    // The stacked bar is decoration; the counts say the same in text.
    expect(r.text).toMatch(/<div class="bar" aria-hidden="true">/);
  });

  it('serves a test plan: members and cycles with status, environment, build, dates and counts', async () => {
    const r = await get('/browse/DEMO-1');
    expect(r.status).toBe(200);
    expect(r.text).toContain('<h1>Release 1.0 regression</h1>');
    for (let n = 2; n <= 7; n++) expect(r.text).toContain(`<a href="/browse/DEMO-${n}">DEMO-${n}</a>`);
    expect(r.text).toContain(`<a href="/browse/DEMO-1?cycle=${filled.cycleId}">Sprint 2 nightly</a>`);
    const row = r.text.slice(r.text.indexOf('>Sprint 2 nightly</a>'));
    expect(row.slice(0, row.indexOf('</tr>'))).toMatch(
      /Active<\/td>\s*<td>staging<\/td>\s*<td>1\.0\.3<\/td>\s*<td>2026-03-02 to 2026-03-06<\/td>/,
    );
    expect(r.text).toContain('<th scope="col">Environment</th>');
    expect(r.text).toContain('qa');
  });

  it('serves the cycle page: every run as an anchor with status text, steps, files, defects and history', async () => {
    const r = await get(`/browse/DEMO-1?cycle=${filled.cycleId}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain('<h1>Test cycle: Sprint 2 nightly</h1>');
    for (const runId of Object.values(filled.runs)) expect(r.text).toContain(`id="run-${runId}"`);
    const card = runCardHtml(r.text, filled.failedRun);
    expect(card).toMatch(/Status: <span class="status" style="background:#d04437;color:#[0-9a-f]{6}">Failed<\/span>/);
    expect(card).toContain('expected &quot;valid&quot;, got &quot;expired&quot;');
    expect(card).toContain('Payment declined: card expired');
    expect(card).toContain('Admin (admin)');
    // The image at the URL the API hands out, with alt text; the log as a download link.
    const imageUrl = `${emu().url}${TM}/attachment/${filled.failedRun}/download/${filled.imageAttachment}/failure.png`;
    expect(card).toContain(`<img src="${imageUrl}" alt="failure.png, attached to DEMO-5 run ${filled.failedRun}"`);
    expect(card).toMatch(
      new RegExp(`<a href="[^"]+/download/${filled.logAttachment}/console\\.log" download="console\\.log">`),
    );
    expect(card).toContain(`<a href="/browse/${filled.bugKey}">${filled.bugKey}</a> Checkout refuses a saved card`);
    expect(card).toMatch(/History \(\d+\)/);
    expect(card).toContain(`+ ${filled.bugKey}`);
    // The browser's session loads the image, as Jira's pages load attachments.
    const img = await fetch(imageUrl, { headers: { cookie: cookie ?? '' } });
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    // Live updates: the fragment and the event stream of this cycle, and the script that uses them.
    expect(r.text).toContain(`data-live-fragment="/ui/fragments/cycle?cycle=${filled.cycleId}"`);
    expect(r.text).toContain(`data-live-events="/ui/events?cycle=${filled.cycleId}"`);
    expect(r.text).toContain('<script src="/ui/live.js" defer></script>');
    const js = await get('/ui/live.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.text).toContain('EventSource');
    expect(js.text).toContain('setInterval(refresh, 3000)');
  });

  it('filters the cycle page by status with plain links', async () => {
    const all = await get(`/browse/DEMO-1?cycle=${filled.cycleId}`);
    expect(all.text).toContain(`<a href="/browse/DEMO-1?cycle=${filled.cycleId}&amp;status=Failed">Failed (1)</a>`);
    expect(all.text).toContain(`<a href="/browse/DEMO-1?cycle=${filled.cycleId}" aria-current="true">All (6)</a>`);
    for (const status of ['Failed', 'failed']) {
      const r = await get(`/browse/DEMO-1?cycle=${filled.cycleId}&status=${status}`);
      expect(r.status).toBe(200);
      const ids = [...r.text.matchAll(/<article class="run" id="run-(\d+)"/g)].map((m) => Number(m[1]));
      expect(ids).toEqual([filled.failedRun]);
      expect(r.text).toContain('aria-current="true">Failed (1)</a>');
    }
    const notTested = await get(`/browse/DEMO-1?cycle=${filled.cycleId}&status=Not%20Tested`);
    expect([...notTested.text.matchAll(/<article class="run"/g)]).toHaveLength(3);
    const unknown = await get(`/browse/DEMO-1?cycle=${filled.cycleId}&status=Sort%20of`);
    expect(unknown.status).toBe(200);
    expect(unknown.text).toContain('There is no run status "Sort of"');
    expect(unknown.text).not.toContain('<article class="run"');
    // The fragment the live script fetches keeps the filter.
    const fragment = await get(`/ui/fragments/cycle?cycle=${filled.cycleId}&status=Failed`);
    expect(fragment.status).toBe(200);
    expect(fragment.text).not.toContain('<html');
    expect([...fragment.text.matchAll(/<article class="run" id="run-(\d+)"/g)].map((m) => Number(m[1]))).toEqual([
      filled.failedRun,
    ]);
  });

  it('shows a long cycle 100 runs a page; run= opens the page that holds the run, and the live fragment keeps it', async () => {
    const keys = Array.from({ length: 230 }, (_, i) => `PAGE-${i}`);
    const created = await Promise.all(
      keys.map((summary) =>
        call(emu(), 'POST', '/rest/api/2/issue', {
          body: { fields: { project: { key: 'DEMO' }, issuetype: { name: 'Test Case' }, summary } },
        }),
      ),
    );
    const caseKeys = created.map((r) => (r.json as { key: string }).key);
    await call(emu(), 'POST', `${TM}/testPlan/DEMO-1/addMembers`, { body: { testCaseKeys: caseKeys } });
    const cycle = await call(emu(), 'POST', `${TM}/testPlan/DEMO-1/addCycle`, {
      body: { name: 'Long nightly', preloadRuns: 'yes' },
    });
    expect(cycle.status).toBe(200);
    const id = emu().store.cycles.find((c) => c.name === 'Long nightly')?.id as number;
    const runs = emu()
      .store.runs.filter((r) => r.cycleId === id)
      .sort((a, b) => a.order - b.order || a.id - b.id);
    expect(runs.length).toBeGreaterThan(200);
    const idsOn = (text: string) => [...text.matchAll(/<article class="run" id="run-(\d+)"/g)].map((m) => Number(m[1]));
    const first = await get(`/browse/DEMO-1?cycle=${id}`);
    expect(idsOn(first.text)).toHaveLength(100);
    expect(first.text).toContain(`1–100 shown`);
    expect(first.text).toContain(`<a href="/browse/DEMO-1?cycle=${id}&amp;page=2">Next</a>`);
    const last = runs[runs.length - 1]?.id as number;
    const atRun = await get(`/browse/DEMO-1?cycle=${id}&run=${last}`);
    expect(idsOn(atRun.text)).toContain(last);
    expect(atRun.text).toContain('aria-current="page">Page 3</a>');
    const fragment = await get(`/ui/fragments/cycle?cycle=${id}&run=${last}`);
    expect(idsOn(fragment.text)).toContain(last);
    const beyond = await get(`/browse/DEMO-1?cycle=${id}&page=99`);
    expect(idsOn(beyond.text)).toContain(last);
  });

  it('serves a test case: steps, requirements, plans and the execution history with ad hoc runs', async () => {
    const adhoc = await call(emu(), 'PUT', `${TM}/testRun/adhoc/create/DEMO-5`);
    expect(adhoc.status, adhoc.text).toBe(200);
    const adhocRun = adhoc.json.id as number;
    await setResult(emu(), adhocRun, 'Passed', 'retested by hand');
    const r = await get('/browse/DEMO-5');
    expect(r.status).toBe(200);
    expect(r.text).toContain('<h1>Checkout with a saved card</h1>');
    expect(r.text).toContain('Add a product to the cart');
    expect(r.text).toContain('The saved card is preselected');
    expect(r.text).toContain('<a href="/browse/DEMO-10">DEMO-10</a> Customers can buy products');
    expect(r.text).toContain('<a href="/browse/DEMO-1">DEMO-1</a> Release 1.0 regression');
    // History: both cycles' runs and the ad hoc one, each linked to where its card is.
    expect(r.text).toContain(
      `<a href="/browse/DEMO-1?cycle=${filled.cycleId}&amp;run=${filled.failedRun}#run-${filled.failedRun}">Run ${filled.failedRun}</a>`,
    );
    expect(r.text).toContain(`<a href="/browse/DEMO-1?cycle=${filled.cycleId}">Sprint 2 nightly</a>`);
    expect(r.text).toContain(`<a href="/browse/DEMO-5#run-${adhocRun}">Ad hoc</a>`);
    expect(r.text).toContain(`<a href="/browse/${filled.bugKey}">${filled.bugKey}</a>`);
    expect(r.text).toContain('<h2 id="adhoc-heading">Ad hoc runs</h2>');
    expect(runCardHtml(r.text, adhocRun)).toContain('retested by hand');
  });

  it('serves a requirement: parent, children and linked test cases', async () => {
    const parent = await get('/browse/DEMO-8');
    expect(parent.status).toBe(200);
    expect(parent.text).toContain('<h1>Accounts</h1>');
    expect(parent.text).toMatch(
      /<ul class="tree"><li><a href="\/browse\/DEMO-9">DEMO-9<\/a> Users can sign in<\/li><\/ul>/,
    );
    expect(parent.text).toContain('<a href="/browse/DEMO-3">DEMO-3</a>');
    const child = await get('/browse/DEMO-9');
    expect(child.text).toContain('<p><a href="/browse/DEMO-8">DEMO-8</a> Accounts</p>');
    expect(child.text).toContain('<a href="/browse/DEMO-2">DEMO-2</a>');
  });

  it('serves a defect: summary, description and the runs it is linked to, each to its cycle page anchor', async () => {
    const r = await get(`/browse/${filled.bugKey}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain('<h1>Checkout refuses a saved card</h1>');
    expect(r.text).toContain('Seen in the nightly run.');
    expect(r.text).toContain(
      `<a href="/browse/DEMO-1?cycle=${filled.cycleId}&amp;run=${filled.failedRun}#run-${filled.failedRun}">Run ${filled.failedRun}</a>`,
    );
    expect(r.text).toContain('<a href="/browse/DEMO-5">DEMO-5</a> Checkout with a saved card');
  });

  it('renders stored text as text: a summary or comment holding markup cannot inject any', async () => {
    const created = await call(emu(), 'POST', '/rest/api/2/issue', {
      body: {
        fields: { project: { key: 'DEMO' }, summary: '<script>alert(1)</script>', issuetype: { name: 'Bug' } },
      },
    });
    expect(created.status, created.text).toBe(201);
    const key = created.json.key as string;
    const runId = filled.runs['DEMO-6'] as number;
    const sneaky = '"><img src=x onerror=alert(2)>';
    const linked = await call(emu(), 'POST', `${TM}/testRun/update`, {
      body: { runId, result: 'Failed', comment: sneaky, bugs: [key] },
    });
    expect(linked.status, linked.text).toBe(200);
    for (const path of [`/browse/${key}`, `/browse/DEMO-1?cycle=${filled.cycleId}`, '/', '/browse/DEMO-6']) {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      expect(r.text, path).not.toContain('<script>alert(1)</script>');
      expect(r.text, path).not.toContain('<img src=x');
    }
    const bugPage = await get(`/browse/${key}`);
    expect(bugPage.text).toContain('<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>');
    expect(bugPage.text).toContain(`<title>${key} &lt;script&gt;alert(1)&lt;/script&gt; - casebridge emulator</title>`);
    const cyclePage = await get(`/browse/DEMO-1?cycle=${filled.cycleId}`);
    expect(runCardHtml(cyclePage.text, runId)).toContain('&quot;&gt;&lt;img src=x onerror=alert(2)&gt;');
    expect(cyclePage.text).toContain(`<a href="/browse/${key}">${key}</a> &lt;script&gt;alert(1)&lt;/script&gt;`);
    await setResult(emu(), runId, 'Not Tested', '');
  });

  it('answers 404 pages for an unknown issue or cycle, and sends a lower-case key to the issue', async () => {
    const unknown = await get('/browse/NOPE-404');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(unknown.text).toContain('<h1>Issue not found</h1>');
    expect(unknown.text).toContain('<strong>NOPE-404</strong> does not exist');
    const escaped = await get(`/browse/${enc('<b>x</b>')}`);
    expect(escaped.status).toBe(404);
    expect(escaped.text).toContain('<strong>&lt;b&gt;x&lt;/b&gt;</strong>');
    for (const path of [
      '/browse/DEMO-1?cycle=999999',
      '/browse/DEMO-1?cycle=abc',
      `/browse/DEMO-5?cycle=${filled.cycleId}`,
    ]) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
      expect(r.text, path).toContain('<h1>Test cycle not found</h1>');
    }
    expect((await get('/ui/fragments/cycle?cycle=999999')).status).toBe(404);
    const lower = await get('/browse/demo-1?cycle=1');
    expect(lower.status).toBe(301);
    expect(lower.headers.get('location')).toBe('/browse/DEMO-1?cycle=1');
  });

  it('leaves the API as it was: other paths and methods, the admin endpoints, the request log', async () => {
    emu().clearRequests();
    // Paths and methods the UI does not take still reach the Jira platform's 404.
    for (const [method, path] of [
      ['POST', '/'],
      ['DELETE', '/browse/DEMO-1'],
      ['GET', '/browse/DEMO-1/extra'],
      ['GET', '/secure/Dashboard.jspa'],
      ['GET', '/ui/unknown'],
    ] as const) {
      const r = await call(emu(), method, path, { auth: null });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.json, `${method} ${path}`).toEqual({ errorMessages: [`No operation at ${method} ${path}`], errors: {} });
    }
    expect((await call(emu(), 'GET', '/__emulator/health', { auth: null })).status).toBe(200);
    expect((await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/members`)).status).toBe(200);
    await get('/');
    await get('/browse/DEMO-1');
    // Page views are not service requests: the log holds the API calls only.
    const log = emu().requests();
    expect(log.map((e) => e.path)).toEqual([
      '/',
      '/browse/DEMO-1',
      '/browse/DEMO-1/extra',
      '/secure/Dashboard.jspa',
      '/ui/unknown',
      `${TM}/testPlan/DEMO-1/members`,
    ]);
    expect(log.every((e) => e.service === 'jira' || e.service === 'tm')).toBe(true);
  });
});
