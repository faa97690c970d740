import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { targetsOf } from '../../src/engine/publish/publish.js';
import { COMMENT_ROWS, commentMarkdown, commentMarker, INSIGHTS, insights } from '../../src/engine/publish/render.js';
import { type CycleReport, type ReportFailure, worstFirst } from '../../src/engine/publish/report.js';

const failure = (n: number, classification: ReportFailure['classification'], more: Partial<ReportFailure> = {}) =>
  ({
    key: `DEMO-${n}`,
    title: `test ${n}`,
    classification,
    defects: [],
    run: n,
    url: `http://jira/browse/PLAN-1?cycle=3&run=${n}#run-${n}`,
    link: `http://jira/browse/PLAN-1?cycle=3&run=${n}#run-${n}`,
    file: 'web/tests/cart.test.ts',
    line: 10 + n,
    errorLines: ['expect(received).toBe(expected) // Object.is equality', 'Expected: 3', 'Received: 2'],
    ...more,
  }) as ReportFailure;

const report = (failures: ReportFailure[], pass = false): CycleReport => ({
  plan: 'PLAN-1',
  cycle: { id: 3, name: 'CI 42', status: 'Active', url: 'http://jira/browse/PLAN-1?cycle=3' },
  verdict: {
    pass,
    rules: [{ rule: 'new failures ≤ 0', figure: `${failures.length} new`, pass }],
    passRate: 90,
    waived: 0,
  },
  tally: { total: 40, passed: 36, failed: failures.length, notRun: 4 - failures.length },
  classes: { new: 1, known: 1, regression: 1, flaky: 1, quarantined: 0, unclassified: 0 },
  failures: worstFirst(failures),
});

describe('the Code Insights report', () => {
  const rep = report([
    failure(1, 'known', { defects: ['DEMO-90'], link: 'http://jira/browse/DEMO-90' }),
    failure(2, 'flaky'),
    failure(3, 'new'),
    failure(4, 'regression'),
  ]);

  it("carries the gate's verdict, six data fields and the cycle's link", () => {
    const { report: r } = insights(rep);
    expect(r.result).toBe('FAIL');
    expect(r.link).toBe(rep.cycle.url);
    expect(r.data).toHaveLength(6);
    expect(r.data.map((d) => [d.title, d.type])).toEqual([
      ['Passed', 'NUMBER'],
      ['Failed', 'NUMBER'],
      ['New and regressions', 'NUMBER'],
      ['Pass rate', 'PERCENTAGE'],
      ['Not run', 'NUMBER'],
      ['Cycle', 'LINK'],
    ]);
    expect(r.details).toContain('36 passed, 4 failed (1 regression, 1 new, 1 flaky, 1 known) of 40 runs');
    expect(insights({ ...rep, durationMs: 61_500 }).report.data[4]).toEqual({
      title: 'Duration',
      type: 'DURATION',
      value: 61_500,
    });
  });

  it('annotates each failure at its file and line, worst first, by severity', () => {
    const { annotations } = insights(rep);
    expect(annotations.map((a) => [a.externalId, a.severity, a.line])).toEqual([
      ['DEMO-4', 'HIGH', 14],
      ['DEMO-3', 'HIGH', 13],
      ['DEMO-2', 'LOW', 12],
      ['DEMO-1', 'MEDIUM', 11],
    ]);
    const known = annotations.find((a) => a.externalId === 'DEMO-1');
    expect(known).toMatchObject({ path: 'web/tests/cart.test.ts', type: 'BUG', link: 'http://jira/browse/DEMO-90' });
    expect(known?.message).toBe(
      'known: test 1 (DEMO-90)\nexpect(received).toBe(expected) // Object.is equality\nExpected: 3\nReceived: 2',
    );
  });

  it("keeps the service's limits: 1,000 annotations (the rest counted), 2,000-character messages, 450 for titles", () => {
    const many = Array.from({ length: 1_200 }, (_, i) =>
      failure(i + 1, 'new', { errorLines: ['x'.repeat(3_000)], title: 'y'.repeat(600) }),
    );
    const { report: r, annotations } = insights({ ...report(many), cycle: { ...rep.cycle, name: 'z'.repeat(600) } });
    expect(annotations).toHaveLength(INSIGHTS.annotations);
    expect(Math.max(...annotations.map((a) => a.message.length))).toBe(2_000);
    expect(r.title.length).toBe(450);
    expect(r.details).toContain('200 failure(s) not annotated: a report holds at most 1000');
  });
});

describe('the pull-request comment', () => {
  it('has its marker, the verdict, the counts and a row per failure, worst first', () => {
    const md = commentMarkdown(report([failure(1, 'known'), failure(2, 'new')]), 'casebridge');
    expect(md.startsWith(commentMarker('casebridge'))).toBe(true);
    expect(md).toContain('❌ FAIL');
    expect(md).toContain('[CI 42](http://jira/browse/PLAN-1?cycle=3)');
    const rows = md.split('\n').filter((l) => l.startsWith('| DEMO-'));
    expect(rows.map((r) => r.split(' ')[1])).toEqual(['DEMO-2', 'DEMO-1']);
    expect(rows[0]).toContain('`web/tests/cart.test.ts:12`');
    expect(rows[0]).toContain('`Expected: 3`<br>`Received: 2`');
  });

  it('shows at most 50 rows, then how many more with the link', () => {
    const md = commentMarkdown(report(Array.from({ length: 70 }, (_, i) => failure(i + 1, 'new'))), 'k');
    expect(md.split('\n').filter((l) => l.startsWith('| DEMO-'))).toHaveLength(COMMENT_ROWS);
    expect(md).toContain('and 20 more: [the cycle](http://jira/browse/PLAN-1?cycle=3)');
  });
});

describe('the targets', () => {
  it('are what the configuration and the CI name, each only when whole', () => {
    const event = join(tmpdir(), `cb-event-${process.pid}.json`);
    writeFileSync(event, JSON.stringify({ pull_request: { number: 7 } }));
    const t = targetsOf(
      {
        bitbucket: { url: 'https://bb', token: 't', repo: 'DEMO/shop', reportKey: 'casebridge' },
        gitlab: { token: 'g' },
      },
      {
        CI_SERVER_URL: 'https://gl',
        CI_PROJECT_ID: '12',
        CI_MERGE_REQUEST_IID: '3',
        GITHUB_API_URL: 'https://api.github.com',
        GITHUB_REPOSITORY: 'demo/shop',
        GITHUB_EVENT_PATH: event,
        GITHUB_TOKEN: 'h',
      },
    );
    expect(t.bitbucket).toMatchObject({ project: 'DEMO', slug: 'shop', reportKey: 'casebridge' });
    expect(t.gitlab).toEqual({ url: 'https://gl', token: 'g', project: '12', mergeRequest: 3 });
    expect(t.github).toEqual({
      url: 'https://api.github.com',
      token: 'h',
      owner: 'demo',
      repo: 'shop',
      pullRequest: 7,
    });
    // A push pipeline (no merge request, no pull request) has no GitLab or GitHub target.
    const push = targetsOf({ gitlab: { token: 'g' } }, { CI_SERVER_URL: 'https://gl', CI_PROJECT_ID: '12' });
    expect(push.gitlab).toBeUndefined();
    expect(
      targetsOf(
        {},
        { GITHUB_REF: 'refs/pull/9/merge', GITHUB_TOKEN: 'h', GITHUB_API_URL: 'https://a', GITHUB_REPOSITORY: 'o/r' },
      ).github?.pullRequest,
    ).toBe(9);
  });
});
