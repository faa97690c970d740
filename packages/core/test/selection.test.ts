import { describe, expect, it } from 'vitest';
import { caseIdentity } from '../src/engine/cases/identity.js';
import { cycleKeysInstead } from '../src/engine/selection.js';
import { Engine, type PlannedTest, TestManagementClient } from '../src/index.js';
import { useSilentServer } from './support/emulator.js';
import { base, ctx, project, useEngineWorld } from './support/engine-world.js';

/**
 * `Engine.selected` (option `select`) against the emulator: the planned tests of the cycle's cases by key or, without
 * one, by the identity of the case casebridge created; one line on what was selected and the cases no test maps, the
 * summary's `selection`; every test runs, with one line, when the selection cannot be made.
 */

const { emulator } = useEngineWorld();
const TOKEN = 'casebridge-dev-token';
const PLAN = { testPlanIssueKey: 'DEMO-1' };

const planned = (title: string, extra: Partial<PlannedTest> = {}): PlannedTest => ({
  id: `t.spec.ts>${title}`,
  file: 't.spec.ts',
  titlePath: [title],
  tags: [],
  annotations: [],
  ...extra,
});

/** A cycle `name` of DEMO-1 holding `keys`, each run with the status given (Not Tested when none). */
async function cycle(name: string, runs: Record<string, string | undefined>): Promise<number> {
  const tm = new TestManagementClient({ baseUrl: emulator().url, auth: { type: 'bearer', token: TOKEN } });
  try {
    await tm.plans.addCycle({ ...PLAN, name });
    await tm.cycles.workflow({ ...PLAN, cycleName: name, action: 'Start' });
    await tm.cycles.addMembersToTestCycle({ ...PLAN, testCycleName: name, addTestCaseKeys: Object.keys(runs) });
    for (const [key, result] of Object.entries(runs)) {
      if (result) await tm.runs.updateTestRun({ ...PLAN, cycleName: name, testcaseKey: key, result });
    }
    return (await tm.plans.cycles(PLAN)).find((c) => c.name === name)?.id ?? 0;
  } finally {
    await tm.close();
  }
}

/** A case casebridge created for `test` earlier (its identity in the description), added to the plan. */
async function createdCase(test: PlannedTest): Promise<string> {
  const tm = new TestManagementClient({ baseUrl: emulator().url, auth: { type: 'bearer', token: TOKEN } });
  try {
    const { key } = await tm.jira.createIssue({
      fields: {
        project: { key: 'DEMO' },
        issuetype: { name: 'Test Case' },
        summary: test.titlePath.join(' '),
        description: `Created by casebridge.\ncasebridge-id: ${caseIdentity({ ...test })}`,
      },
    });
    await tm.plans.addMembers({ ...PLAN, testCaseKeys: [key] });
    return key;
  } finally {
    await tm.close();
  }
}

describe('Engine.selected', () => {
  it('selects by key and by created case, lists the cases no test maps, and says it once', async () => {
    const keyless = planned('exports the report');
    const created = await createdCase(keyless);
    const id = await cycle('Nightly', {
      'DEMO-2': 'Failed',
      'DEMO-3': 'Passed',
      'DEMO-4': 'Failed',
      'DEMO-5': 'Failed',
      [created]: 'Failed',
    });
    const tests = [
      planned('DEMO-2 logs in'),
      planned('DEMO-3 logs out'),
      planned('profile', { tags: ['@DEMO-4'] }),
      planned('searches', { annotations: [{ type: 'testCase', description: 'DEMO-6' }] }),
      keyless,
      planned('has no case'),
    ];
    const lines: string[] = [];
    const engine = Engine.create(
      base(emulator().url, { autoCreate: true, select: { plan: 'DEMO-1', cycle: 'nightly', status: ['Failed'] } }),
      ctx(project(), lines),
    );
    const ids = await engine.selected(tests);
    expect([...(ids ?? [])]).toEqual(['t.spec.ts>DEMO-2 logs in', 't.spec.ts>profile', 't.spec.ts>exports the report']);
    expect(lines).toEqual([
      `casebridge: select: cycle "Nightly" (#${id}) of DEMO-1, status failed: 4 case(s) of 5 run(s): 3 of 6 test(s) run, 3 excluded`,
      "casebridge: select: 1 case(s) of the cycle have no test here: DEMO-5 (a key in a test's title, tag or annotation, or the mapping file, maps a test to its case)",
    ]);
    // Asked once: a second call selects nothing more and says nothing.
    expect(await engine.selected(tests)).toBeUndefined();
    engine.begin({ tests: tests.filter((t) => ids?.has(t.id)) });
    const end = await engine.end();
    expect(end.summary.selection).toEqual({
      plan: 'DEMO-1',
      cycle: 'Nightly',
      cycleId: id,
      filters: ['status failed'],
      cases: 4,
      tests: 6,
      selected: 3,
      uncovered: ['DEMO-5'],
    });
    const summary = lines.join('\n');
    expect(summary).toContain(
      `  select: 4 case(s) of cycle "Nightly" (#${id}) of DEMO-1 (status failed): 3 of 6 test(s) selected`,
    );
    expect(summary).toContain('  1 case(s) of the cycle have no test: DEMO-5');
  });

  it('without select: undefined, no request, no line', async () => {
    const lines: string[] = [];
    const engine = Engine.create(base(emulator().url), ctx(project(), lines));
    const before = emulator().requests().length;
    expect(await engine.selected([planned('DEMO-2 logs in')])).toBeUndefined();
    expect(emulator().requests().length).toBe(before);
    expect(lines).toEqual([]);
    expect((await engine.end()).summary.selection).toBeUndefined();
  });

  it('a dry run and a missing test plan: every test runs, one line says why', async () => {
    const dry: string[] = [];
    const a = Engine.create(
      base(emulator().url, { dryRun: true, select: { plan: 'DEMO-1', cycle: 'N' } }),
      ctx(project(), dry),
    );
    expect(await a.selected([planned('DEMO-2 x')])).toBeUndefined();
    expect(dry).toEqual([
      "casebridge: select: not applied in a dry run (it sends nothing, reads included); `npx @casebridge/cli cycle keys --plan DEMO-1 --cycle 'N'` lists the cases it would select; every test runs",
    ]);
    const none: string[] = [];
    const b = Engine.create(base(emulator().url, { select: { cycle: 'N' } }), ctx(project(), none));
    expect(await b.selected([planned('DEMO-2 x')])).toBeUndefined();
    expect(none).toEqual([
      'casebridge: select: no test plan to read the cycle from: set select.plan (CASEBRIDGE_SELECT_PLAN) or testPlan; every test runs',
    ]);
    const end = await b.end();
    expect(end.summary.selection?.problem).toContain('no test plan');
    expect(none.join('\n')).toContain('  select (cycle "N"): no test plan to read the cycle from');
  });

  it('CASEBRIDGE_SELECT_STATUS without a cycle: reporting stays on, nothing is selected, one line says why', async () => {
    for (const runner of ['playwright', 'jest']) {
      const lines: string[] = [];
      const engine = Engine.create(base(emulator().url), {
        ...ctx(project(), lines, { CASEBRIDGE_SELECT_STATUS: 'Failed,Blocked' }),
        runner: { name: runner },
      });
      expect(engine.enabled).toBe(true);
      engine.begin({ tests: [] });
      if (runner === 'playwright') expect(await engine.selected([planned('DEMO-2 x')])).toBeUndefined();
      expect(lines).toEqual([
        'casebridge: select: no cycle to select from: set select.cycle (CASEBRIDGE_SELECT_CYCLE) with status or tester; every test runs',
      ]);
      await engine.end();
    }
  });

  it('Jest and Vitest: begin says once that select needs Playwright 1.62+', async () => {
    const lines: string[] = [];
    const engine = Engine.create(base(emulator().url, { select: { plan: 'DEMO-1', cycle: 'Nightly' } }), {
      ...ctx(project(), lines),
      runner: { name: 'jest' },
    });
    engine.begin({ tests: [] });
    expect(lines.filter((l) => l.includes('select'))).toEqual([
      'casebridge: select (cycle "Nightly") is not applied: it needs Playwright 1.62+; `npx @casebridge/cli cycle keys --plan DEMO-1 --cycle Nightly --runner jest --file .casebridge/select.txt` writes the pattern for -t "$(cat .casebridge/select.txt)" or the config (see the CLI README); every test runs',
    ]);
    await engine.end();
  });
});

describe('Engine.selected when the service does not answer', () => {
  const silent = useSilentServer();

  it('gives up at timeoutMs: undefined (every test runs) and one line', async () => {
    const lines: string[] = [];
    const engine = Engine.create(
      base(await silent.url(), { flushTimeoutMs: 500, select: { plan: 'DEMO-1', cycle: 'Nightly' } }),
      ctx(project(), lines),
    );
    const started = Date.now();
    expect(await engine.selected([planned('DEMO-2 x')], { timeoutMs: 400 })).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^casebridge: select: cycle "Nightly" of DEMO-1 could not be read within 0\.4 s \(.+\); every test runs$/,
    );
  });
});

describe('cycleKeysInstead', () => {
  it('the cycle keys line of this very selection, quoted for a POSIX shell, shaped for the runner', () => {
    expect(
      cycleKeysInstead({ cycle: "Bob's nightly", status: ['Failed', 'Not Tested'], tester: 'me' }, 'P-1', 'vitest'),
    ).toBe(
      `\`npx @casebridge/cli cycle keys --plan P-1 --cycle 'Bob'\\''s nightly' --status 'Failed,Not Tested' --tester me --runner vitest --file .casebridge/select.txt\` writes the pattern for -t "$(cat .casebridge/select.txt)" or the config (see the CLI README)`,
    );
    expect(cycleKeysInstead({ cycle: '#12', status: [] }, undefined, 'playwright')).toBe(
      '`npx @casebridge/cli cycle keys --cycle \'#12\' --file .casebridge/select.txt` writes the pattern for --grep "$(cat .casebridge/select.txt)" or the config (see the CLI README)',
    );
  });
});
