import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../src/server.js';
import { DATA_FILE } from '../src/store/persist.js';
import { type CallOptions, call, expectShape, useEmulator } from './helpers.js';

/**
 * The three code hosts the emulator stands in for: Bitbucket Data Center's Code Insights and build status, GitLab's
 * merge-request notes and GitHub's pull-request comments, over the wire with each host's authentication, rules and
 * error shapes.
 */

const TOKEN = 'casebridge-dev-token';
const BEARER = `Bearer ${TOKEN}`;
const COMMIT = 'a'.repeat(40);
const INSIGHTS = '/rest/insights/latest/projects/DEMO/repos/shop';
const reportPath = (commit = COMMIT, key = 'casebridge') => `${INSIGHTS}/commits/${commit}/reports/${key}`;

const REPORT = {
  title: 'casebridge: 3 failed of 10',
  details: 'New failures: 2',
  result: 'FAIL',
  reporter: 'casebridge',
  link: 'http://jira.example.test/browse/DEMO-1?cycle=7',
  data: [
    { title: 'Passed', type: 'NUMBER', value: 7 },
    { title: 'Pass rate', type: 'PERCENTAGE', value: 70 },
    { title: 'Duration', type: 'DURATION', value: 83_000 },
    { title: 'Cycle', type: 'LINK', value: { linktext: 'Nightly 42', href: 'http://jira.example.test/c/7' } },
    { title: 'Flaky', type: 'BOOLEAN', value: false },
    { title: 'Verdict', type: 'TEXT', value: 'FAIL' },
  ],
};

const annotation = (n: number, extra: Record<string, unknown> = {}) => ({
  message: `failure ${n}`,
  severity: 'HIGH',
  path: 'tests/checkout.spec.ts',
  line: n,
  type: 'BUG',
  externalId: `DEMO-${n}`,
  ...extra,
});

describe('Bitbucket Data Center: Code Insights and build status', () => {
  const emu = useEmulator();
  const bb = (method: string, path: string, o: CallOptions = {}) => call(emu(), method, path, { auth: BEARER, ...o });

  it('creates, reads, lists and replaces a report', async () => {
    const put = await bb('PUT', reportPath(), { body: REPORT });
    expect(put.status).toBe(200);
    const report = expectShape('bitbucket.putReport', 'id', put.json);
    expect(report).toMatchObject({ key: 'casebridge', title: REPORT.title, result: 'FAIL', data: REPORT.data });
    expect(report.createdDate).toBeTypeOf('number');

    const got = await bb('GET', reportPath());
    expect(got.status).toBe(200);
    expect(got.json).toEqual(put.json);

    // The hash in upper case names the same commit.
    const list = await bb('GET', `${INSIGHTS}/commits/${COMMIT.toUpperCase()}/reports`);
    expect(list.status).toBe(200);
    expectShape('bitbucket.reports', 'id', list.json);
    expect(list.json).toMatchObject({ size: 1, isLastPage: true, start: 0, limit: 25 });
    expect(list.json.values.map((r: { key: string }) => r.key)).toEqual(['casebridge']);

    const again = await bb('PUT', reportPath(), { body: { title: 'casebridge: all passed', result: 'PASS' } });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ title: 'casebridge: all passed', result: 'PASS', data: [] });
    expect(again.json.details).toBeUndefined();
    const listed = await bb('GET', `${INSIGHTS}/commits/${COMMIT}/reports`);
    expect(listed.json.size).toBe(1);
  });

  it('answers 401 without a token and with an unknown one, in Bitbucket error shape', async () => {
    const none = await bb('GET', reportPath(), { auth: null });
    expect(none.status).toBe(401);
    expect(none.json).toEqual({
      errors: [
        {
          context: null,
          message: 'You are not permitted to access this resource',
          exceptionName: 'com.atlassian.bitbucket.AuthorisationException',
        },
      ],
    });
    const wrong = await bb('PUT', reportPath(), { auth: 'Bearer nope', body: REPORT });
    expect(wrong.status).toBe(401);
    expect(wrong.json.errors[0].message).toMatch(/Authentication failed/);
    // A password is no token.
    const basic = await bb('GET', reportPath(), { auth: `Basic ${Buffer.from('admin:admin').toString('base64')}` });
    expect(basic.status).toBe(401);
    const status = await bb('POST', `/rest/build-status/1.0/commits/${COMMIT}`, { auth: null, body: {} });
    expect(status.status).toBe(401);
  });

  it('answers 404 for a repository it does not hold and for a missing report', async () => {
    const repo = await bb('PUT', `/rest/insights/latest/projects/DEMO/repos/nope/commits/${COMMIT}/reports/x`, {
      body: REPORT,
    });
    expect(repo.status).toBe(404);
    expect(repo.json.errors[0]).toEqual({
      context: null,
      message: 'Repository DEMO/nope does not exist.',
      exceptionName: 'com.atlassian.bitbucket.repository.NoSuchRepositoryException',
    });
    // Project keys and slugs are found whatever their case.
    expect((await bb('GET', `/rest/insights/latest/projects/demo/repos/SHOP/commits/${COMMIT}/reports`)).status).toBe(
      200,
    );
    const report = await bb('GET', reportPath(COMMIT, 'missing'));
    expect(report.status).toBe(404);
    expect(report.json.errors[0].message).toContain("No report with key 'missing'");
    const annotations = await bb('POST', `${reportPath(COMMIT, 'missing')}/annotations`, {
      body: { annotations: [annotation(1)] },
    });
    expect(annotations.status).toBe(404);
  });

  it('refuses a short hash, a seventh data field and an over-long title with 400', async () => {
    const short = await bb('PUT', reportPath('abc1234'), { body: REPORT });
    expect(short.status).toBe(400);
    expect(short.json.errors[0].context).toBe('commitId');
    expect(short.json.errors[0].message).toContain('full 40-character commit hash');
    const seventh = await bb('PUT', reportPath(), {
      body: { ...REPORT, data: [...REPORT.data, { title: 'Extra', type: 'NUMBER', value: 1 }] },
    });
    expect(seventh.status).toBe(400);
    expect(seventh.json.errors[0].context).toBe('data');
    expect(seventh.json.errors[0].message).toContain('at most 6 data fields');
    const title = await bb('PUT', reportPath(), { body: { ...REPORT, title: 'x'.repeat(451) } });
    expect(title.status).toBe(400);
    expect(title.json.errors[0].context).toBe('title');
    const percentage = await bb('PUT', reportPath(), {
      body: { ...REPORT, data: [{ title: 'Rate', type: 'PERCENTAGE', value: 101 }] },
    });
    expect(percentage.status).toBe(400);
    const build = await bb('POST', '/rest/build-status/1.0/commits/abc1234', {
      body: { state: 'FAILED', key: 'casebridge', url: 'http://x.test/' },
    });
    expect(build.status).toBe(400);
    expect(build.json.errors[0].context).toBe('commitId');
  });

  it('adds, lists and deletes annotations; a re-run deletes before it posts again', async () => {
    const commit = 'b'.repeat(40);
    expect((await bb('PUT', reportPath(commit), { body: REPORT })).status).toBe(200);
    const add = await bb('POST', `${reportPath(commit)}/annotations`, {
      body: { annotations: [annotation(1), annotation(2, { severity: 'LOW', link: 'http://x.test/DEMO-2' })] },
    });
    expect(add.status).toBe(204);
    expect(add.text).toBe('');
    const list = await bb('GET', `${reportPath(commit)}/annotations`);
    expect(list.status).toBe(200);
    expectShape('bitbucket.annotations', 'id', list.json);
    expect(list.json.totalCount).toBe(2);
    expect(list.json.annotations[1]).toEqual({
      reportKey: 'casebridge',
      externalId: 'DEMO-2',
      path: 'tests/checkout.spec.ts',
      line: 2,
      message: 'failure 2',
      severity: 'LOW',
      type: 'BUG',
      link: 'http://x.test/DEMO-2',
    });
    // Not deduplicated: the same annotations posted again are held twice.
    await bb('POST', `${reportPath(commit)}/annotations`, { body: { annotations: [annotation(1)] } });
    expect((await bb('GET', `${reportPath(commit)}/annotations`)).json.totalCount).toBe(3);

    const some = await call(emu(), 'DELETE', `${reportPath(commit)}/annotations?externalId=DEMO-2&externalId=nope`, {
      auth: BEARER,
    });
    expect(some.status).toBe(204);
    expect((await bb('GET', `${reportPath(commit)}/annotations`)).json.totalCount).toBe(2);

    expect((await bb('DELETE', `${reportPath(commit)}/annotations`)).status).toBe(204);
    expect((await bb('GET', `${reportPath(commit)}/annotations`)).json).toEqual({ annotations: [], totalCount: 0 });
    await bb('POST', `${reportPath(commit)}/annotations`, { body: { annotations: [annotation(3)] } });
    const after = await bb('GET', `${reportPath(commit)}/annotations`);
    expect(after.json.annotations.map((a: { externalId: string }) => a.externalId)).toEqual(['DEMO-3']);

    // Deleting the report deletes its annotations.
    expect((await bb('DELETE', reportPath(commit))).status).toBe(204);
    expect((await bb('GET', reportPath(commit))).status).toBe(404);
    expect((await bb('PUT', reportPath(commit), { body: REPORT })).status).toBe(200);
    expect((await bb('GET', `${reportPath(commit)}/annotations`)).json.totalCount).toBe(0);
  });

  it('refuses, whole, annotations that would take a report past 1,000', async () => {
    const commit = 'c'.repeat(40);
    await bb('PUT', reportPath(commit), { body: REPORT });
    const many = (from: number, n: number) => Array.from({ length: n }, (_, i) => annotation(from + i));
    expect(
      (await bb('POST', `${reportPath(commit)}/annotations`, { body: { annotations: many(1, 998) } })).status,
    ).toBe(204);
    const over = await bb('POST', `${reportPath(commit)}/annotations`, { body: { annotations: many(999, 3) } });
    expect(over.status).toBe(400);
    expect(over.json.errors[0].context).toBeNull();
    expect(over.json.errors[0].message).toContain('at most 1000 annotations');
    expect((await bb('GET', `${reportPath(commit)}/annotations`)).json.totalCount).toBe(998);
    expect(
      (await bb('POST', `${reportPath(commit)}/annotations`, { body: { annotations: many(999, 2) } })).status,
    ).toBe(204);
    expect((await bb('GET', `${reportPath(commit)}/annotations`)).json.totalCount).toBe(1000);
  });

  it('refuses an annotation without a message or with an unknown severity', async () => {
    const commit = 'd'.repeat(40);
    await bb('PUT', reportPath(commit), { body: REPORT });
    const noMessage = await bb('POST', `${reportPath(commit)}/annotations`, {
      body: { annotations: [{ severity: 'HIGH' }] },
    });
    expect(noMessage.status).toBe(400);
    expect(noMessage.json.errors[0].context).toBe('annotations.0.message');
    const severity = await bb('POST', `${reportPath(commit)}/annotations`, {
      body: { annotations: [annotation(1, { severity: 'SEVERE' })] },
    });
    expect(severity.status).toBe(400);
    const long = await bb('POST', `${reportPath(commit)}/annotations`, {
      body: { annotations: [annotation(1, { message: 'x'.repeat(2001) })] },
    });
    expect(long.status).toBe(400);
  });

  it("sets a commit's build status; a second one with the same key replaces it", async () => {
    const commit = 'e'.repeat(40);
    const path = `/rest/build-status/1.0/commits/${commit}`;
    const first = await bb('POST', path, {
      body: { state: 'INPROGRESS', key: 'casebridge', name: 'casebridge', url: 'http://jira.test/c/1' },
    });
    expect(first.status).toBe(204);
    await bb('POST', path, { body: { state: 'SUCCESSFUL', key: 'jenkins', url: 'http://ci.test/1' } });
    const replaced = await bb('POST', path, {
      body: { state: 'FAILED', key: 'casebridge', url: 'http://jira.test/c/2', description: '3 failed' },
    });
    expect(replaced.status).toBe(204);
    const list = await bb('GET', path);
    expect(list.status).toBe(200);
    expectShape('bitbucket.buildStatuses', 'id', list.json);
    expect(list.json).toMatchObject({ size: 2, isLastPage: true, start: 0 });
    const casebridge = list.json.values.find((s: { key: string }) => s.key === 'casebridge');
    expect(casebridge).toMatchObject({ state: 'FAILED', url: 'http://jira.test/c/2', description: '3 failed' });
    expect(casebridge.name).toBeUndefined();
    expect(list.json.values[0].key).toBe('casebridge');
    const bad = await bb('POST', path, { body: { state: 'BROKEN', key: 'casebridge', url: 'http://x.test/' } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].context).toBe('state');
    const page = await bb('GET', path, { query: { limit: 1 } });
    expect(page.json).toMatchObject({ size: 1, isLastPage: false, nextPageStart: 1, limit: 1 });
  });
});

describe('GitLab: merge-request notes', () => {
  const emu = useEmulator();
  const gl = (method: string, path: string, o: CallOptions = {}) =>
    call(emu(), method, `/api/v4/projects/${path}`, { auth: null, headers: { 'private-token': TOKEN }, ...o });

  it('creates, lists and edits a note by numeric id and by encoded path', async () => {
    const created = await gl('POST', '1/merge_requests/1/notes', { body: { body: 'casebridge report <!-- x -->' } });
    expect(created.status).toBe(201);
    const note = expectShape('gitlab.createNote', 'id', created.json);
    expect(note).toMatchObject({
      body: 'casebridge report <!-- x -->',
      author: { username: 'admin' },
      system: false,
      noteable_type: 'MergeRequest',
      noteable_iid: 1,
    });
    const second = await gl('POST', 'demo%2Fshop/merge_requests/1/notes', {
      auth: BEARER,
      headers: {},
      body: { body: 'second' },
    });
    expect(second.status).toBe(201);

    const list = await gl('GET', 'demo%2Fshop/merge_requests/1/notes');
    expect(list.status).toBe(200);
    expectShape('gitlab.notes', 'id', list.json);
    // Newest first unless asked otherwise.
    expect(list.json.map((n: { body: string }) => n.body)).toEqual(['second', 'casebridge report <!-- x -->']);
    expect(list.headers.get('x-total')).toBe('2');
    const asc = await gl('GET', '1/merge_requests/1/notes', { query: { sort: 'asc', per_page: 1 } });
    expect(asc.json.map((n: { body: string }) => n.body)).toEqual(['casebridge report <!-- x -->']);
    expect(asc.headers.get('x-next-page')).toBe('2');
    const page2 = await gl('GET', '1/merge_requests/1/notes', { query: { sort: 'asc', per_page: 1, page: 2 } });
    expect(page2.json.map((n: { body: string }) => n.body)).toEqual(['second']);
    expect(page2.headers.get('x-next-page')).toBe('');

    const edited = await gl('PUT', `demo%2Fshop/merge_requests/1/notes/${note.id}`, { body: { body: 'edited' } });
    expect(edited.status).toBe(200);
    expect(edited.json).toMatchObject({ id: note.id, body: 'edited' });
    const byId = await gl('PUT', `1/merge_requests/1/notes/${note.id}`, { body: { body: 'edited again' } });
    expect(byId.json.body).toBe('edited again');
    const after = await gl('GET', '1/merge_requests/1/notes');
    expect(after.json).toHaveLength(2);
  });

  it('answers GitLab errors: 401, 404 project, merge request and note, 400 without a body', async () => {
    const none = await gl('GET', '1/merge_requests/1/notes', { headers: {} });
    expect(none.status).toBe(401);
    expect(none.json).toEqual({ message: '401 Unauthorized' });
    expect((await gl('GET', '1/merge_requests/1/notes', { headers: { 'private-token': 'nope' } })).status).toBe(401);
    const project = await gl('POST', 'demo%2Fnope/merge_requests/1/notes', { body: { body: 'x' } });
    expect(project.status).toBe(404);
    expect(project.json).toEqual({ message: '404 Project Not Found' });
    expect((await gl('POST', '2/merge_requests/1/notes', { body: { body: 'x' } })).json).toEqual({
      message: '404 Project Not Found',
    });
    const mr = await gl('POST', '1/merge_requests/9/notes', { body: { body: 'x' } });
    expect(mr.status).toBe(404);
    expect((await gl('PUT', '1/merge_requests/1/notes/999', { body: { body: 'x' } })).json).toEqual({
      message: '404 Note Not Found',
    });
    const blank = await gl('POST', '1/merge_requests/1/notes', { body: {} });
    expect(blank.status).toBe(400);
    expect(blank.json.error).toContain('body');
  });
});

describe('GitHub: pull-request comments', () => {
  const emu = useEmulator();
  const API = '/api/v3';
  const gh = (method: string, path: string, o: CallOptions = {}) =>
    call(emu(), method, `${API}/repos/demo/shop/${path}`, { auth: `token ${TOKEN}`, ...o });

  it('creates, lists and edits a comment, under /api/v3 and at the root', async () => {
    const created = await gh('POST', 'issues/1/comments', { body: { body: 'casebridge <!-- casebridge -->' } });
    expect(created.status).toBe(201);
    const comment = expectShape('github.createComment', 'id', created.json);
    expect(comment).toMatchObject({ body: 'casebridge <!-- casebridge -->', user: { login: 'admin' } });
    expect(comment.html_url).toBe(`${emu().url}/demo/shop/pull/1#issuecomment-${comment.id}`);
    expect(comment.url).toBe(`${emu().url}${API}/repos/demo/shop/issues/comments/${comment.id}`);
    expect(comment.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const root = await call(emu(), 'POST', '/repos/demo/shop/issues/1/comments', {
      auth: BEARER,
      body: { body: 'second' },
    });
    expect(root.status).toBe(201);

    const list = await gh('GET', 'issues/1/comments');
    expect(list.status).toBe(200);
    expectShape('github.comments', 'id', list.json);
    expect(list.json.map((c: { body: string }) => c.body)).toEqual(['casebridge <!-- casebridge -->', 'second']);
    expect(list.headers.get('link')).toBeNull();
    const first = await gh('GET', 'issues/1/comments', { query: { per_page: 1 } });
    expect(first.json).toHaveLength(1);
    expect(first.headers.get('link')).toBe(
      `<${emu().url}${API}/repos/demo/shop/issues/1/comments?per_page=1&page=2>; rel="next", ` +
        `<${emu().url}${API}/repos/demo/shop/issues/1/comments?per_page=1&page=2>; rel="last"`,
    );

    const edited = await gh('PATCH', `issues/comments/${comment.id}`, { body: { body: 'edited' } });
    expect(edited.status).toBe(200);
    expect(edited.json).toMatchObject({ id: comment.id, body: 'edited' });
    expect((await gh('GET', 'issues/1/comments')).json[0].body).toBe('edited');
  });

  it('refuses a body over 65,536 characters with 422 and a blank one', async () => {
    const created = await gh('POST', 'issues/1/comments', { body: { body: 'x'.repeat(65_536) } });
    expect(created.status).toBe(201);
    const long = await gh('PATCH', `issues/comments/${created.json.id}`, { body: { body: 'x'.repeat(65_537) } });
    expect(long.status).toBe(422);
    expect(long.json).toMatchObject({
      message: 'Validation Failed',
      errors: [{ resource: 'IssueComment', code: 'custom', field: 'body' }],
    });
    expect(long.json.errors[0].message).toContain('maximum is 65536 characters');
    expect((await gh('POST', 'issues/1/comments', { body: { body: 'x'.repeat(65_537) } })).status).toBe(422);
    expect((await gh('POST', 'issues/1/comments', { body: { body: '' } })).status).toBe(422);
  });

  it('answers GitHub errors: 401 without or with a bad token, 404 for a repository, a pull request, a comment', async () => {
    const none = await gh('GET', 'issues/1/comments', { auth: null });
    expect(none.status).toBe(401);
    expect(none.json.message).toBe('Requires authentication');
    const bad = await gh('GET', 'issues/1/comments', { auth: 'token nope' });
    expect(bad.status).toBe(401);
    expect(bad.json).toMatchObject({ message: 'Bad credentials', documentation_url: expect.any(String) });
    const repo = await call(emu(), 'GET', `${API}/repos/demo/nope/issues/1/comments`, { auth: BEARER });
    expect(repo.status).toBe(404);
    expect(repo.json).toMatchObject({ message: 'Not Found', documentation_url: expect.any(String) });
    expect((await gh('POST', 'issues/7/comments', { body: { body: 'x' } })).status).toBe(404);
    expect((await gh('PATCH', 'issues/comments/99999', { body: { body: 'x' } })).status).toBe(404);
  });
});

describe('code hosts with a data folder', () => {
  it('keep reports, annotations, build statuses and comments across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'casebridge-codehosts-'));
    try {
      const first = await startEmulator({ port: 0, dataDir: dir });
      const o = { auth: BEARER };
      await call(first, 'PUT', reportPath(), { ...o, body: REPORT });
      await call(first, 'POST', `${reportPath()}/annotations`, { ...o, body: { annotations: [annotation(1)] } });
      await call(first, 'POST', `/rest/build-status/1.0/commits/${COMMIT}`, {
        ...o,
        body: { state: 'FAILED', key: 'casebridge', url: 'http://x.test/' },
      });
      await call(first, 'POST', '/api/v4/projects/1/merge_requests/1/notes', { ...o, body: { body: 'note' } });
      await call(first, 'POST', '/repos/demo/shop/issues/1/comments', { ...o, body: { body: 'comment' } });
      await first.close();

      // A folder written before the emulator served the code hosts: no repositories in it.
      const file = join(dir, DATA_FILE);
      const lines = readFileSync(file, 'utf8').split('\n');
      const kept = lines.map((line, i) => {
        if (i === 0 || line === '') return line;
        const changes = (JSON.parse(line) as { table?: string }[]).filter((c) => c.table !== 'codeRepos');
        return JSON.stringify(changes);
      });
      writeFileSync(file, kept.join('\n'));

      const second = await startEmulator({ port: 0, dataDir: dir });
      try {
        expect((await call(second, 'GET', reportPath(), o)).json.title).toBe(REPORT.title);
        expect((await call(second, 'GET', `${reportPath()}/annotations`, o)).json.totalCount).toBe(1);
        expect((await call(second, 'GET', `/rest/build-status/1.0/commits/${COMMIT}`, o)).json.size).toBe(1);
        const notes = await call(second, 'GET', '/api/v4/projects/demo%2Fshop/merge_requests/1/notes', o);
        expect(notes.json.map((n: { body: string }) => n.body)).toEqual(['note']);
        const comments = await call(second, 'GET', '/api/v3/repos/demo/shop/issues/1/comments', o);
        expect(comments.json.map((c: { body: string }) => c.body)).toEqual(['comment']);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
