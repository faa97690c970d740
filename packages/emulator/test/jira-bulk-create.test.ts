import { describe, expect, it } from 'vitest';
import { call, expectShape, useEmulator } from './helpers.js';

const BULK = '/rest/api/2/issue/bulk';

/** Jira's bulk create: partial success by element, the cap, and a Jira without the route (bulkCreateMax 0). */
for (const variant of ['id', 'ID'] as const) {
  describe(`POST ${BULK} (variant ${variant})`, () => {
    const emu = useEmulator({ variant, profile: 'realistic' });
    const testCase = (summary: string) => ({
      fields: { project: { key: 'DEMO' }, issuetype: { name: 'Test Case' }, summary, description: 'd' },
    });

    it('creates what it can, in order; a refused element is named by its 0-based position', async () => {
      const before = emu().store.issues.all().length;
      const r = await call(emu(), 'POST', BULK, {
        body: {
          issueUpdates: [
            testCase('first'),
            { fields: { project: { key: 'DEMO' }, issuetype: { name: 'Test Case' }, summary: '' } },
            testCase('third'),
            { fields: { project: { key: 'NOPE' }, issuetype: { name: 'Test Case' }, summary: 'x' } },
          ],
        },
      });
      expect(r.status).toBe(201);
      const body = expectShape('jira.bulkCreateIssues', variant, r.json) as {
        issues: { key: string }[];
        errors: { failedElementNumber?: number; elementErrors?: { errors?: Record<string, string> } }[];
      };
      expect(body.issues.map((i) => emu().store.issues.find((x) => x.key === i.key)?.summary)).toEqual([
        'first',
        'third',
      ]);
      expect(body.errors.map((e) => e.failedElementNumber)).toEqual([1, 3]);
      expect(body.errors[0]?.elementErrors?.errors).toHaveProperty('summary');
      expect(body.errors[1]?.elementErrors?.errors).toEqual({ project: 'valid project is required' });
      expect(emu().store.issues.all().length).toBe(before + 2);
      // A Test Case made by Jira's create is the add-on's test case: it takes steps.
      const steps = await call(emu(), 'POST', `/rest/synapse/latest/public/testCase/${body.issues[0]?.key}/addSteps`, {
        body: [{ step: 'open', expectedResult: '' }],
      });
      expect(steps.status).toBe(200);
    });

    it('none created: 400 with the same body', async () => {
      const r = await call(emu(), 'POST', BULK, {
        body: { issueUpdates: [{ fields: { project: { key: 'NOPE' }, summary: 'x' } }] },
      });
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ issues: [], errors: [{ status: 400, failedElementNumber: 0 }] });
    });

    it('more than bulkCreateMax (50 on the realistic profile) is refused whole; bulkCreateMax 0 is a 404', async () => {
      const before = emu().store.issues.all().length;
      const many = Array.from({ length: 51 }, (_, i) => testCase(`case ${i}`));
      const r = await call(emu(), 'POST', BULK, { body: { issueUpdates: many } });
      expect(r.status).toBe(400);
      expect(r.json.errorMessages[0]).toMatch(/holds 51 issues, which exceeds the maximum of 50/);
      expect(emu().store.issues.all().length).toBe(before);
      // Jira's time per create is the next test's: 50 creates at 25 ms would wait 1.25 s here.
      emu().setJira({ createMs: 0 });
      const fifty = await call(emu(), 'POST', BULK, { body: { issueUpdates: many.slice(0, 50) } });
      expect(fifty.status).toBe(201);
      expect(fifty.json.issues).toHaveLength(50);

      emu().setJira({ bulkCreateMax: 0 });
      const gone = await call(emu(), 'POST', BULK, { body: { issueUpdates: many.slice(0, 1) } });
      expect(gone.status).toBe(404);
    });

    it('each issue takes Jira createMs (25 on the realistic profile): a bulk answers that much later per issue', async () => {
      // A lower bound only (a timer never fires early): the answer waits for the issues it made, and they are
      // stored before it comes; a refused element costs nothing.
      emu().setJira({ createMs: 40, bulkCreateMax: 50 });
      const issues = [...Array.from({ length: 10 }, (_, i) => testCase(`timed ${i}`)), testCase('')];
      const started = performance.now();
      const r = await call(emu(), 'POST', BULK, { body: { issueUpdates: issues } });
      const took = performance.now() - started;
      expect(r.status).toBe(201);
      expect(r.json.issues).toHaveLength(10);
      expect(took).toBeGreaterThanOrEqual(10 * 40 - 1);
      emu().setJira({ createMs: 0 });
      const free = performance.now();
      expect((await call(emu(), 'POST', BULK, { body: { issueUpdates: issues.slice(0, 10) } })).status).toBe(201);
      expect(performance.now() - free, 'createMs 0: no wait').toBeLessThan(10 * 40);
    });
  });
}
