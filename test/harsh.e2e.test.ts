import type { FaultRuleInput, RunningEmulator } from '@casebridge/emulator';
import { afterAll, describe, expect, it } from 'vitest';
import {
  byOperation,
  distinct,
  Findings,
  freshCheckout,
  type HarshRow,
  journalLeft,
  mappedProject,
  mappingOf,
  replayCli,
  requestCounts,
  seedCasebridgeCases,
  unmappedSaid,
  writeHarshTables,
} from './support/harsh.js';
import {
  AUTO_OPTIONS,
  deliveredOf,
  EMPTY_SEED,
  env,
  FAILING,
  journalCheck,
  lagProbe,
  MAPPED_OPTIONS,
  MAPPED_SEED,
  PASSING,
  PROJECT,
  realistic,
  said,
  search,
  setFaults,
  start,
  testCases,
  wantOfSuite,
} from './support/harsh-world.js';
import { jest } from './support/jest.js';
import { type RealSuite, realSuite, runRealSuite } from './support/realsuite.js';
import type { RunOutput } from './support/runner.js';
import { cycleState } from './support/state.js';

/**
 * Issue 23's first table, end to end: the real Jest (the repository's), the built @casebridge/jest reporter and the
 * real emulator over HTTP, 20 ms away, behaving as the real Jira Data Center and synapseRT do (the emulator's realistic profile).
 * One `it` per row of the table, each on its own emulator; each asserts the fixed behaviour (nothing lost, nothing
 * doubled, nothing left in the journal) and records a row in bench-results/harsh.md and harsh.json.
 *
 * Sizes are the issue's, made smaller where only time grows with them: 60 mapped tests, 300 new tests past a search
 * window of 500 (600 other casebridge cases in the project; the second run from a fresh checkout, its mapping file
 * not committed), 150 tests adopted by two machines with a 2.5 s index lag
 * (HARSH_TRIES tries, default 2), and HARSH_N new tests (default 400; the issue's 1,400 for a full rehearsal) under
 * 30% 503s (fault dice HARSH_FAULT_SEED, default 3). About 2 minutes in all on 2 cores.
 */

const N = Number(process.env.HARSH_N ?? 400);
const TRIES = Number(process.env.HARSH_TRIES ?? 2);
const LONG = { timeout: 600_000 };

const rows: HarshRow[] = [];
afterAll(() => writeHarshTables(rows));

/** Records the row, prints its figures, then fails with every finding at once. */
function finish(
  emu: RunningEmulator,
  row: Omit<HarshRow, 'requests' | 'faulted' | 'passed' | 'notes' | 'seconds'>,
  started: number,
  findings: Findings,
  notes: string[] = [],
  counts: { requests: number; faulted: number } = requestCounts(emu),
): void {
  const { requests, faulted } = counts;
  const full: HarshRow = {
    ...row,
    requests,
    faulted,
    seconds: Math.round((Date.now() - started) / 1000),
    passed: findings.lines.length === 0,
    notes: notes.join('; '),
  };
  rows.push(full);
  console.log(`${row.behaviour}\n  ${JSON.stringify(full)}\n  by operation: ${byOperation(emu)}`);
  expect(findings.lines, `${row.behaviour}\n  (${notes.join('; ')})`).toEqual([]);
}

// ---- the rows -----------------------------------------------------------------------------------------------------

describe.sequential('issue 23: the real service is harsher than the emulator was', () => {
  it('one transient 500 (plain text) on bulkStatusUpdate: all 60 Passed, nothing journaled', LONG, async () => {
    const started = Date.now();
    const emu = await start(MAPPED_SEED, {
      rules: [{ route: '**/bulkStatusUpdate', errors: { '500': 1 }, body: 'text', times: 1 }],
    });
    try {
      const dir = mappedProject('harsh-bulk-once', { passing: PASSING }, MAPPED_OPTIONS);
      const cycle = 'harsh bulk 500 once';
      const out = await jest(dir, ['--maxWorkers=2'], env(emu, cycle));
      const findings = new Findings();
      if (out.code !== 0) findings.say(`jest exited ${out.code}: ${out.stderr.slice(-1500)}`);
      const { delivered, doubled } = deliveredOf(emu, cycle, new Map(PASSING.map((k) => [k, 'Passed'])), findings);
      const journaled = journalCheck(dir, findings);
      const met = requestCounts(emu).faulted;
      if (met !== 1) findings.say(`the 500 was met ${met} times, not once (the row did not exercise its fault)`);
      finish(
        emu,
        {
          behaviour: 'one transient 500 (plain text) on bulkStatusUpdate, 60 mapped passing tests',
          before: '60 of 60 lost, nothing journaled',
          expected: PASSING.length,
          delivered,
          journaled,
          cases: testCases(emu).length - FAILING.length,
          duplicates: doubled,
        },
        started,
        findings,
        [said(out)],
      );
    } finally {
      await emu.close();
    }
  });

  it('bulkStatusUpdate answers 500 for the whole run, then recovers: replay delivers all 60', LONG, async () => {
    const started = Date.now();
    const rule: FaultRuleInput = { route: '**/bulkStatusUpdate', errors: { '500': 1 }, body: 'text' };
    const emu = await start(MAPPED_SEED, { rules: [rule] });
    try {
      const dir = mappedProject('harsh-bulk-outage', { passing: PASSING }, MAPPED_OPTIONS);
      const cycle = 'harsh bulk 500 all run';
      const vars = env(emu, cycle, { CASEBRIDGE_FLUSH_TIMEOUT_MS: '5000' });
      const out = await jest(dir, ['--maxWorkers=2'], vars);
      const findings = new Findings();
      if (out.code !== 0) findings.say(`jest exited ${out.code}: ${out.stderr.slice(-1500)}`);
      // Before the replay: every result either delivered by the run or waiting in the journal.
      const want = new Map(PASSING.map((k) => [k, 'Passed']));
      const during = new Findings();
      const inRun = deliveredOf(emu, cycle, want, during).delivered;
      const journaledByRun = journalLeft(dir).filter((f) => f.endsWith('.json')).length;
      if (inRun + journaledByRun < PASSING.length) {
        findings.say(
          `the run lost ${PASSING.length - inRun - journaledByRun} of ${PASSING.length} results: ${inRun} delivered, ` +
            `${journaledByRun} journaled (the reporter said: ${said(out)})`,
        );
      }
      setFaults(emu, []);
      const replay = await replayCli(dir, vars);
      if (replay.code !== 0) findings.say(`casebridge replay exited ${replay.code}: ${replay.stderr.slice(-1500)}`);
      const { delivered, doubled } = deliveredOf(emu, cycle, want, findings);
      const journaled = journalCheck(dir, findings);
      if (requestCounts(emu).faulted === 0) findings.say('no request met the 500 (the row did not exercise its fault)');
      finish(
        emu,
        {
          behaviour: 'bulkStatusUpdate answers 500 for the whole run, then recovers (replay)',
          before: '0 of 60 delivered, 0 after replay',
          expected: PASSING.length,
          delivered,
          journaled,
          cases: testCases(emu).length - FAILING.length,
          duplicates: doubled,
        },
        started,
        findings,
        [
          `run: ${inRun} delivered, ${journaledByRun} journaled`,
          `run said: ${said(out)}`,
          `replay said: ${said(replay)}`,
        ],
      );
    } finally {
      await emu.close();
    }
  });

  it('one 500 on the first createRunBug of a run with 3 distinct failures: 3 defects, each linked', LONG, async () => {
    const started = Date.now();
    const emu = await start(MAPPED_SEED, {
      rules: [{ route: '**/testRun/createRunBug', errors: { '500': 1 }, body: 'text', times: 1 }],
    });
    try {
      const dir = mappedProject('harsh-defect-500', { passing: PASSING, failing: FAILING }, MAPPED_OPTIONS);
      const cycle = 'harsh createRunBug 500';
      const out = await jest(dir, ['--maxWorkers=2'], env(emu, cycle));
      const findings = new Findings();
      if (out.code !== 1) findings.say(`jest exited ${out.code}, not 1 (3 tests fail): ${out.stderr.slice(-1500)}`);
      const want = new Map([
        ...PASSING.map((k) => [k, 'Passed'] as const),
        ...FAILING.map((k) => [k, 'Failed'] as const),
      ]);
      const { delivered, doubled } = deliveredOf(emu, cycle, want, findings);
      const journaled = journalCheck(dir, findings);
      const bugs = emu.store.issues.filter((i) => i.type === 'Bug');
      const linked = cycleState(emu, cycle).filter((r) => FAILING.includes(r.key));
      const noDefect = linked.filter((r) => r.bugs.length === 0).map((r) => r.key);
      const severalDefects = linked.filter((r) => r.bugs.length > 1).map((r) => `${r.key}: ${r.bugs.join(' | ')}`);
      findings.add(`of ${FAILING.length} failing runs have no defect linked`, noDefect);
      findings.add('failing runs have several defects linked', severalDefects);
      const shared = new Set(linked.map((r) => r.bugs[0])).size;
      if (noDefect.length === 0 && shared !== FAILING.length) {
        findings.say(`${FAILING.length} distinct failures are linked to ${shared} distinct defects`);
      }
      if (bugs.length !== FAILING.length) {
        findings.say(
          `${bugs.length} defects filed for ${FAILING.length} distinct failures: ${bugs.map((b) => `${b.key} ${b.summary}`).join(' | ') || 'none'}`,
        );
      }
      if (requestCounts(emu).faulted !== 1) findings.say('the createRunBug 500 was not met exactly once');
      finish(
        emu,
        {
          behaviour: 'one 500 on the first createRunBug of a run with 3 distinct failures',
          before: '0 defects for the run',
          expected: FAILING.length,
          delivered: FAILING.length - noDefect.length,
          journaled,
          cases: bugs.length,
          duplicates: Math.max(0, bugs.length - FAILING.length) + doubled,
        },
        started,
        findings,
        [`${delivered} of ${want.size} runs delivered; counts are defects`, said(out)],
      );
    } finally {
      await emu.close();
    }
  });

  for (const windowMode of ['error', 'empty'] as const) {
    const what =
      windowMode === 'error'
        ? 'the project holds more casebridge cases than the search window (500 "Search limit exceeded")'
        : 'the same window answering empty pages with the true total';
    it(`${what}: 300 new tests delivered, still 300 cases after two runs`, LONG, async () => {
      const started = Date.now();
      const SEEDED = 600;
      const WINDOW = 500;
      const emu = await start(
        EMPTY_SEED,
        realistic({ searchMaxResults: 100, resultWindow: WINDOW, resultWindowMode: windowMode }),
      );
      try {
        seedCasebridgeCases(emu, PROJECT, SEEDED);
        const findings = new Findings();
        // The emulator really has the window (a kind one would pass this row for nothing).
        const deep = await search(emu, `project = ${PROJECT} ORDER BY id`, WINDOW, 100);
        const refuses =
          windowMode === 'error'
            ? deep.status === 500 && /Search limit exceeded/i.test(deep.text)
            : deep.status === 200 && deep.json?.issues.length === 0 && (deep.json?.total ?? 0) >= SEEDED;
        if (!refuses) {
          findings.say(
            `the emulator does not have the ${windowMode} search window of ${WINDOW} (startAt ${WINDOW} answered ` +
              `${deep.status} ${deep.text.slice(0, 120)}): see realistic() in this file`,
          );
        }
        emu.clearRequests();
        const suite = realSuite('jest', `harsh-window-${windowMode}`, { tests: 300, options: AUTO_OPTIONS });
        const size = distinct(suite).size;
        const outs: RunOutput[] = [];
        let delivered = 0;
        let doubled = 0;
        let journaled = 0;
        for (const n of [1, 2]) {
          const cycle = `harsh window ${windowMode} ${n}`;
          // Each CI run starts from a fresh checkout: the mapping file of the first run was not committed, so the
          // second finds its cases by searching the project, past the window.
          if (n === 2) freshCheckout(suite.dir);
          const out = await runRealSuite(suite, env(emu, cycle));
          outs.push(out);
          const f = new Findings();
          const unmapped = unmappedSaid(out);
          if (unmapped > 0) f.say(`the reporter printed ${unmapped} tests "without a case key" with autoCreate on`);
          const want = wantOfSuite(suite, mappingOf(suite.dir), f);
          ({ delivered, doubled } = deliveredOf(emu, cycle, want, f));
          journaled = journalCheck(suite.dir, f);
          // Delivered counts tests, not keys: a test without a key delivered nothing.
          delivered = Math.min(delivered, size);
          const cases = testCases(emu).length - SEEDED;
          if (cases !== size) f.say(`${cases} cases made for ${size} tests`);
          for (const line of f.lines) findings.say(`run ${n}: ${line}`);
        }
        finish(
          emu,
          {
            behaviour: `${what}; 300 new tests, autoCreate, two runs`,
            before:
              windowMode === 'error'
                ? '2 of 300 delivered; 298 "without a case key", not journaled'
                : '600 cases for 300 tests after two runs',
            expected: size,
            delivered,
            journaled,
            cases: testCases(emu).length - SEEDED,
            duplicates: Math.max(0, testCases(emu).length - SEEDED - size) + doubled,
          },
          started,
          findings,
          [`${SEEDED} other casebridge cases, window ${WINDOW}, maxResults 100`, ...outs.map(said)],
        );
      } finally {
        await emu.close();
      }
    });
  }

  it('search lags creates by 2.5 s while two machines adopt one 150-test suite into one cycle', LONG, async () => {
    const started = Date.now();
    const findings = new Findings();
    const tries: string[] = [];
    let last: RunningEmulator | undefined;
    let worst = { delivered: 0, journaled: 0, cases: 0, duplicates: 0, expected: 0 };
    let worstCounts = { requests: 0, faulted: 0 };
    let worstScore = -1;
    for (let t = 1; t <= TRIES; t++) {
      await last?.close();
      const emu = await start(EMPTY_SEED, realistic({ indexLagMs: 2500 }));
      last = emu;
      const f = new Findings();
      const lag = await lagProbe(emu);
      if (lag) f.say(lag);
      emu.clearRequests();
      const suites = ['a', 'b'].map((m) => realSuite('jest', `harsh-lag-${m}`, { tests: 150, options: AUTO_OPTIONS }));
      const [a, b] = suites as [RealSuite, RealSuite];
      const size = distinct(a).size;
      const cycle = `harsh lag try ${t}`;
      const outs = await Promise.all(suites.map((s) => runRealSuite(s, env(emu, cycle), ['--maxWorkers=1'])));
      const [ma, mb] = [mappingOf(a.dir), mappingOf(b.dir)];
      const want = wantOfSuite(a, ma, f);
      const { delivered, doubled } = deliveredOf(emu, cycle, want, f);
      const journaled = journalCheck(a.dir, f) + journalCheck(b.dir, f);
      const runs = cycleState(emu, cycle).length;
      if (runs !== size) f.say(`${runs} runs in the shared cycle for ${size} tests`);
      const cases = testCases(emu);
      const open = cases.filter((c) => c.resolution === null);
      if (open.length !== size) {
        const extra = open.length - size;
        f.say(
          `${open.length} open cases for ${size} tests (${extra > 0 ? `${extra} made twice` : `${-extra} missing`})`,
        );
      }
      const differ = [...new Set([...Object.keys(ma), ...Object.keys(mb)])].filter(
        (n) => JSON.stringify(ma[n]) !== JSON.stringify(mb[n]),
      );
      f.add(
        'tests are mapped differently by the two machines',
        differ.map((n) => `${JSON.stringify(ma[n])} / ${JSON.stringify(mb[n])}: ${n}`),
      );
      const closed = cases.length - open.length;
      tries.push(
        `try ${t}: ${open.length} open cases (${closed} closed duplicates), ${delivered} of ${size} delivered, ` +
          `${journaled} journaled, ${requestCounts(emu).requests} requests`,
      );
      if (f.lines.length > 0)
        f.say(`the machines said: (a) ${said(outs[0] as RunOutput)} (b) ${said(outs[1] as RunOutput)}`);
      for (const line of f.lines) findings.say(`try ${t}: ${line}`);
      // The row shows the worst try: a failing one first, else the one that made the most cases twice (closed as
      // duplicates by a later read, as issue 23 point 4 allows, but each a create and a close too many).
      const score = (f.lines.length > 0 ? 1_000_000 : 0) + closed;
      if (score > worstScore) {
        worstScore = score;
        worst = {
          delivered,
          journaled,
          cases: open.length,
          duplicates: Math.max(0, open.length - size) + closed + doubled,
          expected: size,
        };
        worstCounts = requestCounts(emu);
      }
      console.log(`lag ${tries[tries.length - 1]}; ${outs.map(said).join(' // ')}`);
    }
    try {
      finish(
        last as RunningEmulator,
        {
          behaviour: `search lags creates by 2.5 s; two machines adopt one 150-test suite into one cycle (${TRIES} tries)`,
          before: '2 of 4 tries: 154 and 151 open cases for 150 tests',
          ...worst,
        },
        started,
        findings,
        tries,
        worstCounts,
      );
    } finally {
      await last?.close();
    }
  });

  it(
    `a degraded service: 30% of requests answer 503 with Retry-After during a first run of ${N} new tests`,
    LONG,
    async () => {
      const started = Date.now();
      const emu = await start(EMPTY_SEED, {
        rules: [{ route: '/rest/**', errors: { '503': 0.3 }, retryAfterSeconds: 0 }],
        // Seed 3: under it a request met six 503s in a row in 3 of 4 runs of the core before issue 23, which then
        // declared the service down (400 of 400 journaled); the dice follow request order, so not in every run.
        faultSeed: Number(process.env.HARSH_FAULT_SEED ?? 3),
      });
      try {
        const suite = realSuite('jest', 'harsh-degraded', { tests: N, options: AUTO_OPTIONS });
        const size = distinct(suite).size;
        const cycle = 'harsh degraded';
        const out = await runRealSuite(suite, env(emu, cycle));
        const findings = new Findings();
        if (out.code !== 1) findings.say(`jest exited ${out.code}, not 1 (the suite has failing tests)`);
        if (/stopped delivering/.test(`${out.stderr}\n${out.stdout}`)) {
          findings.say(`the reporter declared the service down: ${said(out)}`);
        }
        const want = wantOfSuite(suite, mappingOf(suite.dir), findings);
        const { delivered, doubled } = deliveredOf(emu, cycle, want, findings);
        const journaled = journalCheck(suite.dir, findings);
        const cases = testCases(emu);
        const open = cases.filter((c) => c.resolution === null).length;
        if (open !== size) findings.say(`${open} open cases for ${size} tests`);
        if (requestCounts(emu).faulted === 0) findings.say('no request met a 503 (the row did not exercise its fault)');
        finish(
          emu,
          {
            behaviour: `a degraded service: 30% of requests answer 503 (Retry-After 0), first run of ${N} new tests`,
            before: '941 of 1,400 left in the journal (1,399 cases made)',
            expected: size,
            delivered: Math.min(delivered, want.size),
            journaled,
            cases: cases.length,
            duplicates: Math.max(0, cases.length - size) + doubled,
          },
          started,
          findings,
          [said(out)],
        );
      } finally {
        await emu.close();
      }
    },
  );
});
