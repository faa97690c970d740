import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../src/index.js';
import type { CycleStatus } from '../src/store/store.js';
import { allKeys, basic, call, enc, expectShape, TM, TM_ALIAS, useEmulator } from './helpers.js';

const ADMIN_AUTH = basic('admin', 'admin');
const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

const LEGACY = /^\d{2}\/(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\/\d{2} \d{1,2}:\d{2} (AM|PM)$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/;

/**
 * A plan cycle with the plan's test cases preloaded as runs, put into `status` directly on the store row (the
 * cycle workflow operation is another group's; these tests only need the state).
 */
async function cycleWithRuns(emu: RunningEmulator, prefix: string, name: string, status: CycleStatus = 'Active') {
  const r = await call(emu, 'POST', `${prefix}/testPlan/DEMO-1/addCycle`, { body: { name, preloadRuns: 'yes' } });
  expect(r.status).toBe(200);
  const cycle = emu.store.cycles.find((c) => c.tpId !== null && c.name === name);
  if (!cycle) throw new Error(`cycle ${name} was not created`);
  cycle.status = status;
  emu.store.cycles.update(cycle);
  const runOf = (caseKey: string): number => {
    const tc = emu.store.issues.find((i) => i.key === caseKey);
    const run = emu.store.runs.find((x) => x.cycleId === cycle.id && x.tcId === tc?.id);
    if (!run) throw new Error(`no run of ${caseKey} in ${name}`);
    return run.id;
  };
  return { cycle, runOf };
}

function setCycleStatus(emu: RunningEmulator, cycleId: number, status: CycleStatus): void {
  const cycle = emu.store.cycles.get(cycleId);
  if (!cycle) throw new Error(`no cycle ${cycleId}`);
  cycle.status = status;
  emu.store.cycles.update(cycle);
}

function upload(
  emu: RunningEmulator,
  path: string,
  files: { name: string; bytes: Uint8Array | string; type?: string; field?: string }[],
  auth: string | null = ADMIN_AUTH,
) {
  const form = new FormData();
  for (const f of files) form.append(f.field ?? 'file', new Blob([f.bytes], { type: f.type ?? '' }), f.name);
  return call(emu, 'POST', path, { raw: form, auth });
}

async function download(url: string, auth: string | null = ADMIN_AUTH) {
  const res = await fetch(url, { headers: auth === null ? {} : { authorization: auth } });
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { status: res.status, sha: hash.digest('hex'), size, type: res.headers.get('content-type') };
}

for (const variant of ['id', 'ID'] as const) {
  for (const prefix of [TM, TM_ALIAS]) {
    describe(`test run operations (variant ${variant}, ${prefix})`, () => {
      const emu = useEmulator({ variant });
      const details = async (runId: number) => {
        const r = await call(emu(), 'GET', `${prefix}/testRun/${runId}`);
        expect(r.status).toBe(200);
        return expectShape('runs.get', variant, r.json);
      };

      it('answers run details in the variant shape, 404 for an unknown run, 500 for a TR-prefixed id', async () => {
        const { runOf } = await cycleWithRuns(emu(), prefix, 'details');
        const r = await call(emu(), 'GET', `${prefix}/testRun/${runOf('DEMO-2')}`);
        expect(r.status).toBe(200);
        const run = expectShape('runs.get', variant, r.json);
        expect(run).toMatchObject({ type: 0, status: 'Not Tested', testCaseKey: 'DEMO-2', bugs: [] });
        expect(run.testRunDetails.testRunSteps.map((s: { step: string }) => s.step)).toEqual([
          'Open the login page',
          'Enter user name and password',
          'Press "Log in"',
        ]);
        expect(run.testRunDetails.testRunHistory[0]).toMatchObject({
          activity: 'New Created',
          activityType: 'Test Run',
        });
        expect(run.testRunDetails.nextRunId).toBe(runOf('DEMO-3'));
        expect(run.testRunDetails.prevRunId).toBeUndefined();
        const keys = allKeys(r.json);
        expect(keys.has(variant)).toBe(true);
        expect(keys.has(variant === 'ID' ? 'id' : 'ID')).toBe(false);

        const missing = await call(emu(), 'GET', `${prefix}/testRun/999999`);
        expect(missing.status).toBe(404);
        expect(missing.json.message).toContain('999999');
        const prefixed = await call(emu(), 'GET', `${prefix}/testRun/TR-${runOf('DEMO-2')}`);
        expect(prefixed.status).toBe(500);
        expect(prefixed.json.message).toContain('TR prefix');
      });

      it('routes literal /testRun/... paths before /testRun/{runID}', async () => {
        const { runOf } = await cycleWithRuns(emu(), prefix, 'routing');
        emu().clearRequests();
        const created = await call(emu(), 'GET', `${prefix}/testRun/getTestRunsCreated`, {
          query: { testPlanIdOrKey: 'DEMO-1', cutOffDateAndTime: '2000-01-01 00:00:00' },
        });
        expect(created.status).toBe(200);
        const defects = await call(emu(), 'GET', `${prefix}/testRun/defects/runId`, {
          query: { runId: runOf('DEMO-2') },
        });
        expect(defects.status).toBe(200);
        // No query names no run: still this operation, never `/testRun/{runID}` (which would refuse `runId`).
        const bare = await call(emu(), 'GET', `${prefix}/testRun/defects/runId/`);
        expect(bare.status).toBe(200);
        expect(bare.json).toEqual([]);
        const adhoc = await call(emu(), 'GET', `${prefix}/testRun/adhoc/getTestRuns/DEMO-2`);
        expect(adhoc.status).toBe(200);
        const forDefect = await call(emu(), 'GET', `${prefix}/testRun/getTestRunsForDefect/DEMO-9`);
        expect(forDefect.status).toBe(200);
        const history = await call(emu(), 'GET', `${prefix}/testRun/DEMO-2/testRuns`);
        expect(history.status).toBe(200);
        const single = await call(emu(), 'GET', `${prefix}/testRun/${runOf('DEMO-2')}/`);
        expect(single.status).toBe(200);
        expect(
          emu()
            .requests()
            .map((e) => e.op),
        ).toEqual([
          'plans.getTestRunsCreated',
          'defects.ofRun',
          'defects.ofRun',
          'runs.adhocTestRuns',
          'runs.getTestRunsForDefect',
          'runs.caseTestRuns',
          'runs.get',
        ]);
      });

      it('updates a run by id: result case-insensitive, comment, bugs; steps keep their results', async () => {
        const { runOf } = await cycleWithRuns(emu(), prefix, 'update');
        const runId = runOf('DEMO-2');
        const r = await call(emu(), 'POST', `${prefix}/testRun/update`, {
          body: { runId: String(runId), result: 'pASSED', comment: 'all good ✓', bugs: ['DEMO-9'] },
        });
        expect(r.status).toBe(200);
        expect(r.text).toBe('');
        const run = await details(runId);
        expect(run).toMatchObject({ status: 'Passed', comment: 'all good ✓', lozenge: 'aui-lozenge-success' });
        expect(run.bugs.map((b: { key: string }) => b.key)).toEqual(['DEMO-9']);
        expect(run.testRunDetails.testRunSteps.every((s: { status: string }) => s.status === 'Not Tested')).toBe(true);
        const activities = run.testRunDetails.testRunHistory.map((h: { activity: string; activityType: string }) => [
          h.activity,
          h.activityType,
        ]);
        expect(activities).toEqual([
          ['New Created', 'Test Run'],
          ['Passed', 'Status'],
          ['+ DEMO-9', 'Issue'],
        ]);
        // A JSON number is accepted for the documented string.
        const numeric = await call(emu(), 'POST', `${prefix}/testRun/update`, { body: { runId, result: 'Failed' } });
        expect(numeric.status).toBe(200);
        expect((await details(runId)).status).toBe('Failed');
      });

      it('refuses run updates: 404 unknown run or bug (nothing written), 500 bad result or id, 403 not Active', async () => {
        const { runOf, cycle } = await cycleWithRuns(emu(), prefix, 'update errors');
        const runId = runOf('DEMO-3');
        const unknownRun = await call(emu(), 'POST', `${prefix}/testRun/update`, {
          body: { runId: '999999', result: 'Passed' },
        });
        expect(unknownRun.status).toBe(404);
        const unknownBug = await call(emu(), 'POST', `${prefix}/testRun/update`, {
          body: { runId: String(runId), result: 'Passed', comment: 'x', bugs: ['DEMO-999'] },
        });
        expect(unknownBug.status).toBe(404);
        expect(unknownBug.json.message).toContain('DEMO-999');
        expect(await details(runId)).toMatchObject({ status: 'Not Tested', comment: '' });
        const badResult = await call(emu(), 'POST', `${prefix}/testRun/update`, {
          body: { runId: String(runId), result: 'Sort of' },
        });
        expect(badResult.status).toBe(500);
        expect(badResult.json.field).toBe('result');
        expect(badResult.json.message).toContain('Sort of');
        const badId = await call(emu(), 'POST', `${prefix}/testRun/update`, {
          body: { runId: `TR-${runId}`, result: 'Passed' },
        });
        expect(badId.status).toBe(500);
        expect(badId.json.field).toBe('runId');
        const unknownField = await call(emu(), 'POST', `${prefix}/testRun/update`, {
          body: { runId: String(runId), status: 'Passed' },
        });
        expect(unknownField.status).toBe(500);
        expect(unknownField.json.message).toContain('status');
        for (const status of ['Draft', 'Completed', 'Aborted'] as const) {
          setCycleStatus(emu(), cycle.id, status);
          const refused = await call(emu(), 'POST', `${prefix}/testRun/update`, {
            body: { runId: String(runId), result: 'Passed' },
          });
          expect(refused.status).toBe(403);
          expect(refused.json.message).toContain(status);
        }
        expect((await details(runId)).status).toBe('Not Tested');
      });

      it('updates steps (with and without the trailing slash) and rolls the run result up', async () => {
        const { runOf, cycle } = await cycleWithRuns(emu(), prefix, 'steps');
        const runId = runOf('DEMO-2');
        const steps = (await details(runId)).testRunDetails.testRunSteps as { id: number }[];
        const [s1, s2, s3] = steps.map((s) => s.id);
        const step = (path: string, body: Record<string, unknown>) =>
          call(emu(), 'POST', `${prefix}/testRun/${path}`, { body });

        expect(
          (await step('updateStep/', { runStepId: s1, result: 'passed', actualResult: 'form shown' })).status,
        ).toBe(200);
        let run = await details(runId);
        expect(run.status).toBe('Not Tested');
        expect(run.testRunDetails.testRunSteps[0]).toMatchObject({ status: 'Passed', actualResult: 'form shown' });

        expect((await step('updateStep', { runStepId: s2, result: 'Passed' })).status).toBe(200);
        expect((await step('updateStep', { runStepId: s3, result: 'PASSED' })).status).toBe(200);
        expect((await details(runId)).status).toBe('Passed');

        expect((await step('updateStep/', { runStepId: s2, result: 'Blocked', bugs: ['DEMO-10'] })).status).toBe(200);
        run = await details(runId);
        expect(run.status).toBe('Blocked');
        expect(run.testRunDetails.testRunSteps[1].testRunStepBugsWrapper).toEqual([
          { id: expect.any(Number), key: 'DEMO-10', summary: 'Customers can buy products' },
        ]);
        expect(run.testRunDetails.testRunBugs.map((b: { key: string }) => b.key)).toEqual(['DEMO-10']);
        expect(run.bugs).toEqual([]);

        expect((await step('updateStep', { runStepId: s3, result: 'Failed' })).status).toBe(200);
        expect((await details(runId)).status).toBe('Failed');
        // Setting the run result directly leaves the steps alone.
        await call(emu(), 'POST', `${prefix}/testRun/update`, { body: { runId: String(runId), result: 'Passed' } });
        run = await details(runId);
        expect(run.status).toBe('Passed');
        expect(run.testRunDetails.testRunSteps.map((s: { status: string }) => s.status)).toEqual([
          'Passed',
          'Blocked',
          'Failed',
        ]);
        const statuses = run.testRunDetails.testRunHistory
          .filter((h: { activityType: string }) => h.activityType === 'Status')
          .map((h: { activity: string }) => h.activity);
        expect(statuses).toEqual(['Passed', 'Blocked', 'Failed', 'Passed']);

        expect((await step('updateStep', { runStepId: 999999, result: 'Passed' })).status).toBe(404);
        expect((await step('updateStep/', { runStepId: s1, result: 'nope' })).status).toBe(500);
        expect((await step('updateStep/', { runStepId: s1, bugs: ['DEMO-404'] })).status).toBe(404);
        expect((await step('updateStep/', { runStepId: String(s1), result: 'Passed' })).status).toBe(500);
        setCycleStatus(emu(), cycle.id, 'Completed');
        expect((await step('updateStep/', { runStepId: s1, result: 'Failed' })).status).toBe(403);
        expect((await details(runId)).testRunDetails.testRunSteps[0].status).toBe('Passed');
      });

      it('updates the run of a test case in a cycle named oddly', async () => {
        const name = 'Nightly 1/2 %#? ü 🚀';
        const { runOf, cycle } = await cycleWithRuns(emu(), prefix, name);
        const path = `${prefix}/testPlan/DEMO-1/cycle/${enc(name)}/updateTestRun`;
        const r = await call(emu(), 'POST', path, {
          body: { testcaseKey: 'DEMO-4', result: 'FAILED', comment: 'search is down' },
        });
        expect(r.status).toBe(200);
        expect(await details(runOf('DEMO-4'))).toMatchObject({ status: 'Failed', comment: 'search is down' });
        expect(
          (await details(runOf('DEMO-4'))).testRunDetails.testRunSteps.map((s: { status: string }) => s.status),
        ).toEqual(['Not Tested', 'Not Tested']);

        const body = { testcaseKey: 'DEMO-4', result: 'Passed' };
        const unknownCycle = await call(emu(), 'POST', `${prefix}/testPlan/DEMO-1/cycle/nope/updateTestRun`, { body });
        expect(unknownCycle.status).toBe(404);
        const unknownPlan = await call(emu(), 'POST', `${prefix}/testPlan/DEMO-404/cycle/${enc(name)}/updateTestRun`, {
          body,
        });
        expect(unknownPlan.status).toBe(404);
        // DEMO-8 is a requirement, not a test case of the cycle.
        const notInCycle = await call(emu(), 'POST', path, { body: { testcaseKey: 'DEMO-8', result: 'Passed' } });
        expect(notInCycle.status).toBe(404);
        const badResult = await call(emu(), 'POST', path, { body: { testcaseKey: 'DEMO-4', result: 'Maybe' } });
        expect(badResult.status).toBe(500);
        const noResult = await call(emu(), 'POST', path, { body: { testcaseKey: 'DEMO-4' } });
        expect(noResult.status).toBe(500);
        expect(noResult.json.field).toBe('result');
        setCycleStatus(emu(), cycle.id, 'Draft');
        expect((await call(emu(), 'POST', path, { body })).status).toBe(403);
      });

      it('bulk-updates run statuses, answering plain-text 500s', async () => {
        const { runOf, cycle } = await cycleWithRuns(emu(), prefix, 'bulk');
        const path = `${prefix}/testPlan/DEMO-1/bulkStatusUpdate`;
        const runIds = [runOf('DEMO-2'), runOf('DEMO-6')];
        const ok = await call(emu(), 'POST', path, { body: { testCycleId: cycle.id, status: 'blocked', runIds } });
        expect(ok.status).toBe(200);
        for (const id of runIds) expect((await details(id)).status).toBe('Blocked');
        expect((await details(runOf('DEMO-3'))).status).toBe('Not Tested');
        for (const status of ['Passed', 'Failed', 'Not Tested', 'NA', 'na']) {
          const r = await call(emu(), 'POST', path, { body: { testCycleId: cycle.id, status, runIds } });
          expect(r.status).toBe(200);
        }
        expect((await details(runIds[0] as number)).status).toBe('NA');

        const other = await cycleWithRuns(emu(), prefix, 'bulk other');
        const textError = async (body: unknown, contains: string) => {
          const r = await call(emu(), 'POST', path, { body });
          expect(r.status).toBe(500);
          expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
          expect(r.text).toContain(contains);
        };
        await textError({ testCycleId: cycle.id, status: 'Great', runIds }, 'Great');
        await textError({ testCycleId: cycle.id, status: 'Passed', runIds: [other.runOf('DEMO-2')] }, 'not found');
        await textError({ testCycleId: 999999, status: 'Passed', runIds }, '999999');
        await textError({ testCycleId: cycle.id, status: 'Passed' }, 'runIds');
        await textError({ testCycleId: cycle.id, status: 'Passed', runIds: [] }, 'runIds');
        const unknownPlan = await call(emu(), 'POST', `${prefix}/testPlan/DEMO-404/bulkStatusUpdate`, {
          body: { testCycleId: cycle.id, status: 'Passed', runIds },
        });
        expect(unknownPlan.status).toBe(404);
        setCycleStatus(emu(), cycle.id, 'Completed');
        const refused = await call(emu(), 'POST', path, { body: { testCycleId: cycle.id, status: 'Passed', runIds } });
        expect(refused.status).toBe(403);
        expect((await details(runIds[0] as number)).status).toBe('NA');
      });

      it('links bugs to the run of a test case in a cycle', async () => {
        const { runOf, cycle } = await cycleWithRuns(emu(), prefix, 'link bugs');
        const path = `${prefix}/testPlan/DEMO-1/cycle/${enc('link bugs')}/linkBugToTestRun`;
        const r = await call(emu(), 'POST', path, { body: { testcaseKey: 'DEMO-5', bugs: ['DEMO-9', 'DEMO-10'] } });
        expect(r.status).toBe(200);
        // Linking again keeps each bug once.
        expect((await call(emu(), 'POST', path, { body: { testcaseKey: 'DEMO-5', bugs: ['DEMO-9'] } })).status).toBe(
          200,
        );
        const run = await details(runOf('DEMO-5'));
        expect(run.bugs.map((b: { key: string }) => b.key)).toEqual(['DEMO-9', 'DEMO-10']);
        expect(
          run.testRunDetails.testRunHistory
            .filter((h: { activityType: string }) => h.activityType === 'Issue')
            .map((h: { activity: string }) => h.activity),
        ).toEqual(['+ DEMO-9', '+ DEMO-10']);

        const unknownBug = await call(emu(), 'POST', path, { body: { testcaseKey: 'DEMO-5', bugs: ['DEMO-999'] } });
        expect(unknownBug.status).toBe(404);
        const empty = await call(emu(), 'POST', path, { body: { testcaseKey: 'DEMO-5', bugs: [] } });
        expect(empty.status).toBe(500);
        expect(empty.headers.get('content-type')).toMatch(/^text\/plain/);
        expect(empty.text).toContain('bugs');
        const unknownCycle = await call(emu(), 'POST', `${prefix}/testPlan/DEMO-1/cycle/none/linkBugToTestRun`, {
          body: { testcaseKey: 'DEMO-5', bugs: ['DEMO-9'] },
        });
        expect(unknownCycle.status).toBe(404);
        setCycleStatus(emu(), cycle.id, 'Aborted');
        expect((await call(emu(), 'POST', path, { body: { testcaseKey: 'DEMO-5', bugs: ['DEMO-8'] } })).status).toBe(
          403,
        );
      });

      it('uploads, lists, downloads and deletes attachments of runs and steps', async () => {
        const { runOf, cycle } = await cycleWithRuns(emu(), prefix, 'attachments');
        const runId = runOf('DEMO-5');
        const png = randomBytes(3000);
        const log = 'line 1\nline 2 ü\n';
        const up = await upload(emu(), `${prefix}/attachment/${runId}/testrun`, [
          { name: 'screen shot.png', bytes: png, type: 'image/png' },
          { name: 'run log ü.txt', bytes: log, type: 'text/plain' },
          { name: 'ignored.bin', bytes: 'x', field: 'other' },
        ]);
        expect(up.status).toBe(200);
        expect(up.text).toBe('');
        const stepUp = await upload(emu(), `${prefix}/attachment/${runId}/testrun/step/2`, [
          { name: 'step2.json', bytes: '{"ok":true}', type: 'application/json' },
        ]);
        expect(stepUp.status).toBe(200);

        const listed = await call(emu(), 'GET', `${prefix}/attachment/${runId}/getAttachmentDetails`);
        expect(listed.status).toBe(200);
        const list = expectShape('attachments.getAttachmentDetails', variant, listed.json) as {
          id: number;
          fileName: string;
          mimeType: string;
          filePath: string;
        }[];
        // Parts of one request are stored as their bytes arrive on disk: compare without order.
        const byName = (x: { fileName: string }, y: { fileName: string }) => x.fileName.localeCompare(y.fileName);
        list.sort(byName);
        expect(list.map((a) => [a.fileName, a.mimeType])).toEqual([
          ['run log ü.txt', 'text/plain'],
          ['screen shot.png', 'image/png'],
          ['step2.json', 'application/json'],
        ]);
        const expected = [sha256(log), sha256(png), sha256('{"ok":true}')];
        for (const [i, a] of list.entries()) {
          expect(a.filePath.startsWith(`${emu().url}${prefix}/attachment/${runId}/download/${a.id}/`)).toBe(true);
          const got = await download(a.filePath);
          expect(got.status).toBe(200);
          expect(got.sha).toBe(expected[i]);
          expect(got.type).toBe(a.mimeType);
        }

        const run = await details(runId);
        expect(run.testRunDetails.testRunAttachments.map((a: { fileName: string }) => a.fileName).sort()).toEqual([
          'run log ü.txt',
          'screen shot.png',
        ]);
        expect(run.testRunDetails.testRunSteps[1].testRunStepAttachments[0].fileName).toBe('step2.json');
        expect(run.testRunDetails.testRunSteps[0].testRunStepAttachments).toEqual([]);
        expect(
          run.testRunDetails.testRunHistory.filter((h: { activity: string }) => h.activity === 'Attached'),
        ).toHaveLength(3);
        if (variant === 'ID') expect(allKeys(run).has('filePath')).toBe(false);

        const first = list.find((a) => a.fileName === 'screen shot.png');
        if (!first) throw new Error('no attachment');
        // The download needs credentials and a licence, and the attachment must belong to the run in the URL.
        expect((await download(first.filePath, null)).status).toBe(401);
        expect((await download(first.filePath, basic('admin', 'wrong'))).status).toBe(401);
        expect((await download(first.filePath, basic('nolicense', 'nolicense'))).status).toBe(403);
        expect((await download(first.filePath, 'Bearer casebridge-dev-token')).status).toBe(200);
        expect((await download(`${emu().url}${prefix}/attachment/${runId + 1}/download/${first.id}/x`)).status).toBe(
          404,
        );

        const del = await call(emu(), 'DELETE', `${prefix}/attachment/${runId}/deleteAttachment/${first.id}`);
        expect(del.status).toBe(200);
        const after = (await call(emu(), 'GET', `${prefix}/attachment/${runId}/getAttachmentDetails`)).json;
        expect(after.map((a: { fileName: string }) => a.fileName).sort()).toEqual(['run log ü.txt', 'step2.json']);
        expect((await download(first.filePath)).status).toBe(404);
        expect((await call(emu(), 'DELETE', `${prefix}/attachment/${runId}/deleteAttachment/${first.id}`)).status).toBe(
          404,
        );
        expect((await call(emu(), 'DELETE', `${prefix}/attachment/999999/deleteAttachment/${first.id}`)).status).toBe(
          404,
        );
        // The part under another name was not kept: only the four `file` parts ever became blobs.
        expect(emu().store.attachments.filter((a) => a.runId === runId)).toHaveLength(2);

        setCycleStatus(emu(), cycle.id, 'Completed');
        const second = list.find((a) => a.fileName === 'run log ü.txt');
        expect(
          (await call(emu(), 'DELETE', `${prefix}/attachment/${runId}/deleteAttachment/${second?.id}`)).status,
        ).toBe(403);
        expect((await upload(emu(), `${prefix}/attachment/${runId}/testrun`, [{ name: 'a', bytes: 'a' }])).status).toBe(
          403,
        );
      });

      it('refuses bad attachment uploads', async () => {
        const { runOf } = await cycleWithRuns(emu(), prefix, 'attachment errors');
        const runId = runOf('DEMO-2');
        const file = [{ name: 'a.txt', bytes: 'a' }];
        expect((await upload(emu(), `${prefix}/attachment/999999/testrun`, file)).status).toBe(404);
        expect((await upload(emu(), `${prefix}/attachment/999999/testrun/step/1`, file)).status).toBe(404);
        const noStep = await upload(emu(), `${prefix}/attachment/${runId}/testrun/step/4`, file);
        expect(noStep.status).toBe(404);
        expect(noStep.json.message).toContain('3 step');
        expect((await upload(emu(), `${prefix}/attachment/${runId}/testrun/step/0`, file)).status).toBe(500);
        const wrongPart = await upload(emu(), `${prefix}/attachment/${runId}/testrun`, [
          { name: 'a.txt', bytes: 'a', field: 'attachment' },
        ]);
        expect(wrongPart.status).toBe(500);
        expect(wrongPart.json.message).toContain('"file"');
        const notMultipart = await call(emu(), 'POST', `${prefix}/attachment/${runId}/testrun`, { body: {} });
        expect(notMultipart.status).toBe(500);
        expect((await call(emu(), 'GET', `${prefix}/attachment/999999/getAttachmentDetails`)).status).toBe(404);
        expect(emu().store.attachments.filter((a) => a.runId === runId)).toEqual([]);
      });

      it('lists the defects of the run the query names, and [] when it names none (never an error)', async () => {
        const { runOf } = await cycleWithRuns(emu(), prefix, 'defects of run');
        const runId = runOf('DEMO-4');
        const stepId = (await details(runId)).testRunDetails.testRunSteps[0].id as number;
        const linked = await call(emu(), 'POST', `${prefix}/testRun/update`, {
          body: { runId: String(runId), result: 'Failed', bugs: ['DEMO-10', 'DEMO-9'] },
        });
        expect(linked.status, linked.text).toBe(200);
        const stepLinked = await call(emu(), 'POST', `${prefix}/testRun/updateStep`, {
          body: { runStepId: stepId, result: 'Failed', bugs: ['DEMO-9', 'DEMO-7'] },
        });
        expect(stepLinked.status, stepLinked.text).toBe(200);
        const defectsOf = (query: string) => call(emu(), 'GET', `${prefix}/testRun/defects/runId${query}`);
        const keysOf = async (query: string) => {
          const r = await defectsOf(query);
          expect(r.status, `${query}: ${r.text}`).toBe(200);
          const refs = expectShape('defects.ofRun', variant, r.json) as { key: string }[];
          return refs.map((b) => b.key);
        };

        // The run's bugs and its steps' bugs, once each (DEMO-9 is linked to both), by issue id.
        expect(await keysOf(`?runId=${runId}`)).toEqual(['DEMO-7', 'DEMO-9', 'DEMO-10']);
        expect(await keysOf(`/?runId=${runId}`)).toEqual(['DEMO-7', 'DEMO-9', 'DEMO-10']);
        // A repeated parameter counts by its first value.
        expect(await keysOf(`?runId=${runId}&runId=999999`)).toEqual(['DEMO-7', 'DEMO-9', 'DEMO-10']);
        expect(await keysOf(`?runId=%20${runId}%20`)).toEqual(['DEMO-7', 'DEMO-9', 'DEMO-10']);
        // A run without bugs.
        expect(await keysOf(`?runId=${runOf('DEMO-2')}`)).toEqual([]);

        // The spec's path names no run: whatever the query, the answer is an array.
        for (const query of [
          '',
          '/',
          '?runId=',
          '?runId=%20',
          '?runId=999999',
          '?runId=0',
          '?runId=abc',
          `?runId=TR-${runId}`,
          `?runId=${runId}.5`,
          '?runId=-1',
          '?runId=99999999999999999999999',
          `?runID=${runId}`,
          `?other=${runId}`,
        ]) {
          const r = await defectsOf(query);
          expect(r.status, `${query}: ${r.text}`).toBe(200);
          expect(r.json, query).toEqual([]);
        }
        // Only GET: another method is 405, never a route to /testRun/{runID}.
        const post = await call(emu(), 'POST', `${prefix}/testRun/defects/runId`, { body: {} });
        expect(post.status).toBe(405);
        expect(post.headers.get('allow')).toContain('GET');
      });

      it('creates defects from runs and run steps and lists them', async () => {
        const { runOf, cycle } = await cycleWithRuns(emu(), prefix, 'defects');
        const runId = runOf('DEMO-3');
        const stepId = (await details(runId)).testRunDetails.testRunSteps[1].id as number;
        const fields = { project: { key: 'DEMO' }, summary: 'Logout hangs', issuetype: { name: 'Bug' } };
        const before = emu().store.projects.find((p) => p.key === 'DEMO')?.issueCounter ?? 0;

        const r = await call(emu(), 'POST', `${prefix}/testRun/createRunBug`, {
          body: { fields: { ...fields, description: 'spinner forever' }, runId },
        });
        expect(r.status).toBe(200);
        const bug = expectShape('defects.createRunBug', variant, r.json);
        expect(bug.key).toBe(`DEMO-${before + 1}`);
        const stored = emu().store.issues.get(bug.id);
        expect(stored).toMatchObject({ type: 'Bug', summary: 'Logout hangs', description: 'spinner forever' });

        const s = await call(emu(), 'POST', `${prefix}/testRun/createRunStepBug`, {
          body: { fields: { ...fields, summary: 'Menu does not open', issuetype: { name: 'bug' } }, runStepId: stepId },
        });
        expect(s.status).toBe(200);
        const stepBug = expectShape('defects.createRunStepBug', variant, s.json);
        expect(stepBug.key).toBe(`DEMO-${before + 2}`);
        expect(emu().store.projects.find((p) => p.key === 'DEMO')?.issueCounter).toBe(before + 2);

        const run = await details(runId);
        expect(run.bugs.map((b: { key: string }) => b.key)).toEqual([bug.key]);
        expect(run.testRunDetails.testRunSteps[1].testRunStepBugsWrapper[0].key).toBe(stepBug.key);
        expect(run.testRunDetails.testRunHistory.map((h: { activity: string }) => h.activity)).toContain(
          `+ ${stepBug.key}`,
        );

        const listed = await call(emu(), 'GET', `${prefix}/testRun/defects/runId`, { query: { runId } });
        expect(expectShape('defects.ofRun', variant, listed.json).map((b: { key: string }) => b.key)).toEqual([
          bug.key,
          stepBug.key,
        ]);
        const forDefect = await call(emu(), 'GET', `${prefix}/testRun/getTestRunsForDefect/${stepBug.key}`);
        expect(forDefect.status).toBe(200);
        const runs = expectShape('runs.getTestRunsForDefect', variant, forDefect.json);
        expect(runs.map((x: { id: number }) => x.id)).toEqual([runId]);

        expect((await call(emu(), 'GET', `${prefix}/testRun/getTestRunsForDefect/DEMO-999`)).status).toBe(404);
        expect((await call(emu(), 'GET', `${prefix}/testRun/getTestRunsForDefect/DEMO-8`)).json).toEqual([]);

        const create = (body: unknown) => call(emu(), 'POST', `${prefix}/testRun/createRunBug`, { body });
        expect((await create({ fields, runId: 999999 })).status).toBe(404);
        expect((await create({ fields: { ...fields, project: { key: 'NOPE' } }, runId })).status).toBe(404);
        const noSummary = await create({ fields: { ...fields, summary: '  ' }, runId });
        expect(noSummary.status).toBe(500);
        expect(noSummary.json.field).toBe('fields.summary');
        expect((await create({ runId })).status).toBe(500);
        expect(
          (
            await call(emu(), 'POST', `${prefix}/testRun/createRunStepBug`, {
              body: { fields, runStepId: 999999 },
            })
          ).status,
        ).toBe(404);
        setCycleStatus(emu(), cycle.id, 'Completed');
        expect((await create({ fields, runId })).status).toBe(403);
        // No issue was created by a refused request.
        expect(emu().store.projects.find((p) => p.key === 'DEMO')?.issueCounter).toBe(before + 2);
      });

      it('creates ad hoc runs in a hidden cycle that is always writable', async () => {
        const create = () => call(emu(), 'PUT', `${prefix}/testRun/adhoc/create/DEMO-3`);
        const first = await create();
        expect(first.status).toBe(200);
        const a = expectShape('runs.adhocCreate', variant, first.json);
        expect(a).toMatchObject({
          type: 0,
          status: 'Not Tested',
          testCaseKey: 'DEMO-3',
          summary: 'User logs out',
          testerName: 'admin',
          lozenge: 'aui-lozenge-default',
        });
        expect(a.testRunDetails.prevRunId).toBeUndefined();
        expect(allKeys(first.json).has(variant)).toBe(true);
        const b = expectShape('runs.adhocCreate', variant, (await create()).json);
        expect(b.testRunDetails.prevRunId).toBe(a.id);

        const cycles = emu().store.cycles.filter((c) => c.tpId === null);
        const tc = emu().store.issues.find((i) => i.key === 'DEMO-3');
        expect(cycles.filter((c) => c.adhocTcId === tc?.id)).toMatchObject([{ name: 'Adhoc', status: 'Active' }]);
        // Ad hoc runs are exempt from the Active-only rule.
        const adhoc = cycles.find((c) => c.adhocTcId === tc?.id);
        setCycleStatus(emu(), adhoc?.id as number, 'Completed');
        const upd = await call(emu(), 'POST', `${prefix}/testRun/update`, {
          body: { runId: String(a.id), result: 'Passed', comment: 'ad hoc' },
        });
        expect(upd.status).toBe(200);
        const stepId = (await details(b.id)).testRunDetails.testRunSteps[0].id;
        expect(
          (await call(emu(), 'POST', `${prefix}/testRun/updateStep`, { body: { runStepId: stepId, result: 'Failed' } }))
            .status,
        ).toBe(200);

        const listed = await call(emu(), 'GET', `${prefix}/testRun/adhoc/getTestRuns/DEMO-3`);
        expect(listed.status).toBe(200);
        const runs = expectShape('runs.adhocTestRuns', variant, listed.json);
        expect(runs.map((r: { id: number }) => r.id)).toEqual([a.id, b.id]);
        expect(runs[0]).toMatchObject({ status: 'Passed', comment: 'ad hoc', executedBy: 'admin' });
        expect(runs[0].testRunDetails.nextRunId).toBe(b.id);
        expect(runs[1]).toMatchObject({ status: 'Failed' });
        expect(runs[1].testRunDetails.testRunSteps).toHaveLength(2);
        const stamp = listed.json[0].executionTimeStamp;
        expect(stamp).toMatch(variant === 'id' ? ISO : LEGACY);

        expect((await call(emu(), 'GET', `${prefix}/testRun/adhoc/getTestRuns/DEMO-6`)).json).toEqual([]);
        expect((await call(emu(), 'GET', `${prefix}/testRun/adhoc/getTestRuns/DEMO-99`)).status).toBe(404);
        const unknown = await call(emu(), 'PUT', `${prefix}/testRun/adhoc/create/DEMO-99`);
        expect(unknown.status).toBe(404);
        const notACase = await call(emu(), 'PUT', `${prefix}/testRun/adhoc/create/DEMO-1`);
        expect(notACase.status).toBe(500);
        expect(notACase.headers.get('content-type')).toMatch(/^text\/plain/);
        expect(notACase.text).toContain('not a Test Case');
        const badKey = await call(emu(), 'PUT', `${prefix}/testRun/adhoc/create/demo-3`);
        expect(badKey.status).toBe(500);
        expect(badKey.headers.get('content-type')).toMatch(/^text\/plain/);
      });

      it("answers a test case's execution history across plans and ad hoc runs", async () => {
        const { runOf } = await cycleWithRuns(emu(), prefix, 'history');
        await call(emu(), 'POST', `${prefix}/testRun/update`, {
          body: { runId: String(runOf('DEMO-7')), result: 'NA' },
        });
        await call(emu(), 'PUT', `${prefix}/testRun/adhoc/create/DEMO-7`);
        const r = await call(emu(), 'GET', `${prefix}/testRun/DEMO-7/testRuns`);
        expect(r.status).toBe(200);
        const items = expectShape('runs.caseTestRuns', variant, r.json);
        const planned = items.find((i: { id: number }) => i.id === runOf('DEMO-7'));
        expect(planned).toMatchObject({
          testPlanKey: 'DEMO-1',
          testPlanSummary: 'Release 1.0 regression',
          testCycleSummary: 'history',
          status: 'NA',
          executedBy: 'admin',
        });
        expect(planned.executionOn).toMatch(/^\d{2}-[A-Z][a-z]{2}-\d{4} \d{2}:\d{2}:\d{2}$/);
        const adhoc = items[items.length - 1];
        expect(adhoc).toMatchObject({ testPlanKey: '', testCycleSummary: 'Adhoc', executionOn: null });
        expect((await call(emu(), 'GET', `${prefix}/testRun/DEMO-99/testRuns`)).status).toBe(404);
        expect((await call(emu(), 'GET', `${prefix}/testRun/DEMO-1/testRuns`)).status).toBe(404);
      });

      it('needs credentials and a licence', async () => {
        const { runOf } = await cycleWithRuns(emu(), prefix, 'auth');
        const path = `${prefix}/testRun/${runOf('DEMO-2')}`;
        expect((await call(emu(), 'GET', path, { auth: null })).status).toBe(401);
        expect((await call(emu(), 'GET', path, { auth: basic('nolicense', 'nolicense') })).status).toBe(403);
        expect((await call(emu(), 'GET', path, { auth: basic('tester', 'tester') })).status).toBe(200);
      });
    });
  }
}

describe('executionTimeStamp formats', () => {
  const at = Date.UTC(2026, 2, 5, 14, 7, 30);
  const stampOf = async (emu: RunningEmulator) => {
    const created = await call(emu, 'PUT', `${TM}/testRun/adhoc/create/DEMO-2`);
    const id = created.json.id ?? created.json.ID;
    await call(emu, 'POST', `${TM}/testRun/update`, { body: { runId: String(id), result: 'Passed' } });
    const listed = await call(emu, 'GET', `${TM}/testRun/adhoc/getTestRuns/DEMO-2`);
    return listed.json[0].executionTimeStamp;
  };
  const iso = useEmulator({ variant: 'id', now: () => at });
  const legacy = useEmulator({ variant: 'ID', now: () => at });
  const epoch = useEmulator({ variant: 'id', timestamps: 'epoch', now: () => at });

  it('is ISO 8601 in the id variant, dd/Mon/yy h:mm AM/PM in the ID variant, epoch ms when configured', async () => {
    expect(await stampOf(iso())).toBe('2026-03-05T14:07:30.000+0000');
    expect(await stampOf(legacy())).toBe('05/Mar/26 2:07 PM');
    const ms = await stampOf(epoch());
    expect(ms).toBe(at);
    expectShape(
      'runs.adhocTestRuns',
      'id',
      (await call(epoch(), 'GET', `${TM}/testRun/adhoc/getTestRuns/DEMO-2`)).json,
    );
  });
});

describe('large attachments', () => {
  const emu = useEmulator();

  it('uploads 20 MB and downloads the same bytes', async () => {
    const { runOf } = await cycleWithRuns(emu(), TM, 'large');
    const runId = runOf('DEMO-2');
    const bytes = randomBytes(20 * 1024 * 1024);
    const r = await upload(emu(), `${TM}/attachment/${runId}/testrun`, [
      { name: 'video.webm', bytes, type: 'video/webm' },
    ]);
    expect(r.status).toBe(200);
    const [a] = (await call(emu(), 'GET', `${TM}/attachment/${runId}/getAttachmentDetails`)).json;
    const got = await download(a.filePath);
    expect(got).toMatchObject({ status: 200, size: bytes.length, sha: sha256(bytes), type: 'video/webm' });
    expect(emu().store.attachments.get(a.id)).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
  }, 60_000);
});
