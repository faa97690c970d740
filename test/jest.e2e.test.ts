import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '@casebridge/core';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig, jestWatch } from './support/jest.js';
import { fixture } from './support/runner.js';
import { adhocState, cycleState, defects, type RunState, serviceRequests } from './support/state.js';

/**
 * The Jest reporter end to end: the real `jest` (30.x) on a fixture project, the real emulator, real HTTP. Two test
 * files, so two workers run them: a passing test with three steps and a file attached by path, a failing test with
 * a failing step and a PNG attached as bytes inside it, a flaky test (retried) keyed with `caseKey` whose first
 * attempt fails a step, a test keyed in brackets, a skipped one and an unmapped one.
 */

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d1a30000000049454e44ae426082',
  'hex',
);
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const PNG_SHA = sha(PNG);
const LOG = 'user demo signed in\n';
const LOG_SHA = sha(LOG);

const SHOP = `
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { attach, step } = require('@casebridge/jest');

const PNG = Buffer.from('${PNG.toString('hex')}', 'hex');
console.log('worker', process.env.JEST_WORKER_ID);

test('DEMO-2 logs in', async () => {
  await step('Open the login page', async () => {});
  await step('Enter user name and password', async () => {});
  await step('Press "Log in"', async () => {
    const log = join(__dirname, '..', 'login.log');
    writeFileSync(log, ${JSON.stringify(LOG)});
    attach('login.log', { path: log });
  });
});

describe('checkout', () => {
  test('DEMO-5 pays with the saved card', async () => {
    await step('Add a product to the cart', async () => {});
    await step('Open checkout', async () => {
      attach('screenshot.png', { body: PNG });
      expect(2).toBe(1);
    });
    await step('Place the order', async () => {});
  });
});
`;

const ACCOUNT = `
const { caseKey, step } = require('@casebridge/jest');
jest.retryTimes(1);
console.log('worker', process.env.JEST_WORKER_ID);

let tries = 0;
test('logs out', async () => {
  caseKey('DEMO-3');
  tries += 1;
  await step('Open the user menu', async () => {});
  await step('Choose "Log out"', async () => {
    expect(tries).toBe(2);
  });
});

test('[DEMO-4] search finds the teapot', () => {});

test.skip('DEMO-6 profile shows the user name', () => {});

test('has no key', () => {});
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
    'package.json': JEST_PACKAGE,
    // Inline options reach the engine: files other than screenshots are sent only when asked for.
    'jest.config.js': jestConfig({ attachments: { others: true } }),
    'tests/shop.test.js': SHOP,
    'tests/account.test.js': ACCOUNT,
  });
}

const KEYS = ['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5'];
/** The state a fault-free cycle-mode run of the fixture leaves (set by the first test, compared by the others). */
let reference: RunState[] | undefined;

const expected = (state: RunState[]) => {
  const by = Object.fromEntries(state.map((r) => [r.key, r]));
  expect(by['DEMO-2']).toMatchObject({
    status: 'Passed',
    steps: ['Passed', 'Passed', 'Passed'],
    comment: false,
    files: [LOG_SHA],
  });
  // Flaky: the first attempt failed its second step, the retry passed; the steps are the retry's.
  expect(by['DEMO-3']).toMatchObject({ status: 'Passed', steps: ['Passed', 'Passed'], comment: true });
  expect(by['DEMO-4']).toMatchObject({ status: 'Passed' });
  expect(by['DEMO-5']).toMatchObject({
    status: 'Failed',
    steps: ['Passed', 'Failed', 'Not Tested'],
    comment: true,
    files: [PNG_SHA],
  });
  expect(by['DEMO-5']?.bugs).toHaveLength(1);
  const ours = state.filter((r) => KEYS.includes(r.key));
  expect(new Set(ours.map((r) => r.key)).size, 'one run per case').toBe(ours.length);
  return ours;
};

const workersOf = (text: string) => new Set([...text.matchAll(/worker (\d+)/g)].map((m) => m[1]));

describe('Jest reporter, cycle mode', () => {
  beforeEach(async () => {
    await emu.reset();
  });

  it('two workers: statuses, steps with status, attachments by content, caseKey, flaky retry, one defect', async () => {
    const dir = project('jest-cycle');
    const out = await jest(dir, ['--maxWorkers=2'], cycleEnv('CI jest'));
    expect(out.code, 'the failing test fails the run, as without the reporter').toBe(1);
    expect(workersOf(out.stdout + out.stderr), 'the two files ran in two workers').toEqual(new Set(['1', '2']));
    reference = expected(cycleState(emu, 'CI jest'));
    expect(defects(emu)).toHaveLength(1);
    expect(out.stderr).toContain('cycle "CI jest"');
    expect(out.stderr).toMatch(/without a case key[\s\S]*has no key/);
  });

  it('--runInBand gives the same state', async () => {
    const dir = project('jest-inband');
    const out = await jest(dir, ['--runInBand'], cycleEnv('CI jest in band'));
    expect(out.code).toBe(1);
    expect(workersOf(out.stdout + out.stderr)).toEqual(new Set(['1']));
    expect(expected(cycleState(emu, 'CI jest in band'))).toEqual(reference);
  });

  it('--shard=1/2 and 2/2 at once into one cycle name: one cycle, one run per case, one defect', async () => {
    const dir = project('jest-shards');
    const outs = await Promise.all([
      jest(dir, ['--shard=1/2'], cycleEnv('CI jest shards')),
      jest(dir, ['--shard=2/2'], cycleEnv('CI jest shards')),
    ]);
    expect(outs.map((o) => o.code).sort()).toEqual([0, 1]);
    // Each shard's summary names its shard.
    expect(outs[0]?.stderr).toMatch(/mode cycle, shard 1\/2/);
    expect(outs[1]?.stderr).toMatch(/mode cycle, shard 2\/2/);
    expect(expected(cycleState(emu, 'CI jest shards'))).toEqual(reference);
    expect(defects(emu)).toHaveLength(1);
  });

  it('a bad config leaves the exit code alone and says what to fix; dry run sends nothing', async () => {
    const dir = project('jest-bad');
    emu.clearRequests();
    const bad = await jest(dir, ['-t', 'DEMO-4'], env({ CASEBRIDGE_MODE: 'sideways' }));
    expect(bad.code, 'a passing run stays passing').toBe(0);
    expect(bad.stderr).toMatch(/mode \(CASEBRIDGE_MODE\)/);
    const dry = await jest(dir, [], cycleEnv('CI dry', { CASEBRIDGE_DRY_RUN: '1' }));
    expect(dry.code).toBe(1);
    expect(dry.stderr).toMatch(/dry run: nothing was sent/);
    expect(serviceRequests(emu)).toEqual([]);
  });

  it('on GitHub Actions: the cycle and the failure (case, run, defect) are linked in the summary, the step summary and an annotation; each link opens in the web UI', async () => {
    const dir = project('jest-links');
    const stepSummary = join(dir, 'step-summary.md');
    const out = await jest(
      dir,
      ['--maxWorkers=2'],
      cycleEnv('CI jest links', {
        GITHUB_ACTIONS: 'true',
        GITHUB_STEP_SUMMARY: stepSummary,
        CASEBRIDGE_ANNOTATIONS: '1',
      }),
    );
    expect(out.code).toBe(1);
    const text = out.stdout + out.stderr;
    const cycle = emu.store.cycles.find((c) => c.name === 'CI jest links');
    expect(cycle).toBeDefined();
    const cycleUrl = `${emu.url}/browse/DEMO-1?cycle=${cycle?.id}`;
    expect(text).toContain(`cycle "CI jest links" (id ${cycle?.id}) of test plan DEMO-1: ${cycleUrl}`);
    const bug = emu.store.issues.find((i) => i.type === 'Bug')?.key;
    expect(text).toContain(`${bug}  ${emu.url}/browse/${bug}`);
    const annotation = text.split('\n').find((l) => l.startsWith('::error '));
    expect(annotation).toMatch(/^::error file=tests\/shop\.test\.js,line=\d+,title=casebridge%3A DEMO-5 failed::/);
    const md = readFileSync(stepSummary, 'utf8');
    expect(md).toContain('#### Failures (1)');
    const row = md.split('\n').find((l) => l.includes('[DEMO-5]')) ?? '';
    const links = [...row.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1] as string);
    expect(links).toHaveLength(3);
    expect(links[0]).toBe(`${emu.url}/browse/DEMO-5`);
    expect(links[1]).toMatch(new RegExp(`^${cycleUrl.replace(/[?.]/g, '\\$&')}&run=(\\d+)#run-\\1$`));
    expect(links[2]).toBe(`${emu.url}/browse/${bug}`);
    // Every link opens a page of the emulator's web UI; the run's anchor is on its cycle's page.
    for (const link of [cycleUrl, ...links]) {
      const res = await fetch(link);
      expect(res.status, link).toBe(200);
      const html = await res.text();
      const anchor = link.split('#')[1];
      if (anchor) expect(html, link).toContain(`id="${anchor}"`);
    }
  });
});

describe('Jest reporter, ad hoc mode', () => {
  it('one ad hoc run per mapped test, with its result, steps and files', async () => {
    await emu.reset();
    const dir = project('jest-adhoc');
    const out = await jest(dir, [], env({ CASEBRIDGE_MODE: 'adhoc' }));
    expect(out.code).toBe(1);
    const state = adhocState(emu);
    expect(state.map((r) => [r.key, r.status])).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
      ['DEMO-4', 'Passed'],
      ['DEMO-5', 'Failed'],
      // test.skip: reported (it only appears in the file's result), so the case gets a run left untested.
      ['DEMO-6', 'Not Tested'],
    ]);
    expect(state.find((r) => r.key === 'DEMO-5')?.files).toEqual([PNG_SHA]);
    expect(state.find((r) => r.key === 'DEMO-2')?.files).toEqual([LOG_SHA]);
  });
});

describe('Jest reporter, faults', () => {
  beforeEach(async () => {
    await emu.reset();
  });

  it('service down for the whole run: exit code untouched, results journaled, a replay gives the fault-free state', async () => {
    const dir = project('jest-down');
    const out = await jest(
      dir,
      [],
      cycleEnv('CI jest', { CASEBRIDGE_URL: 'http://127.0.0.1:9', CASEBRIDGE_FLUSH_TIMEOUT_MS: '5000' }),
    );
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/not delivered: kept in/);
    const journal = join(dir, '.casebridge', 'journal');
    expect(
      readdirSync(journal).filter((f) => f.endsWith('.json')).length,
      'one per mapped test, the skipped one too',
    ).toBe(5);
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
        { cwd: dir, runner: { name: 'jest' }, env: {}, out: () => undefined },
      );
      replay.begin();
      expect((await replay.end()).summary.journaled).toBe(0);
    }
    expect(cycleState(emu, 'CI jest').filter((r) => KEYS.includes(r.key))).toEqual(reference);
    expect(defects(emu)).toHaveLength(1);
    expect(readdirSync(journal).filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  it('failOnError: a passing run fails when delivery fails, and only then', async () => {
    const dir = project('jest-fail-on-error');
    const down = { CASEBRIDGE_URL: 'http://127.0.0.1:9', CASEBRIDGE_FLUSH_TIMEOUT_MS: '3000' };
    const failing = await jest(dir, ['-t', 'DEMO-4'], env({ ...down, CASEBRIDGE_FAIL_ON_ERROR: '1' }));
    expect(failing.code).not.toBe(0);
    expect(failing.stderr).toMatch(/failOnError fails the run/);
    const tolerant = await jest(dir, ['-t', 'DEMO-4'], env(down));
    expect(tolerant.code).toBe(0);
    const delivered = await jest(dir, ['-t', 'DEMO-4'], env({ CASEBRIDGE_FAIL_ON_ERROR: '1' }));
    expect(delivered.code, delivered.stderr).toBe(0);
    // The last run delivered its result and the two the earlier runs journaled: nothing lost, nothing doubled.
    expect(adhocState(emu).map((r) => [r.key, r.status])).toEqual([
      ['DEMO-4', 'Passed'],
      ['DEMO-4', 'Passed'],
      ['DEMO-4', 'Passed'],
    ]);
  });
});

describe('Jest reporter, watch mode', () => {
  beforeEach(async () => {
    await emu.reset();
  });

  it('reports nothing unless asked to', async () => {
    const dir = project('jest-watch-off');
    emu.clearRequests();
    const { output, matched } = await jestWatch(dir, cycleEnv('CI watch'), /Ran all test suites/);
    expect(matched, output).toBe(true);
    expect(output).not.toContain('casebridge:');
    expect(serviceRequests(emu)).toEqual([]);
  });

  it('with watch: true, reports the run', async () => {
    const dir = project('jest-watch-on');
    const { output, matched } = await jestWatch(
      dir,
      cycleEnv('CI watch', { CASEBRIDGE_WATCH: '1' }),
      /casebridge: \d+ test result/,
    );
    expect(matched, output).toBe(true);
    expect(expected(cycleState(emu, 'CI watch'))).toEqual(reference);
  });
});
