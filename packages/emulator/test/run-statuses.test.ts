import { describe, expect, it } from 'vitest';
import { applySeed, demoSeed, type SeedInput } from '../src/seed/seed.js';
import { Store } from '../src/store/store.js';
import { call, TM, useEmulator } from './helpers.js';

/**
 * Run statuses per instance (seed `runStatuses`), as synapseRT's Test Run Status page configures them: built-ins
 * renamed or disabled (Not Tested neither), custom statuses with a category, names matched case-insensitively; every
 * operation that takes a status refuses an unknown or disabled one (bulkStatusUpdate with a plain-text 500).
 */

const seed: SeedInput = {
  ...demoSeed,
  projects: [
    {
      ...demoSeed.projects?.[0],
      key: 'DEMO',
      name: 'Demo shop',
      cycles: [{ plan: 'DEMO-1', name: 'Nightly', status: 'Active' }],
    },
  ],
  runStatuses: [
    { builtIn: 'Passed', name: 'Bestanden' },
    { builtIn: 'Failed', name: 'Fehlgeschlagen', color: '#ff0000' },
    { builtIn: 'Blocked', name: 'Blocked', enabled: false },
    { name: 'Retest', category: 'Not Executed', description: 'run it again' },
    { name: 'Obsolete', enabled: false },
  ],
};

describe('run statuses of the instance', () => {
  const emu = useEmulator({ seed });
  const runs = () => {
    const cycle = emu().store.cycles.find((c) => c.name === 'Nightly');
    if (!cycle) throw new Error('no cycle');
    const ids = emu()
      .store.runs.filter((r) => r.cycleId === cycle.id)
      .map((r) => r.id);
    return { cycleId: cycle.id, ids };
  };
  const bulk = (status: string, runIds?: number[]) =>
    call(emu(), 'POST', `${TM}/testPlan/DEMO-1/bulkStatusUpdate`, {
      body: { testCycleId: runs().cycleId, status, runIds: runIds ?? runs().ids.slice(0, 2) },
    });
  const statusOf = (id: number) => emu().store.runs.get(id)?.status;

  it('keeps the built-ins in order with ids 1..5, renamed where the seed says, then the custom ones', () => {
    expect(
      emu()
        .store.runStatuses.all()
        .map((s) => [s.id, s.name, s.builtIn, s.enabled, s.category]),
    ).toEqual([
      [1, 'Bestanden', 'Passed', true, 'Executed'],
      [2, 'Fehlgeschlagen', 'Failed', true, 'Executed'],
      [3, 'Blocked', 'Blocked', false, 'Executed'],
      [4, 'Not Tested', 'Not Tested', true, 'Not Executed'],
      [5, 'NA', 'NA', true, 'Executed'],
      [6, 'Retest', null, true, 'Not Executed'],
      [7, 'Obsolete', null, false, 'Executed'],
    ]);
  });

  it('bulkStatusUpdate takes the instance names in any case and refuses others with a plain-text 500', async () => {
    const [a, b] = runs().ids;
    const ok = await bulk('bestanden');
    expect(ok.status, ok.text).toBe(200);
    expect([statusOf(a as number), statusOf(b as number)]).toEqual(['Bestanden', 'Bestanden']);

    const english = await bulk('Passed');
    expect(english.status).toBe(500);
    expect(english.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(english.text).toBe(
      'Invalid status "Passed": expected one of Bestanden, Fehlgeschlagen, Not Tested, NA, Retest',
    );
    const disabled = await bulk('blocked');
    expect(disabled.status).toBe(500);
    expect(disabled.text).toMatch(/^Run status "Blocked" is disabled: expected one of Bestanden, /);
    expect((await bulk('OBSOLETE')).text).toMatch(/^Run status "Obsolete" is disabled/);
    // A refused update changes nothing.
    expect(statusOf(a as number)).toBe('Bestanden');
    expect((await bulk('retest')).status).toBe(200);
    expect(statusOf(a as number)).toBe('Retest');
  });

  it('updateTestRun, update and updateStep refuse them too (JSON 500 naming the field)', async () => {
    const update = await call(emu(), 'POST', `${TM}/testRun/update`, {
      body: { runId: String(runs().ids[0]), result: 'Failed' },
    });
    expect(update.status).toBe(500);
    expect(update.json).toMatchObject({ field: 'result', message: expect.stringMatching(/^Invalid status "Failed"/) });
    const byCase = await call(emu(), 'POST', `${TM}/testPlan/DEMO-1/cycle/Nightly/updateTestRun`, {
      body: { testcaseKey: 'DEMO-2', result: 'Blocked' },
    });
    expect(byCase.status).toBe(500);
    expect(byCase.json.message).toMatch(/^Run status "Blocked" is disabled/);
    const step = emu().store.runSteps.all()[0];
    const stepUpdate = await call(emu(), 'POST', `${TM}/testRun/updateStep/`, {
      body: { runStepId: step?.id, result: 'Obsolete' },
    });
    expect(stepUpdate.status).toBe(500);
    expect(stepUpdate.json.field).toBe('result');
  });

  it('rolls a run up from its steps by the built-in each status is, under its current name', async () => {
    const run = emu()
      .store.runs.all()
      .find((r) => emu().store.runSteps.filter((s) => s.runId === r.id).length >= 2);
    const steps = emu()
      .store.runSteps.filter((s) => s.runId === run?.id)
      .sort((a, b) => a.seq - b.seq);
    const set = (id: number, result: string) =>
      call(emu(), 'POST', `${TM}/testRun/updateStep/`, { body: { runStepId: id, result } });
    for (const s of steps) expect((await set(s.id, 'Bestanden')).status).toBe(200);
    expect(statusOf(run?.id as number)).toBe('Bestanden');
    expect((await set(steps[0]?.id as number, 'fehlgeschlagen')).status).toBe(200);
    expect(statusOf(run?.id as number)).toBe('Fehlgeschlagen');
  });
});

describe('run statuses in the seed', () => {
  const withStatuses = (runStatuses: SeedInput['runStatuses']): SeedInput => ({
    users: [{ name: 'a', password: 'a' }],
    runStatuses,
  });
  const refuse = (runStatuses: SeedInput['runStatuses'], message: RegExp) =>
    expect(() => applySeed(new Store(), withStatuses(runStatuses))).toThrow(message);

  it('refuses renaming, disabling or categorising Not Tested, a built-in twice, and names used twice', () => {
    refuse([{ builtIn: 'Not Tested', name: 'Offen' }], /runStatuses\.0: Not Tested can be neither renamed/);
    refuse([{ builtIn: 'Not Tested', name: 'Not Tested', enabled: false }], /Not Tested can be neither/);
    refuse([{ builtIn: 'Not Tested', name: 'not tested', category: 'Executed' }], /Not Tested can be neither/);
    refuse(
      [
        { builtIn: 'NA', name: 'N/A' },
        { builtIn: 'NA', name: 'NA' },
      ],
      /runStatuses\.1: built-in status NA is configured twice/,
    );
    refuse([{ name: 'passed' }], /the name passed is used twice/);
    refuse([{ builtIn: 'Failed', name: 'Broken' }, { name: 'BROKEN' }], /the name BROKEN is used twice/);
  });

  it('the demo keeps the five built-ins unchanged', () => {
    const store = new Store();
    applySeed(store, demoSeed);
    expect(store.runStatuses.all().map((s) => [s.name, s.enabled])).toEqual([
      ['Passed', true],
      ['Failed', true],
      ['Blocked', true],
      ['Not Tested', true],
      ['NA', true],
    ]);
  });
});
