import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Engine } from '../../src/index.js';
import { base, ctx, project, result, until, useEngineWorld } from '../support/engine-world.js';

/**
 * The bulk status updates of a long unplanned run, against the real emulator over real HTTP with a faked
 * setTimeout: each wait that runs out doubles.
 */

const world = useEngineWorld();
const { runsOfCycle, ops } = world;
let emu: RunningEmulator;
beforeAll(() => {
  emu = world.emulator();
});

describe('bulk updates of a long run', () => {
  it('an unplanned run sends status-only results after 30 s, then after 60 s: each wait that runs out doubles', async () => {
    // Only setTimeout is faked: HTTP and the emulator run on real sockets, so waiting for an answer is real time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const bulks = () => ops('runs.bulkStatusUpdate').length;
    const immediate = () => new Promise((r) => setImmediate(r));
    const waitFor = (what: string, done: () => boolean) => until(what, done, 10_000, immediate);
    const settleFor = async (ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end) await immediate();
    };
    try {
      const engine = Engine.create(
        base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI long' }),
        ctx(project(), []),
      );
      engine.begin({});
      engine.add(result('DEMO-2 first', 'passed'));
      vi.advanceTimersByTime(29_000);
      await settleFor(100);
      expect(bulks()).toBe(0);
      vi.advanceTimersByTime(1_000);
      await waitFor('the first bulk', () => bulks() === 1);
      // The emulator counts a request when it answers: let the client read the answer before the clock jumps again
      // (a jump of 30 s while the answer is on its way fires the request's own timeout).
      await settleFor(300);

      engine.add(result('DEMO-3 second', 'passed'));
      vi.advanceTimersByTime(30_000);
      await settleFor(200);
      expect(bulks()).toBe(1);
      vi.advanceTimersByTime(30_000);
      await waitFor('the second bulk, 60 s after the first', () => bulks() === 2);
      vi.useRealTimers();
      const end = await engine.end();
      expect(end.summary.problems).toEqual([]);
      expect(bulks()).toBe(2);
      expect(
        runsOfCycle('CI long')
          .map((r) => [r.key, r.status])
          .sort(),
      ).toEqual([
        ['DEMO-2', 'Passed'],
        ['DEMO-3', 'Passed'],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });
});
