import { describe, expect, it } from 'vitest';
import { DEFAULT_STATUS_MAP } from '../../src/engine/kernel/work.js';
import { gateCycle } from '../../src/engine/query/gate.js';
import { caseHistory, flakyCases, listFailures, type Reader } from '../../src/engine/query/results.js';
import { base, report, result, useEngineWorld } from '../support/engine-world.js';

/**
 * Issue 47, "one rule, written twice": the reporter's classification (written in the run comment), the reads
 * (`failures`, `history`, `flaky`, the gate: the CLI's commands and the MCP tools call these) judge flaky by one
 * function (classify.ts flipRule). Cycle by cycle, every read agrees with what the reporter wrote.
 */

const world = useEngineWorld();

describe('flaky: the reporters and the reads agree', () => {
  it('passed then failed once is new everywhere; two flips are flaky everywhere', async () => {
    const emu = world.emulator();
    const reader: Reader = { tm: world.admin(), baseUrl: emu.url, statusMap: DEFAULT_STATUS_MAP };
    // DEMO-2: passes, then fails (1 flip). DEMO-3: passes, fails, passes, fails (3 flips by the fourth cycle).
    const nights: Array<[string, 'passed' | 'failed', 'passed' | 'failed']> = [
      ['N1', 'passed', 'passed'],
      ['N2', 'failed', 'failed'],
      ['N3', 'failed', 'passed'],
      ['N4', 'failed', 'failed'],
    ];
    const seen: string[] = [];
    for (const [cycle, two, three] of nights) {
      const options = base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle, defects: { enabled: false } });
      await report(options, [result('DEMO-2 checks out', two), result('DEMO-3 pays', three)]);
      const failures = (await listFailures(reader, 'DEMO-1', cycle)).failures;
      const flaky = new Set((await flakyCases(reader, 'DEMO-1')).cases.map((c) => c.key));
      const gate = await gateCycle(reader, 'DEMO-1', cycle, { maxNew: 0, maxRegressions: 0 });
      for (const f of failures) {
        const history = await caseHistory(reader, f.key);
        // The reporter's word (its comment, read back) is the reads' word.
        expect(flaky.has(f.key), `${cycle} ${f.key}: ${f.classification}`).toBe(f.classification === 'flaky');
        expect(history.flaky, `${cycle} ${f.key} history`).toBe(f.classification === 'flaky');
        expect(gate.failures.find((g) => g.key === f.key)?.classification).toBe(f.classification);
        seen.push(`${cycle} ${f.key} ${f.classification}`);
      }
    }
    expect(seen).toEqual(['N2 DEMO-2 new', 'N2 DEMO-3 new', 'N3 DEMO-2 known', 'N4 DEMO-2 known', 'N4 DEMO-3 flaky']);
    // The list names DEMO-3 with the flips the classification counted.
    expect((await flakyCases(reader, 'DEMO-1')).cases).toEqual([
      { key: 'DEMO-3', title: expect.any(String), runs: 4, failed: 2, flips: 3, rate: 1 },
    ]);
  });
});
