import { describe, expect, it } from 'vitest';
import { quarantineList } from '../../src/engine/defects/quarantine-manage.js';
import { base, ctx, project, report, result, useEngineWorld } from '../support/engine-world.js';

/**
 * The cap (`quarantine.max`) in the reporters' own quarantine: quarantines a person added by hand past it do not
 * apply. Those `quarantine add` made apply first, then hand-made ones by key; the others are run and reported as any failure
 * (classified, a defect filed), and the summary names them with the cap's figures. `casebridge quarantine list`
 * reads the same and marks them.
 */

const world = useEngineWorld();
const LABEL = 'casebridge-quarantine';

/** Labels cases by hand, as a person does in Jira. */
function label(...keys: string[]): void {
  const store = world.emulator().store;
  for (const key of keys) {
    const issue = store.issues.find((i) => i.key === key);
    if (!issue) throw new Error(`${key} is not in the seed`);
    store.issues.update({ ...issue, labels: [...issue.labels, LABEL] });
  }
}

/** `casebridge quarantine list`'s read, as a person's client makes it; `cap` as the configuration gives it. */
async function list(cap?: { max: number; plan: string }) {
  const tm = world.admin();
  try {
    return await quarantineList({
      tm,
      projectKey: 'DEMO',
      label: LABEL,
      caseType: 'Test Case',
      ...(cap ? { cap } : {}),
    });
  } finally {
    await tm.close();
  }
}

describe('the quarantine cap in a run', () => {
  it('past quarantine.max the newest quarantines do not apply: reported as failures, named in the summary', async () => {
    const emu = world.emulator();
    const plan = emu.store.issues.find((i) => i.key === 'DEMO-1');
    expect(plan?.type).toBe('Test Plan');
    label('DEMO-4', 'DEMO-2', 'DEMO-3');
    const lines: string[] = [];
    const options = base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', quarantine: { max: 0.34 } });
    const end = await report(
      options,
      [result('DEMO-2 logs in', 'failed'), result('DEMO-3 logs out', 'failed'), result('DEMO-4 searches', 'failed')],
      { ...ctx(project(), lines), runner: { name: 'jest' } },
    );
    // The plan's 6 cases × 0.34: 2 quarantines apply, DEMO-2 and DEMO-3 (the lowest keys); DEMO-4 is past the cap.
    expect(end.summary.quarantine?.failed.sort()).toEqual(['DEMO-2', 'DEMO-3']);
    expect(end.summary.failures?.map((f) => [f.key, f.classification]).sort()).toEqual([
      ['DEMO-2', 'quarantined'],
      ['DEMO-3', 'quarantined'],
      ['DEMO-4', 'new'],
    ]);
    expect(end.summary.failures?.find((f) => f.key === 'DEMO-4')?.defectCreated).toBe(true);
    const text = lines.join('\n');
    expect(text).toContain(
      '1 quarantine(s) past the cap, not applied (label casebridge-quarantine): DEMO-4; quarantine.max 0.34 allows 2 of the 6 cases of test plan DEMO-1 (those made with casebridge quarantine add first)',
    );

    const listed = await list({ max: 0.34, plan: 'DEMO-1' });
    expect(listed.cases.map((e) => [e.key, e.overCap ?? false])).toEqual([
      ['DEMO-2', false],
      ['DEMO-3', false],
      ['DEMO-4', true],
    ]);
    // Without a cap (quarantine add's own read) every quarantine is listed as active.
    expect((await list()).cases.some((e) => e.overCap)).toBe(false);
  });

  it('cases that cannot be counted leave every quarantine applied, and the summary says the cap was not checked', async () => {
    const emu = world.emulator();
    label('DEMO-2', 'DEMO-3');
    const lines: string[] = [];
    // Ad hoc, with a test plan key that is not there (a typo in the configuration): its members cannot be read.
    const end = await report(
      base(emu.url, { mode: 'adhoc', testPlan: 'DEMO-99', quarantine: { max: 0.01 } }),
      [result('DEMO-2 logs in', 'failed'), result('DEMO-3 logs out', 'failed')],
      { ...ctx(project(), lines), runner: { name: 'jest' } },
    );
    expect(end.summary.quarantine?.failed.sort()).toEqual(['DEMO-2', 'DEMO-3']);
    expect(lines.join('\n')).toMatch(
      /quarantine cap not checked \(the cases could not be counted: .*DEMO-99.*\): every quarantine applied/,
    );
    const listed = await list({ max: 0.01, plan: 'DEMO-99' });
    expect(listed.cases.map((e) => e.overCap ?? false)).toEqual([false, false]);
    expect(listed.capUnread).toContain('DEMO-99');
  });

  it('one quarantine costs no count of the cases: a cap always allows one', async () => {
    const emu = world.emulator();
    label('DEMO-2');
    const before = emu.requests().length;
    const end = await report(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', quarantine: { max: 0.01 } }),
      [result('DEMO-2 logs in', 'failed')],
      { ...ctx(project(), []), runner: { name: 'jest' } },
    );
    expect(end.summary.quarantine?.failed).toEqual(['DEMO-2']);
    const ops = emu
      .requests()
      .slice(before)
      .map((q) => q.op);
    expect(ops).not.toContain('plans.members');
  });

  it('an expired quarantine no longer applies where the set is read at the first failure (Jest, Vitest)', async () => {
    const emu = world.emulator();
    label('DEMO-2', 'DEMO-3');
    const three = emu.store.issues.find((i) => i.key === 'DEMO-3');
    if (!three) throw new Error('DEMO-3 is not in the seed');
    emu.store.issues.update({
      ...three,
      description: 'casebridge-quarantine: reason=slow login; owner=dana; until=2020-01-31',
    });
    const lines: string[] = [];
    const end = await report(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', quarantine: { max: 1 } }),
      [result('DEMO-2 logs in', 'failed'), result('DEMO-3 logs out', 'failed')],
      { ...ctx(project(), lines), runner: { name: 'vitest' } },
    );
    expect(end.summary.failures?.map((f) => [f.key, f.classification]).sort()).toEqual([
      ['DEMO-2', 'quarantined'],
      ['DEMO-3', 'new'],
    ]);
    expect(lines.join('\n')).toContain(
      '1 quarantine(s) expired, no longer applied (label casebridge-quarantine): DEMO-3',
    );
  });
});
