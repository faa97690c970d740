import { describe, expect, it } from 'vitest';
import { basic, type CallResult, call, expectShape, TM, useEmulator } from './helpers.js';

const API = '/rest/api/2';
const SESSION = '/rest/auth/1/session';

/** Jira's error body. */
function expectJiraError(r: CallResult, status: number): void {
  expect(r.status).toBe(status);
  expect(Array.isArray(r.json.errorMessages)).toBe(true);
  expect(typeof r.json.errors).toBe('object');
}

for (const variant of ['id', 'ID'] as const) {
  describe(`Jira platform subset (variant ${variant})`, () => {
    // The kind, single-node Jira: the realistic one (lag, nodes, CAPTCHA) is tested in search and cluster tests.
    const emu = useEmulator({ variant, profile: 'ideal' });

    const create = (fields: Record<string, unknown>, auth?: string) =>
      call(emu(), 'POST', `${API}/issue`, { body: { fields }, ...(auth ? { auth } : {}) });

    const search = (jql: string, query: Record<string, string | number> = {}) =>
      call(emu(), 'GET', `${API}/search`, { query: { jql, ...query } });

    describe('myself and authentication', () => {
      it('answers the calling user for Basic, Bearer and the unlicensed user', async () => {
        const admin = await call(emu(), 'GET', `${API}/myself`);
        expect(admin.status).toBe(200);
        const me = expectShape('jira.myself', variant, admin.json);
        expect(me).toMatchObject({
          name: 'admin',
          key: 'admin',
          displayName: 'Admin',
          emailAddress: 'admin@example.test',
          active: true,
          timeZone: 'UTC',
          locale: 'en_US',
          groups: { size: 2, items: [] },
        });
        expect(me.self).toBe(`${emu().url}${API}/user?username=admin`);
        const bearer = await call(emu(), 'GET', `${API}/myself`, {
          auth: 'Bearer casebridge-dev-token',
          query: { expand: 'groups' },
        });
        expect(bearer.json.groups.items.map((g: { name: string }) => g.name)).toEqual([
          'jira-administrators',
          'jira-software-users',
        ]);
        const unlicensed = await call(emu(), 'GET', `${API}/myself`, { auth: basic('nolicense', 'nolicense') });
        expect(unlicensed.status).toBe(200);
        expect(unlicensed.json.name).toBe('nolicense');
      });

      it('answers 401 with a Jira error body without or with wrong credentials', async () => {
        for (const auth of [null, basic('admin', 'wrong'), 'Bearer nope']) {
          const r = await call(emu(), 'GET', `${API}/myself`, { auth });
          expectJiraError(r, 401);
          expect(r.headers.get('www-authenticate')).toContain('Basic');
        }
      });
    });

    describe('session login', () => {
      it('logs in, authenticates by the cookie alone, tells the session, and logs out', async () => {
        const login = await call(emu(), 'POST', SESSION, {
          auth: null,
          body: { username: 'tester', password: 'tester' },
        });
        expect(login.status).toBe(200);
        const s = expectShape('jira.login', variant, login.json);
        expect(s.session.name).toBe('JSESSIONID');
        expect(s.loginInfo).toMatchObject({ failedLoginCount: 0, loginCount: 1 });
        const cookie = `JSESSIONID=${s.session.value}`;
        expect(login.headers.get('set-cookie')).toContain(cookie);

        const me = await call(emu(), 'GET', `${API}/myself`, { auth: null, headers: { cookie } });
        expect(me.json.name).toBe('tester');
        const current = await call(emu(), 'GET', SESSION, { auth: null, headers: { cookie } });
        expect(current.status).toBe(200);
        expect(expectShape('jira.session', variant, current.json).name).toBe('tester');

        const again = await call(emu(), 'POST', SESSION, {
          auth: null,
          body: { username: 'tester', password: 'tester' },
        });
        expect(again.json.loginInfo.loginCount).toBe(2);
        expect(again.json.loginInfo.previousLoginTime).toMatch(/^\d{4}-\d{2}-\d{2}T/);

        const out = await call(emu(), 'DELETE', SESSION, { auth: null, headers: { cookie } });
        expect(out.status).toBe(204);
        expect(out.text).toBe('');
        expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
        expectJiraError(await call(emu(), 'GET', `${API}/myself`, { auth: null, headers: { cookie } }), 401);
        expectJiraError(await call(emu(), 'DELETE', SESSION, { auth: null, headers: { cookie } }), 401);
      });

      it('refuses a wrong password or a token as password (401 Login failed) and a bad body (400)', async () => {
        for (const body of [
          { username: 'tester', password: 'nope' },
          { username: 'nobody', password: 'x' },
          { username: 'admin', password: 'casebridge-dev-token' },
        ]) {
          const r = await call(emu(), 'POST', SESSION, { auth: null, body });
          expectJiraError(r, 401);
          expect(r.json.errorMessages).toEqual(['Login failed']);
          expect(r.headers.get('set-cookie')).toBeNull();
        }
        const bad = await call(emu(), 'POST', SESSION, { auth: null, body: { username: 'tester' } });
        expectJiraError(bad, 400);
        expect(Object.keys(bad.json.errors)).toEqual(['password']);
      });

      it('lets the unlicensed user log in to Jira while the add-on still refuses him', async () => {
        const login = await call(emu(), 'POST', SESSION, {
          auth: null,
          body: { username: 'nolicense', password: 'nolicense' },
        });
        const cookie = `JSESSIONID=${login.json.session.value}`;
        const project = await call(emu(), 'GET', `${API}/project/DEMO`, { auth: null, headers: { cookie } });
        expect(project.status).toBe(200);
        const addOn = await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/members`, { auth: null, headers: { cookie } });
        expect(addOn.status).toBe(403);
      });
    });

    describe('projects', () => {
      it('answers a project by key (any case) or id, with string ids and the issue types', async () => {
        const byKey = await call(emu(), 'GET', `${API}/project/DEMO`);
        expect(byKey.status).toBe(200);
        const p = expectShape('jira.project', variant, byKey.json);
        expect(typeof byKey.json.id).toBe('string');
        expect(p).toMatchObject({ key: 'DEMO', name: 'Demo shop', projectTypeKey: 'software' });
        expect(p.lead.name).toBe('admin');
        const types = p.issueTypes.map((t: { name: string }) => t.name);
        for (const t of ['Test Case', 'Test Plan', 'Requirement', 'Bug']) expect(types).toContain(t);
        for (const t of byKey.json.issueTypes) expect(t.id).toMatch(/^\d+$/);
        const byId = await call(emu(), 'GET', `${API}/project/${byKey.json.id}`);
        expect(byId.json.key).toBe('DEMO');
        expect((await call(emu(), 'GET', `${API}/project/demo`)).json.key).toBe('DEMO');
      });

      it('answers 404 naming the key or id', async () => {
        const key = await call(emu(), 'GET', `${API}/project/NOPE`);
        expectJiraError(key, 404);
        expect(key.json.errorMessages).toEqual(["No project could be found with key 'NOPE'."]);
        const id = await call(emu(), 'GET', `${API}/project/999`);
        expect(id.json.errorMessages).toEqual(["No project could be found with id '999'."]);
      });
    });

    describe('issues', () => {
      it('creates an issue (201 {id, key, self}) by project key and type name, and reads it back', async () => {
        const before = Date.now();
        const r = await create({
          project: { key: 'DEMO' },
          summary: 'Checkout fails with ünïcödé 🚀',
          description: 'Steps…',
          issuetype: { name: 'Bug' },
          labels: ['ci', 'flaky'],
        });
        expect(r.status).toBe(201);
        const c = expectShape('jira.createIssue', variant, r.json);
        expect(typeof r.json.id).toBe('string');
        expect(c.key).toMatch(/^DEMO-\d+$/);
        expect(c.self).toBe(`${emu().url}${API}/issue/${r.json.id}`);

        for (const ref of [c.key, r.json.id, c.key.toLowerCase()]) {
          const got = await call(emu(), 'GET', `${API}/issue/${ref}`);
          expect(got.status).toBe(200);
          const issue = expectShape('jira.issue', variant, got.json);
          expect(issue).toMatchObject({ id: r.json.id, key: c.key });
          expect(issue.fields).toMatchObject({
            summary: 'Checkout fails with ünïcödé 🚀',
            description: 'Steps…',
            labels: ['ci', 'flaky'],
            issuetype: { name: 'Bug', id: '1', subtask: false },
            // The demo's Bug workflow starts in Offen (a German-language instance).
            status: { name: 'Offen', statusCategory: { key: 'new', name: 'To Do' } },
            project: { key: 'DEMO' },
            resolution: null,
            reporter: { name: 'admin' },
          });
          expect(issue.fields.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/);
          expect(Date.parse(issue.fields.created.replace('+0000', 'Z'))).toBeGreaterThanOrEqual(before);
        }
        const some = await call(emu(), 'GET', `${API}/issue/${c.key}`, { query: { fields: 'summary,status' } });
        expect(Object.keys(some.json.fields).sort()).toEqual(['status', 'summary']);
        const without = await call(emu(), 'GET', `${API}/issue/${c.key}`, { query: { fields: '*all,-description' } });
        expect(without.json.fields.description).toBeUndefined();
        expect(without.json.fields.summary).toBeDefined();
      });

      it('creates by project id and issue type id, as the unlicensed user too', async () => {
        const project = (await call(emu(), 'GET', `${API}/project/DEMO`)).json;
        const testCase = project.issueTypes.find((t: { name: string }) => t.name === 'Test Case');
        const r = await create(
          { project: { id: project.id }, summary: 'A new test case', issuetype: { id: testCase.id } },
          basic('nolicense', 'nolicense'),
        );
        expect(r.status).toBe(201);
        const got = await call(emu(), 'GET', `${API}/issue/${r.json.key}`);
        expect(got.json.fields).toMatchObject({
          issuetype: { name: 'Test Case' },
          description: null,
          labels: [],
          reporter: { name: 'nolicense' },
        });
        // The test-management service sees the new test case.
        expect(emu().store.issues.find((i) => i.key === r.json.key)?.type).toBe('Test Case');
      });

      it('answers Jira validation errors (400) naming the field', async () => {
        const cases: [Record<string, unknown>, string, string][] = [
          [
            { project: { key: 'DEMO' }, issuetype: { name: 'Bug' } },
            'summary',
            'You must specify a summary of the issue.',
          ],
          [
            { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary: '   ' },
            'summary',
            'You must specify a summary of the issue.',
          ],
          [
            { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary: 'a\nb' },
            'summary',
            'The summary is invalid because it contains newline characters.',
          ],
          [
            { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary: 'x'.repeat(256) },
            'summary',
            'Summary must be less than 255 characters.',
          ],
          [{ issuetype: { name: 'Bug' }, summary: 's' }, 'project', 'project is required'],
          [
            { project: { key: 'NOPE' }, issuetype: { name: 'Bug' }, summary: 's' },
            'project',
            'valid project is required',
          ],
          [{ project: { key: 'DEMO' }, summary: 's' }, 'issuetype', 'issue type is required'],
          [
            { project: { key: 'DEMO' }, issuetype: { name: 'Epic Saga' }, summary: 's' },
            'issuetype',
            'valid issue type is required',
          ],
          [
            { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary: 's', labels: ['two words'] },
            'labels',
            "The label 'two words' contains spaces which is invalid.",
          ],
          [
            { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary: 's', priority: { name: 'High' } },
            'priority',
            "Field 'priority' cannot be set. It is not on the appropriate screen, or unknown.",
          ],
        ];
        for (const [fields, field, message] of cases) {
          const r = await create(fields);
          expectJiraError(r, 400);
          expect(r.json.errors, field).toEqual({ [field]: message });
        }
        const noFields = await call(emu(), 'POST', `${API}/issue`, { body: { summary: 'x' } });
        expectJiraError(noFields, 400);
      });

      it('answers 404 for an unknown issue', async () => {
        for (const ref of ['DEMO-999', '99999', 'NOPE-1']) {
          const r = await call(emu(), 'GET', `${API}/issue/${ref}`);
          expectJiraError(r, 404);
          expect(r.json.errorMessages).toEqual(['Issue does not exist or you do not have permission to see it.']);
        }
      });
    });

    describe('transitions', () => {
      it('offers transitions from the current status; closing resolves, reopening clears', async () => {
        const key = (await create({ project: { key: 'DEMO' }, issuetype: { name: 'Task' }, summary: 'flow' })).json
          .key as string;
        const offered = async () => {
          const r = await call(emu(), 'GET', `${API}/issue/${key}/transitions`);
          expect(r.status).toBe(200);
          return expectShape('jira.transitions', variant, r.json).transitions as { id: string; name: string }[];
        };
        const status = async () => (await call(emu(), 'GET', `${API}/issue/${key}`)).json.fields;
        const go = (id: string | number, extra: Record<string, unknown> = {}) =>
          call(emu(), 'POST', `${API}/issue/${key}/transitions`, { body: { transition: { id }, ...extra } });

        expect((await offered()).map((t) => t.id)).toEqual(['11', '21']);
        const progress = await go('11');
        expect(progress.status).toBe(204);
        expect(progress.text).toBe('');
        expect((await status()).status.name).toBe('In Progress');
        expect((await offered()).map((t) => t.name)).toEqual(['Done']);

        expect((await go(21)).status).toBe(204);
        const done = await status();
        expect(done.status).toMatchObject({ name: 'Done', statusCategory: { key: 'done' } });
        expect(done.resolution).toMatchObject({ name: 'Done', id: '10000' });
        expect(done.resolutiondate).toMatch(/\+0000$/);
        expect((await offered()).map((t) => t.id)).toEqual(['31']);

        const wrong = await go('11');
        expectJiraError(wrong, 400);
        expect(wrong.json.errorMessages).toEqual(["Transition id '11' is not valid for this issue."]);

        expect((await go('31')).status).toBe(204);
        const reopened = await status();
        expect(reopened.status.name).toBe('Reopened');
        expect(reopened.resolution).toBeNull();

        // A resolving transition takes a resolution; another one cannot set it.
        expect((await go('21', { fields: { resolution: { name: "won't fix" } } })).status).toBe(204);
        expect((await status()).resolution.name).toBe("Won't Fix");
        await go('31');
        const notOnScreen = await go('11', { fields: { resolution: { name: 'Done' } } });
        expectJiraError(notOnScreen, 400);
        expect(notOnScreen.json.errors).toHaveProperty('resolution');
        const unknownResolution = await go('21', { fields: { resolution: { name: 'Nah' } } });
        expectJiraError(unknownResolution, 400);
        const only = await call(emu(), 'GET', `${API}/issue/${key}/transitions`, { query: { transitionId: '21' } });
        expect(only.json.transitions.map((t: { id: string }) => t.id)).toEqual(['21']);
      });

      it('answers 404 for an unknown issue and 400 for a body without a transition', async () => {
        expectJiraError(await call(emu(), 'GET', `${API}/issue/DEMO-999/transitions`), 404);
        expectJiraError(
          await call(emu(), 'POST', `${API}/issue/DEMO-999/transitions`, { body: { transition: { id: '11' } } }),
          404,
        );
        expectJiraError(await call(emu(), 'POST', `${API}/issue/DEMO-2/transitions`, { body: {} }), 400);
      });
    });

    describe('search', () => {
      it('filters by project, issuetype (quoted or not), status, summary ~, labels and key, joined by AND', async () => {
        await create({
          project: { key: 'DEMO' },
          issuetype: { name: 'Bug' },
          summary: 'Search bug LOGIN',
          labels: ['s1'],
        });
        const all = await search('project = DEMO');
        expect(all.status).toBe(200);
        const parsed = expectShape('jira.search', variant, all.json);
        expect(parsed.total).toBe(emu().store.issues.size);
        expect(parsed).toMatchObject({ startAt: 0, maxResults: 50 });

        const cases = await search('project = demo AND issuetype = "Test Case"');
        expect(cases.json.issues.length).toBeGreaterThanOrEqual(6);
        for (const i of cases.json.issues) expect(i.fields.issuetype.name).toBe('Test Case');
        const unquoted = await search("issuetype = 'test case' and project = DEMO");
        expect(unquoted.json.total).toBe(cases.json.total);

        const login = await search('summary ~ "log" AND project = DEMO');
        const summaries = login.json.issues.map((i: { fields: { summary: string } }) => i.fields.summary);
        expect(summaries).toContain('User logs in with valid credentials');
        expect(summaries).toContain('Search bug LOGIN');
        for (const s of summaries) expect(s.toLowerCase()).toContain('log');

        const labelled = await search('labels = s1');
        expect(labelled.json.issues.map((i: { fields: { summary: string } }) => i.fields.summary)).toEqual([
          'Search bug LOGIN',
        ]);
        expect((await search('key = DEMO-2')).json.issues.map((i: { key: string }) => i.key)).toEqual(['DEMO-2']);
        expect((await search('key in (DEMO-2, "DEMO-3")')).json.total).toBe(2);
        expect((await search('issuetype not in (Bug, "Test Case", "Test Plan")')).json.issues.length).toBeGreaterThan(
          0,
        );
        expect((await search('summary !~ log AND issuetype = Requirement')).json.total).toBe(3);
      });

      it('filters by status (= and !=) and resolution', async () => {
        const key = (await create({ project: { key: 'DEMO' }, issuetype: { name: 'Task' }, summary: 'to be done' }))
          .json.key;
        await call(emu(), 'POST', `${API}/issue/${key}/transitions`, { body: { transition: { id: '21' } } });
        const done = await search('status = Done');
        expect(done.json.issues.map((i: { key: string }) => i.key)).toContain(key);
        const open = await search('project = DEMO AND status != Done');
        expect(open.json.issues.map((i: { key: string }) => i.key)).not.toContain(key);
        expect(open.json.total + done.json.total).toBe((await search('')).json.total);
        expect((await search('resolution = Unresolved')).json.total).toBe(open.json.total);
        expect((await search('status = "in progress"')).status).toBe(200);
      });

      it('orders by created (DESC, ASC) and pages with startAt and maxResults', async () => {
        const desc = await search('project = DEMO ORDER BY created DESC');
        const keys = desc.json.issues.map((i: { id: string }) => Number(i.id));
        expect(keys).toEqual([...keys].sort((a, b) => b - a));
        const asc = await search('project = DEMO order by created asc, key asc');
        expect(asc.json.issues.map((i: { id: string }) => Number(i.id))).toEqual([...keys].reverse());
        const page = await search('project = DEMO ORDER BY created ASC', { startAt: 2, maxResults: 3 });
        expect(page.json).toMatchObject({ startAt: 2, maxResults: 3, total: asc.json.total });
        expect(page.json.issues.map((i: { key: string }) => i.key)).toEqual(
          asc.json.issues.slice(2, 5).map((i: { key: string }) => i.key),
        );
        const capped = await search('', { maxResults: 5000 });
        expect(capped.json.maxResults).toBe(1000);
        const fields = await search('key = DEMO-1', { fields: 'summary' });
        expect(Object.keys(fields.json.issues[0].fields)).toEqual(['summary']);
      });

      it('answers 400 with a clear message for JQL it cannot parse or values that do not exist', async () => {
        const cases: [string, RegExp][] = [
          ['project =', /Expecting a value but got the end of the query/],
          ['project DEMO', /Expecting operator but got 'DEMO'/],
          ['foo = bar', /Field 'foo' does not exist/],
          ['project = NOPE', /The value 'NOPE' does not exist for the field 'project'/],
          ['issuetype = Saga', /The value 'Saga' does not exist for the field 'issuetype'/],
          ['status = Sleeping', /The value 'Sleeping' does not exist for the field 'status'/],
          ['summary = "x"', /The operator '=' is not supported by the 'summary' field/],
          ['project = DEMO OR project = X', /OR inside parentheses only/],
          ['summary ~ "unclosed', /not closed/],
          ['project = DEMO ORDER created', /Expecting 'by'/],
          ['project = DEMO ORDER BY priority', /Expecting a sort field/],
          ['key in (DEMO-1', /Expecting ',' or '\)'/],
          ['project = DEMO extra', /Expecting 'AND' or 'ORDER BY' but got 'extra' \(line 1, character 16\)/],
        ];
        for (const [jql, message] of cases) {
          const r = await search(jql);
          expectJiraError(r, 400);
          expect(r.json.errorMessages[0], jql).toMatch(message);
        }
        expectJiraError(await search('', { startAt: -1 }), 400);
      });
    });
  });
}
