import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { fixture, playwright } from './support/runner.js';
import { VITEST_FILES, vitest } from './support/vitest.js';
import { admin, indexed, reporterEnv, useEmulator } from './support/world.js';

/**
 * Known bugs and classification from the case history (issue 26, points 2 and 3; packages/core defects/history.ts
 * and classify.ts) end to end: the real Vitest, Playwright and Jest on fixture projects, the real emulator, real
 * HTTP. A bug a person filed and linked to a failed run is linked on the next failure (Vitest); a test that passed
 * last run and fails now is new (Vitest); passed on retry is flaky and a failure seen before is known (Playwright);
 * a closed known bug makes a regression filed anew (Jest). The engine-level cases (flips, a history that cannot be
 * read) are in packages/core/test/defects/engine-history.test.ts; the Jest flood and "new then known" in
 * defect-flood.e2e.test.ts.
 */

const world = useEmulator();
let emu: RunningEmulator;
beforeAll(() => {
  emu = world();
});

const cycleEnv = (cycle: string, extra: Record<string, string> = {}) =>
  reporterEnv(emu, {
    CASEBRIDGE_MODE: 'cycle',
    CASEBRIDGE_TEST_PLAN: 'DEMO-1',
    CASEBRIDGE_CYCLE: cycle,
    CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
    ...extra,
  });

const keyOf = (issueId: number) => emu.store.issues.get(issueId)?.key ?? `?${issueId}`;
const bugs = () => emu.store.issues.filter((i) => i.type === 'Bug');

/** The runs of a cycle by case key: id, status, comment and linked defect keys. */
function runsOf(cycleName: string) {
  const s = emu.store;
  const cycle = s.cycles.find((c) => c.name === cycleName);
  if (!cycle) throw new Error(`no cycle "${cycleName}"`);
  return new Map(
    s.runs
      .filter((r) => r.cycleId === cycle.id)
      .map((r) => [
        keyOf(r.tcId),
        {
          id: r.id,
          status: r.status,
          comment: r.comment ?? '',
          bugs: [...new Set(s.bugLinks.filter((b) => b.runId === r.id).map((b) => keyOf(b.issueId)))].sort(),
        },
      ]),
  );
}

/** The cases whose execution history was read since request `since` (`GET /testRun/{key}/testRuns`). */
const historyReads = (since: number) =>
  emu
    .requests()
    .filter((r) => r.seq > since && r.op === 'runs.caseTestRuns')
    .map((r) => /\/testRun\/([^/]+)\/testRuns/.exec(r.path)?.[1])
    .sort();
const lastSeq = () => emu.requests().at(-1)?.seq ?? 0;

/** A bug a person files in Jira (no casebridge marker) and links to a run in synapseRT, over HTTP. */
async function linkByHand(runId: number, summary: string): Promise<string> {
  const tm = admin(emu);
  try {
    const { key } = await tm.jira.createIssue({
      fields: { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary },
    });
    await tm.runs.update({ runId: String(runId), bugs: [key] });
    await indexed(emu);
    return key;
  } finally {
    await tm.close();
  }
}

/** A person resolves the bug (as engine-history.test.ts does: the workflow is not what is tested here). */
function close(key: string): void {
  const issue = emu.store.issues.find((i) => i.key === key);
  if (!issue) throw new Error(`${key} not found`);
  emu.store.issues.update({ ...issue, status: 'Done', resolution: 'Done' });
}

const SIGNATURE = /^casebridge signature: cb-[0-9a-f]{16}$/m;

describe('Vitest: a bug linked by hand, and a failure after a pass', () => {
  it('the person-linked bug is linked on the next failure (known), nothing filed for it; a failure after a pass is new', async () => {
    // DEMO-3 fails in both runs; DEMO-4 passes in the first and fails in the second (SEARCH_BROKEN).
    const dir = fixture('vt-history', {
      'vitest.config.mjs': VITEST_FILES['vitest.config.mjs'] as string,
      'tests/history.spec.ts': `
import { expect, test } from 'vitest';

test('DEMO-2 logs in', () => {});

test('DEMO-3 logs out', () => {
  expect('dashboard', 'the login page is shown').toBe('login');
});

test('DEMO-4 search finds the teapot', () => {
  expect(process.env.SEARCH_BROKEN ? [] : ['teapot'], 'the teapot is listed').toEqual(['teapot']);
});
`,
    });

    // A team that files its bugs by hand: casebridge's defects off in the first run.
    const first = await vitest(dir, ['run'], cycleEnv('vt 1', { CASEBRIDGE_DEFECTS: 'false' }));
    expect(first.code, 'the failing test fails the run').toBe(1);
    const runs1 = runsOf('vt 1');
    expect(runs1.get('DEMO-3')?.status).toBe('Failed');
    expect(runs1.get('DEMO-3')?.comment).toContain('Classification: new (first failure of the case)');
    expect(runs1.get('DEMO-3')?.comment).toMatch(SIGNATURE);
    expect(runs1.get('DEMO-4')?.status).toBe('Passed');
    expect(bugs()).toEqual([]);

    const human = await linkByHand(runs1.get('DEMO-3')?.id as number, 'Logout leaves the dashboard open');
    const since = lastSeq();
    const second = await vitest(dir, ['run'], cycleEnv('vt 2', { SEARCH_BROKEN: '1' }));
    const text = second.stderr + second.stdout;
    expect(second.code, 'a known failure still fails the run').toBe(1);
    const runs2 = runsOf('vt 2');
    expect([...runs2.keys()].sort(), 'one run per case reported').toEqual(['DEMO-2', 'DEMO-3', 'DEMO-4']);
    expect(runs2.get('DEMO-2')).toMatchObject({ status: 'Passed', comment: '', bugs: [] });

    // (1) Known: the person's bug is linked, no defect is filed for DEMO-3.
    expect(runs2.get('DEMO-3'), text).toMatchObject({ status: 'Failed', bugs: [human] });
    expect(runs2.get('DEMO-3')?.comment).toContain(`Classification: known (known bug ${human} is open)`);
    expect(runs2.get('DEMO-3')?.comment).toMatch(SIGNATURE);

    // (2) New: DEMO-4 passed last run; its failure files the run's only defect.
    const run4 = runs2.get('DEMO-4');
    expect(run4?.status).toBe('Failed');
    expect(run4?.comment).toContain(`Classification: new (its last run (${runs1.get('DEMO-4')?.id}) passed)`);
    expect(run4?.bugs).toHaveLength(1);
    const filed = bugs().filter((b) => b.key !== human);
    expect(filed.map((b) => b.key)).toEqual(run4?.bugs);
    expect(filed[0]?.summary).toMatch(/^DEMO-4 search finds the teapot: .*\[cb-[0-9a-f]{16}\]$/);
    expect(emu.store.issues.find((i) => i.key === human)?.resolution).toBeNull();

    // One history read per failing case, none for the passing DEMO-2.
    expect(historyReads(since)).toEqual(['DEMO-3', 'DEMO-4']);
    expect(text).toContain('failures: 2 (1 new, 1 known)');
    expect(text).toContain(`defects linked: ${human}`);
    expect(text).toContain('defects created: 1');
  });
});

describe('Playwright (retries: 1): flaky and known', () => {
  it('a test passing on retry is flaky; a test failing in two runs is new, then known with its defect linked', async () => {
    const dir = fixture('pw-history', {
      'playwright.config.mjs': `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  retries: 1,
  workers: 2,
  reporter: [['line'], ['@casebridge/playwright', {}]],
});
`,
      // No page fixture: no browser is started. The passing test first: each failed attempt starts a new worker, and
      // a test after the last failure would cost one more.
      'tests/history.spec.ts': `
import { expect, test } from '@playwright/test';

test('DEMO-4 search finds the teapot', async () => {});

test('DEMO-2 logs in', async ({}, testInfo) => {
  expect(testInfo.retry, 'passes on the second attempt').toBe(1);
});

test('DEMO-5 pays with the saved card', async () => {
  expect(2, 'the saved card is preselected').toBe(1);
});
`,
    });

    const since1 = lastSeq();
    const first = await playwright(dir, ['test'], cycleEnv('pw 1'));
    const text1 = first.stderr + first.stdout;
    expect(first.code, 'the failing test fails the run').toBe(1);
    const runs1 = runsOf('pw 1');
    expect([...runs1.keys()].sort(), 'one run per case reported').toEqual(['DEMO-2', 'DEMO-4', 'DEMO-5']);
    expect(runs1.get('DEMO-2'), text1).toMatchObject({ status: 'Passed', bugs: [] });
    expect(runs1.get('DEMO-2')?.comment).toContain('Classification: flaky (passed on retry)');
    expect(runs1.get('DEMO-2')?.comment).toMatch(SIGNATURE);
    expect(runs1.get('DEMO-5')?.status).toBe('Failed');
    expect(runs1.get('DEMO-5')?.comment).toContain('Classification: new (first failure of the case)');
    expect(runs1.get('DEMO-4')).toMatchObject({ status: 'Passed', comment: '' });
    expect(bugs()).toHaveLength(1);
    const defect = bugs()[0]?.key;
    expect(runs1.get('DEMO-5')?.bugs).toEqual([defect]);
    // A flaky result is classified without a history read; the passing test reads none either.
    expect(historyReads(since1)).toEqual(['DEMO-5']);
    expect(text1).toContain('failures: 1 (1 new)');

    const second = await playwright(dir, ['test'], cycleEnv('pw 2'));
    const text2 = second.stderr + second.stdout;
    expect(second.code, 'a known failure still fails the run').toBe(1);
    const runs2 = runsOf('pw 2');
    expect([...runs2.keys()].sort(), 'one run per case reported').toEqual(['DEMO-2', 'DEMO-4', 'DEMO-5']);
    expect(runs2.get('DEMO-5'), text2).toMatchObject({ status: 'Failed', bugs: [defect] });
    // Its known bug is its group's own defect, found open by the defect search: known by its signature.
    expect(runs2.get('DEMO-5')?.comment).toMatch(/Classification: known \(failed the same way in run \d+\)/);
    expect(runs2.get('DEMO-2')?.comment).toContain('Classification: flaky (passed on retry)');
    expect(bugs(), 'the first run\u2019s defect is linked again, nothing new is filed').toHaveLength(1);
    expect(text2).toContain('failures: 1 (1 known)');
    expect(text2).toContain(`defects linked: ${defect}`);
    expect(text2).not.toContain('defects created');
  });
});

describe('Jest: a closed known bug', () => {
  it('makes the failure a regression: a new defect names the closed bug, which stays closed', async () => {
    const dir = fixture('jest-history-regression', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': jestConfig(),
      'tests/checkout.test.js': `test('DEMO-5 pays with the saved card', () => { expect({ card: 'none' }).toEqual({ card: 'saved' }); });\n`,
    });
    const first = await jest(dir, [], cycleEnv('jest 1', { CASEBRIDGE_DEFECTS: 'false' }));
    expect(first.code).toBe(1);
    const runs1 = runsOf('jest 1');
    expect(runs1.get('DEMO-5')?.comment, first.stderr).toMatch(SIGNATURE);
    const human = await linkByHand(runs1.get('DEMO-5')?.id as number, 'Saved card is not preselected');
    close(human);
    await indexed(emu);

    const second = await jest(dir, [], cycleEnv('jest 2'));
    expect(second.code, 'a regression fails the run as any failure').toBe(1);
    const run = runsOf('jest 2').get('DEMO-5');
    const fresh = bugs().filter((b) => b.key !== human);
    expect(fresh, second.stderr).toHaveLength(1);
    expect(run).toMatchObject({ status: 'Failed', bugs: [fresh[0]?.key] });
    expect(run?.comment).toContain(`Classification: regression (its known bug ${human} is closed)`);
    // The wording of packages/core defects/text.ts: the regression's description names the closed bug first.
    expect(fresh[0]?.description.split('\n')[0]).toBe(`Regression of ${human}: it had the same failure and is closed.`);
    expect(fresh[0]?.summary).toMatch(/\[cb-[0-9a-f]{16}\]$/);
    // Closed bugs reopen nothing.
    expect(emu.store.issues.find((i) => i.key === human)).toMatchObject({ status: 'Done', resolution: 'Done' });
    expect(second.stderr).toContain('failures: 1 (1 regression)');
    expect(second.stderr).toContain('defects created: 1');
    expect(second.stderr).not.toContain('defects linked');
  });
});
