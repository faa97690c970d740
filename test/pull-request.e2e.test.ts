import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { closedPort, fixture, playwright, ROOT, run } from './support/runner.js';
import { reporterEnv, TOKEN, useEmulator } from './support/world.js';

/**
 * The pull request shows what the tests did (issue 48): real Jest and Playwright suites, sharded into one cycle,
 * post the cycle's report to Bitbucket Data Center's Code Insights (report, annotations, build status) and to a
 * GitLab merge request; `casebridge publish` posts it for a JUnit import. Read back over the emulator's own routes.
 */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const world = useEmulator({ reset: false });
let emu: RunningEmulator;
beforeAll(() => {
  emu = world();
});

const COMMIT = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
const REPORTS = `/rest/insights/latest/projects/DEMO/repos/shop/commits/${COMMIT}/reports`;

async function get<T>(path: string): Promise<T> {
  const res = await fetch(emu.url + path, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

interface Report {
  key: string;
  result: string;
  data: Array<{ title: string; type: string; value: unknown }>;
}
interface Annotation {
  path?: string;
  line?: number;
  severity: string;
  externalId?: string;
  message: string;
  link?: string;
}
const reports = () => get<{ values: Report[] }>(REPORTS).then((r) => r.values);
const annotations = () =>
  get<{ annotations: Annotation[]; totalCount: number }>(`${REPORTS}/casebridge/annotations`).then(
    (r) => r.annotations,
  );
const statuses = () =>
  get<{ values: Array<{ key: string; state: string; url: string }> }>(`/rest/build-status/1.0/commits/${COMMIT}`).then(
    (r) => r.values,
  );
const notes = () =>
  get<Array<{ id: number; body: string }>>('/api/v4/projects/1/merge_requests/1/notes').then((n) =>
    n.filter((x) => x.body.includes('casebridge-report')),
  );
const field = (r: Report, title: string) => r.data.find((d) => d.title === title)?.value;

/** Bitbucket and GitLab configured as a Jenkins job in a merge-request pipeline would. */
const hosts = (extra: Record<string, string> = {}) => ({
  CASEBRIDGE_BITBUCKET_URL: emu.url,
  CASEBRIDGE_BITBUCKET_TOKEN: TOKEN,
  CASEBRIDGE_BITBUCKET_REPO: 'DEMO/shop',
  GIT_COMMIT: COMMIT,
  CI_SERVER_URL: emu.url,
  CI_PROJECT_ID: '1',
  CI_MERGE_REQUEST_IID: '1',
  CASEBRIDGE_GITLAB_TOKEN: TOKEN,
  ...extra,
});

const cycleEnv = (cycle: string, extra: Record<string, string> = {}) =>
  reporterEnv(emu, { CASEBRIDGE_MODE: 'cycle', CASEBRIDGE_TEST_PLAN: 'DEMO-1', CASEBRIDGE_CYCLE: cycle, ...extra });

const CART = `
test('DEMO-2 adds to the cart', () => {});
test('DEMO-3 counts the items', () => {
  expect(1 + 1).toBe(3);
});
`;
const PAY = `
test('DEMO-4 pays', () => {});
test('DEMO-5 prints the receipt', () => {
  throw new Error('the printer is offline');
});
`;

describe('a Jest suite in two shards, Bitbucket and GitLab configured', () => {
  let dir = '';
  /** Each shard posts the cycle as it is after its own results: the union so far. */
  const shards = async (cycle: string, results: Array<'FAIL' | 'PASS'>) => {
    for (const [i, shard] of ['1/2', '2/2'].entries()) {
      const result = results[i];
      const out = await jest(dir, ['--runInBand', `--shard=${shard}`], cycleEnv(cycle, hosts()));
      expect(out.code, out.stdout + out.stderr).toBe(1);
      expect(out.stdout + out.stderr).not.toContain(TOKEN);
      const state = result === 'FAIL' ? 'FAILED' : 'SUCCESSFUL';
      expect(out.stderr).toContain(`Bitbucket: report ${result} with`);
      expect(out.stderr).toContain(`annotation(s) and build status ${state}`);
      expect(out.stderr).toMatch(/GitLab: the note on merge request !1 of project 1 (added|edited)/);
    }
  };

  beforeAll(async () => {
    dir = fixture('pr-jest', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': jestConfig(),
      'cart.test.js': CART,
      'pay.test.js': PAY,
    });
    await shards('PR 17', ['FAIL', 'FAIL']);
  }, 120_000);

  it("the commit has one report, FAIL, its data the cycle's counts, one annotation per failure at its line", async () => {
    const [report, ...others] = await reports();
    expect(others).toEqual([]);
    expect(report).toMatchObject({ key: 'casebridge', result: 'FAIL' });
    expect(field(report as Report, 'Passed')).toBe(2);
    expect(field(report as Report, 'Failed')).toBe(2);
    expect(field(report as Report, 'New and regressions')).toBe(2);
    expect(field(report as Report, 'Pass rate')).toBe(50);
    const got = (await annotations()).sort((a, b) => (a.externalId ?? '').localeCompare(b.externalId ?? ''));
    expect(got.map((a) => [a.externalId, a.severity, a.path, a.line])).toEqual([
      ['DEMO-3', 'HIGH', 'test/.fixtures/pr-jest/cart.test.js', 4],
      ['DEMO-5', 'HIGH', 'test/.fixtures/pr-jest/pay.test.js', 4],
    ]);
    expect(got[0]?.message).toContain('Expected: 3');
    expect(got[0]?.message).toContain('Received: 2');
    expect(got[1]?.link).toMatch(/\/browse\/DEMO-\d+$/); // its defect
    const builds = await statuses();
    expect(builds.map((b) => [b.key, b.state])).toEqual([['casebridge', 'FAILED']]);
    expect(builds[0]?.url).toContain('/browse/DEMO-1?cycle=');
  });

  it('the merge request has one note, edited in place by the second shard', async () => {
    const [note, ...others] = await notes();
    expect(others).toEqual([]);
    expect(note?.body).toContain('❌ FAIL');
    expect(note?.body).toContain('2 passed, 2 failed (2 new) of 4 runs');
    expect(note?.body).toContain('`test/.fixtures/pr-jest/cart.test.js:4`');
  });

  it('a re-run leaves one report with the new annotations only, and still one note', async () => {
    // The same failures again: known now (linked to their defects), waived by the gate's default rules once both
    // shards are in (after the first, the other shard's failure is still new from the first run).
    await shards('PR 17', ['FAIL', 'PASS']);
    expect(await reports()).toHaveLength(1);
    const again = await annotations();
    expect(again.map((a) => a.externalId).sort()).toEqual(['DEMO-3', 'DEMO-5']);
    expect(again.every((a) => a.severity === 'MEDIUM')).toBe(true);
    expect(await statuses()).toHaveLength(1);
    expect(await notes()).toHaveLength(1);
  }, 120_000);
});

describe('bad input never changes the exit code nor loses results', () => {
  let dir = '';
  beforeAll(() => {
    dir = fixture('pr-jest-bad', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': jestConfig(),
      'cart.test.js': CART,
    });
  });

  it('a wrong token, a repository not there, a short hash, an unreachable host: a line each, results in', async () => {
    const port = await closedPort();
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ CASEBRIDGE_BITBUCKET_TOKEN: 'wrong-token' }, /Bitbucket: the report was not posted: HTTP 401/],
      [{ CASEBRIDGE_BITBUCKET_REPO: 'DEMO/nope' }, /Bitbucket: the report was not posted: HTTP 404.*DEMO\/nope/],
      [{ GIT_COMMIT: 'a1b2c3d' }, /Bitbucket: the report was not posted: .*full 40-character hash \(got "a1b2c3d"/],
      [
        { CASEBRIDGE_BITBUCKET_URL: `http://127.0.0.1:${port}` },
        /Bitbucket: the report was not posted: .*(ECONNREFUSED|connect|refused)/i,
      ],
    ];
    for (const [extra, line] of cases) {
      const env = cycleEnv('PR bad', {
        ...hosts(extra),
        CI_MERGE_REQUEST_IID: '',
      });
      const out = await jest(dir, ['--runInBand'], env);
      expect(out.code, out.stdout + out.stderr).toBe(1); // the failing test's, as without Bitbucket
      expect(out.stderr).toMatch(line);
      expect(out.stderr).toMatch(/warning: Bitbucket/);
      expect(out.stderr).toMatch(/2 result\(s\) delivered|delivered 2/);
      expect(out.stdout + out.stderr).not.toContain('wrong-token');
    }
  }, 120_000);
});

describe('casebridge doctor', () => {
  it('reads each target once with its token: ✓ when it can, ✗ with the fix when it cannot', async () => {
    const dir = fixture('pr-doctor', {});
    const good = await run('node', [CLI, 'doctor'], dir, cycleEnv('PR doctor', hosts()));
    expect(good.stdout + good.stderr).toMatch(/✓ pull request \(bitbucket\).*the token reads commit a1b2c3d4e5f6/);
    expect(good.stdout + good.stderr).toMatch(/✓ pull request \(gitlab\).*merge request !1 of 1/);
    const bad = await run(
      'node',
      [CLI, 'doctor'],
      dir,
      cycleEnv('PR doctor', hosts({ CASEBRIDGE_BITBUCKET_TOKEN: 'nope-token' })),
    );
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toMatch(/✗ pull request \(bitbucket\).*cannot be read with the token: HTTP 401/);
    expect(bad.stdout + bad.stderr).toContain('CASEBRIDGE_BITBUCKET_URL, _TOKEN');
    expect(bad.stdout + bad.stderr).not.toContain('nope-token');
  }, 60_000);
});

const PW_CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: 'tests', reporter: [['line'], ['@casebridge/playwright', {}]] });
`;
const PW_SPEC = `import { expect, test } from '@playwright/test';

test('DEMO-6 shows the banner', async () => {
  expect('Hello', 'the banner greets').toBe('Welcome');
});

test('DEMO-7 lists the products', async () => {});
`;

describe('a Playwright suite', () => {
  it("annotates at Playwright's own location; GitHub gets one comment", async () => {
    const dir = fixture('pr-playwright', { 'playwright.config.mjs': PW_CONFIG, 'tests/shop.spec.ts': PW_SPEC });
    const commit = 'b'.repeat(40);
    const github = {
      GITHUB_API_URL: `${emu.url}/api/v3`,
      GITHUB_REPOSITORY: 'demo/shop',
      GITHUB_REF: 'refs/pull/1/merge',
      CASEBRIDGE_GITHUB_TOKEN: TOKEN,
    };
    for (let i = 0; i < 2; i += 1) {
      const out = await playwright(dir, ['test'], {
        ...cycleEnv('PR pw', { ...hosts({ GIT_COMMIT: commit }), CI_MERGE_REQUEST_IID: '' }),
        ...github,
      });
      expect(out.code, out.stdout + out.stderr).toBe(1);
      expect(out.stdout + out.stderr).toMatch(/GitHub: the comment on pull request #1 of demo\/shop (added|edited)/);
    }
    const got = await get<{ annotations: Annotation[] }>(
      `/rest/insights/latest/projects/DEMO/repos/shop/commits/${commit}/reports/casebridge/annotations`,
    );
    expect(got.annotations.map((a) => [a.externalId, a.path, a.line])).toEqual([
      ['DEMO-6', 'test/.fixtures/pr-playwright/tests/shop.spec.ts', 4],
    ]);
    expect(got.annotations[0]?.message).toContain('Expected: "Welcome"');
    const comments = await get<Array<{ body: string }>>('/api/v3/repos/demo/shop/issues/1/comments');
    expect(comments.filter((c) => c.body.includes('casebridge-report'))).toHaveLength(1);
  }, 120_000);
});

describe('casebridge publish', () => {
  it('posts the same report for a cycle made from a JUnit import; --dry-run sends nothing', async () => {
    const dir = fixture('pr-junit', {
      'results.xml': `<?xml version="1.0"?>
<testsuites><testsuite name="api" tests="2">
  <testcase classname="api" name="DEMO-4 lists orders" file="api/orders.test.js"/>
  <testcase classname="api" name="DEMO-5 cancels an order" file="api/orders.test.js">
    <failure message="expected 204, got 500">AssertionError: expected 204, got 500</failure>
  </testcase>
</testsuite></testsuites>`,
    });
    const commit = 'c'.repeat(40);
    const env = cycleEnv('PR junit', { ...hosts({ GIT_COMMIT: commit }), CI_MERGE_REQUEST_IID: '' });
    const imported = await run('node', [CLI, 'junit', 'results.xml'], dir, env);
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const dry = await run('node', [CLI, 'publish', '--dry-run'], dir, env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('Code Insights report casebridge');
    expect(dry.stdout).not.toContain(TOKEN);
    const path = `/rest/insights/latest/projects/DEMO/repos/shop/commits/${commit}/reports`;
    // A JUnit import posts at its own end as the reporters do; publish posts it again, the same.
    const out = await run('node', [CLI, 'publish', '--json'], dir, env);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ pass: false, posted: [{ host: 'bitbucket', ok: true }] });
    const { values } = await get<{ values: Report[] }>(path);
    expect(values).toHaveLength(1);
    expect(field(values[0] as Report, 'Failed')).toBe(1);
    const ann = await get<{ annotations: Annotation[] }>(`${path}/casebridge/annotations`);
    expect(ann.annotations.map((a) => a.externalId)).toEqual(['DEMO-5']);
    expect(ann.annotations[0]?.message).toContain('expected 204, got 500');
  }, 60_000);
});

describe('two shards ending at once', () => {
  it('leave one merge-request note: the newer one gives way to the older', async () => {
    for (const n of await notes()) {
      const res = await fetch(`${emu.url}/api/v4/projects/1/merge_requests/1/notes/${n.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(res.status).toBe(204);
    }
    const dir = fixture('pr-race', {});
    const env = cycleEnv('PR 17', {
      CI_SERVER_URL: emu.url,
      CI_PROJECT_ID: 'demo/shop',
      CI_MERGE_REQUEST_IID: '1',
      CASEBRIDGE_GITLAB_TOKEN: TOKEN,
    });
    const outs = await Promise.all([1, 2, 3].map(() => run('node', [CLI, 'publish'], dir, env)));
    for (const out of outs) expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(outs.map((o) => o.stdout).join('')).toMatch(
      /GitLab: the note on merge request !1 of project demo\/shop added/,
    );
    expect(await notes()).toHaveLength(1);
  }, 60_000);
});
