import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type EngineContext, type TestResult } from '../src/index.js';
import { clearFaults, closedPort, setFaults } from './support/emulator.js';
import { FAST } from './support/engine-world.js';

/**
 * The engine against the real emulator over real HTTP, fed with results as an adapter would hand them over. The
 * runner adapters' own end-to-end tests (test/) cover the same paths through real runners.
 */

let emu: RunningEmulator;
beforeAll(async () => {
  // The kind Jira (one node, no index lag, substring search): these tests are about the engine's own paths; the
  // realistic profile's lag and workflows have their own tests (engine-faults, first-run, test/harsh.e2e).
  emu = await startEmulator({ port: 0, profile: 'ideal' });
});
afterAll(async () => {
  await emu?.close();
});
afterEach(async () => {
  await clearFaults(emu);
});

const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cb-engine-'));
  writeFileSync(join(dir, 'shot.png'), png);
  return dir;
}

/**
 * The engine's waits FAST times shorter (support/engine-world.ts): the same paths, on a Jira without index lag. The
 * end's patience (flushTimeoutMs, below) is on that clock too: FAST times longer.
 */
function ctx(cwd: string, lines: string[]): EngineContext {
  return { cwd, runner: { name: 'playwright', version: 'test' }, env: {}, out: (t) => lines.push(t), timeScale: FAST };
}

function result(title: string, status: 'passed' | 'failed' | 'flaky', extra: Partial<TestResult> = {}): TestResult {
  const fail = {
    retry: 0,
    status: 'failed' as const,
    durationMs: 5,
    errors: [{ message: `expected 200, got 500 at ${new Date().toISOString()}`, stack: 'Error\n at t.spec.ts:7:3' }],
    steps: [],
    attachments: [],
  };
  const pass = {
    retry: status === 'flaky' ? 1 : 0,
    status: 'passed' as const,
    durationMs: 5,
    errors: [],
    steps: [],
    attachments: [],
  };
  return {
    id: `t.spec.ts>${title}`,
    file: 't.spec.ts',
    titlePath: [title],
    tags: [],
    annotations: [],
    attempts: status === 'passed' ? [pass] : status === 'failed' ? [fail] : [fail, pass],
    ...extra,
  };
}

const base = (url: string, extra: Record<string, unknown> = {}) => ({
  url,
  token: 'casebridge-dev-token',
  projectKey: 'DEMO',
  flushTimeoutMs: 20_000 * FAST,
  ...extra,
});

function runsOfCycle(name: string) {
  const cycle = emu.store.cycles.find((c) => c.name === name);
  if (!cycle) return [];
  return emu.store.runs
    .filter((r) => r.cycleId === cycle.id)
    .map((r) => ({ key: emu.store.issues.get(r.tcId)?.key, status: r.status, run: r }));
}

describe('engine, cycle mode', () => {
  it('all passing: a handful of requests whatever the size, one cycle, one run per case', async () => {
    await emu.reset();
    emu.clearRequests();
    const lines: string[] = [];
    const engine = Engine.create(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI bulk' }),
      ctx(project(), lines),
    );
    expect(engine.enabled).toBe(true);
    const keys = ['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6', 'DEMO-7'];
    const tests = Array.from({ length: 300 }, (_, i) => result(`${keys[i % keys.length]} test ${i}`, 'passed'));
    engine.begin({ tests });
    for (const t of tests) engine.add(t);
    const end = await engine.end();
    expect(end.failed).toBe(false);
    expect(end.summary.problems).toEqual([]);
    const runs = runsOfCycle('CI bulk');
    expect(runs.map((r) => r.key).sort()).toEqual(keys);
    expect(runs.every((r) => r.status === 'Passed')).toBe(true);
    const calls = emu.requests().filter((r) => !r.path.startsWith('/__emulator'));
    expect(calls.length, calls.map((c) => `${c.method} ${c.path}`).join('\n')).toBeLessThanOrEqual(8);
    expect(lines.join('\n')).toMatch(/cycle "CI bulk"/);
  });

  it('failures: steps, screenshot bytes, one defect per fingerprint across runs, flaky passes with a comment', async () => {
    await emu.reset();
    const dir = project();
    const make = () => {
      const failing = result('DEMO-5 checkout', 'failed');
      const last = failing.attempts[0];
      if (!last) throw new Error('no attempt');
      last.steps = [
        { title: 'Add a product to the cart', status: 'passed', durationMs: 1, steps: [], attachments: [] },
        {
          title: 'Open checkout',
          status: 'failed',
          durationMs: 1,
          error: { message: 'card missing' },
          steps: [],
          attachments: [],
        },
      ];
      last.attachments = [{ name: 'screenshot', contentType: 'image/png', path: join(dir, 'shot.png') }];
      return [failing, result('DEMO-2 logs in', 'flaky')];
    };
    for (const round of [1, 2]) {
      // The next CI run comes later than Jira's index lag (about a second): its search shows the first run's defect
      // (the emulator's index catches up at once instead of on the clock).
      if (round === 2) emu.catchUpIndex();
      const lines: string[] = [];
      const engine = Engine.create(
        base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: `CI round ${round}` }),
        ctx(dir, lines),
      );
      const tests = make();
      engine.begin({ tests });
      for (const t of tests) engine.add(t);
      const end = await engine.end();
      expect(end.summary.problems, lines.join('\n')).toEqual([]);
      const runs = runsOfCycle(`CI round ${round}`);
      const checkout = runs.find((r) => r.key === 'DEMO-5')?.run;
      expect(checkout?.status).toBe('Failed');
      expect(checkout?.comment).toMatch(/card missing|expected 200/);
      const steps = emu.store.runSteps.filter((s) => s.runId === checkout?.id).sort((a, b) => a.seq - b.seq);
      expect(steps.map((s) => s.status)).toEqual(['Passed', 'Failed', 'Not Tested']);
      expect(steps[1]?.actualResult).toBe('card missing');
      const files = emu.store.attachments.filter((a) => a.runId === checkout?.id);
      expect(files.map((f) => f.sha256)).toEqual([createHash('sha256').update(png).digest('hex')]);
      const flaky = runs.find((r) => r.key === 'DEMO-2')?.run;
      expect(flaky?.status).toBe('Passed');
      expect(flaky?.comment).toMatch(/Flaky/);
      if (round === 1) expect(end.summary.defects.created).toHaveLength(1);
      else expect(end.summary.defects.linked).toHaveLength(1);
    }
    const bugs = emu.store.issues.filter((i) => i.type === 'Bug');
    expect(bugs).toHaveLength(1);
    expect(bugs[0]?.summary).toMatch(/\[cb-[0-9a-f]{16}\]$/);
  });
});

describe('engine, ad hoc mode', () => {
  it('one ad hoc run per key with its result; an unknown key is a problem that blocks nothing', async () => {
    await emu.reset();
    const lines: string[] = [];
    const engine = Engine.create(base(emu.url), ctx(project(), lines));
    engine.begin();
    engine.add(result('DEMO-3 [DEMO-4] logs out and searches', 'passed'));
    engine.add(result('DEMO-99 does not exist', 'passed'));
    engine.add(result('no key here', 'passed'));
    const end = await engine.end();
    expect(end.summary.problems.join('\n')).toMatch(/DEMO-99/);
    expect(end.summary.unmapped).toEqual(['t.spec.ts > no key here']);
    const adhoc = emu.store.runs.filter((r) => emu.store.cycles.get(r.cycleId)?.adhocTcId !== null);
    expect(adhoc.map((r) => [emu.store.issues.get(r.tcId)?.key, r.status]).sort()).toEqual([
      ['DEMO-3', 'Passed'],
      ['DEMO-4', 'Passed'],
    ]);
  });
});

describe('engine, unmapped tests with autoCreate', () => {
  it('creates each case once (also from two shards at once), files it in a suite, writes the mapping file', async () => {
    await emu.reset();
    const dir = project();
    const stepped = (): TestResult => {
      const t = result('guest browses the catalogue', 'passed', { file: 'tests/shop/catalogue.spec.ts' });
      t.id = 'catalogue';
      const a = t.attempts[0];
      if (a) {
        a.steps = [
          { title: 'open the shop', status: 'passed', durationMs: 1, steps: [], attachments: [] },
          { title: 'scroll the list', status: 'passed', durationMs: 1, steps: [], attachments: [] },
        ];
      }
      return t;
    };
    const options = base(emu.url, { autoCreate: true });
    const shards = [Engine.create(options, ctx(dir, [])), Engine.create(options, ctx(dir, []))];
    for (const e of shards) {
      e.begin();
      e.add(stepped());
    }
    const ends = await Promise.all(shards.map((e) => e.end()));
    // Both may have created a case before either saw the other's: the older one is used by both, the other closed.
    const all = emu.store.issues.filter((i) => i.summary === 'guest browses the catalogue');
    const cases = all.filter((i) => i.resolution === null);
    expect(cases).toHaveLength(1);
    const key = cases[0]?.key as string;
    expect(ends.flatMap((e) => e.summary.createdCases)).toEqual([key]);
    const duplicates = ends.flatMap((e) => e.summary.duplicateCases ?? []);
    expect(duplicates).toEqual(all.filter((i) => i.key !== key).map((i) => ({ key: i.key, kept: key })));
    for (const d of all.filter((i) => i.key !== key)) expect(d.resolution).toBe('Duplicate');
    expect(emu.store.caseSteps.filter((s) => s.tcId === cases[0]?.id).map((s) => s.step)).toEqual([
      'open the shop',
      'scroll the list',
    ]);
    const suite = emu.store.testSuites.all().map((s) => s.name);
    expect(suite).toEqual(expect.arrayContaining(['tests', 'shop', 'catalogue']));
    const mapping = JSON.parse(readFileSync(join(dir, 'casebridge.keys.json'), 'utf8'));
    expect(mapping).toEqual({ 'tests/shop/catalogue.spec.ts > guest browses the catalogue': key });

    const again = Engine.create(options, ctx(dir, []));
    again.begin();
    again.add(stepped());
    const end = await again.end();
    expect(end.summary.createdCases).toEqual([]);
    expect(emu.store.issues.filter((i) => i.summary === 'guest browses the catalogue')).toHaveLength(all.length);
    const runs = emu.store.runs.filter((r) => r.tcId === cases[0]?.id);
    expect(runs.map((r) => r.status)).toEqual(['Passed', 'Passed', 'Passed']);
  });
});

describe('engine, nothing lost', () => {
  it('service down for the whole run: results wait in the journal (0600), the next run delivers them once', async () => {
    await emu.reset();
    const dir = project();
    const down = `http://127.0.0.1:${await closedPort()}`;
    const lines: string[] = [];
    const first = Engine.create(
      base(down, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI offline' }),
      ctx(dir, lines),
    );
    const tests = [result('DEMO-2 a', 'passed'), result('DEMO-5 b', 'failed')];
    first.begin({ tests });
    for (const t of tests) first.add(t);
    const end1 = await first.end();
    expect(end1.failed).toBe(false);
    expect(end1.summary.journaled).toBe(2);
    const journalDir = join(dir, '.casebridge/journal');
    const entries = readdirSync(journalDir).filter((f) => f.endsWith('.json'));
    expect(entries).toHaveLength(2);
    for (const e of entries) expect(readFileSync(join(journalDir, e), 'utf8')).not.toContain('casebridge-dev-token');

    for (let i = 0; i < 2; i++) {
      const next = Engine.create(base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI later' }), ctx(dir, []));
      next.begin();
      const end = await next.end();
      expect(end.summary.journaled).toBe(0);
    }
    const runs = runsOfCycle('CI offline');
    expect(runs.map((r) => [r.key, r.status]).sort()).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-5', 'Failed'],
    ]);
    expect(runsOfCycle('CI later')).toEqual([]);
    expect(emu.store.issues.filter((i) => i.type === 'Bug')).toHaveLength(1);
    expect(readdirSync(journalDir).filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  it('30% 503 and resets: the same final state as a fault-free run', async () => {
    await emu.reset();
    await setFaults(
      emu,
      [
        // A 503 is answered before the handler runs (proof that nothing was applied: the client re-sends creates);
        // a reset comes after the write committed (a lost answer). One rule each: `phase` applies to both.
        { route: '/rest/**', errors: { '503': 0.3 }, retryAfterSeconds: 0 },
        { route: '/rest/**', resetRate: 0.1, phase: 'after' },
      ],
      7,
    );
    const engine = Engine.create(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI flaky net' }),
      ctx(project(), []),
    );
    const tests = [result('DEMO-2 a', 'passed'), result('DEMO-3 b', 'passed'), result('DEMO-5 c', 'failed')];
    engine.begin({ tests });
    for (const t of tests) engine.add(t);
    const end = await engine.end();
    await clearFaults(emu);
    if (end.summary.journaled > 0) {
      const again = Engine.create(
        base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'x' }),
        ctx(end.summary.journalDir?.replace(/\/\.casebridge\/journal$/, '') ?? '', []),
      );
      again.begin();
      await again.end();
    }
    const runs = runsOfCycle('CI flaky net');
    expect(runs.map((r) => [r.key, r.status]).sort()).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
      ['DEMO-5', 'Failed'],
    ]);
    expect(emu.store.cycles.filter((c) => c.name === 'CI flaky net')).toHaveLength(1);
    expect(emu.store.issues.filter((i) => i.type === 'Bug')).toHaveLength(1);
  });

  it('dry run sends nothing and lists the calls; a bad config disables the engine without throwing', async () => {
    await emu.reset();
    emu.clearRequests();
    const lines: string[] = [];
    const dry = Engine.create(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', dryRun: true }),
      ctx(project(), lines),
    );
    const tests = [result('DEMO-2 a', 'passed'), result('DEMO-5 b', 'failed')];
    dry.begin({ tests });
    for (const t of tests) dry.add(t);
    const end = await dry.end();
    expect(emu.requests().filter((r) => !r.path.startsWith('/__emulator'))).toEqual([]);
    expect(end.summary.calls?.some((c) => c.startsWith('runs.bulkStatusUpdate'))).toBe(true);

    const bad: string[] = [];
    const off = Engine.create({ url: 'not a url', projectKey: 'demo', mystery: 1 }, ctx(project(), bad));
    expect(off.enabled).toBe(false);
    off.begin();
    off.add(tests[0] as TestResult);
    expect((await off.end()).failed).toBe(false);
    expect(bad.join('\n')).toMatch(/url/);
    expect(bad.join('\n')).toMatch(/mystery/);
  });
});
