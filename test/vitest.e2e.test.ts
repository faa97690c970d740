import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '@casebridge/core';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixture } from './support/runner.js';
import { adhocState, cycleState, defects, type RunState, serviceRequests } from './support/state.js';
import { expected, LOG_SHA, PNG_SHA, VITEST_FILES, vitest, WatchedVitest } from './support/vitest.js';

/**
 * The Vitest reporter end to end: the real `vitest run` on a fixture project (test/support/vitest.ts), the real
 * emulator, real HTTP. The runtime API records steps and attachments from two workers at once.
 */

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

const project = (name: string, extra: Record<string, string> = {}) => fixture(name, { ...VITEST_FILES, ...extra });

/** The state of a fault-free cycle-mode run (set by the first test, compared by the fault tests). */
let reference: RunState[] | undefined;

describe('Vitest reporter, cycle mode', () => {
  beforeEach(async () => {
    await emu.reset();
  });

  it('reports every mapped test into one cycle: statuses, runtime steps and files from two workers, flaky, one defect', async () => {
    const dir = project('vt-cycle');
    const out = await vitest(dir, ['run'], cycleEnv('CI vt'));
    expect(out.code, 'the failing test fails the run, as without the reporter').toBe(1);
    const text = out.stderr + out.stdout;
    expect(text).toContain('cycle "CI vt"');
    const state = cycleState(emu, 'CI vt');
    expect(
      state.map((r) => r.key),
      text,
    ).toEqual(['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6']);
    expected(state);
    reference = state;
    expect(defects(emu)).toHaveLength(1);
    expect(text).toMatch(/without a case key[\s\S]*has no key/);
    expect(text, 'no reporter error reaches Vitest').not.toMatch(/Unhandled Reporter Error|Vitest reporter failed/);
  });

  it('two shards at once into one cycle name: one cycle, one run per case, one defect', async () => {
    const dir = project('vt-shards');
    const outs = await Promise.all([
      vitest(dir, ['run', '--shard=1/2'], cycleEnv('CI vt shards')),
      vitest(dir, ['run', '--shard=2/2'], cycleEnv('CI vt shards')),
    ]);
    expect(outs.map((o) => o.code).sort()).toEqual([0, 1]);
    expected(cycleState(emu, 'CI vt shards'));
    expect(defects(emu)).toHaveLength(1);
  });

  it('blob reports merged with --merge-reports report once, like a single run (runtime data stays with the shards)', async () => {
    const dir = project('vt-merge');
    for (const shard of [1, 2]) {
      const out = await vitest(dir, ['run', `--shard=${shard}/2`], { VT_BLOB: '1' });
      expect(out.code).not.toBeNull();
    }
    expect(readdirSync(join(dir, '.vitest-reports'))).toHaveLength(2);
    expect(serviceRequests(emu)).toEqual([]);
    const merged = await vitest(dir, ['run', '--merge-reports'], cycleEnv('CI vt merged'));
    expect(merged.code).toBe(1);
    const by = Object.fromEntries(cycleState(emu, 'CI vt merged').map((r) => [r.key, r]));
    // A blob carries Vitest's own data (titles, annotations, meta, retries, errors); the runtime channel's steps,
    // files and `caseKey` were never written, since the shards ran without casebridge.
    expect(Object.keys(by).sort()).toEqual(['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-6']);
    expect(by['DEMO-2']).toMatchObject({ status: 'Passed' });
    expect(by['DEMO-3']).toMatchObject({ status: 'Passed', comment: true });
    expect(by['DEMO-6']).toMatchObject({ status: 'Passed', files: [] });
  });

  it('dry run sends nothing; a bad config leaves the exit code alone and says what to fix', async () => {
    const dir = project('vt-dry');
    emu.clearRequests();
    const dry = await vitest(dir, ['run'], cycleEnv('CI dry', { CASEBRIDGE_DRY_RUN: '1' }));
    expect(dry.code).toBe(1);
    expect(serviceRequests(emu)).toEqual([]);
    expect(dry.stderr + dry.stdout).toMatch(/dry run: nothing was sent/);

    const bad = await vitest(dir, ['run', '-t', 'DEMO-4'], env({ CASEBRIDGE_MODE: 'sideways' }));
    expect(bad.code, 'a passing run stays passing').toBe(0);
    expect(bad.stderr + bad.stdout).toMatch(/mode \(CASEBRIDGE_MODE\)/);
    expect(serviceRequests(emu)).toEqual([]);
  });
});

describe('Vitest reporter, ad hoc mode', () => {
  it('one ad hoc run per mapped test, configured as an instance', async () => {
    await emu.reset();
    const dir = project('vt-adhoc', {
      'vitest.config.mjs': `
import { defineConfig } from 'vitest/config';
import CasebridgeReporter from '@casebridge/vitest';
export default defineConfig({
  test: {
    include: ['tests/**/*.spec.ts'],
    reporters: ['default', new CasebridgeReporter({ mode: 'adhoc', attachments: { others: true } })],
  },
});
`,
    });
    const out = await vitest(dir, ['run'], env());
    expect(out.code).toBe(1);
    const state = adhocState(emu);
    expect(state.map((r) => [r.key, r.status])).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
      ['DEMO-4', 'Passed'],
      ['DEMO-5', 'Failed'],
      ['DEMO-6', 'Passed'],
    ]);
    expect(state.find((r) => r.key === 'DEMO-5')).toMatchObject({
      files: [PNG_SHA],
      steps: ['Passed', 'Failed', 'Not Tested'],
    });
    expect(state.find((r) => r.key === 'DEMO-6')?.files).toEqual([LOG_SHA]);
    expect(defects(emu)).toHaveLength(1);
  });
});

describe('Vitest reporter, projects', () => {
  it('the same file in two projects: each test of each project gets its own runtime data', async () => {
    await emu.reset();
    const dir = project('vt-projects', {
      'vitest.config.mjs': `
import { defineConfig } from 'vitest/config';
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'alpha', include: ['tests/account.spec.ts'] } },
      { test: { name: 'beta', include: ['tests/**/*.spec.ts'] } },
    ],
    reporters: ['default', ['@casebridge/vitest', { attachments: { others: true } }]],
  },
});
`,
    });
    const out = await vitest(dir, ['run'], env({ CASEBRIDGE_MODE: 'adhoc' }));
    expect(out.code).toBe(1);
    const state = adhocState(emu);
    const of = (key: string) => state.filter((r) => r.key === key);
    expect(of('DEMO-2').map((r) => r.steps)).toEqual([
      ['Passed', 'Passed', 'Passed'],
      ['Passed', 'Passed', 'Passed'],
    ]);
    expect(of('DEMO-6').map((r) => r.files)).toEqual([[LOG_SHA], [LOG_SHA]]);
    expect(of('DEMO-5')).toMatchObject([{ status: 'Failed', files: [PNG_SHA] }]);
  });
});

describe('Vitest reporter, faults', () => {
  beforeEach(async () => {
    await emu.reset();
  });

  it('service down for the whole run: exit code untouched, results journaled, a replay gives the fault-free state', async () => {
    const dir = project('vt-down');
    const out = await vitest(
      dir,
      ['run'],
      cycleEnv('CI vt', { CASEBRIDGE_URL: 'http://127.0.0.1:9', CASEBRIDGE_FLUSH_TIMEOUT_MS: '5000' }),
    );
    expect(out.code).toBe(1);
    expect(out.stderr + out.stdout).toMatch(/not delivered: kept in/);
    const journal = join(dir, '.casebridge', 'journal');
    expect(readdirSync(journal).filter((f) => f.endsWith('.json')).length, 'one per mapped test').toBe(5);
    for (let i = 0; i < 2; i++) {
      const replay = Engine.create(
        {
          url: emu.url,
          token: 'casebridge-dev-token',
          projectKey: 'DEMO',
          mode: 'cycle',
          testPlan: 'DEMO-1',
          attachments: { others: true },
        },
        { cwd: dir, runner: { name: 'vitest' }, env: {}, out: () => undefined },
      );
      replay.begin();
      expect((await replay.end()).summary.journaled).toBe(0);
    }
    const state = cycleState(emu, 'CI vt');
    expected(state);
    if (reference) expect(state).toEqual(reference);
    expect(defects(emu)).toHaveLength(1);
    expect(readdirSync(journal).filter((f) => f.endsWith('.json'))).toEqual([]);
  });
  it("failOnError fails a passing run when delivery fails; without it the exit code stays the tests' own", async () => {
    const dir = project('vt-fail-on-error');
    const down = { CASEBRIDGE_URL: 'http://127.0.0.1:9', CASEBRIDGE_FLUSH_TIMEOUT_MS: '1500' };
    const plain = await vitest(dir, ['run', '-t', 'DEMO-4'], env(down));
    expect(plain.code, plain.stderr).toBe(0);
    const strict = await vitest(dir, ['run', '-t', 'DEMO-4'], env({ ...down, CASEBRIDGE_FAIL_ON_ERROR: '1' }));
    expect(strict.code).toBe(1);
    expect(strict.stderr + strict.stdout).toMatch(/\d+ result\(s\) were not delivered .*and failOnError fails the run/);
    // Tests left out by -t are skipped: not reported, so not listed as unmapped either.
    expect(strict.stderr + strict.stdout, strict.stderr).toMatch(/casebridge: 1 test result\(s\)/);
  });
});

describe('Vitest reporter, watch mode', () => {
  beforeEach(async () => {
    await emu.reset();
  });

  const touch = (file: string) => {
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n`);
    const now = new Date();
    utimesSync(file, now, now);
  };

  it('reports nothing by default', async () => {
    const dir = project('vt-watch-off');
    emu.clearRequests();
    const watch = new WatchedVitest(dir, [], env({ CASEBRIDGE_MODE: 'adhoc' }));
    try {
      await watch.waitFor(/(Watching|Waiting) for file changes/);
      touch(join(dir, 'tests', 'shop.spec.ts'));
      await watch.waitFor(/(Watching|Waiting) for file changes/, 2);
    } finally {
      await watch.stop();
    }
    expect(serviceRequests(emu)).toEqual([]);
    expect(watch.output).not.toMatch(/casebridge/);
  }, 90_000);

  it('with watch: true reports the first run and each rerun once', async () => {
    const dir = project('vt-watch-on');
    const watch = new WatchedVitest(dir, [], env({ CASEBRIDGE_MODE: 'adhoc', CASEBRIDGE_WATCH: '1' }));
    const runs = (key: string) => adhocState(emu).filter((r) => r.key === key).length;
    try {
      await watch.waitFor(/casebridge: 6 test result\(s\)/);
      expect([runs('DEMO-2'), runs('DEMO-4'), runs('DEMO-5')]).toEqual([1, 1, 1]);
      touch(join(dir, 'tests', 'shop.spec.ts'));
      await watch.waitFor(/casebridge: 3 test result\(s\)/);
    } finally {
      await watch.stop();
    }
    expect(watch.output.match(/casebridge: \d+ test result/g), 'one summary per run').toHaveLength(2);
    // Only shop.spec.ts ran again: its tests have a second run each, with the rerun's runtime steps (not doubled).
    expect([runs('DEMO-2'), runs('DEMO-4'), runs('DEMO-5')]).toEqual([1, 2, 2]);
    const demo5 = adhocState(emu).filter((r) => r.key === 'DEMO-5');
    expect(demo5.map((r) => r.steps)).toEqual([
      ['Passed', 'Failed', 'Not Tested'],
      ['Passed', 'Failed', 'Not Tested'],
    ]);
    const journal = join(dir, '.casebridge', 'journal');
    expect(
      existsSync(journal) ? readdirSync(journal).filter((f) => f.endsWith('.json')) : [],
      'nothing undelivered',
    ).toEqual([]);
  }, 90_000);
});
