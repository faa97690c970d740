import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../src/index.js';
import { linkCaseToSuite } from '../src/rules/suite-path.js';
import { allKeys, basic, call, enc, expectShape, TM, TM_ALIAS, useEmulator } from './helpers.js';

/** Creates an issue through the Jira issue-create route; returns its key. */
async function createIssue(emu: RunningEmulator, type: string, summary: string): Promise<string> {
  const r = await call(emu, 'POST', '/rest/api/2/issue', {
    body: { fields: { project: { key: 'DEMO' }, summary, issuetype: { name: type } } },
  });
  expect(r.status).toBe(201);
  return r.json.key as string;
}

/**
 * Links a test case to a suite on the store: the test-case operations that link cases to suites belong to another
 * group, and these tests only need the membership.
 */
function addMember(emu: RunningEmulator, suiteId: number, caseKey: string): void {
  const suite = emu.store.testSuites.get(suiteId);
  const tc = emu.store.issues.find((i) => i.key === caseKey);
  if (!suite || !tc) throw new Error(`no suite ${suiteId} or case ${caseKey}`);
  linkCaseToSuite(emu.store, suite, tc.id);
}

/**
 * A plan cycle with the plan's cases preloaded as runs, made Active on the store row (the cycle workflow operation
 * is another group's). Returns a lookup of the run of a case.
 */
async function activeCycle(emu: RunningEmulator, prefix: string, body: Record<string, string>) {
  const r = await call(emu, 'POST', `${prefix}/testPlan/DEMO-1/addCycle`, { body: { ...body, preloadRuns: 'yes' } });
  expect(r.status).toBe(200);
  const cycle = emu.store.cycles.find((c) => c.tpId !== null && c.name === body.name);
  if (!cycle) throw new Error(`cycle ${body.name} was not created`);
  cycle.status = 'Active';
  emu.store.cycles.update(cycle);
  return (caseKey: string): number => {
    const tc = emu.store.issues.find((i) => i.key === caseKey);
    const run = emu.store.runs.find((x) => x.cycleId === cycle.id && x.tcId === tc?.id);
    if (!run) throw new Error(`no run of ${caseKey} in ${body.name}`);
    return run.id;
  };
}

for (const variant of ['id', 'ID'] as const) {
  for (const prefix of [TM, TM_ALIAS]) {
    describe(`test suite and defect queries (variant ${variant}, ${prefix})`, () => {
      const emu = useEmulator({ variant });
      const createSuite = (body: unknown, auth?: string) =>
        call(emu(), 'POST', `${prefix}/testSuite/createTestSuite`, { body, ...(auth ? { auth } : {}) });
      const listSuites = async (projectKey = 'DEMO') => {
        const r = await call(emu(), 'GET', `${prefix}/testSuite/${enc(projectKey)}/testSuites`);
        expect(r.status).toBe(200);
        return expectShape('testSuites.list', variant, r.json) as {
          name: string;
          id: number;
          state: number;
          projectId: number;
          nameEncoded: string;
        }[];
      };

      it('creates each missing level of a path and answers the path and project key', async () => {
        const r = await createSuite({ testSuitePath: 'Checkout/Payment/Cards', projectKey: 'DEMO' });
        expect(r.status).toBe(200);
        expect(expectShape('testSuites.create', variant, r.json)).toEqual({
          testSuitePath: 'Checkout/Payment/Cards',
          projectKey: 'DEMO',
        });
        const suites = await listSuites();
        const demo = emu().store.projects.find((p) => p.key === 'DEMO');
        expect(suites.map((s) => [s.name, s.nameEncoded])).toEqual([
          ['Checkout', 'Checkout'],
          ['Payment', 'Checkout/Payment'],
          ['Cards', 'Checkout/Payment/Cards'],
        ]);
        for (const s of suites) expect(s).toMatchObject({ state: 1, projectId: demo?.id });
        // Suites spell their id `id` in both variants.
        expect(allKeys(r.json).has('ID')).toBe(false);
      });

      it('is idempotent: an existing path or a prefix of it creates nothing', async () => {
        const before = emu().store.testSuites.size;
        for (const testSuitePath of ['Checkout/Payment/Cards', 'Checkout/Payment', '/Checkout/ Payment /Cards/']) {
          const r = await createSuite({ testSuitePath, projectKey: 'DEMO' });
          expect(r.status).toBe(200);
          expect(r.json.testSuitePath).toBe(testSuitePath.includes('Cards') ? 'Checkout/Payment/Cards' : testSuitePath);
        }
        expect(emu().store.testSuites.size).toBe(before);
        const branch = await createSuite({ testSuitePath: 'Checkout/Payment/Wallets', projectKey: 'DEMO' });
        expect(branch.status).toBe(200);
        expect(emu().store.testSuites.size).toBe(before + 1);
      });

      it('keeps an escaped "/" inside a name, and odd characters, round-trip', async () => {
        const path = 'Mobile/Cards\\/Wallets/Ünïcode 🚀 %20 #?';
        const r = await createSuite({ testSuitePath: path, projectKey: 'DEMO' });
        expect(r.status).toBe(200);
        expect(r.json.testSuitePath).toBe(path);
        const suites = await listSuites();
        const wallets = suites.find((s) => s.name === 'Cards/Wallets');
        expect(wallets?.nameEncoded).toBe('Mobile/Cards\\/Wallets');
        const leaf = suites.find((s) => s.nameEncoded === path);
        expect(leaf?.name).toBe('Ünïcode 🚀 %20 #?');
        // Feeding nameEncoded back creates nothing new.
        const before = emu().store.testSuites.size;
        expect((await createSuite({ testSuitePath: leaf?.nameEncoded, projectKey: 'DEMO' })).json.testSuitePath).toBe(
          path,
        );
        expect(emu().store.testSuites.size).toBe(before);
      });

      it('lists every level in tree order, and only the suites of that project', async () => {
        emu().store.projects.insert({ key: 'OTHER', name: 'Other project', issueCounter: 0 });
        expect((await createSuite({ testSuitePath: 'Alpha/Beta', projectKey: 'OTHER' })).status).toBe(200);
        const other = await listSuites('OTHER');
        expect(other.map((s) => s.nameEncoded)).toEqual(['Alpha', 'Alpha/Beta']);
        const demo = await listSuites();
        expect(demo.map((s) => s.nameEncoded)).toEqual([
          'Checkout',
          'Checkout/Payment',
          'Checkout/Payment/Cards',
          'Checkout/Payment/Wallets',
          'Mobile',
          'Mobile/Cards\\/Wallets',
          'Mobile/Cards\\/Wallets/Ünïcode 🚀 %20 #?',
        ]);
        // The same path in another project is another suite.
        expect((await createSuite({ testSuitePath: 'Alpha/Beta', projectKey: 'DEMO' })).status).toBe(200);
        const betas = (await listSuites()).filter((s) => s.name === 'Beta');
        expect(betas).toHaveLength(1);
        expect(betas[0]?.id).not.toBe(other[1]?.id);
      });

      it('answers 404 for the suites of an unknown project', async () => {
        const r = await call(emu(), 'GET', `${prefix}/testSuite/NOPE/testSuites`);
        expect(r.status).toBe(404);
        expect(r.json.message).toContain('NOPE');
      });

      it('refuses an invalid createTestSuite body with a 500 naming the field', async () => {
        const unknownProject = await createSuite({ testSuitePath: 'A', projectKey: 'NOPE' });
        expect(unknownProject.status).toBe(500);
        expect(unknownProject.json).toMatchObject({ field: 'projectKey' });
        expect(unknownProject.json.message).toContain('NOPE');
        const before = emu().store.testSuites.size;
        for (const [body, field] of [
          [{ testSuitePath: 'A//B', projectKey: 'DEMO' }, 'testSuitePath'],
          [{ testSuitePath: ' / ', projectKey: 'DEMO' }, 'testSuitePath'],
          [{ testSuitePath: '', projectKey: 'DEMO' }, 'testSuitePath'],
          [{ testSuitePath: `A/${'x'.repeat(256)}`, projectKey: 'DEMO' }, 'testSuitePath'],
          [{ projectKey: 'DEMO' }, 'testSuitePath'],
          [{ testSuitePath: 'A' }, 'projectKey'],
          [{ testSuitePath: 'A', projectKey: '  ' }, 'projectKey'],
          [{ testSuitePath: 42, projectKey: 'DEMO' }, 'testSuitePath'],
        ] as const) {
          const r = await createSuite(body);
          expect(r.status, JSON.stringify(body)).toBe(500);
          expect(r.json.field, JSON.stringify(body)).toBe(field);
          expect(r.json.message).toContain(field);
        }
        const extra = await createSuite({ testSuitePath: 'A', projectKey: 'DEMO', parentId: 1 });
        expect(extra.status).toBe(500);
        expect(extra.json.message).toContain('parentId');
        // A refused request writes nothing, not even the valid first level.
        expect(emu().store.testSuites.size).toBe(before);
      });

      it('answers a suite with its test cases in sequence order', async () => {
        const created = await createSuite({ testSuitePath: 'Regression/Login', projectKey: 'DEMO' });
        expect(created.status).toBe(200);
        const suites = await listSuites();
        const login = suites.find((s) => s.nameEncoded === 'Regression/Login');
        const regression = suites.find((s) => s.nameEncoded === 'Regression');
        if (!login || !regression) throw new Error('suites not listed');
        const extra = await createIssue(emu(), 'Test Case', 'Remember me keeps the session');
        addMember(emu(), login.id, 'DEMO-3');
        addMember(emu(), login.id, 'DEMO-2');
        addMember(emu(), login.id, extra);
        addMember(emu(), login.id, 'DEMO-3');

        const r = await call(emu(), 'GET', `${prefix}/testSuite/testSuite/${login.id}`);
        expect(r.status).toBe(200);
        const detail = expectShape('testSuites.get', variant, r.json);
        expect(detail).toMatchObject({ id: login.id, name: 'Login', nameEncoded: 'Regression/Login', state: 1 });
        const tcId = (key: string) => emu().store.issues.find((i) => i.key === key)?.id;
        expect(
          detail.testSuiteMembers.map((m: { memberType: number; sequence: number; memberId: number }) => [
            m.memberType,
            m.sequence,
            m.memberId,
          ]),
        ).toEqual([
          [1, 1, tcId('DEMO-3')],
          [1, 2, tcId('DEMO-2')],
          [1, 3, tcId(extra)],
        ]);
        expect(detail.testSuiteMembers[0].testCaseIssue).toEqual({
          id: tcId('DEMO-3'),
          key: 'DEMO-3',
          summary: 'User logs out',
        });
        expect(allKeys(r.json).has('ID')).toBe(false);

        // The parent lists its own cases only: none.
        const parent = await call(emu(), 'GET', `${prefix}/testSuite/testSuite/${regression.id}`);
        expect(expectShape('testSuites.get', variant, parent.json).testSuiteMembers).toEqual([]);
      });

      it('answers 404 for an unknown suite id and 500 for one that is not a number', async () => {
        const missing = await call(emu(), 'GET', `${prefix}/testSuite/testSuite/999999`);
        expect(missing.status).toBe(404);
        expect(missing.json.message).toContain('999999');
        const bad = await call(emu(), 'GET', `${prefix}/testSuite/testSuite/1e2`);
        expect(bad.status).toBe(500);
        expect(bad.json.field).toBe('suiteId');
      });

      describe('defects by build and by environment', () => {
        const build = 'Build 1/2 %#? ünï 🚀';
        const env = 'staging / eu-west %';

        it('answers 404 while no cycle has the build or environment', async () => {
          const b = await call(emu(), 'GET', `${prefix}/testPlan/defects/buildDefects/${enc(build)}`);
          expect(b.status).toBe(404);
          expect(b.json.message).toContain(build);
          const e = await call(emu(), 'GET', `${prefix}/testPlan/defects/environmentDefects/${enc(env)}`);
          expect(e.status).toBe(404);
          expect(e.json.message).toContain(env);
        });

        it('answers an empty list for a build or environment whose runs have no bugs', async () => {
          await activeCycle(emu(), prefix, { name: 'clean', build, environment: env });
          const b = await call(emu(), 'GET', `${prefix}/testPlan/defects/buildDefects/${enc(build)}`);
          expect(b.status).toBe(200);
          expect(expectShape('defects.ofBuild', variant, b.json)).toEqual([]);
          const e = await call(emu(), 'GET', `${prefix}/testPlan/defects/environmentDefects/${enc(env)}`);
          expect(e.status).toBe(200);
          expect(expectShape('defects.ofEnvironment', variant, e.json)).toEqual([]);
        });

        it('lists bugs of runs and run steps, once each, only of matching cycles', async () => {
          const runA = await activeCycle(emu(), prefix, { name: 'night A', build, environment: 'qa' });
          const runB = await activeCycle(emu(), prefix, { name: 'night B', build: '2.0', environment: env });
          const runC = await activeCycle(emu(), prefix, { name: 'night C', build: 'BUILD 1/2 %#? ÜNÏ 🚀' });
          const bug1 = await createIssue(emu(), 'Bug', 'Login button is grey');
          const bug2 = await createIssue(emu(), 'Bug', 'Step 2 times out');
          const bug3 = await createIssue(emu(), 'Bug', 'Only on 2.0');
          const bug4 = await createIssue(emu(), 'Bug', 'Other build, same name in upper case');

          const update = (body: Record<string, unknown>) => call(emu(), 'POST', `${prefix}/testRun/update`, { body });
          expect((await update({ runId: String(runA('DEMO-2')), result: 'Failed', bugs: [bug1] })).status).toBe(200);
          expect((await update({ runId: String(runA('DEMO-3')), result: 'Failed', bugs: [bug1] })).status).toBe(200);
          const step = emu().store.runSteps.find((s) => s.runId === runA('DEMO-4') && s.seq === 2);
          const stepUpdate = await call(emu(), 'POST', `${prefix}/testRun/updateStep`, {
            body: { runStepId: step?.id, result: 'Failed', bugs: [bug2] },
          });
          expect(stepUpdate.status).toBe(200);
          expect((await update({ runId: String(runB('DEMO-2')), bugs: [bug3, bug1] })).status).toBe(200);
          expect((await update({ runId: String(runC('DEMO-2')), bugs: [bug4] })).status).toBe(200);

          const ref = (key: string) => {
            const i = emu().store.issues.find((x) => x.key === key);
            return { id: i?.id, key, summary: i?.summary };
          };
          const byBuild = await call(emu(), 'GET', `${prefix}/testPlan/defects/buildDefects/${enc(build)}`);
          expect(byBuild.status).toBe(200);
          expect(expectShape('defects.ofBuild', variant, byBuild.json)).toEqual([ref(bug1), ref(bug2)]);
          const byEnv = await call(emu(), 'GET', `${prefix}/testPlan/defects/environmentDefects/${enc(env)}`);
          expect(expectShape('defects.ofEnvironment', variant, byEnv.json)).toEqual([ref(bug1), ref(bug3)]);
          const qa = await call(emu(), 'GET', `${prefix}/testPlan/defects/environmentDefects/qa`);
          expect(expectShape('defects.ofEnvironment', variant, qa.json)).toEqual([ref(bug1), ref(bug2)]);
          const plain = await call(emu(), 'GET', `${prefix}/testPlan/defects/buildDefects/2.0`);
          expect(expectShape('defects.ofBuild', variant, plain.json)).toEqual([ref(bug1), ref(bug3)]);
          // Names match exactly: a different case is another build.
          const upper = await call(
            emu(),
            'GET',
            `${prefix}/testPlan/defects/buildDefects/${enc('BUILD 1/2 %#? ÜNÏ 🚀')}`,
          );
          expect(expectShape('defects.ofBuild', variant, upper.json)).toEqual([ref(bug4)]);
          expect((await call(emu(), 'GET', `${prefix}/testPlan/defects/buildDefects/2.0.1`)).status).toBe(404);
        });
      });

      it('refuses a user without a licence (403) and a request without credentials (401)', async () => {
        const nolicense = basic('nolicense', 'nolicense');
        expect((await createSuite({ testSuitePath: 'X', projectKey: 'DEMO' }, nolicense)).status).toBe(403);
        for (const path of [
          '/testSuite/DEMO/testSuites',
          '/testSuite/testSuite/1',
          '/testPlan/defects/buildDefects/2.0',
          '/testPlan/defects/environmentDefects/qa',
        ]) {
          expect((await call(emu(), 'GET', `${prefix}${path}`, { auth: nolicense })).status, path).toBe(403);
          expect((await call(emu(), 'GET', `${prefix}${path}`, { auth: null })).status, path).toBe(401);
        }
        expect(emu().store.testSuites.find((s) => s.name === 'X')).toBeUndefined();
      });
    });
  }
}
