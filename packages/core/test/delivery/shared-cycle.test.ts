import { describe, expect, it } from 'vitest';
import { sharedNow } from '../../src/engine/delivery/cycles.js';
import type { CycleInfo } from '../../src/engine/kernel/types.js';

/** Whether another process reports into a cycle now (delivery/cycles.ts): a shared cycle's new defects wait. */

const NOW = Date.parse('2026-12-07T22:00:00.000Z');
const MIN = 60_000;
const cycle = (extra: Partial<CycleInfo>): CycleInfo => ({
  id: 1,
  name: 'CI 417',
  plan: 'DEMO-1',
  status: 'Active',
  ...extra,
});

describe('sharedNow', () => {
  it('this run lost the race to create it: shared, however long ago it started', () => {
    expect(sharedNow(cycle({ created: false }), NOW)).toBe(true);
    expect(sharedNow(cycle({ created: false, startedAt: NOW - 600 * MIN }), NOW)).toBe(true);
  });

  it('this run created it: not shared, unless it is one shard of a run (the other shards report into it)', () => {
    expect(sharedNow(cycle({ created: true, startedAt: NOW - MIN }), NOW)).toBe(false);
    expect(sharedNow(cycle({ created: true, startedAt: NOW - MIN }), NOW, true)).toBe(true);
    expect(sharedNow(cycle({ status: 'Draft' }), NOW, true)).toBe(true);
  });

  it('found made: shared when started less than 10 minutes before (or ahead of this clock), not when older', () => {
    expect(sharedNow(cycle({ startedAt: NOW - 2 * MIN }), NOW)).toBe(true);
    expect(sharedNow(cycle({ startedAt: NOW - 10 * MIN }), NOW)).toBe(true);
    expect(sharedNow(cycle({ startedAt: NOW + MIN }), NOW), 'a service clock a minute ahead').toBe(true);
    expect(sharedNow(cycle({ startedAt: NOW - 11 * MIN }), NOW)).toBe(false);
    expect(sharedNow(cycle({ startedAt: NOW - 24 * 60 * MIN }), NOW), "yesterday's daily cycle").toBe(false);
  });

  it('found made, never started (a Draft) or no start date in the list: not shared', () => {
    expect(sharedNow(cycle({ status: 'Draft' }), NOW)).toBe(false);
  });
});
