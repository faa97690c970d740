import { beforeAll, describe, expect, it } from 'vitest';
import { call, expectShape, TM, useEmulator } from '../helpers.js';
import { page, setResult } from './fixtures.js';

/**
 * An advanced cycle on the cycle page: a matrix with a row per test case and a column per attribute set (the
 * browser matrix of a demo), each cell the run's status as text linking to its card; the run list of the API names
 * each run's attribute set. A normal cycle shows no matrix.
 */

describe('web UI: the attribute matrix of an advanced cycle', () => {
  const emu = useEmulator();
  let cycleId = 0;
  let runs: { id: number; testCaseKey: string; attributeValues: Record<string, string> }[] = [];

  beforeAll(async () => {
    const add = await call(emu(), 'POST', `${TM}/testPlan/DEMO-1/addCycle`, {
      body: { name: 'Browsers nightly', testCycleType: 'Advanced' },
    });
    expect(add.status, add.text).toBe(200);
    const list = await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/cycles`);
    cycleId = (list.json as { id: number; name: string }[]).find((c) => c.name === 'Browsers nightly')?.id ?? 0;
    await call(emu(), 'PUT', `${TM}/testPlan/DEMO-1/cycle/Browsers%20nightly/wf/Start`);
    const created = await call(emu(), 'POST', `${TM}/testRun/createTestRuns`, {
      body: {
        testCaseKeys: 'DEMO-2,DEMO-3',
        cycleId: String(cycleId),
        attributeValues: [
          { Browser: 'Chrome', OS: '-' },
          { Browser: 'Firefox', OS: '-' },
        ],
      },
    });
    expect(created.status, created.text).toBe(200);
    runs = (created.json as { createdRuns: typeof runs }).createdRuns;
    const run = (key: string, browser: string) =>
      runs.find((r) => r.testCaseKey === key && r.attributeValues.Browser === browser)?.id as number;
    await setResult(emu(), run('DEMO-2', 'Chrome'), 'Passed');
    await setResult(emu(), run('DEMO-2', 'Firefox'), 'Failed');
    await setResult(emu(), run('DEMO-3', 'Chrome'), 'Passed');
  });

  it('the run list names each run of an advanced cycle by its attribute set', async () => {
    const r = await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/cycle/${cycleId}/testRunsByCycleId`);
    const list = expectShape('cycles.testRunsByCycleId', 'id', r.json) as {
      testCaseKey: string;
      status: string;
      attributeValues?: Record<string, string>;
    }[];
    expect(list.map((x) => `${x.testCaseKey} ${x.attributeValues?.Browser} ${x.status}`).sort()).toEqual([
      'DEMO-2 Chrome Passed',
      'DEMO-2 Firefox Failed',
      'DEMO-3 Chrome Passed',
      'DEMO-3 Firefox Not Tested',
    ]);
  });

  it('shows a row per case and a column per attribute set, each cell the status linking to the run', async () => {
    const r = await page(emu().url, `/browse/DEMO-1?cycle=${cycleId}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain('<h2 id="matrix-heading">Runs by attribute set</h2>');
    const table = r.text.slice(r.text.indexOf('matrix-heading'), r.text.indexOf('runs-heading'));
    expect(table).toContain('<th scope="col">Browser: Chrome</th>');
    expect(table).toContain('<th scope="col">Browser: Firefox</th>');
    const row = (key: string) => {
      const at = table.indexOf(`<a href="/browse/${key}">${key}</a>`);
      return table.slice(at, table.indexOf('</tr>', at));
    };
    // Columns in order Chrome, Firefox: the statuses read left to right, as text (never colour alone).
    expect(row('DEMO-2')).toMatch(/Passed<\/span><\/a>[\s\S]*Failed<\/span><\/a>/);
    expect(row('DEMO-3')).toMatch(/Passed<\/span><\/a>[\s\S]*Not Tested<\/span><\/a>/);
    const failed = runs.find((x) => x.testCaseKey === 'DEMO-2' && x.attributeValues.Browser === 'Firefox')?.id;
    expect(row('DEMO-2')).toContain(`run=${failed}#run-${failed}`);
    // The run cards still follow, each with its attributes.
    expect(r.text).toContain('Browser: Firefox');
  });

  it('shows no matrix for a normal cycle', async () => {
    await call(emu(), 'POST', `${TM}/testPlan/DEMO-1/addCycle`, { body: { name: 'Plain' } });
    const list = await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/cycles`);
    const id = (list.json as { id: number; name: string }[]).find((c) => c.name === 'Plain')?.id;
    const r = await page(emu().url, `/browse/DEMO-1?cycle=${id}`);
    expect(r.status).toBe(200);
    expect(r.text).not.toContain('matrix-heading');
  });
});
