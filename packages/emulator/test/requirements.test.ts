import { beforeEach, describe, expect, it } from 'vitest';
import { demoSeed, type SeedInput } from '../src/index.js';
import { call, enc, expectShape, TM, TM_ALIAS, useEmulator } from './helpers.js';

/**
 * Requirement and requirement-suite operations over real HTTP. The seed is the demo data plus three bugs
 * (DEMO-11..13), an Active cycle "Sprint 1" of DEMO-1 with one run per member, and a second project OTHER.
 */

const demo = demoSeed.projects?.[0];
if (!demo) throw new Error('the demo seed has no project');

const seed: SeedInput = {
  ...demoSeed,
  projects: [
    {
      ...demo,
      issues: [
        ...(demo.issues ?? []),
        { type: 'Bug', summary: 'Checkout button missing' },
        { type: 'Bug', summary: 'Logout hangs' },
        { type: 'Bug', summary: 'Login is slow' },
      ],
      cycles: [{ plan: 'DEMO-1', name: 'Sprint 1', status: 'Active' }],
    },
    { key: 'OTHER', name: 'Other project', issues: [{ type: 'Requirement', summary: 'Other requirement' }] },
  ],
};

type Ref = { id: number; key: string; summary: string };
const keys = (refs: Ref[]) => refs.map((r) => r.key);

for (const variant of ['id', 'ID'] as const) {
  for (const prefix of [TM, TM_ALIAS]) {
    describe(`requirement operations (variant ${variant}, ${prefix})`, () => {
      // Jira's time per create (createMs, 25 ms on the realistic profile) is not what these are about: the deep
      // hierarchy makes its requirements one by one.
      const emu = useEmulator({ variant, seed, jira: { createMs: 0 } });
      beforeEach(async () => {
        await emu().reset();
      });
      const req = (key: string) => `${prefix}/requirement/${key}`;

      /** GET of a requirement query, checked against the contract; the normalised parse. */
      const get = async (opId: string, path: string) => {
        const r = await call(emu(), 'GET', path);
        expect(r.status, `${opId} ${r.text}`).toBe(200);
        return expectShape(opId, variant, r.json);
      };
      const children = async (key: string) => keys(await get('requirements.getChildren', `${req(key)}/getChildren`));
      const immediate = async (key: string) =>
        keys(await get('requirements.getOnlyImmediateChildren', `${req(key)}/getOnlyImmediateChildren`));
      const suiteInfo = (key: string) =>
        get('requirements.linkedRequirementSuites', `${req(key)}/linkedRequirementSuites`);
      const addChildren = (parent: string, requirementKeys: string[]) =>
        call(emu(), 'POST', `${req(parent)}/addChildren`, { body: { requirementKeys } });

      /** A new Requirement issue of project DEMO, created over Jira's REST API; its key. */
      const newRequirement = async (summary: string): Promise<string> => {
        const r = await call(emu(), 'POST', '/rest/api/2/issue', {
          body: { fields: { project: { key: 'DEMO' }, summary, issuetype: { name: 'Requirement' } } },
        });
        expect(r.status, r.text).toBe(201);
        return r.json.key;
      };

      it('answers the demo hierarchy, links and suite information', async () => {
        expect(await children('DEMO-8')).toEqual(['DEMO-9']);
        expect(await immediate('DEMO-8')).toEqual(['DEMO-9']);
        expect(await children('DEMO-9')).toEqual([]);
        expect(await immediate('DEMO-10')).toEqual([]);
        const linked = await get('requirements.linkedTestCases', `${req('DEMO-10')}/linkedTestCases`);
        expect(linked).toEqual([
          { id: expect.any(Number), key: 'DEMO-4', summary: 'Search finds products by name' },
          { id: expect.any(Number), key: 'DEMO-5', summary: 'Checkout with a saved card' },
        ]);
        expect(keys(await get('requirements.linkedTestCases', `${req('DEMO-8')}/linkedTestCases`))).toEqual(['DEMO-3']);
        expect(await suiteInfo('DEMO-9')).toEqual({
          requirementSuites: '',
          summary: 'Users can sign in',
          projectKey: 'DEMO',
          requirementHierarchy: 'DEMO-8->DEMO-9',
        });
        expect((await suiteInfo('DEMO-8')).requirementHierarchy).toBe('DEMO-8');
        expect(await get('defects.ofRequirement', `${req('DEMO-10')}/getDefects`)).toEqual([]);
      });

      it('builds a deep hierarchy: all descendants, direct children, the root-to-leaf chain', async () => {
        const chain: string[] = [];
        for (let i = 0; i < 12; i += 1) chain.push(await newRequirement(`Level ${i}`));
        for (let i = 1; i < chain.length; i += 1) {
          expect((await addChildren(chain[i - 1] as string, [chain[i] as string])).status).toBe(200);
        }
        const [root, second] = chain as [string, string];
        const leaf = chain[chain.length - 1] as string;
        expect(await children(root)).toEqual(chain.slice(1));
        expect(await immediate(root)).toEqual([second]);
        expect(await children(leaf)).toEqual([]);
        expect((await suiteInfo(leaf)).requirementHierarchy).toBe(chain.join('->'));

        // Depth first: each child is followed by its own descendants.
        const [a, b, a1, a2, a1x] = [
          await newRequirement('A'),
          await newRequirement('B'),
          await newRequirement('A1'),
          await newRequirement('A2'),
          await newRequirement('A1x'),
        ];
        expect((await addChildren(leaf, [b, a])).status).toBe(200);
        expect((await addChildren(a, [a2, a1])).status).toBe(200);
        expect((await addChildren(a1, [a1x])).status).toBe(200);
        expect(await children(leaf)).toEqual([a, a1, a1x, a2, b]);
        expect(await immediate(leaf)).toEqual([a, b]);
        expect((await suiteInfo(a1x)).requirementHierarchy).toBe([...chain, a, a1, a1x].join('->'));
      });

      it('adds children idempotently, and re-parenting moves a child with its subtree', async () => {
        expect((await addChildren('DEMO-8', ['DEMO-9', 'DEMO-9'])).status).toBe(200);
        expect((await addChildren('DEMO-8', ['DEMO-9'])).status).toBe(200);
        expect(await immediate('DEMO-8')).toEqual(['DEMO-9']);

        const grandchild = await newRequirement('Password reset');
        expect((await addChildren('DEMO-9', [grandchild])).status).toBe(200);
        expect(await children('DEMO-8')).toEqual(['DEMO-9', grandchild]);

        // One parent per requirement: DEMO-9 moves from DEMO-8 to DEMO-10, taking its child along.
        expect((await addChildren('DEMO-10', ['DEMO-9'])).status).toBe(200);
        expect(await children('DEMO-8')).toEqual([]);
        expect(await children('DEMO-10')).toEqual(['DEMO-9', grandchild]);
        expect((await suiteInfo(grandchild)).requirementHierarchy).toBe(`DEMO-10->DEMO-9->${grandchild}`);

        // Across projects too.
        expect((await addChildren('DEMO-10', ['OTHER-1'])).status).toBe(200);
        const other = await suiteInfo('OTHER-1');
        expect(other).toMatchObject({ projectKey: 'OTHER', requirementHierarchy: 'DEMO-10->OTHER-1' });
      });

      it('refuses self-parenting and cycles (500) and writes nothing then', async () => {
        const self = await addChildren('DEMO-8', ['DEMO-8']);
        expect(self.status).toBe(500);
        expect(self.json.field).toBe('requirementKeys');
        expect(self.json.message).toContain('own child');

        const grandchild = await newRequirement('Remember me');
        expect((await addChildren('DEMO-9', [grandchild])).status).toBe(200);
        for (const ancestor of ['DEMO-8', 'DEMO-9']) {
          const cycle = await addChildren(grandchild, [ancestor]);
          expect(cycle.status).toBe(500);
          expect(cycle.json.field).toBe('requirementKeys');
          expect(cycle.json.message).toContain('cycle');
          expect(cycle.json.message).toContain(`DEMO-8->DEMO-9->${grandchild}`);
        }
        // A valid key before the refused one is not applied either.
        const mixed = await addChildren('DEMO-9', ['DEMO-10', 'DEMO-8']);
        expect(mixed.status).toBe(500);
        expect(await immediate('DEMO-9')).toEqual([grandchild]);
        expect(await children('DEMO-8')).toEqual(['DEMO-9', grandchild]);
      });

      it('answers 404 for unknown requirements and issues of another type, 500 for malformed keys', async () => {
        const unknownChild = await addChildren('DEMO-8', ['DEMO-10', 'DEMO-999']);
        expect(unknownChild.status).toBe(404);
        expect(unknownChild.json.message).toContain('DEMO-999');
        expect(await immediate('DEMO-8')).toEqual(['DEMO-9']);
        const caseAsChild = await addChildren('DEMO-8', ['DEMO-2']);
        expect(caseAsChild.status).toBe(404);
        expect(caseAsChild.json.message).toBe('DEMO-2 is a Test Case, not a Requirement');
        expect((await addChildren('DEMO-999', ['DEMO-9'])).status).toBe(404);
        expect((await addChildren('DEMO-2', ['DEMO-9'])).status).toBe(404);

        for (const op of [
          'getChildren',
          'getOnlyImmediateChildren',
          'linkedTestCases',
          'getDefects',
          'linkedRequirementSuites',
        ]) {
          const r = await call(emu(), 'GET', `${req('DEMO-404')}/${op}`);
          expect(r.status, op).toBe(404);
          expect(r.json.message).toContain('DEMO-404');
          expect((await call(emu(), 'GET', `${req('DEMO-1')}/${op}`)).status, `${op} of a test plan`).toBe(404);
        }
        const lower = await call(emu(), 'GET', `${req('demo-8')}/getChildren`);
        expect(lower.status).toBe(500);
        expect(lower.json.field).toBe('requirementIssueKey');
        const badBody = await call(emu(), 'POST', `${req('DEMO-8')}/addChildren`, { body: { keys: ['DEMO-9'] } });
        expect(badBody.status).toBe(500);
        const noBody = await call(emu(), 'POST', `${req('DEMO-8')}/addChildren`);
        expect(noBody.status).toBe(500);
      });

      it('links and unlinks test cases idempotently', async () => {
        const link = (key: string, testCaseKeys: string[]) =>
          call(emu(), 'POST', `${req(key)}/linkTestCase`, { body: { testCaseKeys } });
        const unlink = (key: string, testCaseKeys: string[]) =>
          call(emu(), 'DELETE', `${req(key)}/deleteLinkedTestCases`, { body: { testCaseKeys } });
        const linked = async (key: string) =>
          keys(await get('requirements.linkedTestCases', `${req(key)}/linkedTestCases`));

        const first = await link('DEMO-9', ['DEMO-7', 'DEMO-6', 'DEMO-7']);
        expect(first.status).toBe(200);
        expect(first.text).toBe('');
        expect((await link('DEMO-9', ['DEMO-6'])).status).toBe(200);
        expect(await linked('DEMO-9')).toEqual(['DEMO-2', 'DEMO-6', 'DEMO-7']);
        // A test case can cover several requirements.
        expect((await link('DEMO-10', ['DEMO-2'])).status).toBe(200);
        expect(await linked('DEMO-10')).toEqual(['DEMO-2', 'DEMO-4', 'DEMO-5']);

        const notACase = await link('DEMO-9', ['DEMO-10']);
        expect(notACase.status).toBe(404);
        expect(notACase.json.message).toBe('DEMO-10 is a Requirement, not a Test Case');
        expect((await link('DEMO-9', ['DEMO-3', 'DEMO-404'])).status).toBe(404);
        expect(await linked('DEMO-9')).toEqual(['DEMO-2', 'DEMO-6', 'DEMO-7']);
        expect((await link('DEMO-404', ['DEMO-3'])).status).toBe(404);
        expect((await link('DEMO-9', ['not a key'])).status).toBe(500);

        const removed = await unlink('DEMO-9', ['DEMO-6', 'DEMO-7']);
        expect(removed.status).toBe(200);
        expect(removed.text).toBe('');
        expect(await linked('DEMO-9')).toEqual(['DEMO-2']);
        // A test case that is not linked is left alone; the other requirement keeps its link.
        expect((await unlink('DEMO-9', ['DEMO-4'])).status).toBe(200);
        expect(await linked('DEMO-10')).toEqual(['DEMO-2', 'DEMO-4', 'DEMO-5']);
        expect((await unlink('DEMO-9', ['DEMO-404'])).status).toBe(404);
        expect((await unlink('DEMO-404', ['DEMO-2'])).status).toBe(404);
        expect((await unlink('DEMO-9', ['DEMO-1'])).status).toBe(404);
        const unknownField = await call(emu(), 'DELETE', `${req('DEMO-9')}/deleteLinkedTestCases`, {
          body: { testCaseKeys: ['DEMO-2'], requirementKeys: [] },
        });
        expect(unknownField.status).toBe(500);
        expect(await linked('DEMO-9')).toEqual(['DEMO-2']);
      });

      it("lists defects of the runs of the requirement's own linked test cases, each once", async () => {
        const cycle = `${prefix}/testPlan/DEMO-1/cycle/${enc('Sprint 1')}`;
        const linkBug = async (testcaseKey: string, bugs: string[]) => {
          const r = await call(emu(), 'POST', `${cycle}/linkBugToTestRun`, { body: { testcaseKey, bugs } });
          expect(r.status, r.text).toBe(200);
        };
        const defects = async (key: string) => keys(await get('defects.ofRequirement', `${req(key)}/getDefects`));
        await linkBug('DEMO-4', ['DEMO-11']);
        await linkBug('DEMO-5', ['DEMO-11', 'DEMO-12']);
        await linkBug('DEMO-6', ['DEMO-13']);
        expect(await defects('DEMO-10')).toEqual(['DEMO-11', 'DEMO-12']);
        // DEMO-6 covers no requirement: its bug shows nowhere.
        expect(await defects('DEMO-8')).toEqual([]);
        expect(await defects('DEMO-9')).toEqual([]);

        // A bug on a step of an ad hoc run of DEMO-2 counts for DEMO-9, not for its parent DEMO-8.
        const adhoc = await call(emu(), 'PUT', `${prefix}/testRun/adhoc/create/DEMO-2`);
        expect(adhoc.status, adhoc.text).toBe(200);
        const runId = adhoc.json[variant];
        const details = await call(emu(), 'GET', `${prefix}/testRun/${runId}`);
        const stepId = details.json.testRunDetails.testRunSteps[0][variant];
        const stepBug = await call(emu(), 'POST', `${prefix}/testRun/createRunStepBug`, {
          body: { fields: { project: { key: 'DEMO' }, summary: 'Login page blank' }, runStepId: stepId },
        });
        expect(stepBug.status, stepBug.text).toBe(200);
        expect(await defects('DEMO-9')).toEqual([stepBug.json.key]);
        expect(await defects('DEMO-8')).toEqual([]);

        // Linking DEMO-6 to DEMO-8 brings its run's bug along; unlinking takes it away again.
        await call(emu(), 'POST', `${req('DEMO-8')}/linkTestCase`, { body: { testCaseKeys: ['DEMO-6'] } });
        expect(await defects('DEMO-8')).toEqual(['DEMO-13']);
        await call(emu(), 'DELETE', `${req('DEMO-8')}/deleteLinkedTestCases`, { body: { testCaseKeys: ['DEMO-6'] } });
        expect(await defects('DEMO-8')).toEqual([]);
      });
    });

    describe(`requirement suite operations (variant ${variant}, ${prefix})`, () => {
      const emu = useEmulator({ variant, seed });
      beforeEach(async () => {
        await emu().reset();
      });

      const create = (body: Record<string, unknown>) =>
        call(emu(), 'POST', `${prefix}/requirementSuite/create`, { body });
      /** Creates a suite in DEMO and returns its id. */
      const suite = async (suiteName: string, parentSuiteId: string | number = '0', projectKey = 'DEMO') => {
        const r = await create({ projectKey, suiteName, parentSuiteId });
        expect(r.status, r.text).toBe(200);
        return expectShape('requirementSuites.create', variant, r.json).id as number;
      };
      const detail = async (id: number | string) => {
        const r = await call(emu(), 'GET', `${prefix}/requirement/requirementSuite/${id}`);
        expect(r.status, r.text).toBe(200);
        return expectShape('requirementSuites.get', variant, r.json);
      };
      const list = async (projectKey = 'DEMO') => {
        const r = await call(emu(), 'GET', `${prefix}/requirement/${projectKey}/requirementSuites`);
        expect(r.status, r.text).toBe(200);
        return expectShape('requirementSuites.list', variant, r.json);
      };
      const info = async (key: string) => {
        const r = await call(emu(), 'GET', `${prefix}/requirement/${key}/linkedRequirementSuites`);
        expect(r.status, r.text).toBe(200);
        return expectShape('requirements.linkedRequirementSuites', variant, r.json);
      };
      const issueId = (key: string) => {
        const issue = emu().store.issues.find((i) => i.key === key);
        if (!issue) throw new Error(`no issue ${key}`);
        return issue.id;
      };
      const addMember = (query: Record<string, string | number>) =>
        call(emu(), 'POST', `${prefix}/requirementSuite/addMember`, { query });
      const deleteMember = (query: Record<string, string | number>) =>
        call(emu(), 'POST', `${prefix}/requirementSuite/deleteMember`, { query });
      const remove = (query: Record<string, string | number>) =>
        call(emu(), 'DELETE', `${prefix}/requirementSuite/delete`, { query });

      /** The operation the emulator's request log recorded for the last request to `path`. */
      const routedTo = async (path: string): Promise<string | null> => {
        // The log entry is written when the response closes, which can trail the client's read by a moment.
        for (let i = 0; i < 50; i += 1) {
          const hit = emu()
            .requests()
            .filter((e) => e.path === path)
            .at(-1);
          if (hit) return hit.op;
          await new Promise((r) => setTimeout(r, 10));
        }
        return null;
      };

      it('routes the three /requirement/... families to their own operations', async () => {
        const id = await suite('Routing');
        const cases: [string, string, number][] = [
          [`${prefix}/requirement/requirementSuite/${id}`, 'requirementSuites.get', 200],
          [`${prefix}/requirement/requirementSuite/99999`, 'requirementSuites.get', 404],
          [`${prefix}/requirement/DEMO/requirementSuites`, 'requirementSuites.list', 200],
          // An issue key in the project position is an unknown project, not a requirement.
          [`${prefix}/requirement/DEMO-8/requirementSuites`, 'requirementSuites.list', 404],
          [`${prefix}/requirement/DEMO-8/getChildren`, 'requirements.getChildren', 200],
          [`${prefix}/requirement/DEMO-8/linkedRequirementSuites`, 'requirements.linkedRequirementSuites', 200],
        ];
        for (const [path, op, status] of cases) {
          const r = await call(emu(), 'GET', path);
          expect(r.status, path).toBe(status);
          expect(await routedTo(path), path).toBe(op);
        }
        expect((await call(emu(), 'GET', `${prefix}/requirement/requirementSuite/${id}`)).json.name).toBe('Routing');
        const missing = await call(emu(), 'GET', `${prefix}/requirement/requirementSuite/99999`);
        expect(missing.json.message).toContain('Requirement suite 99999');
        expect((await call(emu(), 'GET', `${prefix}/requirement/DEMO-8/requirementSuites`)).json.message).toBe(
          'Project DEMO-8 not found',
        );
      });

      it('creates nested suites with odd names and answers the creation result', async () => {
        const root = await create({ projectKey: 'DEMO', suiteName: 'Checkout & payments', parentSuiteId: '0' });
        expect(root.status).toBe(200);
        const created = expectShape('requirementSuites.create', variant, root.json);
        expect(root.json).toEqual({
          projectId: issueProject(),
          suiteName: 'Checkout & payments',
          parentSuiteId: 0,
          id: created.id,
        });
        const eu = await suite('EU / UK', String(created.id));
        const deep = await suite('Zahlungen – ü 日本 🚀', eu);
        // A number is accepted for parentSuiteId, and a missing one means a root suite.
        const numeric = await suite('By number', created.id);
        const noParent = await create({ projectKey: 'DEMO', suiteName: '  Spaced   name  ' });
        expect(noParent.status).toBe(200);
        expect(noParent.json).toMatchObject({ suiteName: 'Spaced   name', parentSuiteId: 0 });

        expect(await detail(created.id)).toEqual({
          id: created.id,
          name: 'Checkout & payments',
          projectId: issueProject(),
          requirementSuites: [
            { name: 'EU / UK', id: eu, projectId: issueProject() },
            { name: 'By number', id: numeric, projectId: issueProject() },
          ],
          requirements: [],
        });
        expect((await detail(deep)).name).toBe('Zahlungen – ü 日本 🚀');
        expect((await list()).requirementSuites.map((s: { name: string }) => s.name)).toEqual([
          'Checkout & payments',
          'Spaced   name',
        ]);
        // Same name under another parent is fine; under the same parent it is refused.
        await suite('EU / UK', deep);
        const dup = await create({ projectKey: 'DEMO', suiteName: 'EU / UK', parentSuiteId: String(created.id) });
        expect(dup.status).toBe(500);
        expect(dup.json.field).toBe('suiteName');
        expect(dup.json.message).toContain('already exists');
      });

      it('refuses unknown projects and parents (404) and invalid input (500)', async () => {
        const otherSuite = await suite('Elsewhere', '0', 'OTHER');
        const unknownProject = await create({ projectKey: 'NOPE', suiteName: 'x', parentSuiteId: '0' });
        expect(unknownProject.status).toBe(404);
        expect(unknownProject.json.message).toBe('Project NOPE not found');
        const unknownParent = await create({ projectKey: 'DEMO', suiteName: 'x', parentSuiteId: '4242' });
        expect(unknownParent.status).toBe(404);
        expect(unknownParent.json.message).toContain('parentSuiteId');
        // A parent from another project is not found in this one.
        const foreignParent = await create({ projectKey: 'DEMO', suiteName: 'x', parentSuiteId: String(otherSuite) });
        expect(foreignParent.status).toBe(404);
        for (const [body, field] of [
          [{ projectKey: 'DEMO', suiteName: 'x', parentSuiteId: 'root' }, 'parentSuiteId'],
          [{ projectKey: 'DEMO', suiteName: 'x', parentSuiteId: '-1' }, 'parentSuiteId'],
          [{ projectKey: 'DEMO', suiteName: '   ', parentSuiteId: '0' }, 'suiteName'],
          [{ projectKey: 'DEMO', parentSuiteId: '0' }, 'suiteName'],
          [{ projectKey: 'DEMO', suiteName: 'x'.repeat(256) }, 'suiteName'],
          [{ suiteName: 'x' }, 'projectKey'],
        ] as const) {
          const r = await create(body);
          expect(r.status, JSON.stringify(body)).toBe(500);
          expect(r.json.field, JSON.stringify(body)).toBe(field);
        }
        const extra = await create({ projectKey: 'DEMO', suiteName: 'x', parentSuiteId: '0', parentId: 1 });
        expect(extra.status).toBe(500);
        expect((await list()).requirementSuites).toEqual([]);
        expect((await call(emu(), 'GET', `${prefix}/requirement/NOPE/requirementSuites`)).status).toBe(404);
        expect((await call(emu(), 'GET', `${prefix}/requirement/requirementSuite/abc`)).status).toBe(500);
      });

      it('files requirements in suites: members, suite paths, the root level of the tree', async () => {
        const root = await suite('Checkout & payments');
        const eu = await suite('EU / UK', root);
        const deep = await suite('Zahlungen ü 🚀', eu);
        expect(keys((await list()).requirements)).toEqual(['DEMO-8', 'DEMO-9', 'DEMO-10']);

        const add = await addMember({
          requirementSuiteId: deep,
          memberId: issueId('DEMO-9'),
          memberProjectKeyOrId: 'DEMO',
        });
        expect(add.status).toBe(200);
        expect(add.text).toBe('');
        // Idempotent; the project may be given by id.
        expect(
          (
            await addMember({
              requirementSuiteId: deep,
              memberId: issueId('DEMO-9'),
              memberProjectKeyOrId: String(issueProject()),
            })
          ).status,
        ).toBe(200);
        expect(keys((await detail(deep)).requirements)).toEqual(['DEMO-9']);
        expect(await info('DEMO-9')).toEqual({
          requirementSuites: 'Checkout & payments/EU \\/ UK/Zahlungen ü 🚀',
          summary: 'Users can sign in',
          projectKey: 'DEMO',
          requirementHierarchy: 'DEMO-8->DEMO-9',
        });
        // Several suites: the paths in suite order.
        await addMember({ requirementSuiteId: root, memberId: issueId('DEMO-9'), memberProjectKeyOrId: 'DEMO' });
        await addMember({ requirementSuiteId: root, memberId: issueId('DEMO-10'), memberProjectKeyOrId: 'DEMO' });
        expect((await info('DEMO-9')).requirementSuites).toBe(
          'Checkout & payments, Checkout & payments/EU \\/ UK/Zahlungen ü 🚀',
        );
        expect(keys((await detail(root)).requirements)).toEqual(['DEMO-9', 'DEMO-10']);
        const top = await list();
        expect(top.requirementSuites).toEqual([{ name: 'Checkout & payments', id: root, projectId: issueProject() }]);
        expect(keys(top.requirements)).toEqual(['DEMO-8']);
        // A suite may hold a requirement of another project.
        expect(
          (await addMember({ requirementSuiteId: root, memberId: issueId('OTHER-1'), memberProjectKeyOrId: 'OTHER' }))
            .status,
        ).toBe(200);
        expect(keys((await list('OTHER')).requirements)).toEqual([]);

        const out = await deleteMember({ requirementSuiteId: root, memberId: issueId('DEMO-9') });
        expect(out.status).toBe(200);
        expect(keys((await detail(root)).requirements)).toEqual(['DEMO-10', 'OTHER-1']);
        expect((await info('DEMO-9')).requirementSuites).toBe('Checkout & payments/EU \\/ UK/Zahlungen ü 🚀');
        const again = await deleteMember({ requirementSuiteId: root, memberId: issueId('DEMO-9') });
        expect(again.status).toBe(404);
        expect(again.json.message).toContain('not a member');
      });

      it('answers 404 for an unknown suite, project or member, 500 for a missing parameter', async () => {
        const root = await suite('Members');
        const ok = { requirementSuiteId: root, memberId: issueId('DEMO-8'), memberProjectKeyOrId: 'DEMO' };
        for (const [query, text] of [
          [{ ...ok, requirementSuiteId: 9999 }, 'requirementSuiteId'],
          [{ ...ok, memberProjectKeyOrId: 'NOPE' }, 'memberProjectKeyOrId'],
          [{ ...ok, memberProjectKeyOrId: '9999' }, 'memberProjectKeyOrId'],
          [{ ...ok, memberId: 999999 }, 'memberId'],
          // A test case is not a requirement; a requirement of DEMO is not in project OTHER.
          [{ ...ok, memberId: issueId('DEMO-2') }, 'memberId'],
          [{ ...ok, memberProjectKeyOrId: 'OTHER' }, 'memberId'],
        ] as const) {
          const r = await addMember(query);
          expect(r.status, JSON.stringify(query)).toBe(404);
          expect(r.json.message, JSON.stringify(query)).toContain(text);
        }
        expect((await detail(root)).requirements).toEqual([]);
        for (const missing of ['requirementSuiteId', 'memberId', 'memberProjectKeyOrId'] as const) {
          const { [missing]: _, ...rest } = ok;
          const r = await addMember(rest);
          expect(r.status, missing).toBe(500);
          expect(r.json.field).toBe(missing);
        }
        expect((await addMember({ ...ok, memberId: 'DEMO-8' })).status).toBe(500);
        expect((await deleteMember({ requirementSuiteId: 9999, memberId: issueId('DEMO-8') })).status).toBe(404);
        expect((await deleteMember({ requirementSuiteId: root, memberId: 999999 })).status).toBe(404);
        expect((await deleteMember({ requirementSuiteId: root })).status).toBe(500);
      });

      it('deletes a suite with its sub-suites and memberships; the requirements stay', async () => {
        const root = await suite('Release 1');
        const child = await suite('Sign-in / SSO', root);
        const grandchild = await suite('Édge çases', child);
        const sibling = await suite('Release 2');
        await addMember({ requirementSuiteId: grandchild, memberId: issueId('DEMO-9'), memberProjectKeyOrId: 'DEMO' });
        await addMember({ requirementSuiteId: sibling, memberId: issueId('DEMO-10'), memberProjectKeyOrId: 'DEMO' });

        const r = await remove({ projectKeyOrId: 'DEMO', requirementSuiteId: root });
        expect(r.status).toBe(200);
        expect(r.text).toBe('');
        for (const id of [root, child, grandchild]) {
          expect((await call(emu(), 'GET', `${prefix}/requirement/requirementSuite/${id}`)).status).toBe(404);
        }
        expect((await info('DEMO-9')).requirementSuites).toBe('');
        const top = await list();
        expect(top.requirementSuites.map((s: { id: number }) => s.id)).toEqual([sibling]);
        expect(keys(top.requirements)).toEqual(['DEMO-8', 'DEMO-9']);
        expect(emu().store.requirementSuiteMembers.size).toBe(1);

        expect((await remove({ projectKeyOrId: 'DEMO', requirementSuiteId: root })).status).toBe(404);
        expect((await remove({ projectKeyOrId: 'NOPE', requirementSuiteId: sibling })).status).toBe(404);
        // The suite must belong to the project named.
        expect((await remove({ projectKeyOrId: 'OTHER', requirementSuiteId: sibling })).status).toBe(404);
        expect((await remove({ projectKeyOrId: 'DEMO' })).status).toBe(500);
        expect((await remove({ requirementSuiteId: sibling })).status).toBe(500);
        // The project by id.
        expect((await remove({ projectKeyOrId: String(issueProject()), requirementSuiteId: sibling })).status).toBe(
          200,
        );
        expect((await list()).requirementSuites).toEqual([]);
      });

      /** The id of project DEMO. */
      function issueProject(): number {
        const project = emu().store.projects.find((p) => p.key === 'DEMO');
        if (!project) throw new Error('no project DEMO');
        return project.id;
      }
    });
  }
}
