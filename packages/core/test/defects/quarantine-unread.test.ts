import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine, type PlannedTest } from '../../src/index.js';
import { setFaults, useSilentServer } from '../support/emulator.js';
import { base, ctx, project, report, result, useEngineWorld } from '../support/engine-world.js';

/**
 * A quarantine that cannot be read (option `quarantine`, defects/quarantine.ts) never costs a result: the failure
 * is reported and filed as if there were no quarantine, the summary says why, and Playwright's `preprocess` read
 * gives up at its bound with one line, so the run starts on time.
 */

const world = useEngineWorld();
const { bugs, ops } = world;
let emu: RunningEmulator;
beforeAll(() => {
  emu = world.emulator();
});

describe('a quarantine read that fails', () => {
  it('the failure is reported and its defect filed; the summary says the set could not be read', async () => {
    // The first search of a failing run is the quarantine's; the defect search after it is answered.
    await setFaults(emu, [{ route: '/rest/api/2/search', malformedRate: 1, malformedKind: 'html', times: 1 }]);
    const lines: string[] = [];
    const end = await report(base(emu.url), [result('DEMO-3 logs out', 'failed')], ctx(project(), lines));
    expect(end.summary.quarantine?.problem).toMatch(/expected JSON/);
    expect(end.summary.quarantine?.failed).toEqual([]);
    expect(end.summary.failures?.find((f) => f.key === 'DEMO-3')?.classification).not.toBe('quarantined');
    expect(bugs()).toHaveLength(1);
    expect(end.summary.defects?.created).toHaveLength(1);
    expect(ops('jira.search').length).toBeGreaterThanOrEqual(2);
    expect(lines.join('\n')).toMatch(
      /quarantine \(label casebridge-quarantine\): could not be read \(.+\); failures were reported without it/,
    );
    // Nothing waits in the journal: the result went.
    expect(end.summary.journaled).toBe(0);
  });
});

describe('Engine.quarantined when the service does not answer', () => {
  const silent = useSilentServer();

  it('gives up at timeoutMs: no test is quarantined, one line says so', async () => {
    const lines: string[] = [];
    const engine = Engine.create(base(await silent.url(), { flushTimeoutMs: 500 }), ctx(project(), lines));
    const test: PlannedTest = {
      id: 't>DEMO-2 x',
      file: 't.spec.ts',
      titlePath: ['DEMO-2 x'],
      tags: [],
      annotations: [],
    };
    const started = Date.now();
    expect((await engine.quarantined([test], { timeoutMs: 400 })).size).toBe(0);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^casebridge: the quarantined cases \(label casebridge-quarantine\) could not be read within 0\.4 s; the tests run without quarantine \(.+\)$/,
    );
  });
});
