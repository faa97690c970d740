import { demoSeed, type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { closedPort, fixture } from './support/runner.js';

/**
 * The defect flood guard end to end (issue 18, point 1): the real `jest` on fixture projects, the real emulator.
 * 30 tests that cannot reach their database file one defect linked to all 30 runs; 12 distinct assertion failures
 * file at most `defects.maxPerRun` (10) and say why the others were not filed; two shards racing into one cycle end
 * with one open defect; a later cycle links the open defect instead of filing another.
 */

const DB_TESTS = 30;
const ASSERTIONS = 12;
/** FLOOD-1 is the plan; FLOOD-2.. the cases, one per test. */
const dbKey = (i: number) => `FLOOD-${i + 2}`;
const assertKey = (i: number) => `FLOOD-${DB_TESTS + i + 2}`;

const seed = {
  users: demoSeed.users,
  projects: [
    {
      key: 'FLOOD',
      name: 'Flood',
      issues: [
        {
          type: 'Test Plan',
          summary: 'Nightly',
          members: Array.from({ length: DB_TESTS + ASSERTIONS }, (_, i) => `FLOOD-${i + 2}`),
        },
        ...Array.from({ length: DB_TESTS + ASSERTIONS }, (_, i) => ({ type: 'Test Case', summary: `case ${i + 2}` })),
      ],
    },
  ],
};

/**
 * Tests that fail connecting to the database: most with a real refused connection to a closed port (no frame in
 * the project: the error comes from the runtime), every third with the same error thrown with another port.
 */
const dbFile = (from: number, to: number) => `
const net = require('node:net');
const connect = () => new Promise((resolve, reject) => {
  const s = net.connect(Number(process.env.DB_PORT), '127.0.0.1');
  s.on('connect', () => { s.end(); resolve(); });
  s.on('error', reject);
});
${Array.from({ length: to - from }, (_, n) => from + n)
  .map((i) =>
    i % 3 === 0
      ? `test('${dbKey(i)} reads row ${i}', async () => { throw new Error('connect ECONNREFUSED 127.0.0.1:${40000 + i}'); });`
      : `test('${dbKey(i)} reads row ${i}', async () => { await connect(); });`,
  )
  .join('\n')}
`;

/** Twelve distinct assertion failures: each on its own line with its own message. */
const ASSERT_FILE = Array.from(
  { length: ASSERTIONS },
  (_, i) =>
    `test('${assertKey(i)} checks field ${i}', () => { expect({ field${i}: 'wrong' }).toEqual({ field${i}: 'right' }); });`,
).join('\n');

let emu: RunningEmulator;
let port: number;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, seed });
  port = await closedPort();
});
afterAll(async () => {
  await emu?.close();
});

const env = (cycle: string, extra: Record<string, string> = {}) => ({
  CASEBRIDGE_URL: emu.url,
  CASEBRIDGE_TOKEN: 'casebridge-dev-token',
  CASEBRIDGE_PROJECT: 'FLOOD',
  CASEBRIDGE_MODE: 'cycle',
  CASEBRIDGE_TEST_PLAN: 'FLOOD-1',
  CASEBRIDGE_CYCLE: cycle,
  CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
  DB_PORT: String(port),
  ...extra,
});

/**
 * `assertionsFirst`: the assertions' file is made the largest, and Jest runs the largest file first when it has no
 * timings yet (one worker): the twelve assertion failures then reach the reporter before the outage's thirty.
 */
function project(name: string, assertionsFirst = false): string {
  const padding = assertionsFirst ? `\n// ${'padding '.repeat(4000)}\n` : '';
  return fixture(name, {
    'package.json': JEST_PACKAGE,
    'jest.config.js': jestConfig(),
    'tests/db-a.test.js': dbFile(0, DB_TESTS / 2),
    'tests/db-b.test.js': dbFile(DB_TESTS / 2, DB_TESTS),
    'tests/assert.test.js': ASSERT_FILE + padding,
  });
}

const bugs = () => emu.store.issues.filter((i) => i.type === 'Bug');
const openBugs = () => bugs().filter((i) => i.resolution === null);

/** The runs of a cycle by case key, with their status, comment and linked defect keys. */
function runsOf(cycleName: string) {
  const s = emu.store;
  const cycle = s.cycles.find((c) => c.name === cycleName);
  if (!cycle) throw new Error(`no cycle "${cycleName}"`);
  return new Map(
    s.runs
      .filter((r) => r.cycleId === cycle.id)
      .map((r) => [
        s.issues.get(r.tcId)?.key ?? '?',
        {
          status: r.status,
          comment: r.comment ?? '',
          bugs: [
            ...new Set(s.bugLinks.filter((b) => b.runId === r.id).map((b) => s.issues.get(b.issueId)?.key)),
          ].sort(),
        },
      ]),
  );
}

const DB_KEYS = Array.from({ length: DB_TESTS }, (_, i) => dbKey(i));
const ASSERT_KEYS = Array.from({ length: ASSERTIONS }, (_, i) => assertKey(i));

describe('defect flood guard (Jest, cycle mode)', () => {
  it('(a) 30 refused database connections file ONE defect, linked to all 30 runs; (d) a new cycle links it', async () => {
    const dir = project('jest-flood-db');
    const out = await jest(dir, ['--maxWorkers=2', 'tests/db-'], env('flood db'));
    expect(out.code, out.stderr).toBe(1);
    expect(bugs(), 'one defect for the refused connection').toHaveLength(1);
    const defect = bugs()[0];
    expect(defect?.summary).toMatch(/^Environment error \(connection refused\): .*ECONNREFUSED.*\[cb-[0-9a-f]{16}\]$/);
    expect(defect?.description).toContain('Environment error (connection refused)');
    const runs = runsOf('flood db');
    for (const key of DB_KEYS) expect(runs.get(key), key).toMatchObject({ status: 'Failed', bugs: [defect?.key] });
    expect(out.stderr).toContain('defects created: 1');

    // (d) The next night, another cycle: the open defect is linked, nothing new is filed. (Started at once after the
    // first run, its search may miss the defect Jira's index has not caught up with: the defect it files then is
    // closed as Duplicate of the older one when it is read again, and its runs are linked to the older one.)
    const again = await jest(dir, ['--maxWorkers=2', 'tests/db-'], env('flood db 2'));
    expect(again.code).toBe(1);
    const listed = () => bugs().map((b) => `${b.key} ${b.resolution ?? 'open'}`);
    expect(
      openBugs().map((b) => b.key),
      `still one open defect: ${listed()}\n${again.stderr}`,
    ).toEqual([defect?.key]);
    for (const dup of bugs().filter((b) => b.key !== defect?.key)) expect(dup.resolution).toBe('Duplicate');
    const runs2 = runsOf('flood db 2');
    for (const key of DB_KEYS) {
      expect(runs2.get(key)?.status, key).toBe('Failed');
      expect(runs2.get(key)?.bugs, key).toContain(defect?.key);
    }
    expect(again.stderr).toContain(`defects linked: ${defect?.key}`);
    expect(again.stderr).not.toContain('defects created');
  });

  it('(b) 12 distinct assertion failures file at most 10 defects; the others say the cap was reached', async () => {
    await emu.reset();
    const dir = project('jest-flood-assert');
    const out = await jest(dir, ['tests/assert'], env('flood assert'));
    expect(out.code).toBe(1);
    expect(bugs(), 'the cap of 10').toHaveLength(10);
    const runs = runsOf('flood assert');
    const withDefect = ASSERT_KEYS.filter((k) => runs.get(k)?.bugs.length === 1);
    const without = ASSERT_KEYS.filter((k) => runs.get(k)?.bugs.length === 0);
    expect(withDefect).toHaveLength(10);
    expect(without).toHaveLength(2);
    for (const key of without) {
      expect(runs.get(key)?.status, key).toBe('Failed');
      expect(runs.get(key)?.comment, key).toContain("not filed: the run's cap of 10 new defects was reached");
    }
    // Ten distinct defects: one per failure.
    expect(new Set(withDefect.map((k) => runs.get(k)?.bugs[0])).size).toBe(10);
    expect(out.stderr).toContain(
      '  2 failure(s) not filed as defects: the cap of 10 new defects per run (defects.maxPerRun) was reached',
    );
  });

  it('(e) 30 refused connections among 12 assertion failures: the outage gets a defect whatever came first, 9 others', async () => {
    await emu.reset();
    // One worker, the assertions' file first: arrival order would give the cap's ten slots to the assertions.
    const dir = project('jest-flood-mixed', true);
    const out = await jest(dir, ['--maxWorkers=1'], env('flood mixed'));
    expect(out.code).toBe(1);
    expect(bugs(), `the cap of 10\n${out.stderr}`).toHaveLength(10);
    const outage = bugs().find((b) => b.summary.startsWith('Environment error (connection refused)'));
    expect(outage, `the outage has its defect\n${out.stderr}`).toBeDefined();
    const runs = runsOf('flood mixed');
    for (const key of DB_KEYS) expect(runs.get(key), key).toMatchObject({ status: 'Failed', bugs: [outage?.key] });
    const without = ASSERT_KEYS.filter((k) => runs.get(k)?.bugs.length === 0);
    expect(without).toHaveLength(3);
    for (const key of without) {
      expect(runs.get(key)?.status, key).toBe('Failed');
      // Written when the failure was delivered, with no request more for a failure the ranking leaves out: before the
      // ranking, it says the ranking decides; after it (a loaded machine can deliver the last failures once every
      // result is in), that the cap was reached.
      expect(runs.get(key)?.comment, key).toMatch(
        /cap of 10 new defects \(defects\.maxPerRun\) goes to the[\s\S]*the cap was reached before|not filed: the run's cap of 10 new defects was reached/,
      );
    }
    // The summary names each group left out with the tests it hit (one each here).
    expect(out.stderr).toContain('3 failure(s) not filed as defects');
    expect(out.stderr.match(/^ {4}.*\(1 test\)$/gm)).toHaveLength(3);
  });

  it('(c) two shards racing into one cycle with the same refused connection end with one open defect', async () => {
    await emu.reset();
    const dir = project('jest-flood-shards');
    const [one, two] = await Promise.all([
      jest(dir, ['--shard=1/2', 'tests/db-'], env('flood shards')),
      jest(dir, ['--shard=2/2', 'tests/db-'], env('flood shards')),
    ]);
    expect(one.code).toBe(1);
    expect(two.code).toBe(1);
    expect(openBugs(), 'one open defect in the end').toHaveLength(1);
    const open = openBugs()[0]?.key;
    // A duplicate either machine filed at the same moment is closed as Duplicate.
    for (const dup of bugs().filter((b) => b.resolution !== null)) expect(dup.resolution).toBe('Duplicate');
    const runs = runsOf('flood shards');
    // Every run of both shards is Failed and linked to the open defect (a run that filed the closed duplicate keeps
    // that link too).
    for (const key of DB_KEYS) {
      expect(runs.get(key)?.status, key).toBe('Failed');
      expect(runs.get(key)?.bugs, key).toContain(open);
    }
  });
});

describe('classification from the case history (Jest, cycle mode)', () => {
  it('(f) a test failing in two runs is new in the first run comment and known in the second', async () => {
    await emu.reset();
    const dir = fixture('jest-history-known', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': jestConfig(),
      'tests/one.test.js': `test('${assertKey(0)} checks the total', () => { expect(1 + 1).toBe(3); });`,
    });
    const first = await jest(dir, [], env('history 1'));
    expect(first.code).toBe(1);
    expect(runsOf('history 1').get(assertKey(0))?.comment).toMatch(/^Classification: new \(first failure/m);
    expect(first.stderr).toContain('failures: 1 (1 new)');

    const second = await jest(dir, [], env('history 2'));
    expect(second.code).toBe(1);
    const run = runsOf('history 2').get(assertKey(0));
    expect(run?.comment, second.stderr).toMatch(/^Classification: known \(/m);
    expect(run?.comment).toMatch(/^casebridge signature: cb-[0-9a-f]{16}$/m);
    expect(second.stderr).toContain('failures: 1 (1 known)');
    // The defect the first run filed is linked again, nothing new is filed.
    expect(bugs()).toHaveLength(1);
    expect(run?.bugs).toEqual([bugs()[0]?.key]);
  });
});
