import { describe, expect, it } from 'vitest';
import {
  findCycleRef,
  matchStatuses,
  readCycleCases,
  SelectionError,
  sameName,
  selectPlanned,
} from '../../src/engine/cases/select.js';
import type { TestManagementClient } from '../../src/index.js';

/** The pure part of a selection (option `select`, `casebridge cycle keys`): statuses, cycle names, matching. */

describe('matchStatuses', () => {
  it('takes the built-in and the seen statuses in any case and spacing', () => {
    expect([...matchStatuses(['FAILED', 'not  tested', 'retest'], ['Retest'], 'select.status')]).toEqual([
      'failed',
      'not tested',
      'retest',
    ]);
  });

  it('an unknown status is a usage error naming the option and the valid ones', () => {
    let err: unknown;
    try {
      matchStatuses(['Faild'], ['Retest'], 'select.status');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SelectionError);
    expect((err as SelectionError).usage).toBe(true);
    expect((err as Error).message).toBe(
      'select.status: "Faild" is not a run status; expected one or more of "Passed", "Failed", "Blocked", "Not Tested", "NA", "Retest", comma-separated (case does not matter)',
    );
  });
});

describe('findCycleRef', () => {
  const cycles = [
    { id: 3, name: 'Nightly' },
    { id: 7, name: '42' },
    { id: 42, name: 'Weekly' },
    { id: 9, name: 'nightly run' },
  ];
  it('#id, a name, digits as a name first, a name in another case when only one matches', () => {
    expect(findCycleRef(cycles, '#42', 'P-1').id).toBe(42);
    expect(findCycleRef(cycles, 'Nightly', 'P-1').id).toBe(3);
    expect(findCycleRef(cycles, '42', 'P-1').id).toBe(7);
    expect(findCycleRef(cycles, '9', 'P-1').id).toBe(9);
    expect(findCycleRef(cycles, 'NIGHTLY  RUN', 'P-1').id).toBe(9);
  });
  it("a cycle that is not there names the plan's cycles; not a usage error", () => {
    expect(() => findCycleRef(cycles, 'Monthly', 'P-1')).toThrow(
      'test plan P-1 has no cycle "Monthly": it has "Nightly" (#3), "42" (#7), "Weekly" (#42), "nightly run" (#9)',
    );
    expect(() => findCycleRef([], '#5', 'P-1')).toThrow('test plan P-1 has no cycle with id 5: it has none');
    try {
      findCycleRef([], 'x', 'P-1');
    } catch (e) {
      expect((e as SelectionError).usage).toBe(false);
    }
  });
});

describe('selectPlanned', () => {
  const t = (id: string, keys: string[], created?: string) => ({ id, keys, created });
  const keysOf = (x: { keys: string[] }) => x.keys;
  const createdKey = (x: { created?: string }) => x.created;

  it('selects by own keys, by the created case without one, and lists the cases no test maps in cycle order', () => {
    const tests = [
      t('a', ['P-2']),
      t('b', ['P-9']),
      t('c', [], 'P-4'),
      t('d', []),
      t('e', ['P-2', 'P-8']),
      t('f', [], 'P-10'),
    ];
    const r = selectPlanned(tests, ['P-7', 'P-2', 'P-4', 'P-5'], keysOf, createdKey);
    expect(r.tests.map((x) => x.id)).toEqual(['a', 'c', 'e']);
    expect(r.uncovered).toEqual(['P-7', 'P-5']);
  });

  it('a test with keys is judged by them only, whatever its identity says', () => {
    const r = selectPlanned([t('a', ['P-9'], 'P-2')], ['P-2'], keysOf, createdKey);
    expect(r.tests).toEqual([]);
    expect(r.uncovered).toEqual(['P-2']);
  });

  it('nothing asked: nothing selected, nothing uncovered', () => {
    expect(selectPlanned([t('a', ['P-2'])], [], keysOf)).toEqual({ tests: [], uncovered: [] });
  });
});

describe('readCycleCases', () => {
  /** A client answering the two reads (and myself), recording the calls. */
  function fake(runs: Array<{ testCaseKey: string; status: string; testerName?: string }>) {
    const calls: string[] = [];
    const tm = {
      plans: {
        cycles: async () => {
          calls.push('plans.cycles');
          return [
            { id: 4, name: 'Nightly', status: 'Active' },
            { id: 5, name: 'Other' },
          ];
        },
      },
      cycles: {
        testRunsByCycleId: async (input: { cycleId: string }) => {
          calls.push(`cycles.testRunsByCycleId ${input.cycleId}`);
          return runs;
        },
      },
      jira: {
        myself: async () => {
          calls.push('jira.myself');
          return { name: 'jane' };
        },
      },
    } as unknown as TestManagementClient;
    return { tm, calls };
  }
  const runs = [
    { testCaseKey: 'P-2', status: 'Failed', testerName: 'jane' },
    { testCaseKey: 'P-3', status: 'Passed', testerName: 'jane' },
    { testCaseKey: 'P-2', status: 'Passed', testerName: 'bob' },
    { testCaseKey: 'P-4', status: 'Blocked' },
    { testCaseKey: 'P-5', status: 'Failed', testerName: 'bob' },
  ];
  const q = { plan: 'P-1', cycle: 'nightly', statuses: [] as string[], statusOption: 'select.status' };

  it('two requests: the cases of every run once, in the runs order', async () => {
    const { tm, calls } = fake(runs);
    const r = await readCycleCases(tm, q);
    expect(calls).toEqual(['plans.cycles', 'cycles.testRunsByCycleId 4']);
    expect(r).toEqual({
      plan: 'P-1',
      cycle: { id: 4, name: 'Nightly', status: 'Active' },
      runs: 5,
      keys: ['P-2', 'P-3', 'P-4', 'P-5'],
      filters: [],
      requests: 2,
    });
  });

  it('status and tester me: three requests; a case is selected when any of its runs matches', async () => {
    const { tm, calls } = fake(runs);
    const r = await readCycleCases(tm, { ...q, statuses: ['failed', 'BLOCKED'], tester: 'Me' });
    expect(calls.sort()).toEqual(['cycles.testRunsByCycleId 4', 'jira.myself', 'plans.cycles']);
    expect(r.keys).toEqual(['P-2']);
    expect(r.filters).toEqual(['status failed or blocked', 'tester jane']);
    expect(r.requests).toBe(3);
    const bob = await readCycleCases(fake(runs).tm, { ...q, statuses: ['Failed'], tester: 'BOB' });
    expect(bob.keys).toEqual(['P-5']);
  });

  it('an unknown status after the runs are read names the statuses they show', async () => {
    const { tm } = fake([{ testCaseKey: 'P-2', status: 'Retest' }]);
    await expect(readCycleCases(tm, { ...q, statuses: ['Retset'] })).rejects.toThrow(
      'select.status: "Retset" is not a run status; expected one or more of "Passed", "Failed", "Blocked", "Not Tested", "NA", "Retest"',
    );
    expect(sameName('  Not   Tested ')).toBe('not tested');
  });
});
