import { describe, expect, it } from 'vitest';
import { DefectLedger } from '../../src/engine/defects/ledger.js';
import type { WorkItem } from '../../src/engine/kernel/work.js';

const run = (runId: number) => ({ item: { id: `r${runId}`, progress: {} } as WorkItem, cycle: undefined, runId });

describe('the run’s defect ledger', () => {
  it('never lists a defect it filed as linked, and counts a duplicate’s survivor as linked', () => {
    const l = new DefectLedger();
    l.filed('BUG-1');
    l.onRun('BUG-1', true, run(1));
    l.onRun('BUG-1', false, run(2)); // a second failure of the group links it
    l.onRun('BUG-9', false, run(3));
    expect([...l.created]).toEqual(['BUG-1']);
    expect([...l.linked]).toEqual(['BUG-9']);

    l.duplicate('BUG-1', 'BUG-0');
    expect([...l.created]).toEqual([]);
    expect([...l.linked].sort()).toEqual(['BUG-0', 'BUG-9']);
    expect(l.ours('BUG-1')).toBe(true);
    // Every run that carried BUG-1 (filed here), once.
    expect(l.takeRuns('BUG-1').map((r) => r.runId)).toEqual([1, 2]);
    expect(l.takeRuns('BUG-1')).toEqual([]);
  });
});
