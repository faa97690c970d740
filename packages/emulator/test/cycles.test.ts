import { describe, expect, it } from 'vitest';
import { automationParams } from '../src/handlers/automation.js';
import { demoSeed, type SeedInput } from '../src/index.js';
import { allKeys, basic, call, enc, expectShape, TM, TM_ALIAS, useEmulator } from './helpers.js';

/**
 * The demo seed plus a test case outside the plan (DEMO-11) and two bugs (DEMO-12, DEMO-13), so that the
 * not-a-member rule and cycle defects can be exercised.
 */
const demoProject = demoSeed.projects?.[0];
if (!demoProject) throw new Error('the demo seed has no project');
const seed: SeedInput = {
  ...demoSeed,
  projects: [
    {
      ...demoProject,
      issues: [
        ...(demoProject.issues ?? []),
        { type: 'Test Case', summary: 'Case outside the plan' },
        { type: 'Bug', summary: 'Cart total is wrong' },
        { type: 'Bug', summary: 'Login is slow' },
      ],
    },
  ],
};

/** A name that needs encoding in a path: space, `/`, `%`, `#`, `?` and unicode. */
const ODD = 'Sprint 1/2 %#? ünï 🚀';

describe('automation params (SRTCYCLE rule)', () => {
  it('appends, replaces or adds SRTCYCLE and strips whitespace', () => {
    expect(automationParams('a=1;b=2', 7)).toBe('a=1;b=2;SRTCYCLE=7');
    expect(automationParams('a = 1;\n b=2;', 7)).toBe('a=1;b=2;SRTCYCLE=7');
    expect(automationParams('no pairs here', 7)).toBe('SRTCYCLE=7');
    expect(automationParams('  ', 7)).toBe('SRTCYCLE=7');
    expect(automationParams('a=1;SRTCYCLE=3', 7)).toBe('a=1;SRTCYCLE=7');
  });
});

for (const variant of ['id', 'ID'] as const) {
  for (const prefix of [TM, TM_ALIAS]) {
    describe(`test cycle operations (variant ${variant}, ${prefix})`, () => {
      const emu = useEmulator({ variant, seed });
      const plan = `${prefix}/testPlan/DEMO-1`;
      const cyclePath = (name: string) => `${plan}/cycle/${enc(name)}`;

      /** Creates a cycle through the plan operations and answers its list item (tolerant parse). */
      async function addCycle(name: string, extra: Record<string, unknown> = {}) {
        const r = await call(emu(), 'POST', `${plan}/addCycle`, { body: { name, ...extra } });
        expect(r.status, r.text).toBe(200);
        return cycleItem(name);
      }
      async function cycleItem(name: string) {
        const r = await call(emu(), 'GET', `${plan}/cycles`);
        const list = expectShape('plans.cycles', variant, r.json) as { id: number; name: string }[];
        const found = list.find((c) => c.name === name);
        if (!found) throw new Error(`cycle ${name} not listed`);
        return found as Record<string, any> & { id: number; name: string };
      }
      const wf = (name: string, action: string) => call(emu(), 'PUT', `${cyclePath(name)}/wf/${action}`);
      async function runsOf(name: string) {
        const r = await call(emu(), 'GET', `${cyclePath(name)}/testRuns`);
        expect(r.status, r.text).toBe(200);
        return expectShape('cycles.testRuns', variant, r.json) as {
          id: number;
          testCaseKey: string;
          testerName?: string;
          status: string;
        }[];
      }

      it('moves a cycle through its workflow and keeps the start and completion dates', async () => {
        await addCycle(ODD, { preloadRuns: 'yes' });
        const start = await wf(ODD, 'Start');
        expect(start.status, start.text).toBe(200);
        expect(start.text).toBe('');
        const active = await cycleItem(ODD);
        expect(active).toMatchObject({ status: 'Active', active: true, draft: false, deleteable: false });
        expect(active.cycleStartedDate).toBeTypeOf('string');
        expect(active.cycleCompletedDate).toBeUndefined();

        const again = await wf(ODD, 'Start');
        expect(again.status).toBe(500);
        expect(again.json.message).toContain('Active');
        expect(again.json.message).toContain('Start');
        expect(again.json.field).toBe('action');

        expect((await wf(ODD, 'Complete')).status).toBe(200);
        const completed = await cycleItem(ODD);
        expect(completed).toMatchObject({ status: 'Completed', active: false, deleteable: false });
        expect(completed.cycleCompletedDate).toBeTypeOf('string');
        expect(completed.cycleStartedDate).toBe(active.cycleStartedDate);
        expect((await wf(ODD, 'Abort')).status).toBe(500);

        expect((await wf(ODD, 'Resume')).status).toBe(200);
        const resumed = await cycleItem(ODD);
        expect(resumed).toMatchObject({ status: 'Active', active: true });
        expect(resumed.cycleStartedDate).toBe(active.cycleStartedDate);
        expect(resumed.cycleCompletedDate).toBeUndefined();

        expect((await wf(ODD, 'Abort')).status).toBe(200);
        expect(await cycleItem(ODD)).toMatchObject({ status: 'Aborted', aborted: true, deleteable: true });
        expect((await wf(ODD, 'Resume')).status).toBe(200);
        expect((await cycleItem(ODD)).status).toBe('Active');
      });

      it('refuses illegal transitions, misspelt actions and unknown plans or cycles', async () => {
        await addCycle('wf draft');
        for (const action of ['Complete', 'Abort', 'Resume']) {
          const r = await wf('wf draft', action);
          expect(r.status, action).toBe(500);
          expect(r.json.message).toContain('Draft');
          expect(r.json.message).toContain(action);
        }
        const lower = await wf('wf draft', 'start');
        expect(lower.status).toBe(500);
        expect(lower.json.field).toBe('action');
        expect((await wf('wf draft', 'Pause')).status).toBe(500);
        expect((await cycleItem('wf draft')).status).toBe('Draft');
        expect((await wf('no such cycle', 'Start')).status).toBe(404);
        const noPlan = await call(emu(), 'PUT', `${prefix}/testPlan/DEMO-404/cycle/x/wf/Start`);
        expect(noPlan.status).toBe(404);
        const notAPlan = await call(emu(), 'PUT', `${prefix}/testPlan/DEMO-2/cycle/x/wf/Start`);
        expect(notAPlan.status).toBe(404);
        const unlicensed = await call(emu(), 'PUT', `${cyclePath('wf draft')}/wf/Start`, {
          auth: basic('nolicense', 'nolicense'),
        });
        expect(unlicensed.status).toBe(403);
      });

      it('lets runs be updated only while the cycle is Active', async () => {
        await addCycle('gate', { preloadRuns: 'yes' });
        const [run] = await runsOf('gate');
        if (!run) throw new Error('no run');
        const update = () =>
          call(emu(), 'POST', `${prefix}/testRun/update`, { body: { runId: String(run.id), result: 'passed' } });
        expect((await update()).status).toBe(403);
        await wf('gate', 'Start');
        expect((await update()).status).toBe(200);
        expect((await runsOf('gate'))[0]?.status).toBe('Passed');
        await wf('gate', 'Complete');
        expect((await update()).status).toBe(403);
        await wf('gate', 'Resume');
        expect((await update()).status).toBe(200);
      });

      it('lists runs by name and by id in run order, and reorders them', async () => {
        const cycle = await addCycle(`order ${ODD}`, { preloadRuns: 'yes' });
        const byName = await runsOf(cycle.name);
        expect(byName.map((r) => r.testCaseKey)).toEqual(['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6', 'DEMO-7']);
        const keys = allKeys((await call(emu(), 'GET', `${cyclePath(cycle.name)}/testRuns`)).json);
        expect(keys.has(variant)).toBe(true);
        expect(keys.has(variant === 'id' ? 'ID' : 'id')).toBe(false);
        const byIdRes = await call(emu(), 'GET', `${plan}/cycle/${cycle.id}/testRunsByCycleId`);
        expect(byIdRes.status).toBe(200);
        const byId = expectShape('cycles.testRunsByCycleId', variant, byIdRes.json) as { id: number }[];
        expect(byId.map((r) => r.id)).toEqual(byName.map((r) => r.id));

        const ids = byName.map((r) => r.id);
        const reorder = (testRunId: number | undefined, refTestRunId: number | undefined) =>
          call(emu(), 'PUT', `${prefix}/testRun/reorderTestRun`, { body: { testRunId, refTestRunId } });
        // The last run to the top, then the (new) first run directly below the third.
        expect((await reorder(ids[5], -1)).status).toBe(200);
        let now = (await runsOf(cycle.name)).map((r) => r.testCaseKey);
        expect(now).toEqual(['DEMO-7', 'DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6']);
        expect((await reorder(ids[5], ids[2])).status).toBe(200);
        now = (await runsOf(cycle.name)).map((r) => r.testCaseKey);
        expect(now).toEqual(['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-7', 'DEMO-5', 'DEMO-6']);
        const byIdAfter = (await call(emu(), 'GET', `${plan}/cycle/${cycle.id}/testRunsByCycleId`)).json as Record<
          string,
          number
        >[];
        expect(byIdAfter.map((r) => r[variant])).toEqual((await runsOf(cycle.name)).map((r) => r.id));
        // Onto itself: nothing moves.
        expect((await reorder(ids[0], ids[0])).status).toBe(200);

        expect((await reorder(999_999, -1)).status).toBe(404);
        const other = await addCycle('order other', { preloadRuns: 'yes' });
        const otherRun = (await runsOf(other.name))[0];
        const foreign = await reorder(ids[0], otherRun?.id);
        expect(foreign.status).toBe(500);
        expect(foreign.json.field).toBe('refTestRunId');
        await wf(other.name, 'Start');
        await wf(other.name, 'Complete');
        expect((await reorder(otherRun?.id, -1)).status).toBe(403);

        expect((await call(emu(), 'GET', `${plan}/cycle/999999/testRunsByCycleId`)).status).toBe(404);
        expect((await call(emu(), 'GET', `${plan}/cycle/abc/testRunsByCycleId`)).status).toBe(500);
        expect((await call(emu(), 'GET', `${cyclePath('missing')}/testRuns`)).status).toBe(404);
        expect((await call(emu(), 'GET', `${prefix}/testPlan/DEMO-404/cycle/x/testRuns`)).status).toBe(404);
      });

      it('adds and removes cycle members idempotently, by id or by name', async () => {
        const cycle = await addCycle('members');
        const add = (body: Record<string, unknown>) => call(emu(), 'POST', `${plan}/addMembersToTestCycle`, { body });
        const byId = await add({ testCycleId: cycle.id, addTestCaseKeys: ['DEMO-2', 'DEMO-3'] });
        expect(byId.status, byId.text).toBe(200);
        expect(byId.text).toBe('');
        expect((await runsOf('members')).map((r) => r.testCaseKey)).toEqual(['DEMO-2', 'DEMO-3']);
        expect((await add({ testCycleName: 'members', addTestCaseKeys: ['DEMO-2', 'DEMO-4'] })).status).toBe(200);
        expect((await runsOf('members')).map((r) => r.testCaseKey)).toEqual(['DEMO-2', 'DEMO-3', 'DEMO-4']);
        expect((await add({ testCycleName: 'members', removeTestCaseKeys: ['DEMO-3', 'DEMO-5'] })).status).toBe(200);
        expect((await runsOf('members')).map((r) => r.testCaseKey)).toEqual(['DEMO-2', 'DEMO-4']);

        // testCycleId wins over testCycleName.
        await addCycle('members decoy');
        expect(
          (await add({ testCycleId: cycle.id, testCycleName: 'members decoy', addTestCaseKeys: ['DEMO-6'] })).status,
        ).toBe(200);
        expect((await runsOf('members')).map((r) => r.testCaseKey)).toEqual(['DEMO-2', 'DEMO-4', 'DEMO-6']);
        expect(await runsOf('members decoy')).toEqual([]);

        const outsider = await add({ testCycleId: cycle.id, addTestCaseKeys: ['DEMO-7', 'DEMO-11'] });
        expect(outsider.status).toBe(500);
        expect(outsider.json.message).toContain('DEMO-11');
        expect((await runsOf('members')).map((r) => r.testCaseKey)).not.toContain('DEMO-7');
        const both = await add({ testCycleId: cycle.id, addTestCaseKeys: ['DEMO-7'], removeTestCaseKeys: ['DEMO-7'] });
        expect(both.status).toBe(500);
        expect(both.json.message).toContain('DEMO-7');
        const nameless = await add({ addTestCaseKeys: ['DEMO-7'] });
        expect(nameless.status).toBe(500);
        expect(nameless.json.message).toContain('Cycle Id is Mandatory');
        expect((await add({ testCycleId: cycle.id, addTestCaseKeys: ['DEMO-99'] })).status).toBe(404);
        expect((await add({ testCycleId: cycle.id, addTestCaseKeys: ['DEMO-8'] })).status).toBe(404);
        expect((await add({ testCycleName: 'nope', addTestCaseKeys: ['DEMO-2'] })).status).toBe(404);
        expect((await add({ testCycleId: 999_999, addTestCaseKeys: ['DEMO-2'] })).status).toBe(404);
        const unknownField = await add({ testCycleId: cycle.id, testCaseKeys: ['DEMO-2'] });
        expect(unknownField.status).toBe(500);
        expect(unknownField.json.message).toContain('testCaseKeys');

        const advanced = await addCycle('members advanced', { testCycleType: 'Advanced' });
        expect((await add({ testCycleId: advanced.id, addTestCaseKeys: ['DEMO-2'] })).status).toBe(500);
        await wf('members', 'Start');
        await wf('members', 'Complete');
        expect((await add({ testCycleId: cycle.id, addTestCaseKeys: ['DEMO-7'] })).status).toBe(403);
      });

      it('creates attribute run sets in an advanced cycle, with partial success', async () => {
        const cycle = await addCycle('advanced', { testCycleType: 'Advanced' });
        const create = (body: Record<string, unknown>) =>
          call(emu(), 'POST', `${prefix}/testRun/createTestRuns`, { body });
        const first = await create({
          testCaseKeys: 'DEMO-2, DEMO-3',
          cycleId: String(cycle.id),
          attributeValues: [
            { Browser: 'Chrome', OS: 'Linux' },
            { Browser: 'Firefox', OS: '-', '-': '-' },
          ],
          urgencyValue: 'High,null',
          assignValue: 'tester,Unassigned',
          progressKey: 'p-1',
        });
        expect(first.status, first.text).toBe(200);
        const parsed = expectShape('cycles.createTestRuns', variant, first.json);
        expect(parsed.errors).toEqual([]);
        expect(parsed.createdRuns).toHaveLength(4);
        expect(parsed.createdRuns[0]).toMatchObject({
          testCaseKey: 'DEMO-2',
          status: 'Not Tested',
          testerName: 'tester',
          urgency: 'High',
          attributeValues: { Browser: 'Chrome', OS: 'Linux' },
        });
        expect(parsed.createdRuns[3]).toMatchObject({
          testCaseKey: 'DEMO-3',
          testerName: '',
          urgency: null,
          attributeValues: { Browser: 'Firefox' },
        });
        expect(allKeys(first.json).has(variant)).toBe(true);
        const listed = await runsOf('advanced');
        expect(listed.map((r) => r.id)).toEqual(parsed.createdRuns.map((r: { id: number }) => r.id));

        const partial = await create({
          testCaseKeys: 'DEMO-2,DEMO-11',
          cycleId: cycle.id,
          attributeValues: [
            { Browser: 'Chrome', OS: 'Linux' },
            { Colour: 'red' },
            { Browser: 'Chrome', OS: 'Windows' },
          ],
        });
        expect(partial.status, partial.text).toBe(200);
        const p = expectShape('cycles.createTestRuns', variant, partial.json);
        expect(p.createdRuns.map((r: { attributeValues: object }) => r.attributeValues)).toEqual([
          { Browser: 'Chrome', OS: 'Windows' },
        ]);
        const messages = p.errors.map((e: { message: string }) => e.message).join('\n');
        expect(messages).toContain('Colour');
        expect(messages).toContain('DEMO-11');
        expect(messages).toContain('already has a run');
        expect(p.errors.find((e: { attributeSet?: number }) => e.attributeSet === 1)).toMatchObject({
          attributeValues: { Colour: 'red' },
        });
        expect(await runsOf('advanced')).toHaveLength(5);

        const base = { testCaseKeys: 'DEMO-4', cycleId: String(cycle.id), attributeValues: [{ Browser: 'Chrome' }] };
        const unknownValue = await create({ ...base, attributeValues: [{ Browser: 'Safari' }] });
        expect(unknownValue.status).toBe(404);
        expect(unknownValue.json.message).toContain('Safari');
        expect(await runsOf('advanced')).toHaveLength(5);
        expect((await create({ ...base, testCaseKeys: 'DEMO-98,DEMO-99' })).status).toBe(404);
        expect((await create({ ...base, cycleId: '999999' })).status).toBe(404);

        const noCases = await create({ cycleId: String(cycle.id), attributeValues: [{ Browser: 'Chrome' }] });
        expect(noCases.status).toBe(500);
        expect(noCases.json.message).toContain('TestCaseId is Mandatory');
        expect((await create({ ...base, testCaseKeys: ' , ' })).json.message).toContain('TestCaseId is Mandatory');
        const noCycle = await create({ testCaseKeys: 'DEMO-4', attributeValues: [{ Browser: 'Chrome' }] });
        expect(noCycle.status).toBe(500);
        expect(noCycle.json.message).toContain('Cycle Id is Mandatory');
        const noValues = await create({ ...base, attributeValues: [] });
        expect(noValues.status).toBe(500);
        expect(noValues.json.message).toContain('Please specify attribute values');
        const urgencies = await create({ ...base, urgencyValue: 'High,Low' });
        expect(urgencies.status).toBe(500);
        expect(urgencies.json.field).toBe('urgencyValue');
        const plain = await addCycle('not advanced');
        const notAdvanced = await create({ ...base, cycleId: String(plain.id) });
        expect(notAdvanced.status).toBe(500);
        expect(notAdvanced.json.message).toContain('advanced');
        const asArray = await create({ ...base, testCaseKeys: ['DEMO-4'] });
        expect(asArray.status).toBe(500);
        expect(asArray.json.field).toBe('testCaseKeys');
      });

      it('creates the runs it can: an unknown key or attribute value among valid ones is an entry of errors', async () => {
        const cycle = await addCycle('advanced partial', { testCycleType: 'Advanced' });
        const create = (body: Record<string, unknown>) =>
          call(emu(), 'POST', `${prefix}/testRun/createTestRuns`, { body });
        type Created = { id: number; testCaseKey: string; testerName: string; urgency: string | null };
        type Failed = { message: string; attributeSet?: number; attributeValues?: object; testCaseKey?: string };
        const answer = (r: { status: number; text: string; json: unknown }) => {
          expect(r.status, r.text).toBe(200);
          return expectShape('cycles.createTestRuns', variant, r.json) as { createdRuns: Created[]; errors: Failed[] };
        };

        // Sets 1 and 2 name values the project does not have; their urgency and tester entries are theirs (the
        // unknown tester "ghost" of set 1 goes unused), so sets 0 and 3 keep their own.
        const setsAnswer = await create({
          testCaseKeys: 'DEMO-2',
          cycleId: String(cycle.id),
          attributeValues: [
            { Browser: 'Chrome', OS: 'Linux' },
            { Browser: 'Safari', OS: 'Linux' },
            { Browser: 'Firefox', OS: 'Solaris' },
            { Browser: 'Firefox', OS: 'Windows' },
          ],
          urgencyValue: 'High,Low,Medium,Critical',
          assignValue: 'tester,ghost,Unassigned,admin',
        });
        const sets = answer(setsAnswer);
        expect(sets.createdRuns.map((r) => [r.testCaseKey, r.urgency, r.testerName])).toEqual([
          ['DEMO-2', 'High', 'tester'],
          ['DEMO-2', 'Critical', 'admin'],
        ]);
        expect(sets.errors).toHaveLength(2);
        expect(sets.errors[0]).toMatchObject({ attributeSet: 1, attributeValues: { Browser: 'Safari', OS: 'Linux' } });
        expect(sets.errors[0]?.message).toMatch(/"Safari".*Browser/);
        expect(sets.errors[0]?.testCaseKey).toBeUndefined();
        expect(sets.errors[1]).toMatchObject({
          attributeSet: 2,
          attributeValues: { Browser: 'Firefox', OS: 'Solaris' },
        });
        expect(sets.errors[1]?.message).toMatch(/"Solaris".*OS/);
        expect(sets.errors.map((e) => e.message).join('\n')).not.toContain('ghost');
        expect(allKeys(setsAnswer.json).has(variant)).toBe(true);
        expect((await runsOf(cycle.name)).map((r) => r.id)).toEqual(sets.createdRuns.map((r) => r.id));

        // An unknown key, or a key of another issue type, among valid ones: the valid cases get their runs.
        const keys = answer(
          await create({
            testCaseKeys: 'DEMO-99, DEMO-3, DEMO-8, DEMO-4',
            cycleId: String(cycle.id),
            attributeValues: [{ Browser: 'Chrome', OS: 'Linux' }],
          }),
        );
        expect(keys.createdRuns.map((r) => r.testCaseKey)).toEqual(['DEMO-3', 'DEMO-4']);
        expect(keys.errors).toEqual([
          { message: expect.stringContaining('DEMO-99'), testCaseKey: 'DEMO-99' },
          { message: expect.stringContaining('Requirement'), testCaseKey: 'DEMO-8' },
        ]);
        expect(await runsOf(cycle.name)).toHaveLength(4);

        // Nothing created, yet no unknown value in every set: an unknown attribute name is a set's own error.
        const mixed = answer(
          await create({
            testCaseKeys: 'DEMO-5',
            cycleId: String(cycle.id),
            attributeValues: [{ Browser: 'Safari' }, { Colour: 'red' }],
          }),
        );
        expect(mixed.createdRuns).toEqual([]);
        expect(mixed.errors.map((e) => e.attributeSet)).toEqual([0, 1]);
        // Known keys that yield no run (outside the plan) are not unknown keys either.
        const outsider = answer(
          await create({
            testCaseKeys: 'DEMO-11,DEMO-99',
            cycleId: String(cycle.id),
            attributeValues: [{ Browser: 'Chrome', OS: 'Linux' }],
          }),
        );
        expect(outsider.createdRuns).toEqual([]);
        expect(outsider.errors.map((e) => e.testCaseKey)).toEqual(['DEMO-11', 'DEMO-99']);
        expect(await runsOf(cycle.name)).toHaveLength(4);

        // 404 when nothing could be created because keys, cycle or values are unknown; nothing is written.
        const base = { testCaseKeys: 'DEMO-5', cycleId: String(cycle.id), attributeValues: [{ Browser: 'Chrome' }] };
        const noKey = await create({ ...base, testCaseKeys: 'DEMO-98, DEMO-99,DEMO-8' });
        expect(noKey.status).toBe(404);
        expect(noKey.json.message).toContain('DEMO-98');
        expect(noKey.json.message).toContain('DEMO-99');
        expect(noKey.json.message).toContain('DEMO-8');
        const noValue = await create({
          ...base,
          attributeValues: [{ Browser: 'Safari' }, { Browser: 'Chrome', OS: 'Solaris' }],
          urgencyValue: 'High,Low',
        });
        expect(noValue.status).toBe(404);
        expect(noValue.json.message).toContain('Safari');
        expect(noValue.json.message).toContain('Solaris');
        const noCycle = await create({ ...base, cycleId: '999999' });
        expect(noCycle.status).toBe(404);
        expect(noCycle.json.message).toContain('999999');
        expect(await runsOf(cycle.name)).toHaveLength(4);

        // The 500s of the request's form come first, and still apply when a set or key is unknown.
        const counts = await create({ ...base, attributeValues: [{ Browser: 'Safari' }, { Browser: 'Chrome' }] });
        expect(counts.status).toBe(200);
        const short = await create({
          ...base,
          testCaseKeys: 'DEMO-99',
          attributeValues: [{ Browser: 'Safari' }, { Browser: 'Chrome' }],
          assignValue: 'tester',
        });
        expect(short.status).toBe(500);
        expect(short.json.field).toBe('assignValue');
        const asArray = await create({ ...base, testCaseKeys: ['DEMO-99'] });
        expect(asArray.status).toBe(500);
        expect(asArray.json.field).toBe('testCaseKeys');

        // A read-only cycle refuses before keys and values are looked at.
        expect((await wf(cycle.name, 'Start')).status).toBe(200);
        expect((await wf(cycle.name, 'Complete')).status).toBe(200);
        const runs = (await runsOf(cycle.name)).length;
        expect((await create({ ...base, testCaseKeys: 'DEMO-6,DEMO-99' })).status).toBe(403);
        expect((await create({ ...base, testCaseKeys: 'DEMO-99' })).status).toBe(403);
        expect((await create({ ...base, attributeValues: [{ Browser: 'Safari' }] })).status).toBe(403);
        expect(await runsOf(cycle.name)).toHaveLength(runs);
      });

      it('assigns a tester to runs in bulk and answers plain-text 500s', async () => {
        const cycle = await addCycle('assign', { preloadRuns: 'yes' });
        const runs = await runsOf('assign');
        const assign = (body: Record<string, unknown>) => call(emu(), 'POST', `${plan}/bulkAssignUpdate`, { body });
        const ok = await assign({
          testCycleId: cycle.id,
          testerName: 'tester',
          runIds: [runs[0]?.id, runs[2]?.id],
          notifyTester: true,
        });
        expect(ok.status, ok.text).toBe(200);
        expect(expectShape('cycles.bulkAssignUpdate', variant, ok.json).message).toContain('Tess Tester');
        expect((await runsOf('assign')).map((r) => r.testerName)).toEqual(['tester', '', 'tester', '', '', '']);
        const info = await call(emu(), 'GET', `${plan}/testPlanInformation`, { query: { pageSize: 100 } });
        const listed = (info.json.testCycles as { testCycleName: string; notifyTester: boolean }[]).find(
          (c) => c.testCycleName === 'assign',
        );
        expect(listed?.notifyTester).toBe(true);

        const ghost = await assign({ testCycleId: cycle.id, testerName: 'ghost', runIds: [runs[0]?.id] });
        expect(ghost.status).toBe(500);
        expect(ghost.headers.get('content-type')).toMatch(/^text\/plain/);
        expect(ghost.text).toContain('ghost');
        const other = await addCycle('assign other', { preloadRuns: 'yes' });
        const foreignRun = (await runsOf(other.name))[0]?.id;
        const foreign = await assign({ testCycleId: cycle.id, testerName: 'tester', runIds: [foreignRun] });
        expect(foreign.status).toBe(500);
        expect(foreign.headers.get('content-type')).toMatch(/^text\/plain/);
        expect(foreign.text).toContain(String(foreignRun));
        const empty = await assign({ testCycleId: cycle.id, testerName: 'tester', runIds: [] });
        expect(empty.status).toBe(500);
        expect(empty.text).toContain('runIds');
        expect((await assign({ testCycleId: 999_999, testerName: 'tester', runIds: [1] })).status).toBe(404);
        await wf('assign', 'Start');
        await wf('assign', 'Abort');
        expect((await assign({ testCycleId: cycle.id, testerName: 'admin', runIds: [runs[0]?.id] })).status).toBe(403);
      });

      it('edits a cycle by id and refuses duplicate names and bad dates', async () => {
        const cycle = await addCycle('edit me', { preloadRuns: 'yes' });
        const edit = (body: Record<string, unknown>) => call(emu(), 'POST', `${plan}/editCycle`, { body });
        const renamed = `edited ${ODD}`;
        const r = await edit({
          id: cycle.id,
          name: renamed,
          environment: 'staging',
          build: '2.0.1',
          plannedStartDate: '2026-03-01',
          plannedEndDate: '2026-03-31',
        });
        expect(r.status, r.text).toBe(200);
        expect(r.text).toBe('');
        const item = await cycleItem(renamed);
        expect(item.id).toBe(cycle.id);
        if (variant === 'id') {
          expect(item).toMatchObject({
            environment: 'staging',
            build: '2.0.1',
            plannedStartDate: '2026-03-01',
            plannedEndDate: '2026-03-31',
          });
        }
        expect(await runsOf(renamed)).toHaveLength(6);
        expect((await call(emu(), 'GET', `${cyclePath('edit me')}/testRuns`)).status).toBe(404);
        // Left-out fields keep their value.
        expect((await edit({ id: cycle.id, build: '2.0.2' })).status).toBe(200);
        if (variant === 'id')
          expect(await cycleItem(renamed)).toMatchObject({ environment: 'staging', build: '2.0.2' });

        await addCycle('taken');
        const dup = await edit({ id: cycle.id, name: 'taken' });
        expect(dup.status).toBe(500);
        expect(dup.json.message).toContain('already exists');
        expect((await edit({ id: cycle.id, name: renamed })).status).toBe(200);
        const blank = await edit({ id: cycle.id, name: '  ' });
        expect(blank.status).toBe(500);
        expect(blank.json.field).toBe('name');
        const badDate = await edit({ id: cycle.id, plannedStartDate: '31/03/2026' });
        expect(badDate.status).toBe(500);
        expect(badDate.json.field).toBe('plannedStartDate');
        const backwards = await edit({ id: cycle.id, plannedEndDate: '2026-02-01' });
        expect(backwards.status).toBe(500);
        expect(backwards.json.field).toBe('plannedEndDate');
        expect((await edit({ id: 999_999, name: 'x' })).status).toBe(404);
        expect((await call(emu(), 'POST', `${prefix}/testPlan/DEMO-404/editCycle`, { body: { id: 1 } })).status).toBe(
          404,
        );
      });

      it('lists the distinct defects of a cycle from runs and run steps', async () => {
        const cycle = await addCycle('defects', { preloadRuns: 'yes' });
        const defects = async () => {
          const r = await call(emu(), 'GET', `${plan}/cycle/${cycle.id}/defects`);
          expect(r.status).toBe(200);
          return (expectShape('defects.ofCycle', variant, r.json) as { key: string }[]).map((d) => d.key);
        };
        expect(await defects()).toEqual([]);
        await wf('defects', 'Start');
        const [run] = await runsOf('defects');
        const update = await call(emu(), 'POST', `${prefix}/testRun/update`, {
          body: { runId: String(run?.id), result: 'Failed', bugs: ['DEMO-12'] },
        });
        expect(update.status, update.text).toBe(200);
        const details = await call(emu(), 'GET', `${prefix}/testRun/${run?.id}`);
        const stepId = details.json.testRunDetails.testRunSteps[0][variant];
        const step = await call(emu(), 'POST', `${prefix}/testRun/updateStep`, {
          body: { runStepId: stepId, result: 'Failed', bugs: ['DEMO-12', 'DEMO-13'] },
        });
        expect(step.status, step.text).toBe(200);
        expect(await defects()).toEqual(['DEMO-12', 'DEMO-13']);
        // The run list names the bugs of the run itself, not those of its steps; the other runs have none.
        const listed = (await runsOf('defects')) as Array<{ id: number; bugs?: { key: string }[] }>;
        expect(listed.find((r) => r.id === run?.id)?.bugs?.map((b) => b.key)).toEqual(['DEMO-12']);
        expect(listed.filter((r) => r.id !== run?.id).every((r) => r.bugs === undefined)).toBe(true);
        expect((await call(emu(), 'GET', `${plan}/cycle/999999/defects`)).status).toBe(404);
      });

      it('attaches, reads and triggers the automation job of a cycle', async () => {
        const cycle = await addCycle(`auto ${ODD}`);
        const post = (op: string, body: Record<string, unknown>) =>
          call(emu(), 'POST', `${prefix}/testCycle/${op}`, { body });
        const job = { testPlanKey: 'DEMO-1', testCycleName: cycle.name };
        const added = await post('addAutomationJobToTestCycle', {
          ...job,
          appName: 'jenkins',
          jobKey: 'shop-e2e',
          testType: 'Playwright',
          params: 'browser = chrome;\n env=qa',
        });
        expect(added.status, added.text).toBe(200);
        expect(added.text).toBe('');
        const read = async () => {
          const r = await post('automationJobs', job);
          expect(r.status, r.text).toBe(200);
          return expectShape('automation.jobs', variant, r.json);
        };
        const first = await read();
        expect(first).toMatchObject({
          appName: 'jenkins',
          jobKey: 'shop-e2e',
          testType: 'Playwright',
          params: `browser=chrome;env=qa;SRTCYCLE=${cycle.id}`,
        });
        // A second job replaces the first and keeps its automationBuildId.
        await post('addAutomationJobToTestCycle', {
          ...job,
          appName: 'bamboo',
          jobKey: 'K',
          testType: 't',
          params: 'x',
        });
        const second = await read();
        expect(second).toMatchObject({ automationBuildId: first.automationBuildId, appName: 'bamboo' });
        expect(second.params).toBe(`SRTCYCLE=${cycle.id}`);

        const trigger = await post('triggerAutomationJob', {
          ...job,
          automationBuildId: String(first.automationBuildId),
        });
        expect(trigger.status, trigger.text).toBe(200);
        expect(emu().store.automationJobs.get(first.automationBuildId)?.triggers).toHaveLength(1);
        expect((await post('triggerAutomationJob', { ...job, automationBuildId: '999999' })).status).toBe(404);
        const notNumber = await post('triggerAutomationJob', { ...job, automationBuildId: 'abc' });
        expect(notNumber.status).toBe(500);
        expect(notNumber.json.field).toBe('automationBuildId');

        const missing = await post('addAutomationJobToTestCycle', { ...job, jobKey: 'k', testType: 't' });
        expect(missing.status).toBe(404);
        expect(missing.json.field).toBe('appName');
        const unknownCycle = { testPlanKey: 'DEMO-1', testCycleName: 'no such cycle' };
        const payload = { appName: 'a', jobKey: 'k', testType: 't', params: '' };
        expect((await post('addAutomationJobToTestCycle', { ...unknownCycle, ...payload })).status).toBe(404);
        expect(
          (await post('addAutomationJobToTestCycle', { ...payload, testPlanKey: 'DEMO-404', testCycleName: 'x' }))
            .status,
        ).toBe(404);
        expect((await post('automationJobs', unknownCycle)).status).toBe(404);
        await addCycle('auto without job');
        const none = await post('automationJobs', { testPlanKey: 'DEMO-1', testCycleName: 'auto without job' });
        expect(none.status).toBe(404);
        expect(none.json.message).toContain('no automation job');
      });
    });
  }
}
