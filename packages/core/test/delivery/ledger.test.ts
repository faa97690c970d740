import { describe, expect, it } from 'vitest';
import { Ledger } from '../../src/engine/delivery/ledger.js';
import type { TestResult } from '../../src/engine/kernel/model.js';
import type { WorkItem } from '../../src/engine/kernel/work.js';

function item(n: number, status: 'passed' | 'failed'): WorkItem {
  const test: TestResult = {
    id: `t${n}`,
    file: 'a.spec.ts',
    titlePath: [`test ${n}`],
    tags: [],
    annotations: [],
    attempts: [{ retry: 0, status, durationMs: 1, errors: [], steps: [], attachments: [] }],
  };
  return { id: `run-${n}`, key: `DEMO-${n}`, test, target: { mode: 'adhoc' }, progress: {} } as WorkItem;
}

describe('the ledger of a run', () => {
  it('lets a delivered passing result go and keeps counting it', () => {
    const ledger = new Ledger();
    const all = Array.from({ length: 1_000 }, (_, n) => item(n, n % 100 === 7 ? 'failed' : 'passed'));
    for (const i of all) ledger.add(i);
    expect(ledger.total).toBe(1_000);
    expect(ledger.done).toBe(0);
    expect(ledger.undelivered()).toHaveLength(1_000);

    for (const i of all.slice(0, 900)) {
      i.progress.done = true;
      ledger.settled(i);
    }
    // 900 delivered: 9 of them failed and stay (the summary names them), the rest are only counted.
    expect(ledger.items).toHaveLength(100 + 9);
    expect(ledger.items.filter((i) => i.progress.done).map((i) => i.key)).toEqual(
      Array.from({ length: 9 }, (_, k) => `DEMO-${k * 100 + 7}`),
    );
    expect(ledger.total).toBe(1_000);
    expect(ledger.delivered).toBe(900);
    expect(ledger.done).toBe(900);
    expect(ledger.undelivered().map((i) => i.key)).toEqual(all.slice(900).map((i) => i.key));
  });

  it('keeps a dropped result (not delivered) and one settled before it was done', () => {
    const ledger = new Ledger();
    const [dropped, early, twice] = [item(1, 'passed'), item(2, 'passed'), item(3, 'passed')];
    for (const i of [dropped, early, twice]) ledger.add(i);
    dropped.progress = { done: true, dropped: true };
    ledger.settled(dropped);
    ledger.settled(early);
    twice.progress.done = true;
    ledger.settled(twice);
    ledger.settled(twice);
    expect(ledger.items).toEqual([dropped, early]);
    expect(ledger.total).toBe(3);
    expect(ledger.delivered).toBe(1);
    expect(ledger.done).toBe(2);
    expect(ledger.undelivered()).toEqual([early]);
  });
});
