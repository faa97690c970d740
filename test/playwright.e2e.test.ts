import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '@casebridge/core';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixture, hasChromium, playwright, ROOT } from './support/runner.js';
import { adhocState, cycleState, defects, type RunState, serviceRequests } from './support/state.js';

/**
 * The Playwright reporter end to end: the real `playwright test` on a fixture project, the real emulator, real HTTP.
 * The fixture has a passing stepped test, a failing test with a failing step and a screenshot, a flaky test, a test
 * keyed by tag, one keyed by annotation, and an unmapped one.
 */

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d1a30000000049454e44ae426082',
  'hex',
);
const PNG_SHA = createHash('sha256').update(PNG).digest('hex');

const SPEC = `
import { expect, test } from '@playwright/test';

const PNG = Buffer.from('${PNG.toString('hex')}', 'hex');

test('DEMO-2 logs in', async () => {
  await test.step('Open the login page', async () => {});
  await test.step('Enter user name and password', async () => {});
  await test.step('Press "Log in"', async () => {});
});

test.describe('checkout', () => {
  test('pays with the saved card', { tag: '@DEMO-5' }, async ({}, testInfo) => {
    await test.step('Add a product to the cart', async () => {});
    await test.step('Open checkout', async () => {
      await testInfo.attach('screenshot', { body: PNG, contentType: 'image/png' });
      expect(2, 'the saved card is preselected').toBe(1);
    });
    await test.step('Place the order', async () => {});
  });
});

test('logs out', { annotation: { type: 'testCase', description: 'DEMO-3' } }, async ({}, testInfo) => {
  expect(testInfo.retry, 'passes on the second attempt').toBe(1);
});

test('[DEMO-4] search finds the teapot', async () => {});

test('has no key', async () => {});
`;

const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  retries: 1,
  workers: 2,
  fullyParallel: true,
  reporter: process.env.PW_BLOB ? [['blob']] : [['line'], ['@casebridge/playwright', {}]],
});
`;

/** Reporter options for the merge step: the same reporter, read from this config by merge-reports. */
const MERGE_CONFIG = `
export default { testDir: 'tests', reporter: [['@casebridge/playwright', {}]] };
`;

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    CASEBRIDGE_URL: emu.url,
    CASEBRIDGE_TOKEN: 'casebridge-dev-token',
    CASEBRIDGE_PROJECT: 'DEMO',
    CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
    ...extra,
  };
}

const cycleEnv = (name: string, extra: Record<string, string> = {}) =>
  env({ CASEBRIDGE_MODE: 'cycle', CASEBRIDGE_TEST_PLAN: 'DEMO-1', CASEBRIDGE_CYCLE: name, ...extra });

function project(name: string): string {
  return fixture(name, {
    'playwright.config.mjs': CONFIG,
    'merge.config.mjs': MERGE_CONFIG,
    'tests/shop.spec.ts': SPEC,
  });
}

/** The state a fault-free cycle-mode run of the fixture leaves (set by the first test, compared by the others). */
let reference: RunState[] | undefined;

const expected = (state: RunState[]) => {
  const by = Object.fromEntries(state.map((r) => [r.key, r]));
  expect(by['DEMO-2']).toMatchObject({ status: 'Passed', steps: ['Passed', 'Passed', 'Passed'], comment: false });
  expect(by['DEMO-3']).toMatchObject({ status: 'Passed', comment: true });
  expect(by['DEMO-4']).toMatchObject({ status: 'Passed' });
  expect(by['DEMO-5']).toMatchObject({
    status: 'Failed',
    steps: ['Passed', 'Failed', 'Not Tested'],
    comment: true,
    files: expect.arrayContaining([PNG_SHA]),
  });
  // The screenshot and Playwright's error-context.md (the page state at the failure, 1.59+: every failing test).
  expect(by['DEMO-5']?.files).toHaveLength(2);
  expect(by['DEMO-5']?.bugs).toHaveLength(1);
};

describe('Playwright reporter, cycle mode', () => {
  beforeEach(async () => {
    await emu.reset();
  });

  it('reports every mapped test into one cycle: statuses, steps, screenshot bytes, flaky comment, one defect', async () => {
    const dir = project('pw-cycle');
    const out = await playwright(dir, ['test'], cycleEnv('CI e2e'));
    expect(out.code, 'the failing test fails the run, as without the reporter').toBe(1);
    const state = cycleState(emu, 'CI e2e');
    expected(state);
    reference = state.filter((r) => ['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5'].includes(r.key));
    expect(defects(emu)).toHaveLength(1);
    expect(out.stderr + out.stdout).toContain('cycle "CI e2e"');
    expect(out.stderr + out.stdout).toMatch(/without a case key[\s\S]*has no key/);

    // A second run of the same failure links the defect instead of filing another.
    const again = await playwright(dir, ['test'], cycleEnv('CI e2e 2'));
    expect(again.code).toBe(1);
    expected(cycleState(emu, 'CI e2e 2'));
    expect(defects(emu)).toHaveLength(1);
    expect(again.stderr + again.stdout).toMatch(/defects linked: DEMO-\d+/);
  });

  it('two shards at once into one cycle name: one cycle, one run per case, one defect', async () => {
    // A checkout each, as shards on two machines have: one folder would share Playwright's test-results (each run
    // empties it as it starts) and casebridge's journal.
    const dirs = [project('pw-shards-1'), project('pw-shards-2')];
    const outs = await Promise.all(
      dirs.map((dir, i) => playwright(dir, ['test', `--shard=${i + 1}/2`], cycleEnv('CI shards'))),
    );
    expect(outs.map((o) => o.code).sort()).toContain(1);
    const state = cycleState(emu, 'CI shards');
    try {
      expected(state);
    } catch (err) {
      // Seen once under a loaded CI run (DEMO-4 without a run): what each shard said, for the next look.
      const said = outs.map((o, i) => `shard ${i + 1} (exit ${o.code}):\n${o.stdout}\n${o.stderr}`).join('\n');
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${said}`);
    }
    expect(new Set(state.map((r) => r.key)).size).toBe(state.length);
    expect(defects(emu)).toHaveLength(1);
  });

  it('playwright test --list (the VS Code extension, casebridge doctor) reaches no service', async () => {
    const dir = project('pw-list');
    emu.clearRequests();
    const out = await playwright(dir, ['test', '--list'], cycleEnv('CI list'));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/Total: \d+ tests? in/);
    expect(serviceRequests(emu)).toEqual([]);
    expect(emu.store.cycles.filter((c) => c.name === 'CI list')).toEqual([]);
  });

  it('blob reports merged with merge-reports report once, like a single run', async () => {
    const dir = project('pw-merge');
    for (const shard of [1, 2]) {
      const out = await playwright(dir, ['test', `--shard=${shard}/2`], {
        PW_BLOB: '1',
        PLAYWRIGHT_BLOB_OUTPUT_DIR: `blob-${shard}`,
      });
      expect(out.code).not.toBeNull();
      // As a CI pipeline does: each shard's blob is downloaded into one folder.
      mkdirSync(join(dir, 'blob-report'), { recursive: true });
      copyFileSync(join(dir, `blob-${shard}`, `report-${shard}.zip`), join(dir, 'blob-report', `report-${shard}.zip`));
    }
    expect(serviceRequests(emu)).toEqual([]);
    const merged = await playwright(
      dir,
      ['merge-reports', '-c', 'merge.config.mjs', 'blob-report'],
      cycleEnv('CI merged'),
    );
    expect(merged.code, merged.stderr).toBe(0);
    expected(cycleState(emu, 'CI merged'));
  });

  it('dry run sends nothing; a bad config leaves the exit code alone and says what to fix', async () => {
    const dir = project('pw-dry');
    emu.clearRequests();
    const dry = await playwright(dir, ['test'], cycleEnv('CI dry', { CASEBRIDGE_DRY_RUN: '1' }));
    expect(dry.code).toBe(1);
    expect(serviceRequests(emu)).toEqual([]);
    expect(dry.stderr + dry.stdout).toMatch(/dry run: nothing was sent/);

    const bad = await playwright(dir, ['test', '--grep', 'DEMO-4'], env({ CASEBRIDGE_MODE: 'sideways' }));
    expect(bad.code, 'a passing run stays passing').toBe(0);
    expect(bad.stderr + bad.stdout).toMatch(/mode \(CASEBRIDGE_MODE\)/);
    expect(serviceRequests(emu)).toEqual([]);
  });
});

describe('Playwright reporter, unmapped tests and preflight', () => {
  beforeEach(async () => {
    await emu.reset();
  });

  it('autoCreate makes a case for the unmapped test, writes the mapping file, and the next run reuses it', async () => {
    const dir = project('pw-autocreate');
    const first = await playwright(dir, ['test', '--grep', 'has no key'], env({ CASEBRIDGE_AUTO_CREATE: 'true' }));
    expect(first.code).toBe(0);
    const mapping = JSON.parse(readFileSync(join(dir, 'casebridge.keys.json'), 'utf8')) as Record<string, string>;
    const key = mapping['tests/shop.spec.ts > has no key'];
    expect(key).toMatch(/^DEMO-\d+$/);
    expect(first.stderr + first.stdout).toContain(
      `1 test case(s) created (every test's key is in casebridge.keys.json: commit it): ${key}`,
    );
    const second = await playwright(dir, ['test', '--grep', 'has no key'], env({ CASEBRIDGE_AUTO_CREATE: 'true' }));
    expect(second.code).toBe(0);
    expect(second.stderr + second.stdout).not.toContain('test case(s) created');
    expect(emu.store.issues.filter((i) => i.summary === 'has no key')).toHaveLength(1);
    expect(
      adhocState(emu)
        .filter((r) => r.key === key)
        .map((r) => r.status),
    ).toEqual(['Passed', 'Passed']);
  });

  it('a test plan that does not exist: one clear problem, a handful of requests, the exit code untouched', async () => {
    const dir = project('pw-badplan');
    emu.clearRequests();
    const out = await playwright(
      dir,
      ['test', '--grep', 'DEMO-4|DEMO-2'],
      cycleEnv('CI bad plan', { CASEBRIDGE_TEST_PLAN: 'DEMO-404' }),
    );
    expect(out.code).toBe(0);
    const text = out.stderr + out.stdout;
    expect(text).toContain('1 problem(s):');
    expect(text).toContain('test plan DEMO-404 was not found (HTTP 404): check testPlan (CASEBRIDGE_TEST_PLAN)');
    expect(text).toContain('delivered 0 run result(s)');
    // Nothing waits in the journal for a plan that will never exist.
    expect(text).not.toContain('not delivered');
    expect(serviceRequests(emu).length).toBeLessThanOrEqual(3);
  });
});

describe('Playwright reporter, ad hoc mode', () => {
  it('one ad hoc run per mapped test, with its result', async () => {
    await emu.reset();
    const dir = project('pw-adhoc');
    const out = await playwright(dir, ['test'], env({ CASEBRIDGE_MODE: 'adhoc' }));
    expect(out.code).toBe(1);
    const state = adhocState(emu);
    expect(state.map((r) => [r.key, r.status])).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
      ['DEMO-4', 'Passed'],
      ['DEMO-5', 'Failed'],
    ]);
    expect(state.find((r) => r.key === 'DEMO-5')?.files).toEqual(expect.arrayContaining([PNG_SHA]));
    expect(state.find((r) => r.key === 'DEMO-5')?.files).toHaveLength(2);
  });
});

describe('Playwright reporter, faults', () => {
  beforeEach(async () => {
    await emu.reset();
  });

  it('service down for the whole run: exit code untouched, results journaled, a replay gives the fault-free state', async () => {
    const dir = project('pw-down');
    const out = await playwright(
      dir,
      ['test'],
      cycleEnv('CI down', { CASEBRIDGE_URL: 'http://127.0.0.1:9', CASEBRIDGE_FLUSH_TIMEOUT_MS: '5000' }),
    );
    expect(out.code).toBe(1);
    expect(out.stderr + out.stdout).toMatch(/not delivered: kept in/);
    const journal = join(dir, '.casebridge', 'journal');
    expect(readdirSync(journal).filter((f) => f.endsWith('.json')).length, 'one per mapped test').toBe(4);
    for (let i = 0; i < 2; i++) {
      const replay = Engine.create(
        { url: emu.url, token: 'casebridge-dev-token', projectKey: 'DEMO', mode: 'cycle', testPlan: 'DEMO-1' },
        { cwd: dir, runner: { name: 'playwright' }, env: {}, out: () => undefined },
      );
      replay.begin();
      expect((await replay.end()).summary.journaled).toBe(0);
    }
    expect(cycleState(emu, 'CI down')).toEqual(reference);
    expect(defects(emu)).toHaveLength(1);
    expect(readdirSync(journal).filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  // 30% 503 and connection resets through the whole run: the fault campaign's scenario (test/chaos/campaign.ts), run
  // there through this same Playwright suite shape with the same rules and seed, and compared with its fault-free run.

  it('the reporter killed (SIGKILL) mid-delivery: the next replay delivers everything from the write-ahead log, once', async () => {
    const dir = project('pw-kill');
    // Slow answers keep delivery under way after the tests end; the process is killed during it.
    await fetch(`${emu.url}/__emulator/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ route: '/rest/**', latencyMs: 700 }] }),
    });
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'playwright'), ['test'], {
      cwd: dir,
      env: { ...process.env, ...cycleEnv('CI killed'), FORCE_COLOR: '0' },
      stdio: 'ignore',
    });
    const exited = new Promise((done) => child.on('exit', done));
    // Every mapped test has ended (its result is in the write-ahead log) and delivery has begun: kill it then.
    const deadline = Date.now() + 60_000;
    const taken = () => {
      const journal = join(dir, '.casebridge', 'journal');
      const wal = existsSync(journal) ? readdirSync(journal).find((f) => f.startsWith('wal-')) : undefined;
      return wal ? (readFileSync(join(journal, wal), 'utf8').match(/"item":/g) ?? []).length : 0;
    };
    const delivering = () => serviceRequests(emu).some((r) => /testRun\/update/.test(r.path));
    while (Date.now() < deadline && !(taken() >= 4 && delivering())) {
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await exited;
    await fetch(`${emu.url}/__emulator/faults`, { method: 'DELETE' });
    const wal = readdirSync(join(dir, '.casebridge', 'journal')).filter((f) => f.startsWith('wal-'));
    expect(wal, 'the killed run left its write-ahead log').toHaveLength(1);
    expect(cycleState(emu, 'CI killed')).not.toEqual(reference);

    const lines: string[] = [];
    for (let i = 0; i < 2; i++) {
      const replay = Engine.create(
        { url: emu.url, token: 'casebridge-dev-token', projectKey: 'DEMO', mode: 'cycle', testPlan: 'DEMO-1' },
        { cwd: dir, runner: { name: 'playwright' }, env: {}, out: (t) => lines.push(t) },
      );
      replay.begin();
      expect((await replay.end()).summary.journaled).toBe(0);
    }
    expect(lines.join('\n')).toMatch(/result\(s\) of a run that was killed were recovered/);
    expect(cycleState(emu, 'CI killed')).toEqual(reference);
    expect(defects(emu)).toHaveLength(1);
    expect(
      readdirSync(join(dir, '.casebridge', 'journal')).filter((f) => f.endsWith('.json') || f.startsWith('wal-')),
    ).toEqual([]);
  });
});

describe.runIf(hasChromium)('Playwright reporter with a real browser', () => {
  it('a failure screenshot taken by Playwright arrives byte-identical', async () => {
    await emu.reset();
    const dir = fixture('pw-browser', {
      'playwright.config.mjs': `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  reporter: [['line'], ['@casebridge/playwright', {}]],
  use: {
    screenshot: 'only-on-failure',
    launchOptions: { executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] },
  },
});`,
      'tests/page.spec.ts': `
import { expect, test } from '@playwright/test';
test('DEMO-6 profile shows the user name', async ({ page }) => {
  await page.setContent('<h1>Hello, Tess</h1>');
  await expect(page.locator('h1')).toHaveText('Hello, Admin', { timeout: 500 });
});`,
    });
    const out = await playwright(dir, ['test'], env({ CASEBRIDGE_MODE: 'adhoc' }));
    expect(out.code).toBe(1);
    const shots = readdirSync(join(dir, 'test-results'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.png'));
    expect(shots).toHaveLength(1);
    const sha = createHash('sha256')
      .update(readFileSync(join(dir, 'test-results', shots[0] as string)))
      .digest('hex');
    expect(adhocState(emu).find((r) => r.key === 'DEMO-6')?.files).toEqual(expect.arrayContaining([sha]));
    expect(adhocState(emu).find((r) => r.key === 'DEMO-6')?.files).toHaveLength(2);
  });
});

describe('Playwright reporter, failOnError', () => {
  it('fails a passing run, with one line why, when results are not delivered or the configuration is invalid', async () => {
    const dir = project('pw-fail-on-error');
    const only = ['test', '-g', 'search finds the teapot'];
    const down = { CASEBRIDGE_URL: 'http://127.0.0.1:9', CASEBRIDGE_FLUSH_TIMEOUT_MS: '1500' };
    const [tolerant, strict, invalid] = await Promise.all([
      playwright(dir, only, env(down)),
      playwright(dir, only, env({ ...down, CASEBRIDGE_FAIL_ON_ERROR: 'true' })),
      playwright(dir, only, env({ CASEBRIDGE_URL: 'jira.example.com', CASEBRIDGE_FAIL_ON_ERROR: 'true' })),
    ]);
    expect(tolerant.code, tolerant.stderr).toBe(0);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(
      /casebridge: 1 result\(s\) were not delivered \(kept in the journal; `npx @casebridge\/cli replay` delivers them\), and failOnError fails the run/,
    );
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/url \(CASEBRIDGE_URL\): expected the Jira base URL/);
    expect(invalid.stderr).toMatch(
      /looked in: \.\/casebridge\.config\.\{json,mjs,cjs,js,ts,mts,cts\}, CASEBRIDGE_\* environment variables/,
    );
    expect(invalid.stderr).toMatch(
      /the configuration has problems \(listed at the start\), and failOnError fails the run/,
    );
  });
});
