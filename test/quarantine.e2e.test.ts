import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { fixture, playwright } from './support/runner.js';
import { serviceRequests } from './support/state.js';
import { admin, indexed, reporterEnv, useEmulator } from './support/world.js';

/**
 * Quarantine from the tool (issue 26, point 4), with the real runners against the real emulator over real HTTP. A
 * case is quarantined by a label on it, or by an open bug carrying the label that is linked to one of its runs.
 * Playwright 1.62+ runs quarantined tests expected-to-fail before the run (`preprocess`): a known failure keeps the
 * exit code 0, a pass is reported (and Playwright fails the run, as for any `test.fail()` that passes). Jest reports
 * a quarantined failure classified `quarantined`, with no new defect, and says how to leave it out.
 */

const LABEL = 'casebridge-quarantine';

const world = useEmulator();
let emu: RunningEmulator;
beforeAll(() => {
  emu = world();
});

/**
 * The demo project holds six cases: under the default cap (5 %, at least one) only one of this file's quarantines
 * would apply. A half lets them all apply; the cap has its own tests (quarantine-owner, core's quarantine-cap).
 */
const env = (extra: Record<string, string> = {}) =>
  reporterEnv(emu, { CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000', CASEBRIDGE_QUARANTINE_MAX: '0.5', ...extra });

/**
 * Puts the label on `key`, as a person did before the run: the change is committed by the next request and reaches
 * every node's search index after the realistic profile's lag (1 s).
 */
async function label(key: string): Promise<void> {
  const issue = emu.store.issues.find((i) => i.key === key);
  if (!issue) throw new Error(`${key} not found`);
  emu.store.issues.update({ ...issue, labels: [...issue.labels, LABEL] });
  await indexed(emu);
}

/** A bug a person files with the quarantine label and links to an earlier (ad hoc) run of `caseKey`. */
async function quarantineBug(caseKey: string): Promise<string> {
  const tm = admin(emu);
  try {
    const run = await tm.runs.adhocCreate({ testCaseIssueKey: caseKey });
    const { key } = await tm.jira.createIssue({
      fields: {
        project: { key: 'DEMO' },
        issuetype: { name: 'Bug' },
        summary: 'Search is flaky on CI',
        labels: [LABEL],
      },
    });
    await tm.runs.update({ runId: String((run as { id: number }).id), result: 'Failed', bugs: [key] });
    await indexed(emu);
    return key;
  } finally {
    await tm.close();
  }
}

/** The newest ad hoc run of `key`, as the emulator holds it. */
function lastRun(key: string) {
  const tc = emu.store.issues.find((i) => i.key === key);
  const adhoc = new Set(emu.store.cycles.filter((c) => c.adhocTcId === tc?.id).map((c) => c.id));
  const runs = emu.store.runs.filter((r) => adhoc.has(r.cycleId)).sort((a, b) => a.id - b.id);
  return runs[runs.length - 1];
}

const bugsOf = (runId: number | undefined) =>
  emu.store.bugLinks.filter((l) => l.runId === runId).map((l) => emu.store.issues.get(l.issueId)?.key);
const bugCount = () => emu.store.issues.filter((i) => i.type === 'Bug').length;

const PW_CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  workers: 1,
  reporter: [['line'], ['@casebridge/playwright', {}]],
});
`;

describe('quarantine, Playwright 1.62+ (preprocess)', () => {
  it('a quarantined test that fails keeps the exit code 0: its run says Failed and quarantined, no defect', async () => {
    await label('DEMO-3');
    const dir = fixture('quarantine-pw-fails', {
      'playwright.config.mjs': PW_CONFIG,
      'tests/a.spec.ts': `import { expect, test } from '@playwright/test';
test('DEMO-2 passes', async () => {});
test('DEMO-3 is known broken', async () => { expect(1, 'the known bug').toBe(2); });
`,
    });
    const out = await playwright(dir, ['test'], env());
    const text = out.stdout + out.stderr;
    expect(out.code, text).toBe(0);
    expect(text).toContain('quarantine (label casebridge-quarantine): 1 test(s) ran expected to fail');
    expect(text).toContain(
      '1 quarantined case(s) failed (label casebridge-quarantine): reported, no new defect: DEMO-3',
    );
    const run = lastRun('DEMO-3');
    expect(run?.status).toBe('Failed');
    expect(run?.comment).toContain('Classification: quarantined (quarantined: label casebridge-quarantine)');
    expect(lastRun('DEMO-2')?.status).toBe('Passed');
    expect(bugCount()).toBe(0);
    // One search before the run (the label), none per test; a history read for the failure, no defect search.
    const ops = serviceRequests(emu).map((r) => r.op);
    expect(
      ops.filter((op) => op === 'jira.search'),
      ops.join(' '),
    ).toHaveLength(1);
    expect(ops.filter((op) => op === 'runs.caseTestRuns')).toHaveLength(1);
  }, 120_000);

  it('a test quarantined by a labelled bug that passes is reported Passed, and named as passing', async () => {
    const bug = await quarantineBug('DEMO-4');
    const dir = fixture('quarantine-pw-passes', {
      'playwright.config.mjs': PW_CONFIG,
      'tests/a.spec.ts': `import { test } from '@playwright/test';
test('DEMO-4 search works again', async () => {});
`,
    });
    const out = await playwright(dir, ['test'], env());
    const text = out.stdout + out.stderr;
    // Playwright fails a test expected to fail that passed: the surprise is visible in CI, and in the summary.
    expect(out.code, text).toBe(1);
    expect(text).toContain('1 quarantined case(s) passed: DEMO-4');
    expect(lastRun('DEMO-4')?.status).toBe('Passed');
    expect(bugsOf(lastRun('DEMO-4')?.id)).toEqual([]);
    expect(emu.store.issues.find((i) => i.key === bug)?.labels).toContain(LABEL);
  }, 120_000);
});

describe('quarantine, Jest (no preprocess)', () => {
  it('a quarantined failure is reported Failed, classified quarantined, its known bug linked, nothing filed', async () => {
    const bug = await quarantineBug('DEMO-4');
    await label('DEMO-3');
    const dir = fixture('quarantine-jest', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': jestConfig(),
      'tests/a.test.js': `test('DEMO-2 passes', () => {});
test('DEMO-3 is known broken', () => { expect(1).toBe(2); });
test('DEMO-4 searches', () => { expect('flaky').toBe('stable'); });
test('DEMO-5 fails for the first time', () => { expect(3).toBe(4); });
`,
    });
    const out = await jest(dir, [], env());
    const text = out.stdout + out.stderr;
    expect(out.code, text).toBe(1);
    expect(text).toContain('2 quarantined case(s) failed (label casebridge-quarantine): reported, no new defect: ');
    expect(text).toContain('cycle keys --quarantined --runner <playwright|vitest|jest>');
    expect(lastRun('DEMO-3')?.comment).toContain(
      'Classification: quarantined (quarantined: label casebridge-quarantine)',
    );
    expect(lastRun('DEMO-4')?.comment).toContain(`Classification: quarantined (quarantined: bug ${bug}`);
    // The bug that quarantines DEMO-4 is linked to its earlier failed run: the history links it again.
    expect(bugsOf(lastRun('DEMO-4')?.id)).toEqual([bug]);
    expect(bugsOf(lastRun('DEMO-3')?.id)).toEqual([]);
    // Only the failure that is not quarantined files a defect.
    expect(bugCount()).toBe(2);
    expect(bugsOf(lastRun('DEMO-5')?.id)).toHaveLength(1);
    expect(lastRun('DEMO-5')?.comment).toContain('Classification: new');
  }, 120_000);
});
