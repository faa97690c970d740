import { describe, expect, it } from 'vitest';
import { leaderStopped } from '../../src/engine/cases/creates.js';

/** The rule by which a machine that came second stops waiting for the other one's creates and makes its own. */
describe('leaderStopped', () => {
  const lag = { indexLagMs: 3_000, followerWaitMaxMs: 60_000, longestGapMs: 0 };

  it('waits while its own tests still come, though nothing new has shown for longer than the index lag', () => {
    // A loaded machine: the leader's cases last grew 8 s ago, but this runner handed over a test 1 s ago.
    expect(leaderStopped({ now: 20_000, grewAt: 12_000, lastQueued: 19_000, ...lag })).toBe(false);
  });

  it('stops when nothing has shown nor come for longer than the index lag', () => {
    expect(leaderStopped({ now: 20_000, grewAt: 16_000, lastQueued: 16_500, ...lag })).toBe(true);
    expect(leaderStopped({ now: 20_000, grewAt: 17_500, lastQueued: 10_000, ...lag })).toBe(false);
  });

  it('waits twice the longest pause it saw between the cases of the other machine, once its own tests have all come', () => {
    // The other showed cases 5 s apart at worst (a loaded machine): 6 s without growth is not its end yet.
    expect(leaderStopped({ now: 26_000, grewAt: 20_000, lastQueued: 15_000, ...lag, longestGapMs: 5_000 })).toBe(false);
    expect(leaderStopped({ now: 30_001, grewAt: 20_000, lastQueued: 15_000, ...lag, longestGapMs: 5_000 })).toBe(true);
  });

  it('stops when nothing has shown for followerWaitMaxMs, even while its own tests come (the other died)', () => {
    expect(leaderStopped({ now: 70_001, grewAt: 10_000, lastQueued: 70_000, ...lag })).toBe(true);
    expect(leaderStopped({ now: 69_000, grewAt: 10_000, lastQueued: 68_900, ...lag })).toBe(false);
  });
});
