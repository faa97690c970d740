import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffCase, diffLines, stepRequests, stepText, totalLine, totals } from '../src/sync/diff.js';
import type { ListedTest } from '../src/sync/list.js';
import { stepsOfTest } from '../src/sync/source.js';
import { type KeyedTest, targetsOf } from '../src/sync/update.js';

/** `sync --update`'s pure parts: the diff of one case, the order of its requests, totals, and what is compared. */

/** Applies step requests to a list the way the service does (gapless positions), to check the order keeps them. */
function replay(steps: string[], d: ReturnType<typeof diffCase>): string[] {
  const out = [...steps];
  for (const r of stepRequests(d)) {
    if (r.op === 'update') {
      expect(r.sequenceNumber).toBeLessThanOrEqual(out.length);
      out[r.sequenceNumber - 1] = r.step;
    } else if (r.op === 'delete') {
      expect(r.stepNo).toBeLessThanOrEqual(out.length);
      out.splice(r.stepNo - 1, 1);
    } else out.push(...r.steps);
  }
  return out;
}

describe('diffCase', () => {
  it('finds nothing when the case matches the code', () => {
    const d = diffCase(
      { key: 'P-1', summary: 'logs in', steps: ['a', 'b'] },
      { summary: 'logs in', steps: ['a', 'b'] },
    );
    expect(d).toEqual({ key: 'P-1', steps: [] });
  });

  it('names a changed summary and changed steps by position', () => {
    const d = diffCase(
      { key: 'P-1', summary: 'old', steps: ['a', 'b', 'c'] },
      { summary: 'new', steps: ['a', 'B', 'c'] },
    );
    expect(d.summary).toEqual({ from: 'old', to: 'new' });
    expect(d.steps).toEqual([{ kind: 'changed', seq: 2, from: 'b', to: 'B' }]);
  });

  it('removes the steps beyond the code and deletes them from the last one down', () => {
    const now = { key: 'P-1', summary: 's', steps: ['a', 'b', 'c', 'd'] };
    const d = diffCase(now, { summary: 's', steps: ['x', 'b'] });
    expect(d.steps).toEqual([
      { kind: 'changed', seq: 1, from: 'a', to: 'x' },
      { kind: 'removed', seq: 3, from: 'c' },
      { kind: 'removed', seq: 4, from: 'd' },
    ]);
    expect(stepRequests(d)).toEqual([
      { op: 'update', sequenceNumber: 1, step: 'x' },
      { op: 'delete', stepNo: 4 },
      { op: 'delete', stepNo: 3 },
    ]);
    expect(replay([...now.steps], d)).toEqual(['x', 'b']);
  });

  it('appends the steps beyond the case in one request', () => {
    const now = { key: 'P-1', summary: 's', steps: ['a'] };
    const d = diffCase(now, { summary: 's', steps: ['a', 'b', 'c'] });
    expect(d.steps).toEqual([
      { kind: 'added', seq: 2, to: 'b' },
      { kind: 'added', seq: 3, to: 'c' },
    ]);
    expect(stepRequests(d)).toEqual([{ op: 'add', steps: ['b', 'c'] }]);
    expect(replay([...now.steps], d)).toEqual(['a', 'b', 'c']);
  });

  it('gives a case without steps all of the code', () => {
    const d = diffCase({ key: 'P-1', summary: 's', steps: [] }, { summary: 's', steps: ['a'] });
    expect(stepRequests(d)).toEqual([{ op: 'add', steps: ['a'] }]);
  });

  it('leaves the steps alone when the code tells none (undefined or empty), never emptying a case', () => {
    const now = { key: 'P-1', summary: 'old', steps: ['a', 'b'] };
    expect(diffCase(now, { summary: 'old' }).steps).toEqual([]);
    expect(diffCase(now, { summary: 'old', steps: [] }).steps).toEqual([]);
    expect(stepRequests(diffCase(now, { summary: 'new', steps: [] }))).toEqual([]);
  });

  it('compares step titles as a new case gets them: trimmed, never blank, cut to 2000 characters', () => {
    expect(stepText('  open  ')).toBe('open');
    expect(stepText('   ')).toBe('(untitled step)');
    expect(stepText('x'.repeat(2500))).toHaveLength(2000);
    const d = diffCase({ key: 'P-1', summary: 's', steps: ['open'] }, { summary: ' s ', steps: [' open '] });
    expect(d).toEqual({ key: 'P-1', steps: [] });
  });

  it('keeps sequence numbers valid for any pair of lists', () => {
    const lists = [[], ['a'], ['a', 'b'], ['b', 'a', 'c'], ['a', 'b', 'c', 'd', 'e']];
    for (const have of lists) {
      for (const want of lists) {
        if (want.length === 0) continue;
        const d = diffCase({ key: 'P-1', summary: 's', steps: have }, { summary: 's', steps: want });
        expect(replay([...have], d)).toEqual(want);
      }
    }
  });
});

describe('totals and lines', () => {
  const diffs = [
    diffCase({ key: 'P-1', summary: 'old', steps: ['a', 'b'] }, { summary: 'new', steps: ['a', 'c', 'd'] }),
    diffCase({ key: 'P-2', summary: 'old', steps: [] }, { summary: 'new' }),
    diffCase({ key: 'P-3', summary: 's', steps: ['a', 'b'] }, { summary: 's', steps: ['a'] }),
    diffCase({ key: 'P-4', summary: 's', steps: ['a'] }, { summary: 's', steps: ['a'] }),
  ];

  it('counts summaries as changes only when they can be applied', () => {
    expect(totals(diffs, 'apply')).toEqual({ cases: 3, summaries: 2, steps: 3 });
    expect(totals(diffs, 'show')).toEqual({ cases: 2, summaries: 2, steps: 3 });
    expect(totalLine(diffs, false, 'apply')).toBe('3 cases would change: 2 summaries, 3 steps');
    expect(totalLine(diffs, true, 'apply')).toBe('3 cases changed: 2 summaries, 3 steps');
    expect(totalLine(diffs, false, 'show')).toBe(
      '2 cases would change: 3 steps; 2 summaries differ from the code and are left alone (the service API has no issue edit)',
    );
  });

  it('says when nothing changes', () => {
    const same = [diffs[3] ?? diffs[0]].filter((d) => d !== undefined);
    expect(totalLine(same, true, 'show')).toBe('no case changed: the keyed cases match the code');
    expect(totalLine([], false, 'show')).toBe('no case would change: the keyed cases match the code');
  });

  it('prints the summary and each step change with its sequence number', () => {
    const first = diffs[0];
    if (!first) throw new Error('no diff');
    expect(diffLines(first, 'a.test.ts > logs in', 'show')).toEqual([
      '  P-1  a.test.ts > logs in',
      '    summary: "old" -> "new" (shown only: the service API has no issue edit)',
      '    ~ step 2: "b" -> "c"',
      '    + step 3: "d"',
    ]);
    const removed = diffs[2];
    if (!removed) throw new Error('no diff');
    expect(diffLines(removed, 't', 'apply')).toEqual(['  P-3  t', '    - step 2: "b"']);
  });
});

describe('targetsOf', () => {
  const t = (name: string, keys: string[], summary: string, steps?: string[]): KeyedTest => ({
    name,
    keys,
    code: { summary, ...(steps ? { steps } : {}) },
  });

  it('makes one target per key, merging tests that agree', () => {
    const { targets, skipped } = targetsOf([
      t('a > one', ['P-1'], 'one', ['x']),
      t('a > one [firefox]', ['P-1'], 'one', ['x']),
      t('b > two', ['P-2'], 'two'),
    ]);
    expect(skipped).toEqual([]);
    expect(targets.map((x) => [x.key, x.tests])).toEqual([
      ['P-1', ['a > one', 'a > one [firefox]']],
      ['P-2', ['b > two']],
    ]);
  });

  it('leaves alone a test naming several cases and a case named by tests that disagree', () => {
    const { targets, skipped } = targetsOf([
      t('a', ['P-1', 'P-2'], 'a'),
      t('b', ['P-3'], 'b', ['x']),
      t('c', ['P-3'], 'b', ['y']),
      t('d', ['P-4'], 'd'),
    ]);
    expect(targets.map((x) => x.key)).toEqual(['P-4']);
    expect(skipped.map((s) => [s.key, s.test])).toEqual([
      ['P-1', 'a'],
      ['P-2', 'a'],
      ['P-3', 'b'],
      ['P-3', 'c'],
    ]);
    expect(skipped[0]?.reason).toContain('names 2 cases');
    expect(skipped[2]?.reason).toContain('different titles or steps');
  });
});

describe('stepsOfTest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'casebridge-steps-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'a.test.js');
  writeFileSync(
    file,
    [
      "test('plain', async () => { await step('one', f); await test.step(\"two\", f); });",
      "test('built', async () => { await step(`n ${1}`, f); await step(name, f); await step('fixed', f); });",
      "test('none', () => {});",
      'async function step(title, body) { return body(); }',
    ].join('\n'),
  );
  const listed = (title: string, line: number): ListedTest => ({
    file: 'a.test.js',
    absFile: file,
    titlePath: [title],
    line,
    tags: [],
    annotations: [],
  });
  const all = [listed('plain', 1), listed('built', 2), listed('none', 3)];

  it('reads literal step titles, flags titles built at run time, and ignores a helper named step', () => {
    expect(stepsOfTest(all[0] as ListedTest, all)).toEqual({ steps: ['one', 'two'], dynamic: false, found: true });
    expect(stepsOfTest(all[1] as ListedTest, all)).toEqual({ steps: ['fixed'], dynamic: true, found: true });
    expect(stepsOfTest(all[2] as ListedTest, all)).toEqual({ steps: [], dynamic: false, found: true });
    expect(stepsOfTest(listed('missing', 9), all)).toEqual({ steps: [], dynamic: false, found: false });
  });
});
