import { describe, expect, it } from 'vitest';
import { allKeys, basic, call, expectShape, TM, TM_ALIAS, useEmulator } from './helpers.js';

for (const variant of ['id', 'ID'] as const) {
  for (const prefix of [TM, TM_ALIAS]) {
    describe(`test plan operations (variant ${variant}, ${prefix})`, () => {
      const emu = useEmulator({ variant });
      const plan = `${prefix}/testPlan/DEMO-1`;

      it('lists plan members in the variant shape', async () => {
        const r = await call(emu(), 'GET', `${plan}/members`);
        expect(r.status).toBe(200);
        const members = expectShape('plans.members', variant, r.json);
        expect(members.map((m: { testCaseKey: string }) => m.testCaseKey)).toEqual([
          'DEMO-2',
          'DEMO-3',
          'DEMO-4',
          'DEMO-5',
          'DEMO-6',
          'DEMO-7',
        ]);
        const keys = allKeys(r.json);
        expect(keys.has(variant === 'ID' ? 'ID' : 'id')).toBe(true);
        expect(keys.has(variant === 'ID' ? 'id' : 'ID')).toBe(false);
        expect(keys.has('testPlanKey')).toBe(variant === 'id');
      });

      it('adds members idempotently and 404s on an unknown plan or case', async () => {
        expect((await call(emu(), 'POST', `${plan}/addMembers`, { body: { testCaseKeys: ['DEMO-2'] } })).status).toBe(
          200,
        );
        expect((await call(emu(), 'GET', `${plan}/members`)).json).toHaveLength(6);
        const unknownCase = await call(emu(), 'POST', `${plan}/addMembers`, { body: { testCaseKeys: ['DEMO-99'] } });
        expect(unknownCase.status).toBe(404);
        expect(unknownCase.json.message).toContain('DEMO-99');
        const unknownPlan = await call(emu(), 'POST', `${prefix}/testPlan/DEMO-404/addMembers`, {
          body: { testCaseKeys: ['DEMO-2'] },
        });
        expect(unknownPlan.status).toBe(404);
        // A test case is not a test plan.
        expect((await call(emu(), 'GET', `${prefix}/testPlan/DEMO-2/members`)).status).toBe(404);
      });

      it('creates cycles with odd names, preloads runs, refuses duplicates and bad dates', async () => {
        const name = 'CI 1/2 %#? ünï 🚀';
        const created = await call(emu(), 'POST', `${plan}/addCycle`, {
          body: { name, environment: 'staging', build: '1.0.7', plannedStartDate: '2026-11-01', preloadRuns: 'yes' },
        });
        expect(created.status).toBe(200);
        expect(created.text).toBe('');
        const cycles = await call(emu(), 'GET', `${plan}/cycles`);
        const parsed = expectShape('plans.cycles', variant, cycles.json);
        const cycle = parsed.find((c: { name: string }) => c.name === name);
        expect(cycle).toMatchObject({ status: 'Draft', draft: true, active: false, deleteable: true });
        if (variant === 'id') expect(cycle).toMatchObject({ environment: 'staging', build: '1.0.7' });
        else expect(allKeys(cycles.json).has('environment')).toBe(false);
        const stored = emu().store.cycles.find((c) => c.name === name);
        expect(emu().store.runs.filter((r) => r.cycleId === stored?.id)).toHaveLength(6);

        const dup = await call(emu(), 'POST', `${plan}/addCycle`, { body: { name } });
        expect(dup.status).toBe(500);
        expect(dup.json.message).toContain('already exists');
        const badDate = await call(emu(), 'POST', `${plan}/addCycle`, {
          body: { name: 'dates', plannedStartDate: '01/11/2026' },
        });
        expect(badDate.status).toBe(500);
        expect(badDate.json.field).toBe('plannedStartDate');
        const noName = await call(emu(), 'POST', `${plan}/addCycle`, { body: { environment: 'x' } });
        expect(noName.status).toBe(500);
        expect(noName.json.message).toMatch(/name/);
      });

      it('deletes a Draft cycle by name or id and answers plain text when it cannot', async () => {
        await call(emu(), 'POST', `${plan}/addCycle`, { body: { name: 'to delete' } });
        await call(emu(), 'POST', `${plan}/addCycle`, { body: { name: 'to delete 2' } });
        const list = (await call(emu(), 'GET', `${plan}/cycles`)).json as Record<string, unknown>[];
        const second = list.find((c) => c.name === 'to delete 2');
        const id = String(second?.[variant]);
        expect(
          (await call(emu(), 'DELETE', `${plan}/deleteCycleByIdOrName`, { body: { name: 'to delete' } })).status,
        ).toBe(200);
        expect((await call(emu(), 'DELETE', `${plan}/deleteCycleByIdOrName`, { body: { id } })).status).toBe(200);
        const names = ((await call(emu(), 'GET', `${plan}/cycles`)).json as { name: string }[]).map((c) => c.name);
        expect(names).not.toContain('to delete');
        expect(names).not.toContain('to delete 2');
        const missing = await call(emu(), 'DELETE', `${plan}/deleteCycleByIdOrName`, { body: { name: 'nope' } });
        expect(missing.status).toBe(500);
        expect(missing.headers.get('content-type')).toMatch(/^text\/plain/);
        expect(missing.text).toContain('nope');
      });

      it('assigns a tester to a member', async () => {
        const members = (await call(emu(), 'GET', `${plan}/members`)).json as Record<string, number>[];
        const memberId = members[0]?.[variant];
        const r = await call(emu(), 'PUT', `${plan}/assignTesterToTestCase`, {
          body: { memberId, userName: 'tester' },
        });
        expect(r.status).toBe(200);
        expectShape('plans.assignTesterToTestCase', variant, r.json);
        expect(r.json.data).toBe('Tess Tester');
        const noUser = await call(emu(), 'PUT', `${plan}/assignTesterToTestCase`, {
          body: { memberId, userName: 'ghost' },
        });
        expect(noUser.status).toBe(404);
      });

      it('answers plan information paginated by cycle, and runs created after a cut-off', async () => {
        const info = await call(emu(), 'GET', `${plan}/testPlanInformation`, {
          query: { pageNumber: 1, pageSize: 50 },
        });
        expect(info.status).toBe(200);
        const parsed = expectShape('plans.testPlanInformation', variant, info.json);
        expect(parsed.testCycles.length).toBeGreaterThan(0);
        const created = await call(emu(), 'GET', `${prefix}/testRun/getTestRunsCreated`, {
          query: { testPlanIdOrKey: 'DEMO-1', cutOffDateAndTime: '2000-01-01 00:00:00' },
        });
        expect(created.status).toBe(200);
        const runs = expectShape('plans.getTestRunsCreated', variant, created.json);
        expect(runs.length).toBeGreaterThanOrEqual(6);
        expect(runs[0].runStatus).toMatchObject({ name: 'Not Tested', id: 4, default: true });
        const future = await call(emu(), 'GET', `${prefix}/testRun/getTestRunsCreated`, {
          query: { testPlanIdOrKey: '1', cutOffDateAndTime: '2999-01-01 00:00:00' },
        });
        expect(future.json).toEqual([]);
        const badCutOff = await call(emu(), 'GET', `${prefix}/testRun/getTestRunsCreated`, {
          query: { testPlanIdOrKey: 'DEMO-1', cutOffDateAndTime: 'yesterday' },
        });
        expect(badCutOff.status).toBe(500);
        expect(badCutOff.json.message).toContain('cutOffDateAndTime');
      });

      it('lists plan defects (none yet)', async () => {
        const r = await call(emu(), 'GET', `${plan}/defects`);
        expect(r.status).toBe(200);
        expect(expectShape('defects.ofPlan', variant, r.json)).toEqual([]);
      });

      it('refuses a user without a licence (403) and bad credentials (401)', async () => {
        expect((await call(emu(), 'GET', `${plan}/members`, { auth: basic('nolicense', 'nolicense') })).status).toBe(
          403,
        );
        expect((await call(emu(), 'GET', `${plan}/members`, { auth: basic('admin', 'wrong') })).status).toBe(401);
        expect((await call(emu(), 'GET', `${plan}/members`, { auth: null })).status).toBe(401);
        expect((await call(emu(), 'GET', `${plan}/members`, { auth: 'Bearer casebridge-dev-token' })).status).toBe(200);
        // A personal access token is a Bearer credential only (Jira DC): as a Basic password it is a failed login.
        expect(
          (await call(emu(), 'GET', `${plan}/members`, { auth: basic('admin', 'casebridge-dev-token') })).status,
        ).toBe(401);
      });
    });
  }
}
