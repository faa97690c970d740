import { beforeAll, describe, expect, it } from 'vitest';
import { call, useEmulator } from '../helpers.js';
import { page, postReview, REVIEW_COMMIT } from './fixtures.js';

/**
 * The code hosts' pages of the web UI: a Bitbucket commit as its pull request shows it (build statuses, the Code
 * Insights report with its data fields rendered by type, the annotations by file and line), a GitLab merge request's
 * notes and a GitHub pull request's comments, the home page's list of them, escaping and 404s.
 */

const BEARER = 'Bearer casebridge-dev-token';

describe('code hosts in the web UI (loopback)', () => {
  const emu = useEmulator();
  let ids: { noteId: number; commentId: number };
  const get = (path: string) => page(emu().url, path);

  beforeAll(async () => {
    ids = await postReview(emu());
  });

  it('shows a commit: build status, the report with its data by type, annotations by file and line', async () => {
    const r = await get(`/projects/DEMO/repos/shop/commits/${REVIEW_COMMIT}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const t = r.text;
    expect(t).toContain('<h1>Commit <code>0123456789a</code></h1>');
    // The build status: state as text, its link.
    expect(t).toMatch(/<th scope="row">casebridge tests<\/th>\s*<td><span class="status"[^>]*>FAILED<\/span>/);
    expect(t).toContain('<a href="http://jira.example.test/c/7">http://jira.example.test/c/7</a>');
    // The report: its title escaped, result, details, link.
    expect(t).toContain('casebridge: FAIL &lt;b&gt;2 new&lt;/b&gt;');
    expect(t).not.toContain('<b>2 new</b>');
    expect(t).toMatch(/<dt>Result<\/dt><dd>FAIL<\/dd>/);
    expect(t).toContain('Nightly 42: 2 new failures, 1 flaky.');
    expect(t).toContain('<a href="http://jira.example.test/browse/DEMO-1?cycle=7">');
    // Data fields by type.
    expect(t).toContain('<dt>Failed</dt><dd>3</dd>');
    expect(t).toContain('<dt>Pass rate</dt><dd>62.5%</dd>');
    expect(t).toContain('<dt>Duration</dt><dd>3 min 20 s</dd>');
    expect(t).toContain('<dt>Cycle</dt><dd><a href="http://jira.example.test/c/7">Nightly 42</a></dd>');
    expect(t).toContain('<dt>Quarantined</dt><dd>Yes</dd>');
    // A link of another scheme is shown, never followed.
    expect(t).not.toContain('href="javascript:');
    expect(t).toContain('<code>javascript:alert(1)</code>');
    // Annotations grouped by file, sorted by line, escaped.
    const checkout = t.indexOf('<code>tests/checkout.spec.ts</code>');
    const login = t.indexOf('<code>tests/login.spec.ts</code>');
    expect(checkout).toBeGreaterThan(0);
    expect(login).toBeGreaterThan(checkout);
    const checkoutPart = t.slice(checkout, login);
    expect(checkoutPart.indexOf('<th scope="row">12</th>')).toBeLessThan(
      checkoutPart.indexOf('<th scope="row">42</th>'),
    );
    expect(checkoutPart).toContain('expected &quot;valid&quot;, got &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(t).not.toContain('<script>alert(1)</script>');
    expect(checkoutPart).toMatch(/>HIGH<\/span>/);
    expect(checkoutPart).toContain('DEMO-5');
    expect(checkoutPart).toContain('<a href="http://jira.example.test/browse/DEMO-11">');
    expect(t.slice(login)).toContain('flaky: passed on retry');
  });

  it('shows a merge request with its notes and a pull request with its comments', async () => {
    const mr = await get('/demo/shop/-/merge_requests/1');
    expect(mr.status).toBe(200);
    expect(mr.text).toContain('<h1>Merge request !1</h1>');
    expect(mr.text).toContain(`id="note_${ids.noteId}"`);
    expect(mr.text).toContain('## casebridge: FAIL\n&lt;img src=x onerror=alert(1)&gt;');
    const pr = await get('/demo/shop/pull/1');
    expect(pr.status).toBe(200);
    expect(pr.text).toContain('<h1>Pull request #1</h1>');
    expect(pr.text).toContain(`id="issuecomment-${ids.commentId}"`);
    expect(pr.text).toContain('| test | result |');
    // The comment's html_url is this page.
    const listed = await call(emu(), 'GET', '/api/v3/repos/demo/shop/issues/1/comments', { auth: BEARER });
    expect(listed.json[0].html_url).toBe(`${emu().url}/demo/shop/pull/1#issuecomment-${ids.commentId}`);
  });

  it('lists the commits and the reviews on the home page', async () => {
    const r = await get('/');
    expect(r.text).toContain('<h2 id="code-review">Code review</h2>');
    expect(r.text).toContain(
      `<a href="/projects/DEMO/repos/shop/commits/${REVIEW_COMMIT}"><code>0123456789a</code></a>`,
    );
    expect(r.text).toContain('<a href="/demo/shop/-/merge_requests/1">Merge request !1</a>');
    expect(r.text).toContain('<a href="/demo/shop/pull/1">Pull request #1</a>');
  });

  it('answers 404 for a repository, a short hash or a review it does not hold', async () => {
    for (const path of [
      `/projects/DEMO/repos/nope/commits/${REVIEW_COMMIT}`,
      '/projects/DEMO/repos/shop/commits/0123456',
      '/demo/shop/-/merge_requests/2',
      '/demo/nope/pull/1',
      '/demo/shop/pull/9',
    ]) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
      expect(r.text).toContain('Not found');
    }
    // A held commit with nothing posted yet is an empty page, not a 404.
    const empty = await get(`/projects/DEMO/repos/shop/commits/${'f'.repeat(40)}`);
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('No Code Insights report for this commit.');
  });
});
