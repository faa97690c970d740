import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoSeed, type SeedInput, startEmulator } from '../src/index.js';
import { applySeed } from '../src/seed/seed.js';
import { Store } from '../src/store/store.js';
import { type CallResult, call, expectShape, TM, useEmulator } from './helpers.js';

/**
 * Jira's create screens: fields beyond project, type, summary and description (components, priority, versions,
 * assignee, due date, environment, custom fields), required fields, allowed values, createmeta, and the same rules
 * for synapseRT's createRunBug / createRunStepBug.
 */

const API = '/rest/api/2';
const demo = demoSeed.projects?.[0];
if (!demo) throw new Error('the demo seed has a project');

export const screensSeed: SeedInput = {
  ...demoSeed,
  // Jira 8.x serves both createmeta forms (jira-version.test.ts covers the switch).
  jiraVersion: '8.20',
  customFields: [
    { id: 'customfield_10010', name: 'Team', type: 'option', options: ['Web', 'Mobile'] },
    { id: 'customfield_10011', name: 'Browsers', type: 'multi-option', options: ['Chrome', 'Firefox', 'Safari'] },
    { id: 'customfield_10012', name: 'Build', type: 'string' },
    { id: 'customfield_10013', name: 'Retries', type: 'number' },
    { id: 'customfield_10014', name: 'Triager', type: 'user' },
    { id: 'customfield_10015', name: 'Not on any screen', type: 'string' },
    // The demo's own, last so the option ids above stay 10000...: its Bug workflow's closing screen requires it.
    ...(demoSeed.customFields ?? []),
  ],
  projects: [
    {
      ...demo,
      components: ['Checkout', 'Search'],
      versions: ['1.0', '1.1'],
      createScreens: {
        Bug: {
          fields: [
            'labels',
            'components',
            'priority',
            'fixVersions',
            'versions',
            'assignee',
            'duedate',
            'environment',
            'customfield_10010',
            'customfield_10011',
            'customfield_10012',
            'customfield_10013',
            'customfield_10014',
          ],
          required: ['components', 'customfield_10010'],
        },
      },
      cycles: [{ plan: 'DEMO-1', name: 'Nightly', status: 'Active' }],
    },
  ],
};

const BUG = { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary: 'Checkout fails' };
const REQUIRED = { components: [{ name: 'Checkout' }], customfield_10010: { value: 'Web' } };

function expectFieldErrors(r: CallResult, errors: Record<string, string>): void {
  expect(r.status, r.text).toBe(400);
  expect(r.json).toEqual({ errorMessages: [], errors });
}

for (const variant of ['id', 'ID'] as const) {
  describe(`Jira create screens (variant ${variant})`, () => {
    const emu = useEmulator({ variant, seed: screensSeed, jira: { indexLagMs: 0 } });
    const create = (fields: Record<string, unknown>) => call(emu(), 'POST', `${API}/issue`, { body: { fields } });
    const getIssue = async (key: string) => {
      const r = await call(emu(), 'GET', `${API}/issue/${key}`);
      expect(r.status).toBe(200);
      return expectShape('jira.issue', variant, r.json);
    };

    it('creates a Bug with every kind of field and answers them in Jira shape', async () => {
      const r = await create({
        ...BUG,
        labels: ['ci', 'ci'],
        components: [{ name: 'checkout' }, { id: '10001' }],
        priority: { name: 'High' },
        fixVersions: [{ name: '1.1' }],
        versions: [{ id: '10000' }],
        assignee: { name: 'tester' },
        duedate: '2026-02-01',
        environment: 'Linux, Chrome 120',
        customfield_10010: { value: 'Web' },
        customfield_10011: [{ value: 'Chrome' }, { id: '10004' }],
        customfield_10012: 'build 42',
        customfield_10013: 3,
        customfield_10014: { name: 'admin' },
      });
      expect(r.status, r.text).toBe(201);
      const issue = await getIssue(r.json.key);
      expect(issue.fields).toMatchObject({
        labels: ['ci'],
        components: [
          { id: '10000', name: 'Checkout', self: `${emu().url}${API}/component/10000` },
          { id: '10001', name: 'Search' },
        ],
        priority: { id: '2', name: 'High' },
        fixVersions: [{ id: '10001', name: '1.1' }],
        versions: [{ id: '10000', name: '1.0' }],
        assignee: { name: 'tester', displayName: 'Tess Tester' },
        duedate: '2026-02-01',
        environment: 'Linux, Chrome 120',
        customfield_10010: { id: '10000', value: 'Web' },
        customfield_10011: [
          { id: '10002', value: 'Chrome' },
          { id: '10004', value: 'Safari' },
        ],
        customfield_10012: 'build 42',
        customfield_10013: 3,
        customfield_10014: { name: 'admin' },
      });
      // `fields=` selects create-screen fields like the others.
      const some = await call(emu(), 'GET', `${API}/issue/${r.json.key}`, {
        query: { fields: 'summary,customfield_10010' },
      });
      expect(Object.keys(some.json.fields).sort()).toEqual(['customfield_10010', 'summary']);
      const without = await call(emu(), 'GET', `${API}/issue/${r.json.key}`, { query: { fields: '*all,-components' } });
      expect(without.json.fields.components).toBeUndefined();
      expect(without.json.fields.priority).toBeDefined();
      const found = await call(emu(), 'GET', `${API}/search`, { query: { jql: `key = ${r.json.key}` } });
      expect(found.json.issues[0].fields.customfield_10012).toBe('build 42');
    });

    it('applies the default priority and answers unset screen fields as null or []', async () => {
      const r = await create({ ...BUG, ...REQUIRED });
      expect(r.status, r.text).toBe(201);
      const issue = await getIssue(r.json.key);
      expect(issue.fields).toMatchObject({
        priority: { id: '3', name: 'Medium' },
        fixVersions: [],
        versions: [],
        assignee: null,
        duedate: null,
        customfield_10011: [],
        customfield_10012: null,
      });
    });

    it('refuses a create without the required fields, naming each', async () => {
      expectFieldErrors(await create(BUG), {
        components: 'Component/s is required.',
        customfield_10010: 'Team is required.',
      });
      expectFieldErrors(await create({ ...BUG, components: [], customfield_10010: null }), {
        components: 'Component/s is required.',
        customfield_10010: 'Team is required.',
      });
      // A summary problem comes in the same answer.
      expectFieldErrors(await create({ ...BUG, summary: ' ', components: REQUIRED.components }), {
        summary: 'You must specify a summary of the issue.',
        customfield_10010: 'Team is required.',
      });
    });

    it('refuses fields that are not on the screen or unknown', async () => {
      const cannot = (f: string) => `Field '${f}' cannot be set. It is not on the appropriate screen, or unknown.`;
      expectFieldErrors(await create({ ...BUG, ...REQUIRED, customfield_10015: 'x', customfield_99999: 'y' }), {
        customfield_10015: cannot('customfield_10015'),
        customfield_99999: cannot('customfield_99999'),
      });
      // Types without a screen of their own keep the minimal one: labels only.
      expectFieldErrors(
        await create({ ...BUG, issuetype: { name: 'Task' }, labels: ['ok'], priority: { name: 'High' } }),
        { priority: cannot('priority') },
      );
      expect((await create({ ...BUG, issuetype: { name: 'Task' }, labels: ['ok'] })).status).toBe(201);
    });

    it('refuses values that are not allowed, naming the value', async () => {
      const cases: [Record<string, unknown>, string, string][] = [
        [{ components: [{ name: 'Foo' }] }, 'components', "Component name 'Foo' is not valid"],
        [{ components: [{ id: '999' }] }, 'components', "Component id '999' is not valid"],
        [{ priority: { name: 'Urgentest' } }, 'priority', "Priority name 'Urgentest' is not valid"],
        [{ fixVersions: [{ name: '9.9' }] }, 'fixVersions', "Version name '9.9' is not valid"],
        [{ assignee: { name: 'nobody' } }, 'assignee', "User 'nobody' does not exist."],
        [{ duedate: '01/02/2026' }, 'duedate', 'Error parsing date string: 01/02/2026'],
        [{ customfield_10010: { value: 'Desktop' } }, 'customfield_10010', "Option value 'Desktop' is not valid"],
        [{ customfield_10011: [{ value: 'Edge' }] }, 'customfield_10011', "Option value 'Edge' is not valid"],
        [{ customfield_10012: 42 }, 'customfield_10012', 'Operation value must be a string'],
        [{ customfield_10013: 'three' }, 'customfield_10013', 'Operation value must be a number'],
      ];
      for (const [fields, field, message] of cases) {
        expectFieldErrors(await create({ ...BUG, ...REQUIRED, ...fields }), { [field]: message });
      }
      // The contract types the known fields: a list given as an object is refused before the screen is read.
      const notList = await create({ ...BUG, ...REQUIRED, components: { name: 'Checkout' } });
      expect(notList.status).toBe(400);
      expect(Object.keys(notList.json.errors)).toEqual(['fields.components']);
    });

    it('describes the create screens with createmeta (DC 8.4+), paged', async () => {
      const types = await call(emu(), 'GET', `${API}/issue/createmeta/DEMO/issuetypes`);
      expect(types.status).toBe(200);
      const t = expectShape('jira.createMetaIssueTypes', variant, types.json);
      expect(t).toMatchObject({ startAt: 0, maxResults: 50, isLast: true });
      expect(t.values.map((x: { name: string }) => x.name)).toContain('Bug');
      expect(t.total).toBe(t.values.length);
      const bugId = t.values.find((x: { name: string }) => x.name === 'Bug').id;

      const meta = await call(emu(), 'GET', `${API}/issue/createmeta/DEMO/issuetypes/${bugId}`);
      expect(meta.status).toBe(200);
      const m = expectShape('jira.createMetaFields', variant, meta.json);
      const byId = Object.fromEntries(m.values.map((f: { fieldId: string }) => [f.fieldId, f]));
      expect(m.total).toBe(17);
      expect(byId.summary).toMatchObject({ required: true, schema: { type: 'string', system: 'summary' } });
      expect(byId.components).toMatchObject({
        name: 'Component/s',
        required: true,
        schema: { type: 'array', items: 'component', system: 'components' },
        allowedValues: [
          { id: '10000', name: 'Checkout' },
          { id: '10001', name: 'Search' },
        ],
      });
      expect(byId.priority).toMatchObject({
        required: false,
        hasDefaultValue: true,
        defaultValue: { name: 'Medium' },
        allowedValues: ['Highest', 'High', 'Medium', 'Low', 'Lowest'].map((name) => ({ name })),
      });
      expect(byId.customfield_10010).toMatchObject({
        name: 'Team',
        required: true,
        schema: { type: 'option', customId: 10010, custom: 'com.atlassian.jira.plugin.system.customfieldtypes:select' },
        allowedValues: [
          { id: '10000', value: 'Web' },
          { id: '10001', value: 'Mobile' },
        ],
      });
      expect(byId.customfield_10011.schema).toMatchObject({ type: 'array', items: 'option' });
      expect(byId.labels.required).toBe(false);

      const paged = await call(emu(), 'GET', `${API}/issue/createmeta/DEMO/issuetypes/${bugId}`, {
        query: { startAt: 15, maxResults: 10 },
      });
      expect(paged.json).toMatchObject({ startAt: 15, maxResults: 10, total: 17, isLast: true });
      expect(paged.json.values).toHaveLength(2);
      const first = await call(emu(), 'GET', `${API}/issue/createmeta/DEMO/issuetypes/${bugId}`, {
        query: { maxResults: 4 },
      });
      expect(first.json).toMatchObject({ isLast: false, total: 17 });
      expect(first.json.values.map((f: { fieldId: string }) => f.fieldId)).toEqual([
        'summary',
        'issuetype',
        'project',
        'description',
      ]);

      expect((await call(emu(), 'GET', `${API}/issue/createmeta/NOPE/issuetypes`)).status).toBe(404);
      expect((await call(emu(), 'GET', `${API}/issue/createmeta/DEMO/issuetypes/424242`)).status).toBe(404);
    });

    it('answers the older createmeta (Jira 8.x) with fields keyed by id when expanded', async () => {
      const r = await call(emu(), 'GET', `${API}/issue/createmeta`, {
        query: { projectKeys: 'DEMO,NOPE', issuetypeNames: 'Bug', expand: 'projects.issuetypes.fields' },
      });
      expect(r.status).toBe(200);
      const m = expectShape('jira.createMeta', variant, r.json);
      expect(m.projects.map((p: { key: string }) => p.key)).toEqual(['DEMO']);
      const bug = m.projects[0].issuetypes;
      expect(bug.map((t: { name: string }) => t.name)).toEqual(['Bug']);
      expect(bug[0].fields.customfield_10010).toMatchObject({ required: true, name: 'Team' });
      const bare = await call(emu(), 'GET', `${API}/issue/createmeta`, { query: { projectKeys: 'DEMO' } });
      expect(bare.json.projects[0].issuetypes[0].fields).toBeUndefined();
    });

    it('applies the screen to synapseRT createRunBug and createRunStepBug (500 naming the fields)', async () => {
      const run = emu().store.runs.all()[0];
      const step = emu().store.runSteps.find((s) => s.runId === run?.id);
      if (!run || !step) throw new Error('the seed has a run with steps');
      const bug = (body: Record<string, unknown>) => call(emu(), 'POST', `${TM}/testRun/createRunBug`, { body });
      const before = emu().store.issues.size;

      const missing = await bug({ fields: BUG, runId: run.id });
      expect(missing.status).toBe(500);
      expect(missing.json).toEqual({
        message:
          "Jira refused the defect's fields: components: Component/s is required.; " +
          'customfield_10010: Team is required.',
        field: 'fields.components',
      });
      const offScreen = await bug({ fields: { ...BUG, ...REQUIRED, customfield_10015: 'x' }, runId: run.id });
      expect(offScreen.status).toBe(500);
      expect(offScreen.json.field).toBe('fields.customfield_10015');
      const badValue = await bug({ fields: { ...BUG, ...REQUIRED, priority: { name: 'Urgentest' } }, runId: run.id });
      expect(badValue.json.message).toContain("priority: Priority name 'Urgentest' is not valid");
      expect(emu().store.issues.size).toBe(before);

      const ok = await bug({ fields: { ...BUG, ...REQUIRED, labels: ['casebridge'] }, runId: run.id });
      expect(ok.status, ok.text).toBe(200);
      const created = await getIssue(expectShape('defects.createRunBug', variant, ok.json).key);
      expect(created.fields).toMatchObject({
        labels: ['casebridge'],
        components: [{ name: 'Checkout' }],
        customfield_10010: { value: 'Web' },
        priority: { name: 'Medium' },
      });

      const stepMissing = await call(emu(), 'POST', `${TM}/testRun/createRunStepBug`, {
        body: { fields: { ...BUG, components: REQUIRED.components }, runStepId: step.id },
      });
      expect(stepMissing.status).toBe(500);
      expect(stepMissing.json.field).toBe('fields.customfield_10010');
      const stepOk = await call(emu(), 'POST', `${TM}/testRun/createRunStepBug`, {
        body: { fields: { ...BUG, ...REQUIRED }, runStepId: step.id },
      });
      expect(stepOk.status, stepOk.text).toBe(200);
    });
  });
}

describe('create screens in the seed', () => {
  it('refuses a screen that names an unknown field or requires one it does not have', () => {
    const withScreen = (screen: { fields: string[]; required: string[] }): SeedInput => ({
      users: [{ name: 'a', password: 'a' }],
      projects: [{ key: 'P', name: 'P', createScreens: { Bug: screen } }],
    });
    expect(() => applySeed(new Store(), withScreen({ fields: ['labels', 'team'], required: [] }))).toThrow(
      /createScreens\.Bug\.fields: unknown field 'team'/,
    );
    expect(() => applySeed(new Store(), withScreen({ fields: ['labels'], required: ['components'] }))).toThrow(
      /createScreens\.Bug\.required: 'components' is not in its fields/,
    );
  });

  it('keeps screens, components, custom fields and issue fields across a restart (dataDir)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'casebridge-screens-'));
    try {
      const first = await startEmulator({ port: 0, dataDir: dir, seed: screensSeed });
      const r = await call(first, 'POST', `${API}/issue`, {
        body: { fields: { ...BUG, ...REQUIRED, priority: { name: 'Low' } } },
      });
      expect(r.status, r.text).toBe(201);
      await first.close();

      // Started without the seed: everything comes from the database.
      const second = await startEmulator({ port: 0, dataDir: dir });
      try {
        const got = await call(second, 'GET', `${API}/issue/${r.json.key}`);
        expect(got.json.fields).toMatchObject({
          components: [{ name: 'Checkout' }],
          priority: { name: 'Low' },
          customfield_10010: { value: 'Web' },
        });
        expectFieldErrors(await call(second, 'POST', `${API}/issue`, { body: { fields: BUG } }), {
          components: 'Component/s is required.',
          customfield_10010: 'Team is required.',
        });
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
