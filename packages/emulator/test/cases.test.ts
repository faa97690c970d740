import { describe, expect, it } from 'vitest';
import { demoSeed, type SeedInput } from '../src/seed/seed.js';
import { allKeys, basic, call, enc, expectShape, TM, TM_ALIAS, useEmulator } from './helpers.js';

/** A step as a request gives it. */
interface StepIn {
  step: string;
  stepData?: string | null;
  expectedResult: string;
}

/** A test step as the tolerant client reads it (id normalised, sequenceNumber a number). */
interface Step {
  id: number;
  tcId: number;
  step: string;
  stepData?: string | null;
  expectedResult: string;
  sequenceNumber: number;
}

const STEPS: StepIn[] = [
  { step: 'Öffne die Startseite 🏠', expectedResult: 'Startseite erscheint' },
  { step: 'Suche nach „Teekanne“', stepData: 'teekanne / 茶壶', expectedResult: 'Treffer werden gelistet' },
  { step: 'Lege sie in den Warenkorb', expectedResult: 'Warenkorb zeigt 1' },
];

/** Suite names with a literal `/` (written `\/`), spaces and unicode. */
const SUITE_PATH = 'Web Shop/Cards\\/Wallets 💳/Größen';

for (const variant of ['id', 'ID'] as const) {
  for (const prefix of [TM, TM_ALIAS]) {
    describe(`test case and step operations (variant ${variant}, ${prefix})`, () => {
      const emu = useEmulator({ variant });
      const tc = (key: string) => `${prefix}/testCase/${key}`;

      /** Creates a test case in DEMO through the API; returns its key. */
      const createCase = async (summary: string, steps: StepIn[] = STEPS): Promise<string> => {
        const r = await call(emu(), 'POST', `${prefix}/testCase/create/createTestCase`, {
          body: {
            fields: {
              project: { key: 'DEMO' },
              summary,
              description: 'made by a test',
              issuetype: { name: 'Test Case' },
            },
            testcasesteps: steps,
          },
        });
        expect(r.status).toBe(200);
        return expectShape('cases.createTestCase', variant, r.json).key;
      };

      const steps = async (key: string): Promise<Step[]> => {
        const r = await call(emu(), 'GET', `${tc(key)}/steps`);
        expect(r.status).toBe(200);
        return expectShape('cases.steps', variant, r.json);
      };

      const linkedSuites = async (key: string): Promise<string[]> => {
        const r = await call(emu(), 'GET', `${tc(key)}/linkedTestSuites`);
        expect(r.status).toBe(200);
        return expectShape('cases.linkedTestSuites', variant, r.json).testSuites;
      };

      it('creates a test case with its steps in order, keyed in its project', async () => {
        const summary = 'Kunde kauft „Teekanne“ 🫖 — ünïcödé';
        const r = await call(emu(), 'POST', `${prefix}/testCase/create/createTestCase`, {
          body: {
            fields: { project: { key: 'DEMO' }, summary, issuetype: { name: 'Test Case' } },
            testcasesteps: STEPS,
          },
        });
        expect(r.status).toBe(200);
        const created = expectShape('cases.createTestCase', variant, r.json);
        expect(Object.keys(r.json).sort()).toEqual(['id', 'key']);
        expect(created.key).toMatch(/^DEMO-\d+$/);
        const issue = emu().store.issues.get(created.id);
        expect(issue).toMatchObject({ key: created.key, type: 'Test Case', summary, status: 'Open' });

        const r2 = await call(emu(), 'GET', `${tc(created.key)}/steps`);
        expect(r2.status).toBe(200);
        const listed = expectShape('cases.steps', variant, r2.json) as Step[];
        expect(listed.map((s) => [s.sequenceNumber, s.step, s.expectedResult, s.tcId])).toEqual(
          STEPS.map((s, i) => [i + 1, s.step, s.expectedResult, created.id]),
        );
        expect(listed[1]?.stepData).toBe('teekanne / 茶壶');
        // stepData is absent when it was not given.
        expect('stepData' in r2.json[0]).toBe(false);
        // The ID variant spells the step id `ID` and writes positions as numeric strings.
        const keys = allKeys(r2.json);
        expect(keys.has(variant)).toBe(true);
        expect(keys.has(variant === 'ID' ? 'id' : 'ID')).toBe(false);
        expect(typeof r2.json[0].sequenceNumber).toBe(variant === 'ID' ? 'string' : 'number');

        // Keys continue the project's numbering; no steps and a lower-case issue type are fine.
        const next = await call(emu(), 'POST', `${prefix}/testCase/create/createTestCase`, {
          body: { fields: { project: { key: 'DEMO' }, summary: 'No steps', issuetype: { name: 'test case' } } },
        });
        expect(next.status).toBe(200);
        expect(Number(next.json.key.split('-')[1])).toBe(Number(created.key.split('-')[1]) + 1);
        expect(await steps(next.json.key)).toEqual([]);
      });

      it('answers 404 when fields is missing or the project is unknown, 500 for invalid fields', async () => {
        const create = (body?: unknown) => call(emu(), 'POST', `${prefix}/testCase/create/createTestCase`, { body });
        const before = emu().store.issues.size;

        const noFields = await create({ testcasesteps: STEPS });
        expect(noFields.status).toBe(404);
        expect(noFields.json.message).toContain('fields');
        expect((await create()).status).toBe(404);
        expect((await create({ fields: null })).status).toBe(404);

        const noProject = await create({ fields: { project: { key: 'NOPE' }, summary: 'x' } });
        expect(noProject.status).toBe(404);
        expect(noProject.json.message).toContain('NOPE');

        const bug = await create({ fields: { project: { key: 'DEMO' }, summary: 'x', issuetype: { name: 'Bug' } } });
        expect(bug.status).toBe(500);
        expect(bug.json.field).toBe('fields.issuetype.name');
        expect(bug.json.message).toContain('Bug');

        const noSummary = await create({ fields: { project: { key: 'DEMO' } } });
        expect(noSummary.status).toBe(500);
        expect(noSummary.json.field).toBe('fields.summary');
        const twoLines = await create({ fields: { project: { key: 'DEMO' }, summary: 'a\nb' } });
        expect(twoLines.status).toBe(500);
        expect(twoLines.json.field).toBe('fields.summary');
        const blankStep = await create({
          fields: { project: { key: 'DEMO' }, summary: 'x' },
          testcasesteps: [{ step: '  ', expectedResult: '' }],
        });
        expect(blankStep.status).toBe(500);
        expect(blankStep.json.field).toBe('testcasesteps.0.step');
        const unknownKey = await create({ fields: { project: { key: 'DEMO' }, summary: 'x' }, priority: 'High' });
        expect(unknownKey.status).toBe(500);
        expect(unknownKey.json.message).toContain('priority');
        // Nothing was created by a refused request.
        expect(emu().store.issues.size).toBe(before);
      });

      it('creates a test case in a new suite path, then in the existing one', async () => {
        const create = (summary: string, path: string) =>
          call(emu(), 'POST', `${prefix}/testSuite/createTestCase`, {
            body: {
              fields: { project: { key: 'DEMO' }, summary, issuetype: { name: 'Test Case' } },
              testcasesteps: STEPS.slice(0, 2),
              linkToTestSuite: { testSuitePath: path, projectKey: 'DEMO' },
            },
          });
        const suitesBefore = emu().store.testSuites.size;
        const first = await create('In a new suite ✨', `/${SUITE_PATH}/`);
        expect(first.status).toBe(200);
        const a = expectShape('cases.createTestCaseInSuite', variant, first.json);
        // The path is answered canonically: outer separators dropped, a `/` inside a name kept as `\/`.
        expect(a).toMatchObject({ testSuitePath: SUITE_PATH, projectKey: 'DEMO', testCaseKey: a.createdTestCase.key });
        expect(emu().store.testSuites.size).toBe(suitesBefore + 3);
        const suite = emu().store.testSuites.get(a.createdTestSuiteId);
        expect(suite?.name).toBe('Größen');
        expect(emu().store.testSuites.get(suite?.parentId ?? -1)?.name).toBe('Cards/Wallets 💳');
        expect(await linkedSuites(a.testCaseKey)).toEqual([SUITE_PATH]);
        expect((await steps(a.testCaseKey)).map((s) => s.step)).toEqual([STEPS[0]?.step, STEPS[1]?.step]);

        const second = await create('In the existing suite', SUITE_PATH);
        expect(second.status).toBe(200);
        const b = expectShape('cases.createTestCaseInSuite', variant, second.json);
        expect(b.createdTestSuiteId).toBe(a.createdTestSuiteId);
        expect(emu().store.testSuites.size).toBe(suitesBefore + 3);
        const members = emu().store.testSuiteMembers.filter((m) => m.suiteId === a.createdTestSuiteId);
        expect(members.map((m) => m.tcId)).toEqual([a.createdTestCase.id, b.createdTestCase.id]);
      });

      it('refuses a suite-path creation with 500 (no 404 is documented) and writes nothing', async () => {
        const create = (body: Record<string, unknown>) =>
          call(emu(), 'POST', `${prefix}/testSuite/createTestCase`, { body });
        const fields = { project: { key: 'DEMO' }, summary: 'refused' };
        const link = { testSuitePath: 'Refused', projectKey: 'DEMO' };
        const issues = emu().store.issues.size;
        const suites = emu().store.testSuites.size;

        const noFields = await create({ linkToTestSuite: link });
        expect(noFields.status).toBe(500);
        expect(noFields.json.field).toBe('fields');
        const noLink = await create({ fields });
        expect(noLink.status).toBe(500);
        expect(noLink.json.field).toBe('linkToTestSuite');
        const noProject = await create({ fields, linkToTestSuite: { ...link, projectKey: 'NOPE' } });
        expect(noProject.status).toBe(500);
        expect(noProject.json.field).toBe('linkToTestSuite.projectKey');
        const noCaseProject = await create({ fields: { ...fields, project: { key: 'NOPE' } }, linkToTestSuite: link });
        expect(noCaseProject.status).toBe(500);
        expect(noCaseProject.json.field).toBe('fields.project.key');
        const emptyPath = await create({ fields, linkToTestSuite: { ...link, testSuitePath: '//' } });
        expect(emptyPath.status).toBe(500);
        expect(emptyPath.json.field).toBe('linkToTestSuite.testSuitePath');
        const emptyName = await create({ fields, linkToTestSuite: { ...link, testSuitePath: 'A//B' } });
        expect(emptyName.status).toBe(500);
        const plan = await create({ fields: { ...fields, issuetype: { name: 'Test Plan' } }, linkToTestSuite: link });
        expect(plan.status).toBe(500);
        expect(plan.json.field).toBe('fields.issuetype.name');

        expect(emu().store.issues.size).toBe(issues);
        expect(emu().store.testSuites.size).toBe(suites);
      });

      it('links test cases to a suite path, creating it once, and lists the paths of a case', async () => {
        const link = (body: Record<string, unknown>) =>
          call(emu(), 'POST', `${prefix}/testSuite/linkTestCase`, { body });
        const path = 'Regression/Login\\/Logout ünï';
        const r = await link({ testCaseKeys: ['DEMO-2', 'DEMO-3', 'DEMO-2'], testSuitePath: path, projectKey: 'DEMO' });
        expect(r.status).toBe(200);
        expect(r.text).toBe('');
        expect(await linkedSuites('DEMO-2')).toEqual([path]);
        expect(await linkedSuites('DEMO-3')).toEqual([path]);
        const suites = emu().store.testSuites.size;
        const members = emu().store.testSuiteMembers.size;
        // Linking again changes nothing.
        expect((await link({ testCaseKeys: ['DEMO-2'], testSuitePath: path, projectKey: 'DEMO' })).status).toBe(200);
        expect(emu().store.testSuites.size).toBe(suites);
        expect(emu().store.testSuiteMembers.size).toBe(members);
        // A parent level is a suite of its own; a case filed in two suites lists both paths, sorted.
        expect((await link({ testCaseKeys: ['DEMO-2'], testSuitePath: 'Regression', projectKey: 'DEMO' })).status).toBe(
          200,
        );
        expect(await linkedSuites('DEMO-2')).toEqual(['Regression', path]);
        const r2 = await call(emu(), 'GET', `${tc('DEMO-2')}/linkedTestSuites`);
        expect(expectShape('cases.linkedTestSuites', variant, r2.json)).toMatchObject({
          summary: 'User logs in with valid credentials',
          projectKey: 'DEMO',
        });
        expect(await linkedSuites('DEMO-6')).toEqual([]);
      });

      it('refuses linking with 500 naming the field when a case or the project is unknown', async () => {
        const link = (body: Record<string, unknown>) =>
          call(emu(), 'POST', `${prefix}/testSuite/linkTestCase`, { body });
        const body = { testCaseKeys: ['DEMO-4'], testSuitePath: 'Never', projectKey: 'DEMO' };
        const suites = emu().store.testSuites.size;
        const unknownCase = await link({ ...body, testCaseKeys: ['DEMO-4', 'DEMO-999'] });
        expect(unknownCase.status).toBe(500);
        expect(unknownCase.json).toMatchObject({ field: 'testCaseKeys' });
        expect(unknownCase.json.message).toContain('DEMO-999');
        const notACase = await link({ ...body, testCaseKeys: ['DEMO-8'] });
        expect(notACase.status).toBe(500);
        expect(notACase.json.message).toContain('Requirement');
        const unknownProject = await link({ ...body, projectKey: 'NOPE' });
        expect(unknownProject.status).toBe(500);
        expect(unknownProject.json.field).toBe('projectKey');
        const none = await link({ ...body, testCaseKeys: [] });
        expect(none.status).toBe(500);
        expect(none.json.field).toBe('testCaseKeys');
        const longName = await link({ ...body, testSuitePath: `Ok/${'x'.repeat(256)}` });
        expect(longName.status).toBe(500);
        expect(longName.json.message).toContain('256 characters');
        const badPath = await link({ ...body, testSuitePath: ' / ' });
        expect(badPath.status).toBe(500);
        expect(badPath.json.field).toBe('testSuitePath');
        expect(emu().store.testSuites.size).toBe(suites);
        expect(await linkedSuites('DEMO-4')).toEqual([]);
      });

      it('appends steps after the last position and answers the created steps', async () => {
        const key = await createCase('Append steps', STEPS.slice(0, 2));
        const r = await call(emu(), 'POST', `${tc(key)}/addSteps`, {
          body: [
            { step: 'Bezahle mit 💳', stepData: 'VISA 4111', expectedResult: 'Bestellnummer erscheint' },
            { step: 'Prüfe die E-Mail', expectedResult: '' },
          ],
        });
        expect(r.status).toBe(200);
        const added = expectShape('cases.addSteps', variant, r.json) as Step[];
        const tcId = emu().store.issues.find((i) => i.key === key)?.id;
        expect(added.map((s) => [s.sequenceNumber, s.tcId, s.step])).toEqual([
          [3, tcId, 'Bezahle mit 💳'],
          [4, tcId, 'Prüfe die E-Mail'],
        ]);
        expect(allKeys(r.json).has(variant)).toBe(true);
        const all = await steps(key);
        expect(all.map((s) => s.sequenceNumber)).toEqual([1, 2, 3, 4]);
        expect(all.slice(2).map((s) => s.id)).toEqual(added.map((s) => s.id));
        const none = await call(emu(), 'POST', `${tc(key)}/addSteps`, { body: [] });
        expect(none.status).toBe(200);
        expect(expectShape('cases.addSteps', variant, none.json)).toEqual([]);
      });

      it('refuses addSteps on an unknown case or a non-case (404) and invalid steps (500)', async () => {
        const body = [{ step: 'x', expectedResult: 'y' }];
        expect((await call(emu(), 'POST', `${tc('DEMO-999')}/addSteps`, { body })).status).toBe(404);
        const plan = await call(emu(), 'POST', `${tc('DEMO-1')}/addSteps`, { body });
        expect(plan.status).toBe(404);
        expect(plan.json.message).toContain('Test Plan');
        const noExpected = await call(emu(), 'POST', `${tc('DEMO-6')}/addSteps`, { body: [{ step: 'x' }] });
        expect(noExpected.status).toBe(500);
        expect(noExpected.json.field).toBe('0.expectedResult');
        const notArray = await call(emu(), 'POST', `${tc('DEMO-6')}/addSteps`, { body: { step: 'x' } });
        expect(notArray.status).toBe(500);
        const badKey = await call(emu(), 'POST', `${tc('demo-6')}/addSteps`, { body });
        expect(badKey.status).toBe(500);
        expect(await steps('DEMO-6')).toEqual([]);
      });

      it('updates a step by ID (string or number), keeping absent fields', async () => {
        const key = await createCase('Update by ID');
        const before = await steps(key);
        const second = before[1] as Step;
        const r = await call(emu(), 'PUT', `${tc(key)}/updateStep`, {
          body: { ID: String(second.id), step: 'Suche nach „Kanne“ 🔎', expectedResult: 'Ein Treffer' },
        });
        expect(r.status).toBe(200);
        expect(r.text).toBe('');
        let after = await steps(key);
        expect(after[1]).toMatchObject({
          id: second.id,
          sequenceNumber: 2,
          step: 'Suche nach „Kanne“ 🔎',
          expectedResult: 'Ein Treffer',
          stepData: 'teekanne / 茶壶',
        });
        // A number is accepted too; a null stepData clears it.
        const clear = await call(emu(), 'PUT', `${tc(key)}/updateStep`, { body: { ID: second.id, stepData: null } });
        expect(clear.status).toBe(200);
        after = await steps(key);
        expect(after[1]?.stepData).toBeUndefined();
        expect(after[1]?.step).toBe('Suche nach „Kanne“ 🔎');
        expect([after[0], after[2]]).toEqual([before[0], before[2]]);
      });

      it('refuses updateStep by ID with 404 for an unknown ID or a step of another case, 500 for a bad ID', async () => {
        const key = await createCase('Update by ID errors');
        const other = (await steps('DEMO-2'))[0] as Step;
        const put = (body: unknown, key2 = key) => call(emu(), 'PUT', `${tc(key2)}/updateStep`, { body });
        const missing = await put({ ID: '999999', step: 'x' });
        expect(missing.status).toBe(404);
        expect(missing.json.message).toContain('999999');
        expect((await put({ ID: String(other.id), step: 'stolen' })).status).toBe(404);
        expect((await steps('DEMO-2'))[0]?.step).toBe(other.step);
        const notNumeric = await put({ ID: 'first', step: 'x' });
        expect(notNumeric.status).toBe(500);
        expect(notNumeric.json.field).toBe('ID');
        const blank = await put({ ID: String((await steps(key))[0]?.id), step: ' ' });
        expect(blank.status).toBe(500);
        expect(blank.json.field).toBe('step');
        expect((await put({ ID: String(other.id), step: 'x' }, 'DEMO-999')).status).toBe(404);
      });

      it('updates a step by sequenceNumber (string or integer) with 404 for a missing position', async () => {
        const key = await createCase('Update by position');
        const put = (body: unknown) => call(emu(), 'PUT', `${tc(key)}/updateStep`, { body });
        expect((await put({ sequenceNumber: '3', step: 'Dritter Schritt ③', expectedResult: 'ok' })).status).toBe(200);
        expect((await put({ sequenceNumber: 1, stepData: 'Daten 📦' })).status).toBe(200);
        const after = await steps(key);
        expect(after.map((s) => [s.sequenceNumber, s.step, s.stepData ?? null])).toEqual([
          [1, STEPS[0]?.step, 'Daten 📦'],
          [2, STEPS[1]?.step, STEPS[1]?.stepData],
          [3, 'Dritter Schritt ③', null],
        ]);
        const missing = await put({ sequenceNumber: '4', step: 'x' });
        expect(missing.status).toBe(404);
        expect(missing.json.message).toContain('sequenceNumber 4');
        expect((await put({ sequenceNumber: 0, step: 'x' })).status).toBe(404);
        const notNumeric = await put({ sequenceNumber: 'two', step: 'x' });
        expect(notNumeric.status).toBe(500);
        expect(notNumeric.json.field).toBe('sequenceNumber');
        // One form at a time: a body with both keys is the by-position form with an unknown field.
        const both = await put({ sequenceNumber: '1', ID: '1', step: 'x' });
        expect(both.status).toBe(500);
        expect(both.json.message).toContain('"ID"');
        expect(emu().requests().at(-1)?.op).toBe('cases.updateStepBySequence');
      });

      it('deletes a step by id and renumbers the rest; 404 for an unknown id or another case', async () => {
        const key = await createCase('Delete by id', [...STEPS, { step: 'Vierter', expectedResult: '4' }]);
        const before = await steps(key);
        const r = await call(emu(), 'DELETE', `${tc(key)}/deleteStep/${before[1]?.id}`);
        expect(r.status).toBe(200);
        expect(r.text).toBe('');
        const after = await steps(key);
        expect(after.map((s) => [s.id, s.sequenceNumber])).toEqual([
          [before[0]?.id, 1],
          [before[2]?.id, 2],
          [before[3]?.id, 3],
        ]);
        expect((await call(emu(), 'DELETE', `${tc(key)}/deleteStep/${before[1]?.id}`)).status).toBe(404);
        const other = (await steps('DEMO-3'))[0] as Step;
        expect((await call(emu(), 'DELETE', `${tc(key)}/deleteStep/${other.id}`)).status).toBe(404);
        expect(await steps('DEMO-3')).toHaveLength(2);
        const notNumeric = await call(emu(), 'DELETE', `${tc(key)}/deleteStep/abc`);
        expect(notNumeric.status).toBe(500);
        expect(notNumeric.json.field).toBe('stepId');
        expect((await call(emu(), 'DELETE', `${tc('DEMO-999')}/deleteStep/${other.id}`)).status).toBe(404);
      });

      it('deletes a step by position and renumbers the rest; 404 for a missing position', async () => {
        const key = await createCase('Delete by position');
        const before = await steps(key);
        expect((await call(emu(), 'DELETE', `${tc(key)}/deleteStepBySequenceNo/1`)).status).toBe(200);
        let after = await steps(key);
        expect(after.map((s) => [s.id, s.sequenceNumber])).toEqual([
          [before[1]?.id, 1],
          [before[2]?.id, 2],
        ]);
        const missing = await call(emu(), 'DELETE', `${tc(key)}/deleteStepBySequenceNo/3`);
        expect(missing.status).toBe(404);
        expect(missing.json.message).toContain('position 3');
        expect((await call(emu(), 'DELETE', `${tc(key)}/deleteStepBySequenceNo/2`)).status).toBe(200);
        after = await steps(key);
        expect(after.map((s) => [s.id, s.sequenceNumber])).toEqual([[before[1]?.id, 1]]);
        expect((await call(emu(), 'DELETE', `${tc(key)}/deleteStepBySequenceNo/x`)).status).toBe(500);
      });

      it('keeps the steps of existing runs when a case step is deleted', async () => {
        const key = await createCase('Run snapshot');
        const adhoc = await call(emu(), 'PUT', `${prefix}/testRun/adhoc/create/${key}`);
        expect(adhoc.status).toBe(200);
        const runId = adhoc.json[variant] as number;
        expect((await call(emu(), 'DELETE', `${tc(key)}/deleteStepBySequenceNo/2`)).status).toBe(200);
        const run = await call(emu(), 'GET', `${prefix}/testRun/${runId}`);
        expect(run.status).toBe(200);
        expect(run.json.testRunDetails.testRunSteps.map((s: { step: string }) => s.step)).toEqual(
          STEPS.map((s) => s.step),
        );
      });

      it('lists the plans of a case with the cycles that hold a run of it', async () => {
        const name = 'Zyklus 1/2 ünï 🚀';
        const plan = `${prefix}/testPlan/DEMO-1`;
        expect((await call(emu(), 'POST', `${plan}/addCycle`, { body: { name, preloadRuns: 'yes' } })).status).toBe(
          200,
        );
        expect(
          (await call(emu(), 'POST', `${plan}/addCycle`, { body: { name: 'empty', preloadRuns: 'no' } })).status,
        ).toBe(200);
        const cycle = emu().store.cycles.find((c) => c.name === name);
        const r = await call(emu(), 'GET', `${tc('DEMO-5')}/linkedTestPlans`);
        expect(r.status).toBe(200);
        expect(expectShape('cases.linkedTestPlans', variant, r.json)).toEqual({
          summary: 'Checkout with a saved card',
          projectKey: 'DEMO',
          testPlans: [
            {
              testPlanKey: 'DEMO-1',
              testPlanSummary: 'Release 1.0 regression',
              testCycles: [{ testCycleId: cycle?.id, testCycleName: name, notifyTester: false }],
            },
          ],
        });
        // A case in no plan, and a plan member without runs.
        const key = await createCase('In no plan', []);
        const none = await call(emu(), 'GET', `${tc(key)}/linkedTestPlans`);
        expect(expectShape('cases.linkedTestPlans', variant, none.json).testPlans).toEqual([]);
        expect((await call(emu(), 'POST', `${plan}/addMembers`, { body: { testCaseKeys: [key] } })).status).toBe(200);
        const member = await call(emu(), 'GET', `${tc(key)}/linkedTestPlans`);
        expect(expectShape('cases.linkedTestPlans', variant, member.json).testPlans).toEqual([
          { testPlanKey: 'DEMO-1', testPlanSummary: 'Release 1.0 regression', testCycles: [] },
        ]);
      });

      it('answers the automation reference object, with an empty reference when none is set', async () => {
        const r = await call(emu(), 'GET', `${tc('DEMO-6')}/automationReference`);
        expect(r.status).toBe(200);
        expect(expectShape('cases.automationReference', variant, r.json)).toEqual({
          summary: 'Profile page shows the user name',
          projectKey: 'DEMO',
          automationReference: '',
        });
      });

      it('lists and unlinks the requirements of a case', async () => {
        const linked = async (key: string) => {
          const r = await call(emu(), 'GET', `${tc(key)}/linkedRequirements`);
          expect(r.status).toBe(200);
          return (expectShape('cases.linkedRequirements', variant, r.json) as { key: string }[]).map((i) => i.key);
        };
        expect(await linked('DEMO-2')).toEqual(['DEMO-9']);
        expect(await linked('DEMO-3')).toEqual(['DEMO-8']);
        expect(await linked('DEMO-4')).toEqual(['DEMO-10']);
        expect(await linked('DEMO-6')).toEqual([]);
        const del = (key: string, requirementKeys: string[]) =>
          call(emu(), 'DELETE', `${tc(key)}/deleteLinkedRequirements`, { body: { requirementKeys } });
        // A requirement that is not linked is left alone.
        const r = await del('DEMO-4', ['DEMO-10', 'DEMO-9']);
        expect(r.status).toBe(200);
        expect(r.text).toBe('');
        expect(await linked('DEMO-4')).toEqual([]);
        expect(await linked('DEMO-2')).toEqual(['DEMO-9']);
        // The requirement side sees the same link table.
        const fromReq = await call(emu(), 'GET', `${prefix}/requirement/DEMO-10/linkedTestCases`);
        expect((fromReq.json as { key: string }[]).map((i) => i.key)).toEqual(['DEMO-5']);

        const unknownReq = await del('DEMO-2', ['DEMO-999']);
        expect(unknownReq.status).toBe(404);
        expect(unknownReq.json.message).toContain('DEMO-999');
        const notAReq = await del('DEMO-2', ['DEMO-3']);
        expect(notAReq.status).toBe(404);
        expect(notAReq.json.message).toContain('not a Requirement');
        expect((await del('DEMO-999', ['DEMO-9'])).status).toBe(404);
        expect((await call(emu(), 'DELETE', `${tc('DEMO-2')}/deleteLinkedRequirements`, { body: {} })).status).toBe(
          500,
        );
        expect(await linked('DEMO-2')).toEqual(['DEMO-9']);
      });

      it('lists the defects of every run and run step of a case, each once', async () => {
        const key = await createCase('Has defects 🐞');
        expect((await call(emu(), 'GET', `${tc(key)}/getDefects`)).json).toEqual([]);
        const adhoc = await call(emu(), 'PUT', `${prefix}/testRun/adhoc/create/${key}`);
        const runId = adhoc.json[variant] as number;
        const bugFields = (summary: string) => ({ project: { key: 'DEMO' }, summary, issuetype: { name: 'Bug' } });
        const runBug = await call(emu(), 'POST', `${prefix}/testRun/createRunBug`, {
          body: { fields: bugFields('Warenkorb leer 🛒'), runId },
        });
        expect(runBug.status).toBe(200);
        const details = await call(emu(), 'GET', `${prefix}/testRun/${runId}`);
        const stepId = details.json.testRunDetails.testRunSteps[1][variant] as number;
        const stepBug = await call(emu(), 'POST', `${prefix}/testRun/createRunStepBug`, {
          body: { fields: bugFields('Suche langsam'), runStepId: stepId },
        });
        expect(stepBug.status).toBe(200);
        // The run bug linked to a step of a second run as well: still listed once.
        const second = await call(emu(), 'PUT', `${prefix}/testRun/adhoc/create/${key}`);
        const secondSteps = (await call(emu(), 'GET', `${prefix}/testRun/${second.json[variant]}`)).json.testRunDetails
          .testRunSteps;
        const link = await call(emu(), 'POST', `${prefix}/testRun/updateStep/`, {
          body: { runStepId: secondSteps[0][variant], bugs: [runBug.json.key] },
        });
        expect(link.status).toBe(200);

        const r = await call(emu(), 'GET', `${tc(key)}/getDefects`);
        expect(r.status).toBe(200);
        const defects = expectShape('defects.ofCase', variant, r.json) as { key: string; summary: string }[];
        expect(defects.map((d) => [d.key, d.summary])).toEqual([
          [runBug.json.key, 'Warenkorb leer 🛒'],
          [stepBug.json.key, 'Suche langsam'],
        ]);
        // Another case's runs do not contribute.
        expect((await call(emu(), 'GET', `${tc('DEMO-7')}/getDefects`)).json).toEqual([]);
      });

      it('answers 404 for an unknown key or an issue that is not a test case on every read', async () => {
        for (const op of [
          'steps',
          'linkedTestSuites',
          'linkedTestPlans',
          'automationReference',
          'linkedRequirements',
          'getDefects',
        ]) {
          const unknown = await call(emu(), 'GET', `${tc('DEMO-999')}/${op}`);
          expect(unknown.status, op).toBe(404);
          expect(unknown.json.message, op).toContain('DEMO-999');
          const requirement = await call(emu(), 'GET', `${tc('DEMO-8')}/${op}`);
          expect(requirement.status, op).toBe(404);
          expect(requirement.json.message, op).toContain('not a Test Case');
        }
      });

      it('refuses a user without a licence (403) and a request without credentials (401)', async () => {
        const nolicense = basic('nolicense', 'nolicense');
        expect((await call(emu(), 'GET', `${tc('DEMO-2')}/steps`, { auth: nolicense })).status).toBe(403);
        const create = await call(emu(), 'POST', `${prefix}/testCase/create/createTestCase`, {
          auth: nolicense,
          body: { fields: { project: { key: 'DEMO' }, summary: 'x' } },
        });
        expect(create.status).toBe(403);
        expect((await call(emu(), 'GET', `${tc('DEMO-2')}/steps`, { auth: null })).status).toBe(401);
        expect(
          (await call(emu(), 'GET', `${tc('DEMO-2')}/steps`, { auth: 'Bearer casebridge-dev-token' })).status,
        ).toBe(200);
      });
    });
  }
}

/** The demo data plus a second project, with a test case that has an automation reference. */
const twoProjects: SeedInput = {
  ...demoSeed,
  projects: [
    ...(demoSeed.projects ?? []),
    {
      key: 'OTHER',
      name: 'Ändere Projekt',
      issues: [
        { type: 'Test Case', summary: 'Läuft automatisiert', automationReference: 'e2e/checkout.spec.ts › pays 💳' },
      ],
    },
  ],
};

describe('test cases across projects', () => {
  const emu = useEmulator({ seed: twoProjects });

  it('answers the automation reference a case has', async () => {
    const r = await call(emu(), 'GET', `${TM}/testCase/OTHER-1/automationReference`);
    expect(r.status).toBe(200);
    expect(expectShape('cases.automationReference', 'id', r.json)).toEqual({
      summary: 'Läuft automatisiert',
      projectKey: 'OTHER',
      automationReference: 'e2e/checkout.spec.ts › pays 💳',
    });
  });

  it('keys a new test case in its own project', async () => {
    const r = await call(emu(), 'POST', `${TM}/testCase/create/createTestCase`, {
      body: { fields: { project: { key: 'OTHER' }, summary: 'Zweiter' } },
    });
    expect(r.status).toBe(200);
    expect(r.json.key).toBe('OTHER-2');
  });

  it('files a test case only in the suites of its own project', async () => {
    const link = await call(emu(), 'POST', `${TM}/testSuite/linkTestCase`, {
      body: { testCaseKeys: ['OTHER-1'], testSuitePath: 'Fremd', projectKey: 'DEMO' },
    });
    expect(link.status).toBe(500);
    expect(link.json.field).toBe('testCaseKeys');
    expect(link.json.message).toContain('OTHER-1');
    const create = await call(emu(), 'POST', `${TM}/testSuite/createTestCase`, {
      body: {
        fields: { project: { key: 'OTHER' }, summary: 'x' },
        linkToTestSuite: { testSuitePath: 'Fremd', projectKey: 'DEMO' },
      },
    });
    expect(create.status).toBe(500);
    expect(create.json.field).toBe('linkToTestSuite.projectKey');
    expect(emu().store.testSuites.size).toBe(0);
    const ok = await call(emu(), 'POST', `${TM}/testSuite/linkTestCase`, {
      body: { testCaseKeys: ['OTHER-1'], testSuitePath: 'Eigen', projectKey: 'OTHER' },
    });
    expect(ok.status).toBe(200);
    const suites = await call(emu(), 'GET', `${TM}/testCase/${enc('OTHER-1')}/linkedTestSuites`);
    expect(suites.json).toEqual({ summary: 'Läuft automatisiert', projectKey: 'OTHER', testSuites: ['Eigen'] });
  });
});
