import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestResult } from '../../src/index.js';
import { base, ctx, project, report, result, useEngineWorld } from '../support/engine-world.js';

/**
 * New cases go through Jira's bulk create (cases/bulk-create.ts), against the real emulator over real HTTP: up to
 * `createBatchSize` cases per request, steps with one `addSteps` per case that has steps, suites with one
 * `linkTestCase` per suite path and batch; a server that takes fewer per request halves the batch; a Jira without the
 * route falls back to the add-on's create, one by one. Each test asserts the emulator's final state.
 */

const world = useEngineWorld();
const { ops } = world;
let emu: RunningEmulator;
beforeAll(() => {
  emu = world.emulator();
});

/** `n` new tests over `files` files; every third has two steps. */
function newTests(n: number, files = 3): TestResult[] {
  return Array.from({ length: n }, (_, i) => {
    const t = result(`adopts row ${i} «${'é'.repeat(i % 4)}» "quoted" ~ AND`, 'passed', {
      file: `tests/area-${i % files}/rows.spec.ts`,
    });
    t.id = `t${i}`;
    const a = t.attempts[0];
    if (a && i % 3 === 0) {
      a.steps = [
        { title: `open row ${i}`, status: 'passed', durationMs: 1, steps: [], attachments: [] },
        { title: 'check it', status: 'passed', durationMs: 1, steps: [], attachments: [] },
      ];
    }
    return t;
  });
}

/** The cases casebridge made, by summary, and what each holds. */
function madeCases() {
  const s = emu.store;
  return s.issues
    .filter((i) => i.type === 'Test Case' && i.description.includes('casebridge-id:'))
    .map((i) => ({
      key: i.key,
      summary: i.summary,
      open: i.resolution === null,
      steps: s.caseSteps.filter((st) => st.tcId === i.id).length,
      suites: s.testSuiteMembers.filter((m) => m.tcId === i.id).length,
    }));
}

describe('bulk case creation', () => {
  it('150 new tests: 3 bulk creates of 50, steps for the 50 with steps, one suite link per file and batch; every result in its run', async () => {
    const tests = newTests(150);
    const end = await report(base(emu.url, { autoCreate: true }), tests, ctx(project(), []), false);
    expect(end.summary.problems).toEqual([]);
    expect(end.summary.createdCases).toHaveLength(150);
    const cases = madeCases();
    expect(cases).toHaveLength(150);
    expect(new Set(cases.map((c) => c.summary)).size).toBe(150);
    expect(cases.filter((c) => c.steps === 2)).toHaveLength(50);
    expect(cases.filter((c) => c.steps === 0)).toHaveLength(100);
    expect(ops('cases.createTestCaseInSuite')).toHaveLength(0);
    const bulks = ops('jira.bulkCreateIssues');
    // Results arrive one by one: what waits goes at once, so the first batches may be small; never one per case.
    expect(bulks.length).toBeGreaterThanOrEqual(3);
    expect(bulks.length).toBeLessThanOrEqual(12);
    expect(ops('cases.addSteps')).toHaveLength(50);
    expect(ops('cases.linkTestCaseToSuite').length).toBeLessThanOrEqual(bulks.length * 3);
    // Every case is filed in the suite of its file.
    expect(cases.every((c) => c.suites === 1)).toBe(true);
    const suites = emu.store.testSuites.all().map((s) => s.name);
    expect(suites).toEqual(expect.arrayContaining(['tests', 'area-0', 'area-1', 'area-2', 'rows']));
    // Each result is in an ad hoc run of its own case.
    const runs = emu.store.runs.all();
    expect(new Set(runs.map((r) => r.tcId)).size).toBe(150);
    expect(runs.every((r) => r.status === 'Passed')).toBe(true);
  });

  it('a server that takes 20 per bulk create: the batch is halved (50, 25, 12) and every case is made once', async () => {
    emu.setJira({ bulkCreateMax: 20 });
    const tests = newTests(100, 2);
    const end = await report(base(emu.url, { autoCreate: true }), tests, ctx(project(), []), false);
    expect(end.summary.problems).toEqual([]);
    const cases = madeCases();
    expect(cases).toHaveLength(100);
    expect(new Set(cases.map((c) => c.summary)).size).toBe(100);
    const sizes = ops('jira.bulkCreateIssues').map((r) => r.status);
    // Two halvings on the way down; a batch already under way when the first refusal came is refused too (at most
    // `concurrency`, 4, per size), then only creates that pass.
    expect(sizes.filter((s) => s === 400).length).toBeGreaterThanOrEqual(2);
    expect(sizes.filter((s) => s === 400).length).toBeLessThanOrEqual(8);
    expect(sizes.filter((s) => s === 201).length).toBeGreaterThanOrEqual(100 / 12 - 1);
    // A batch split into 12s leaves a rest: one case goes through the add-on (one request either way).
    expect(ops('cases.createTestCaseInSuite').length).toBeLessThanOrEqual(4);
  });

  it('a Jira without bulk create (404): told once, then the add-on creates the cases one by one', async () => {
    emu.setJira({ bulkCreateMax: 0 });
    const tests = newTests(30, 2);
    const end = await report(base(emu.url, { autoCreate: true }), tests, ctx(project(), []), false);
    expect(end.summary.problems).toEqual([]);
    expect(madeCases()).toHaveLength(30);
    expect(ops('jira.bulkCreateIssues')).toHaveLength(1);
    expect(ops('cases.createTestCaseInSuite')).toHaveLength(30);
    expect(madeCases().filter((c) => c.steps === 2)).toHaveLength(10);
  });

  it('createBatchSize 1: the add-on creates each case, as before', async () => {
    const end = await report(
      base(emu.url, { autoCreate: true, createBatchSize: 1 }),
      newTests(12),
      ctx(project(), []),
      false,
    );
    expect(end.summary.problems).toEqual([]);
    expect(madeCases()).toHaveLength(12);
    expect(ops('jira.bulkCreateIssues')).toHaveLength(0);
    expect(ops('cases.createTestCaseInSuite')).toHaveLength(12);
  });
});
