import { beforeAll, describe, expect, it } from 'vitest';
import { call, TM, useEmulator } from '../helpers.js';
import { type FilledCycle, fillCycle, page, setResult } from './fixtures.js';

/**
 * Requirement coverage in the web UI: the project's page `/projects/DEMO/requirements` (the seeded tree DEMO-8 >
 * DEMO-9, DEMO-10, and a requirement created through Jira's create-issue) with each requirement's cases, their
 * status in a cycle and its state, the cycle chosen by query or form, a parent judged over its children's cases, and
 * the coverage section of a requirement's own page.
 */

const PAGE = '/projects/DEMO/requirements';

/** The `<tr>` of a requirement in the page's table. */
function rowOf(text: string, key: string): string {
  const start = text.indexOf(`<a href="/browse/${key}">${key}</a>`, text.indexOf('<tbody>'));
  expect(start, `a row for ${key}`).toBeGreaterThan(0);
  return text.slice(text.lastIndexOf('<tr>', start), text.indexOf('</tr>', start));
}

/** The state a row shows, as text. */
function stateOf(row: string): string | undefined {
  return /<span class="status" style="[^"]*">([a-z ]+)<\/span><p>/.exec(row)?.[1];
}

describe('requirement coverage pages', () => {
  const emu = useEmulator();
  const get = (path: string) => page(emu().url, path);
  let oldCycle: number;
  let filled: FilledCycle;
  let created: string;

  beforeAll(async () => {
    const made = await call(emu(), 'POST', '/rest/api/2/issue', {
      body: {
        fields: {
          project: { key: 'DEMO' },
          issuetype: { name: 'Requirement' },
          summary: 'Orders can be returned <script>alert(1)</script>',
        },
      },
    });
    expect(made.status, made.text).toBe(201);
    created = made.json.key;
    const plan = `${TM}/testPlan/DEMO-1`;
    const first = await call(emu(), 'POST', `${plan}/addCycle`, { body: { name: 'Smoke', preloadRuns: 'yes' } });
    expect(first.status, first.text).toBe(200);
    // The later cycle: DEMO-2 Passed, DEMO-4 Blocked, DEMO-5 Failed with a defect, DEMO-3 Not Tested.
    filled = await fillCycle(emu(), 'Nightly 7');
    const cycles = (await call(emu(), 'GET', `${plan}/cycles`)).json as { id: number; name: string }[];
    oldCycle = cycles.find((c) => c.name === 'Smoke')?.id as number;
  });

  it('lists every requirement as a tree with its cases, their runs in the latest cycle and its state', async () => {
    const r = await get(PAGE);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.text).toContain('<h1>Requirements of Demo shop <span class="muted">(DEMO)</span></h1>');
    expect(r.text).toContain(`<a href="/browse/DEMO-1?cycle=${filled.cycleId}">Nightly 7</a>`);
    // The tree: DEMO-9 right under its parent DEMO-8, indented and named as its child.
    const order = ['DEMO-8', 'DEMO-9', 'DEMO-10', created].map((k) =>
      r.text.indexOf(`<a href="/browse/${k}">${k}</a> `),
    );
    expect(order.every((at, i) => at > 0 && (i === 0 || at > (order[i - 1] as number)))).toBe(true);
    expect(rowOf(r.text, 'DEMO-9')).toMatch(/style="padding-left:2\.1rem"/);
    expect(rowOf(r.text, 'DEMO-9')).toContain('<span class="visually-hidden">, child of DEMO-8</span>');

    const signIn = rowOf(r.text, 'DEMO-9');
    expect(stateOf(signIn)).toBe('passing');
    expect(signIn).toContain('<a href="/browse/DEMO-2">DEMO-2</a> User logs in with valid credentials');
    expect(signIn).toContain(`href="/browse/DEMO-1?cycle=${filled.cycleId}&amp;run=${filled.runs['DEMO-2']}#run-`);
    expect(signIn).toMatch(/>Passed<\/span><\/a>/);

    const buy = rowOf(r.text, 'DEMO-10');
    expect(stateOf(buy)).toBe('failing');
    expect(buy).toMatch(/>Blocked<\/span><\/a>/);
    expect(buy).toMatch(/>Failed<\/span><\/a>/);
    // The failed case is named, with its defect and the defect's status.
    expect(buy).toContain(
      `<li><a href="/browse/DEMO-5">DEMO-5</a> Checkout with a saved card: defect <a href="/browse/${filled.bugKey}">${filled.bugKey}</a> Checkout refuses a saved card (Offen)</li>`,
    );

    // The parent is judged over its own case (DEMO-3, not run) and its child's (DEMO-2, passed).
    const accounts = rowOf(r.text, 'DEMO-8');
    expect(stateOf(accounts)).toBe('not run');
    expect(accounts).toContain('<li><a href="/browse/DEMO-3">DEMO-3</a>: not run</li>');
    expect(accounts).toContain('Judged over 2 cases, 1 of them linked to child requirements.');

    const uncovered = rowOf(r.text, created);
    expect(stateOf(uncovered)).toBe('not covered');
    expect(uncovered).toContain('Orders can be returned &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(r.text).not.toContain('<script>alert(1)');

    const counts = r.text.slice(
      r.text.indexOf('<ul class="counts"'),
      r.text.indexOf('</ul>', r.text.indexOf('<ul class="counts"')),
    );
    expect(counts).toContain('aria-label="Requirements by state in Nightly 7: 4 requirements"');
    const items = counts.split('<li>').slice(1);
    expect(items.map((i) => i.replace(/<[^>]+>/g, '').trim())).toEqual([
      '1 passing',
      '1 failing',
      '1 not run',
      '1 not covered',
    ]);
    // A form picks another cycle: every cycle of the project, grouped by plan, the shown one selected.
    expect(r.text).toContain(`<form method="get" action="${PAGE}"`);
    expect(r.text).toContain('<label for="cycle-choice">Test cycle</label>');
    expect(r.text).toContain('<optgroup label="DEMO-1 Release 1.0 regression">');
    expect(r.text).toContain(`<option value="${filled.cycleId}" selected>Nightly 7 (Active)</option>`);
    expect(r.text).toContain(`<option value="${oldCycle}">Smoke (Draft)</option>`);
  });

  it('judges a parent over its children: a child case failing fails the parent, naming it and the child', async () => {
    await setResult(emu(), filled.runs['DEMO-3'] as number, 'Passed');
    let r = await get(PAGE);
    expect(stateOf(rowOf(r.text, 'DEMO-8'))).toBe('passing');
    expect(rowOf(r.text, 'DEMO-8')).toContain('All 2 cases passed.');

    await setResult(emu(), filled.runs['DEMO-2'] as number, 'Failed');
    r = await get(PAGE);
    expect(stateOf(rowOf(r.text, 'DEMO-9'))).toBe('failing');
    const parent = rowOf(r.text, 'DEMO-8');
    expect(stateOf(parent)).toBe('failing');
    expect(parent).toContain(
      '<a href="/browse/DEMO-2">DEMO-2</a> User logs in with valid credentials <span class="muted">(via <a href="/browse/DEMO-9">DEMO-9</a>)</span>: <span class="muted">no defect</span>',
    );
    await setResult(emu(), filled.runs['DEMO-2'] as number, 'Passed');
  });

  it('shows the cycle asked for: by id, by plan (its latest), both; a wrong one is a 404 naming it', async () => {
    const old = await get(`${PAGE}?cycle=${oldCycle}`);
    expect(old.status).toBe(200);
    expect(old.text).toContain(`<option value="${oldCycle}" selected>Smoke (Draft)</option>`);
    for (const key of ['DEMO-8', 'DEMO-9', 'DEMO-10']) expect(stateOf(rowOf(old.text, key)), key).toBe('not run');
    expect(stateOf(rowOf(old.text, created))).toBe('not covered');
    const both = await get(`${PAGE}?plan=DEMO-1&cycle=${oldCycle}`);
    expect(both.text).toContain(`<option value="${oldCycle}" selected>`);
    const byPlan = await get(`${PAGE}?plan=DEMO-1`);
    expect(byPlan.text).toContain(`<option value="${filled.cycleId}" selected>`);
    expect((await get('/projects/demo/requirements')).status).toBe(200);
    expect((await page(emu().url, PAGE, { method: 'HEAD' })).status).toBe(200);

    for (const [path, message] of [
      [`${PAGE}?cycle=999999`, 'Project DEMO has no test cycle 999999.'],
      [`${PAGE}?cycle=abc`, 'Project DEMO has no test cycle abc.'],
      [`${PAGE}?plan=DEMO-5`, 'Project DEMO has no test plan DEMO-5.'],
      [`${PAGE}?plan=%3Cb%3E`, 'Project DEMO has no test plan &lt;b&gt;.'],
      ['/browse/DEMO-8?cycle=999999', 'Project DEMO has no test cycle 999999.'],
    ] as const) {
      const bad = await get(path);
      expect(bad.status, path).toBe(404);
      expect(bad.text, path).toContain('<h1>Test cycle not found</h1>');
      expect(bad.text, path).toContain(message);
    }
    const noProject = await get('/projects/NOPE/requirements');
    expect(noProject.status).toBe(404);
    expect(noProject.text).toContain('<h1>Project not found</h1>');
    // Other methods and deeper paths are not the UI's.
    expect((await page(emu().url, PAGE, { method: 'POST' })).headers.get('content-type')).not.toContain('text/html');
  });

  it("shows a requirement's coverage on its own page, and links the page from the home page", async () => {
    const r = await get('/browse/DEMO-10');
    expect(r.status).toBe(200);
    expect(r.text).toContain('<h2 id="coverage-heading">Coverage</h2>');
    expect(r.text).toMatch(/State: <span class="status" style="[^"]*">failing<\/span>/);
    expect(r.text).toContain(
      `<a href="/browse/${filled.bugKey}">${filled.bugKey}</a> Checkout refuses a saved card (Offen)`,
    );
    expect(r.text).toContain(`<a href="${PAGE}?cycle=${filled.cycleId}">All requirements of DEMO in this cycle</a>`);
    const parent = await get(`/browse/DEMO-8?cycle=${oldCycle}`);
    expect(parent.status).toBe(200);
    expect(parent.text).toMatch(/State: <span class="status" style="[^"]*">not run<\/span>/);
    // The child's case is listed with the child it comes from.
    expect(parent.text).toMatch(
      /<th scope="row"><a href="\/browse\/DEMO-2">DEMO-2<\/a><\/th>\s*<td>User logs in with valid credentials<\/td>\s*<td><a href="\/browse\/DEMO-9">DEMO-9<\/a><\/td>/,
    );
    const none = await get(`/browse/${created}`);
    expect(none.text).toMatch(/State: <span class="status" style="[^"]*">not covered<\/span>/);
    // A test case keeps its 404 for a cycle: only plans and requirements take one.
    expect((await get(`/browse/DEMO-5?cycle=${filled.cycleId}`)).status).toBe(404);

    const home = await get('/');
    expect(home.text).toContain(`<a href="${PAGE}">Requirements of DEMO and their coverage</a>`);
  });
});

describe('requirement coverage before any cycle', () => {
  const emu = useEmulator();

  it('shows every requirement with cases as not run, and says the plan has no cycle yet', async () => {
    const r = await page(emu().url, PAGE);
    expect(r.status).toBe(200);
    expect(r.text).toContain('has no test cycle yet: no case has a run to read.');
    expect(r.text).not.toContain('<form method="get"');
    for (const key of ['DEMO-8', 'DEMO-9', 'DEMO-10']) expect(stateOf(rowOf(r.text, key)), key).toBe('not run');
    expect(rowOf(r.text, 'DEMO-10')).toContain('<span class="muted">no run in this cycle</span>');
  });
});
