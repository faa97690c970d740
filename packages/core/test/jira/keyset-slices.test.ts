import { describe, expect, it } from 'vitest';
import type { TestManagementClient } from '../../src/client/tm.js';
import { CaseIndex } from '../../src/engine/cases/search-index.js';
import { keysetSearch, keysetSlices, SearchIncompleteError, slicedKeysetSearch } from '../../src/engine/jira/keyset.js';

/**
 * A re-read of the cases a run made, cut into slices of about one page by the ids the caller knows, read at once:
 * the same requests as one keyset search in fewer round trips, and never a case skipped (unknown cases between and
 * above the known ones, empty pages, a server that ignores the slice's top, a failed slice).
 */

interface FakeSearch {
  /** Issue ids the search holds (any order). */
  ids: number[];
  /** Largest page answered (Jira's cap). */
  cap?: number;
  /** Answers the whole range above `id >` (a server that ignores `id <=`). */
  ignoreTop?: boolean;
  /** Empty pages (the true total kept) answered to the first request of the slice above this id. */
  emptyAbove?: { after: number; times: number };
  /** The request whose range starts above this id fails. */
  failAbove?: number;
}

/** A Jira search over `ids` that answers `<jql> AND id > A [AND id <= B] ORDER BY id ASC` as keysetSearch asks. */
function fakeJira(f: FakeSearch) {
  const asked: Array<{ after: number; top?: number }> = [];
  let inFlight = 0;
  let most = 0;
  let empties = 0;
  const search = async (input: { jql: string; maxResults: number }) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    try {
      await new Promise((r) => setTimeout(r, 2));
      const after = Number(/id > (\d+)/.exec(input.jql)?.[1] ?? 0);
      const topMatch = /id <= (\d+)/.exec(input.jql);
      const top = topMatch ? Number(topMatch[1]) : undefined;
      asked.push(top === undefined ? { after } : { after, top });
      if (f.failAbove !== undefined && after >= f.failAbove) throw new Error(`slice above ${after} failed`);
      const bound = f.ignoreTop || top === undefined ? Number.POSITIVE_INFINITY : top;
      const out = new Set((/id not in \(([^)]*)\)/.exec(input.jql)?.[1] ?? '').split(',').map(Number));
      const matching = [...f.ids].sort((a, b) => a - b).filter((id) => id > after && id <= bound && !out.has(id));
      const size = Math.min(input.maxResults, f.cap ?? 100);
      if (f.emptyAbove && after === f.emptyAbove.after && empties < f.emptyAbove.times) {
        empties += 1;
        return { startAt: 0, maxResults: size, total: matching.length, issues: [] };
      }
      const issues = matching.slice(0, size).map((id) => ({ id: String(id), key: `P-${id}`, fields: {} }));
      return { startAt: 0, maxResults: size, total: matching.length, issues };
    } finally {
      inFlight -= 1;
    }
  };
  const tm = { jira: { search, searchPost: search } } as unknown as TestManagementClient;
  return { tm, asked, most: () => most };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const base = { jql: 'project = P', fields: 'summary', emptyPageDelayMs: 1 };

describe('keysetSlices: a page of known ids a slice, the last open above them', () => {
  it('no known id: one open slice (a first read)', () => {
    expect(keysetSlices(0, [], 100)).toEqual([{ afterId: 0 }]);
    expect(keysetSlices(500, [12, 500], 100)).toEqual([{ afterId: 500 }]);
  });

  it('1,400 known ids at 100 a page: 14 slices of 100, the last open; 1,401: a 15th with one', () => {
    const ids = range(1001, 2400);
    const slices = keysetSlices(1000, ids, 100);
    expect(slices).toHaveLength(14);
    expect(slices[0]).toEqual({ afterId: 1000, upToId: 1100 });
    expect(slices[1]).toEqual({ afterId: 1100, upToId: 1200 });
    expect(slices[13]).toEqual({ afterId: 2300 });
    const more = keysetSlices(1000, [...ids, 2401], 100);
    expect(more).toHaveLength(15);
    expect(more[13]).toEqual({ afterId: 2300, upToId: 2400 });
    expect(more[14]).toEqual({ afterId: 2400 });
  });

  it('known ids at or below the floor, repeated or unsorted count once, in order; a part page shares the last slice', () => {
    const ids = [7, 3, 3, 9, 1, 5, 11, 2, 2];
    // Above 2: 3 5 7 9 11, two a slice.
    expect(keysetSlices(2, ids, 2)).toEqual([{ afterId: 2, upToId: 5 }, { afterId: 5, upToId: 9 }, { afterId: 9 }]);
    expect(keysetSlices(0, [1, 2, 3], 0)).toEqual([
      { afterId: 0, upToId: 1 },
      { afterId: 1, upToId: 2 },
      { afterId: 2 },
    ]);
  });

  it('every id above the floor is in exactly one slice, whatever the ids', () => {
    const known = [5, 17, 18, 40, 41, 42, 77, 90, 91, 120, 121, 200];
    const slices = keysetSlices(10, known, 3);
    for (let id = 11; id <= 400; id++) {
      const holders = slices.filter((s) => id > s.afterId && (s.upToId === undefined || id <= s.upToId));
      expect(holders, `id ${id}`).toHaveLength(1);
    }
  });
});

describe('slicedKeysetSearch: the slices read at once, nothing skipped', () => {
  it('1,400 known cases at a cap of 100: every case in id order, 14 requests as one search, 4 at a time', async () => {
    const ids = range(5001, 6400);
    const one = fakeJira({ ids });
    const sequential = await keysetSearch({ ...base, tm: one.tm, afterId: 5000, pageSize: 100 });
    const f = fakeJira({ ids });
    const read = await slicedKeysetSearch({ ...base, tm: f.tm, afterId: 5000, pageSize: 100, known: ids });
    expect(read.issues.map((i) => i.id)).toEqual(ids);
    expect(read.requests).toBe(sequential.requests);
    expect(read.requests).toBe(14);
    expect(read.maxId).toBe(6400);
    expect(read.pageSize).toBe(100);
    expect(f.most()).toBe(4);
    expect(one.most()).toBe(1);
    // Every slice but the last is bounded above; the last is open for cases made since.
    expect(f.asked.filter((a) => a.top === undefined)).toHaveLength(1);
  });

  it('cases it did not know of (another machine: between the known ones and above them) are read too', async () => {
    const known = range(1, 300).filter((id) => id % 3 !== 0);
    const all = [...range(1, 300), ...range(301, 450)];
    const f = fakeJira({ ids: all });
    const read = await slicedKeysetSearch({ ...base, tm: f.tm, afterId: 0, pageSize: 100, known, concurrency: 2 });
    expect(read.issues.map((i) => i.id)).toEqual(all);
    expect(new Set(read.issues.map((i) => i.id)).size).toBe(all.length);
    expect(f.most()).toBeLessThanOrEqual(2);
  });

  it('a server that ignores the slice top: each slice stops at its top, no case read twice', async () => {
    const ids = range(1, 250);
    const f = fakeJira({ ids, ignoreTop: true, cap: 50 });
    const read = await slicedKeysetSearch({ ...base, tm: f.tm, afterId: 0, pageSize: 50, known: ids });
    expect(read.issues.map((i) => i.id)).toEqual(ids);
  });

  it('the server caps pages below the slice size: a slice pages on within its bounds', async () => {
    const ids = range(1, 400);
    const f = fakeJira({ ids, cap: 30 });
    const read = await slicedKeysetSearch({ ...base, tm: f.tm, afterId: 0, pageSize: 100, known: ids });
    expect(read.issues.map((i) => i.id)).toEqual(ids);
    expect(read.pageSize).toBe(30);
    // 4 slices of 100, 4 pages of 30 each.
    expect(read.requests).toBe(16);
  });

  it('an empty page before its total is asked again in its slice; one that stays empty fails the whole read', async () => {
    const ids = range(1, 300);
    const healing = fakeJira({ ids, emptyAbove: { after: 100, times: 2 } });
    const read = await slicedKeysetSearch({ ...base, tm: healing.tm, afterId: 0, pageSize: 100, known: ids });
    expect(read.issues.map((i) => i.id)).toEqual(ids);
    const broken = fakeJira({ ids, emptyAbove: { after: 100, times: 99 } });
    const err = await slicedKeysetSearch({
      ...base,
      tm: broken.tm,
      afterId: 0,
      pageSize: 100,
      known: ids,
      emptyPageRetries: 2,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SearchIncompleteError);
  });

  it('a slice that fails fails the read (never a short list), and no slice starts after it', async () => {
    const ids = range(1, 1000);
    const f = fakeJira({ ids, failAbove: 300 });
    const err = await slicedKeysetSearch({
      ...base,
      tm: f.tm,
      afterId: 0,
      pageSize: 100,
      known: ids,
      concurrency: 2,
    }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/slice above 300 failed/);
    // Slices after 0, 100, 200, 300 and at most the one beside the failure: not the ten.
    expect(f.asked.length).toBeLessThanOrEqual(5);
  });
});

describe('CaseIndex: a re-read leaves out the cases it made, but the newest', () => {
  it('250 cases added with their ids, at a cap of 100: the re-read is 1 request and shows every one', async () => {
    const ids: number[] = [];
    const f = fakeJira({ ids, cap: 100 });
    const index = new CaseIndex({ tm: f.tm, project: 'P', identityOf: () => 'x' });
    await index.ready();
    expect(index.requests).toBe(1);
    for (const id of range(10_001, 10_250)) {
      ids.push(id);
      index.add(`t${id}`, `P-${id}`, id);
    }
    expect(index.shown('P-10001')).toBe(false);
    await index.refresh();
    // 249 left out (`id not in (…)`); the newest answered, and a read that shows it shows every case made before it.
    expect(index.requests).toBe(2);
    for (const id of range(10_001, 10_250)) expect(index.shown(`P-${id}`)).toBe(true);
  });

  it('cases of others between them are read in slices cut by the ids read before', async () => {
    const ids: number[] = [];
    const f = fakeJira({ ids, cap: 100 });
    const index = new CaseIndex({ tm: f.tm, project: 'P', identityOf: () => 'x' });
    // 250 cases of another machine, read first; then 50 of this process's own above them.
    ids.push(...range(10_001, 10_250));
    await index.ready();
    expect(index.requests).toBe(3);
    for (const id of range(10_251, 10_300)) {
      ids.push(id);
      index.add(`t${id}`, `P-${id}`, id);
    }
    await index.refresh();
    // From the floor (0: no creation times here): the 250 known in 3 slices at once, this process's newest with them.
    expect(index.requests).toBe(6);
    expect(f.most()).toBe(3);
    for (const id of range(10_001, 10_300)) expect(index.shown(`P-${id}`)).toBe(true);
  });
});
