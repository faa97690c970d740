import { describe, expect, it } from 'vitest';
import type { TestResult } from '../../src/engine/kernel/model.js';
import { DEFAULT_STATUS_MAP } from '../../src/engine/kernel/work.js';
import {
  type ComparedRun,
  compareCycles,
  compareRuns,
  type FailureDigest,
  sameFailure,
} from '../../src/engine/query/compare.js';
import { QueryError, type Reader } from '../../src/engine/query/results.js';
import { base, report, result, useEngineWorld } from '../support/engine-world.js';

/** Two cycles compared (query/compare.ts): the lists by result and signature, and what the comparison costs. */

const failure = (signature?: string, extra: Partial<FailureDigest> = {}): FailureDigest => ({
  classification: 'new',
  ...(signature ? { signature } : {}),
  defects: [],
  run: 1,
  url: '',
  ...extra,
});
const run = (
  key: string,
  status: 'Passed' | 'Failed' | 'Not Tested',
  f?: FailureDigest,
  set?: string,
): ComparedRun => ({
  key,
  title: `test ${key}`,
  ...(set ? { set } : {}),
  status,
  ...(status === 'Passed' ? { result: 'passed' as const } : status === 'Failed' ? { result: 'failed' as const } : {}),
  ...(f ? { failure: f } : {}),
});
const keys = (list: ReadonlyArray<{ key: string; set?: string }>) =>
  list.map((c) => (c.set ? `${c.key} ${c.set}` : c.key));

describe('compareRuns', () => {
  it('newly failing, fixed, still failing the same way or another by signature, new tests, not run any more', () => {
    const got = compareRuns(
      [
        run('P-1', 'Passed'),
        run('P-2', 'Failed', failure('cb-aaaaaaaaaaaaaaaa')),
        run('P-3', 'Failed', failure('cb-bbbbbbbbbbbbbbbb')),
        run('P-4', 'Failed', failure('cb-cccccccccccccccc', { errorLines: ['Expected: 3'] })),
        run('P-5', 'Passed'),
        run('P-6', 'Not Tested'),
        run('P-9', 'Passed'),
      ],
      [
        run('P-1', 'Failed', failure('cb-dddddddddddddddd')),
        run('P-2', 'Passed'),
        run('P-3', 'Failed', failure('cb-bbbbbbbbbbbbbbbb')),
        run('P-4', 'Failed', failure('cb-eeeeeeeeeeeeeeee')),
        run('P-5', 'Not Tested'),
        run('P-6', 'Failed', failure('cb-ffffffffffffffff')),
        run('P-7', 'Failed', failure('cb-1111111111111111')),
        run('P-8', 'Passed'),
      ],
    );
    expect(keys(got.newlyFailing)).toEqual(['P-1', 'P-6', 'P-7']);
    expect(keys(got.fixed)).toEqual(['P-2']);
    // A fixed test names the failure it no longer has.
    expect(got.fixed[0]).toMatchObject({
      base: 'Failed',
      cycle: 'Passed',
      failure: { signature: 'cb-aaaaaaaaaaaaaaaa' },
    });
    expect(keys(got.stillFailing.same)).toEqual(['P-3']);
    expect(keys(got.stillFailing.other)).toEqual(['P-4']);
    expect(got.stillFailing.other[0]).toMatchObject({
      failure: { signature: 'cb-eeeeeeeeeeeeeeee' },
      before: { signature: 'cb-cccccccccccccccc', errorLines: ['Expected: 3'] },
    });
    expect(keys(got.newTests)).toEqual(['P-7', 'P-8']);
    // P-5 had a result and has none now; P-9 is gone; P-6 had none before: not in the list.
    expect(keys(got.notRunAnyMore)).toEqual(['P-5', 'P-9']);
    expect(got.notRunAnyMore[1]).toEqual({ key: 'P-9', title: 'test P-9', base: 'Passed' });
  });

  it('each attribute set is a test of its own; of two runs of one test, the failed one counts', () => {
    const got = compareRuns(
      [run('P-1', 'Passed', undefined, 'Browser=Chrome'), run('P-1', 'Passed', undefined, 'Browser=Firefox')],
      [
        run('P-1', 'Passed', undefined, 'Browser=Chrome'),
        run('P-1', 'Failed', failure('cb-aaaaaaaaaaaaaaaa'), 'Browser=Firefox'),
        run('P-2', 'Passed'),
        run('P-2', 'Failed', failure('cb-bbbbbbbbbbbbbbbb')),
      ],
    );
    expect(keys(got.newlyFailing)).toEqual(['P-1 Browser=Firefox', 'P-2']);
    expect(keys(got.newTests)).toEqual(['P-2']);
  });

  it('the same failure: by signature when both have one, else by place and first error line', () => {
    expect(sameFailure(failure('cb-aaaaaaaaaaaaaaaa'), failure('cb-aaaaaaaaaaaaaaaa'))).toBe(true);
    expect(sameFailure(failure('cb-aaaaaaaaaaaaaaaa'), failure('cb-bbbbbbbbbbbbbbbb'))).toBe(false);
    const at = { file: 'a.test.ts', line: 3, errorLines: ['Error: boom', 'more'] };
    expect(
      sameFailure(failure(undefined, at), failure('cb-aaaaaaaaaaaaaaaa', { ...at, errorLines: ['Error: boom'] })),
    ).toBe(true);
    expect(sameFailure(failure(undefined, at), failure(undefined, { ...at, line: 4 }))).toBe(false);
  });
});

const world = useEngineWorld();

const failing = (title: string, message: string): TestResult =>
  result(title, 'failed', {
    attempts: [
      {
        retry: 0,
        status: 'failed',
        durationMs: 5,
        errors: [{ message, stack: `Error: ${message}\n    at t.spec.ts:7:3` }],
        steps: [],
        attachments: [],
      },
    ],
  });

describe('compareCycles against the emulator', () => {
  it('two cycles a reporter wrote: every list, by the signatures it wrote; 3 requests; limits and bad cycles', async () => {
    const emu = world.emulator();
    const reader: Reader = { tm: world.admin(), baseUrl: emu.url, statusMap: DEFAULT_STATUS_MAP };
    const options = (cycle: string) =>
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle, defects: { enabled: false } });
    await report(options('N1'), [
      failing('DEMO-2 logs in', 'expected 200, got 500'),
      failing('DEMO-3 logs out', 'menu is missing'),
      failing('DEMO-4 searches', 'no results'),
      result('DEMO-5 pays', 'passed'),
    ]);
    await report(options('N2'), [
      result('DEMO-2 logs in', 'passed'),
      failing('DEMO-3 logs out', 'menu is missing'),
      failing('DEMO-4 searches', 'timed out waiting for the list'),
      failing('DEMO-6 shows the profile', 'no name'),
      result('DEMO-7 loads the list', 'passed'),
    ]);
    const since = emu.requests().at(-1)?.seq ?? 0;
    const got = await compareCycles(reader, 'DEMO-1', 'N1', 'N2');
    const ops = emu
      .requests()
      .filter((q) => q.seq > since)
      .map((q) => q.op);
    expect(ops.sort()).toEqual(['cycles.testRunsByCycleId', 'cycles.testRunsByCycleId', 'plans.cycles']);
    expect(got.base.name).toBe('N1');
    expect(keys(got.newlyFailing)).toEqual(['DEMO-6']);
    expect(keys(got.fixed)).toEqual(['DEMO-2']);
    expect(keys(got.stillFailing.same)).toEqual(['DEMO-3']);
    expect(keys(got.stillFailing.other)).toEqual(['DEMO-4']);
    expect(keys(got.newTests)).toEqual(['DEMO-6', 'DEMO-7']);
    expect(keys(got.notRunAnyMore)).toEqual(['DEMO-5']);
    expect(got.stillFailing.same[0]?.failure).toMatchObject({
      classification: 'known',
      signature: expect.stringMatching(/^cb-[0-9a-f]{16}$/),
      errorLines: ['menu is missing'],
    });
    expect(got.counts).toEqual({
      newlyFailing: 1,
      fixed: 1,
      stillFailingSame: 1,
      stillFailingOther: 1,
      newTests: 2,
      notRunAnyMore: 1,
    });

    const short = await compareCycles(reader, 'DEMO-1', 'N1', 'N2', { limit: 1 });
    expect([keys(short.newTests), short.counts.newTests]).toEqual([['DEMO-6'], 2]);
    await expect(compareCycles(reader, 'DEMO-1', 'N0', 'N2')).rejects.toThrow(
      new QueryError('test plan DEMO-1 has no cycle "N0": it has "N1" (#1), "N2" (#2)'),
    );
    await expect(compareCycles(reader, 'DEMO-999', 'N1', 'N2')).rejects.toBeInstanceOf(QueryError);
  });
});
