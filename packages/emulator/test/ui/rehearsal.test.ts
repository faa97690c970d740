import { describe, expect, it } from 'vitest';
import { call, TM, useEmulator } from '../helpers.js';
import { page } from './fixtures.js';

/**
 * The rehearsal pages: the request log (newest first, filtered by status and operation), the fault rules (listed,
 * added from a form through the admin API's rule shape, cleared) and reset with its confirm step, all without
 * script.
 */

describe('rehearsal pages (loopback)', () => {
  const emu = useEmulator();
  const post = (path: string, form: Record<string, string | string[]>, origin = emu().url) =>
    page(emu().url, path, { form, headers: { origin } });

  it('shows the Jira knobs and changes them from a form, as PUT /__emulator/jira does; a reset puts them back', async () => {
    const shown = await page(emu().url, '/rehearsal/jira');
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('<a href="/rehearsal/jira" aria-current="page">Jira</a>');
    expect(shown.text).toMatch(
      /<th scope="row">Index lag \(ms\)<\/th><td><code>indexLagMs<\/code><\/td><td>1000<\/td>/,
    );
    const changed = await post('/rehearsal/jira', { indexLagMs: '0, 2500', resultWindow: 'off', patAsBasic: 'on' });
    expect(changed.status).toBe(303);
    expect(changed.headers.get('location')).toBe('/rehearsal/jira?done=changed');
    expect(emu().jira).toMatchObject({ indexLagMs: [0, 2500], resultWindow: null, patAsBasic: true, nodes: 2 });
    const refused = await post('/rehearsal/jira', { nodes: 'many' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Nothing was changed. invalid Jira behaviour: jira.nodes');
    expect(refused.text).toContain('value="many"');
    expect((await post('/rehearsal/jira', { nodes: '3' }, 'http://evil.example')).status).toBe(403);
    await emu().reset();
    expect(emu().jira.indexLagMs).toBe(1000);
  });

  it('lists the request log newest first, filtered by status and operation', async () => {
    emu().clearRequests();
    await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/members`);
    await call(emu(), 'GET', `${TM}/testPlan/DEMO-404/members`);
    await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/cycles`);
    const seqs = emu()
      .requests()
      .map((e) => e.seq);
    const rowSeqs = (text: string) =>
      [...text.matchAll(/<tr>\s*<th scope="row">(\d+)<\/th>/g)].map((m) => Number(m[1]));

    const all = await page(emu().url, '/rehearsal/requests');
    expect(all.status).toBe(200);
    expect(rowSeqs(all.text)).toEqual([...seqs].reverse());
    expect(all.text).toContain('3 of 3 logged requests match');
    expect(all.text).toContain('<label for="filter-status">Status</label>');

    const notFound = await page(emu().url, '/rehearsal/requests?status=404');
    expect(rowSeqs(notFound.text)).toEqual([seqs[1]]);
    expect(notFound.text).toContain('<option value="404" selected>404</option>');
    const success = await page(emu().url, '/rehearsal/requests?status=2xx&op=plans.members');
    expect(rowSeqs(success.text)).toEqual([seqs[0]]);
    const members = await page(emu().url, '/rehearsal/requests?op=plans.members');
    expect(rowSeqs(members.text)).toEqual([seqs[1], seqs[0]]);

    const cleared = await post('/rehearsal/requests', { action: 'clear' });
    expect(cleared.status).toBe(303);
    expect(emu().requests()).toEqual([]);
  });

  it('adds a fault rule from the form, with the admin API rule shape, and clears the rules', async () => {
    const empty = await page(emu().url, '/rehearsal/faults');
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('No rules: every request is answered normally.');
    expect(empty.text).toContain('<label for="fault-route">Route (path glob, default **)</label>');

    const added = await post('/rehearsal/faults', {
      action: 'add',
      route: '**/members',
      methods: ['GET'],
      errorStatus: '503',
      errorRate: '1',
      retryAfterSeconds: '2',
      times: '1',
    });
    expect(added.status).toBe(303);
    expect(added.headers.get('location')).toBe('/rehearsal/faults?done=added');
    const api = await call(emu(), 'GET', '/__emulator/faults');
    expect(api.json.rules).toEqual([
      expect.objectContaining({
        route: '**/members',
        methods: ['GET'],
        errors: { 503: 1 },
        retryAfterSeconds: 2,
        times: 1,
      }),
    ]);
    const faulted = await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/members`);
    expect(faulted.status).toBe(503);
    const listed = await page(emu().url, '/rehearsal/faults?done=added');
    expect(listed.text).toContain('Rule added.');
    expect(listed.text).toMatch(
      /<td>\*\*\/members<\/td><td>GET<\/td><td>0 ms<\/td><td>503 × 1 \(Retry-After 2 s\)<\/td>/,
    );
    expect(listed.text).toMatch(/<td>1<\/td><td>1<\/td><\/tr>/);

    const json = await post('/rehearsal/faults', { action: 'add', json: '{"route": "**/cycles", "latencyMs": 5}' });
    expect(json.status).toBe(303);
    expect((await call(emu(), 'GET', '/__emulator/faults')).json.rules).toHaveLength(2);

    const cleared = await post('/rehearsal/faults', { action: 'clear' });
    expect(cleared.status).toBe(303);
    expect((await call(emu(), 'GET', '/__emulator/faults')).json.rules).toEqual([]);
  });

  it('refuses an invalid rule, naming the field, and keeps what was typed', async () => {
    const bad = await post('/rehearsal/faults', { action: 'add', route: '**/x', hangRate: '2' });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/The rule was not added\. hangRate: Too big/);
    expect(bad.text).toContain('id="fault-route" name="route" type="text" value="**/x"');
    const unknown = await post('/rehearsal/faults', { action: 'add', json: '{"colour": "red"}' });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('colour: unknown field &quot;colour&quot;');
    const broken = await post('/rehearsal/faults', { action: 'add', json: '{nope' });
    expect(broken.status).toBe(400);
    expect(broken.text).toContain('The JSON does not parse');
    expect((await call(emu(), 'GET', '/__emulator/faults')).json.rules).toEqual([]);
  });

  it('resets only after the confirm step, and never from another site', async () => {
    const cycle = await call(emu(), 'POST', `${TM}/testPlan/DEMO-1/addCycle`, { body: { name: 'to be reset' } });
    expect(cycle.status).toBe(200);
    const cycles = async () => (await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/cycles`)).json as unknown[];
    expect(await cycles()).toHaveLength(1);

    const start = await page(emu().url, '/rehearsal/reset');
    expect(start.text).toContain('<form method="post" action="/rehearsal/reset"><button class="danger" type="submit">');
    const ask = await post('/rehearsal/reset', {});
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('<input type="hidden" name="confirm" value="yes">');
    expect(ask.text).toContain('Yes, reset now');
    expect(await cycles()).toHaveLength(1);

    const crossSite = await post('/rehearsal/reset', { confirm: 'yes' }, 'http://evil.example');
    expect(crossSite.status).toBe(403);
    expect(await cycles()).toHaveLength(1);

    const done = await post('/rehearsal/reset', { confirm: 'yes' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/rehearsal/reset?done=1');
    expect(await cycles()).toEqual([]);
    expect((await page(emu().url, '/rehearsal/reset?done=1')).text).toContain('back to its seed state');
  });
});
