import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/engine/config/load.js';
import type { AttemptStatus, TestResult } from '../../src/engine/kernel/model.js';
import { statusRanker, worseOf } from '../../src/engine/kernel/status-rank.js';
import { DEFAULT_STATUS_MAP, runStatusOf, type StatusMap, statusMapKeyOf } from '../../src/engine/kernel/work.js';

const builtIn = statusRanker();
const worseStatus = (a: string | undefined, b: string | undefined) => worseOf(builtIn, a, b);
const isWorse = (a: string, b: string) => builtIn(a) > builtIn(b);

/** `statusMap`: which run status each kind of result writes, how it is read and checked, and the rank of each. */

const base = { url: 'https://jira.example.com', token: 'pat-123456', projectKey: 'DEMO' };
const noFile = () => mkdtempSync(join(tmpdir(), 'cb-status-map-'));

function result(statuses: AttemptStatus[], extra: Partial<TestResult> = {}): TestResult {
  return {
    id: 'x',
    file: 'a.test.ts',
    titlePath: ['DEMO-2 works'],
    tags: [],
    annotations: [],
    attempts: statuses.map((status, retry) => ({
      retry,
      status,
      durationMs: 1,
      errors: [],
      steps: [],
      attachments: [],
    })),
    ...extra,
  };
}

const KINDS = {
  passed: result(['passed']),
  failed: result(['failed']),
  timedOut: result(['timedOut']),
  flaky: result(['failed', 'passed']),
  flakyAfterTimeout: result(['timedOut', 'passed']),
  skipped: result(['skipped']),
  interrupted: result(['interrupted']),
  noAttempt: result([]),
  failedAfterTimeout: result(['timedOut', 'failed']),
  expectedToFailTimedOut: result(['timedOut'], { expectedToFail: true }),
};

function load(options: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  return loadConfig({ ...base, ...options }, { env, cwd: noFile() });
}

describe('statusMap: the status a result writes', () => {
  it('the defaults are the mapping casebridge always had; a timeout is a failure', () => {
    const statuses = Object.fromEntries(Object.entries(KINDS).map(([k, t]) => [k, runStatusOf(t)]));
    expect(statuses).toEqual({
      passed: 'Passed',
      failed: 'Failed',
      timedOut: 'Failed',
      flaky: 'Passed',
      flakyAfterTimeout: 'Passed',
      skipped: undefined,
      interrupted: 'Blocked',
      noAttempt: undefined,
      failedAfterTimeout: 'Failed',
      expectedToFailTimedOut: 'Passed',
    });
    // The config's defaults are the same map.
    const r = load({});
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.config.statusMap).toEqual(DEFAULT_STATUS_MAP);
  });

  it('the last attempt decides whether a failure timed out; a test expected to fail that timed out passed', () => {
    expect(statusMapKeyOf(KINDS.timedOut)).toBe('timedOut');
    expect(statusMapKeyOf(KINDS.failedAfterTimeout)).toBe('failed');
    expect(statusMapKeyOf(KINDS.flakyAfterTimeout)).toBe('flaky');
    expect(statusMapKeyOf(KINDS.expectedToFailTimedOut)).toBe('passed');
    expect(statusMapKeyOf(KINDS.noAttempt)).toBe('skipped');
  });

  it('maps each kind; null leaves the run as it is; timedOut follows failed unless set', () => {
    const map: StatusMap = {
      passed: 'Passed',
      failed: 'Blocked',
      flaky: 'Failed',
      skipped: 'Not Tested',
      interrupted: null,
    };
    expect(runStatusOf(KINDS.skipped, map)).toBe('Not Tested');
    expect(runStatusOf(KINDS.flaky, map)).toBe('Failed');
    expect(runStatusOf(KINDS.failed, map)).toBe('Blocked');
    expect(runStatusOf(KINDS.timedOut, map), 'as failed').toBe('Blocked');
    expect(runStatusOf(KINDS.interrupted, map)).toBeUndefined();
    expect(runStatusOf(KINDS.timedOut, { ...map, timedOut: 'NA' })).toBe('NA');
    expect(runStatusOf(KINDS.timedOut, { ...map, timedOut: null }), 'null is not "as failed"').toBeUndefined();
    expect(runStatusOf(KINDS.failed, { ...map, timedOut: 'NA' })).toBe('Blocked');
  });
});

describe('statusMap: the option', () => {
  it('takes the five built-in statuses in any case, normalised; null and "unchanged" leave the run', () => {
    const r = load({
      statusMap: {
        skipped: 'not  tested',
        flaky: 'FAILED',
        timedOut: 'na',
        interrupted: 'Unchanged',
        passed: null,
        failed: ' blocked ',
      },
    });
    expect(r.ok, r.ok ? '' : r.problems.join('\n')).toBe(true);
    if (!r.ok) return;
    expect(r.config.statusMap).toEqual({
      skipped: 'Not Tested',
      flaky: 'Failed',
      timedOut: 'NA',
      interrupted: null,
      passed: null,
      failed: 'Blocked',
    });
  });

  it("takes the instance's own names (renamed, custom) as given; refuses an empty name and an unknown kind", () => {
    const r = load({ statusMap: { skipped: ' Übersprungen ', failed: 'Fehlgeschlagen', flaky: 'Retest  Needed' } });
    expect(r.ok, r.ok ? '' : r.problems.join('\n')).toBe(true);
    if (r.ok) {
      expect(r.config.statusMap).toMatchObject({
        skipped: 'Übersprungen',
        failed: 'Fehlgeschlagen',
        flaky: 'Retest Needed',
        passed: 'Passed',
      });
    }
    const empty = load({ statusMap: { skipped: '  ' } });
    expect(empty.ok).toBe(false);
    if (!empty.ok) {
      expect(empty.problems).toHaveLength(1);
      expect(empty.problems[0]).toMatch(
        /^statusMap\.skipped \(CASEBRIDGE_STATUS_MAP\): expected a run status as your instance names it/,
      );
      expect(empty.problems[0]).toContain('got an empty name');
    }
    const unknown = load({ statusMap: { todo: 'Passed' } });
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.problems.join('\n')).toMatch(/statusMap.*unknown option\(s\) todo/);
    const wrongType = load({ statusMap: { skipped: 3 } });
    expect(wrongType.ok).toBe(false);
  });

  it('CASEBRIDGE_STATUS_MAP: outcome=status pairs; merged with the config file key by key; inline options win', () => {
    const r = load({}, { CASEBRIDGE_STATUS_MAP: 'skipped=Not Tested, flaky=failed,interrupted=null,timedOut=' });
    expect(r.ok, r.ok ? '' : r.problems.join('\n')).toBe(true);
    if (r.ok) {
      expect(r.config.statusMap).toEqual({
        ...DEFAULT_STATUS_MAP,
        skipped: 'Not Tested',
        flaky: 'Failed',
        interrupted: null,
        timedOut: null,
      });
    }
    const cwd = noFile();
    writeFileSync(
      join(cwd, 'casebridge.config.json'),
      JSON.stringify({ ...base, statusMap: { skipped: 'NA', passed: 'Passed', failed: 'Blocked' } }),
    );
    const merged = loadConfig(
      { statusMap: { failed: 'Failed' } },
      { env: { CASEBRIDGE_STATUS_MAP: 'skipped=Not Tested' }, cwd },
    );
    expect(merged.ok).toBe(true);
    if (merged.ok) {
      expect(merged.config.statusMap).toMatchObject({ skipped: 'Not Tested', passed: 'Passed', failed: 'Failed' });
    }
  });

  it('CASEBRIDGE_STATUS_MAP: a pair without = or an unknown outcome is named; a custom status is taken', () => {
    const r = load({}, { CASEBRIDGE_STATUS_MAP: 'skipped:Not Tested,later=Passed' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      expect.stringMatching(/^CASEBRIDGE_STATUS_MAP: expected outcome=status pairs .* got "skipped:Not Tested"$/),
      expect.stringMatching(/^CASEBRIDGE_STATUS_MAP: .* got "later=Passed"$/),
    ]);
    const custom = load({}, { CASEBRIDGE_STATUS_MAP: 'flaky=Wobbly,skipped=not TESTED' });
    expect(custom.ok).toBe(true);
    if (custom.ok) expect(custom.config.statusMap).toMatchObject({ flaky: 'Wobbly', skipped: 'Not Tested' });
  });
});

describe('statusMap: the worse status wins with mapped statuses', () => {
  it('NA < Passed < Not Tested < Blocked < Failed, whatever the case; a custom status ranks below all', () => {
    const order = ['NA', 'Passed', 'Not Tested', 'Blocked', 'Failed'];
    for (let i = 0; i < order.length; i++) {
      for (let j = 0; j < order.length; j++) {
        const [a, b] = [order[i] as string, order[j] as string];
        expect(worseStatus(a, b), `${a} vs ${b}`).toBe(order[Math.max(i, j)]);
        expect(isWorse(a.toUpperCase(), b.toLowerCase()), `${a} worse than ${b}`).toBe(i > j);
      }
    }
    expect(worseStatus('Retest', 'NA')).toBe('NA');
    expect(worseStatus('Passed', undefined)).toBe('Passed');
    expect(worseStatus(undefined, 'Not Tested')).toBe('Not Tested');
  });
});

describe('statusMap: renamed and custom statuses rank as the outcome they are mapped from', () => {
  it('a renamed Failed is as bad as Failed; a name mapped from two outcomes takes the worse; unmapped ranks lowest', () => {
    const rank = statusRanker({
      passed: 'Bestanden',
      failed: 'Fehlgeschlagen',
      timedOut: 'Zeit',
      flaky: 'Wackelig',
      skipped: 'Zeit',
      interrupted: 'Abgebrochen',
    });
    expect(worseOf(rank, 'Bestanden', 'fehlgeschlagen')).toBe('fehlgeschlagen');
    expect(worseOf(rank, 'Fehlgeschlagen', 'Abgebrochen')).toBe('Fehlgeschlagen');
    expect(worseOf(rank, 'Abgebrochen', 'Wackelig')).toBe('Abgebrochen');
    expect(rank('Zeit'), 'timedOut and skipped: the worse, failed').toBe(rank('Failed'));
    expect(worseOf(rank, 'Wackelig', 'NA'), 'flaky ranks as Passed, above NA').toBe('Wackelig');
    expect(worseOf(rank, 'Retest', 'NA'), 'a status no outcome maps to ranks below all').toBe('NA');
    expect(rank('Passed'), 'built-in names keep their rank').toBe(2);
    expect(worseOf(rank, undefined, 'Zeit')).toBe('Zeit');
    // The default map ranks as the built-in order.
    const plain = statusRanker(DEFAULT_STATUS_MAP);
    for (const [a, b] of [
      ['NA', 'Passed'],
      ['Passed', 'Not Tested'],
      ['Not Tested', 'Blocked'],
      ['Blocked', 'Failed'],
    ]) {
      expect(worseOf(plain, a, b)).toBe(b);
    }
  });
});
