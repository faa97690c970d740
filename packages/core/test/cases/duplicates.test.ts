import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningEmulator, type SeedInput, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestManagementClient } from '../../src/client/tm.js';
import { identityInDescription } from '../../src/engine/cases/registry.js';
import { groupOf } from '../../src/engine/defects/groups.js';
import { closeAsDuplicate } from '../../src/engine/jira/duplicate.js';
import { Engine, type EngineContext, type TestResult } from '../../src/index.js';
import { insertIssue } from '../support/emulator.js';
import { FAST } from '../support/engine-world.js';

/**
 * Issues casebridge made twice (a search that lagged a create, two machines at once) against the emulator's
 * realistic Jira: a later read finds them and closes the newer one, the survivor (the oldest) is used on every
 * machine and in every later run; closing follows the workflow (status category done, the screen's fields, one step
 * through another status), and where no closing is possible the duplicate is labelled, and ignored from then on.
 * Text-search hits are checked exactly before a defect is linked.
 */

const TOKEN = 'dup-token';
const LAG_MS = 2_500;
/** Longer than the case registry waits before it decides a create (3 s): only a later run can see both. */
const LONG_LAG_MS = 9_000;

const SEED: SeedInput = {
  users: [{ name: 'ci', displayName: 'CI', password: 'ci', tokens: [TOKEN], admin: true }],
  customFields: [{ id: 'customfield_10300', name: 'Ursache', type: 'option', options: ['Code', 'Umgebung'] }],
  projects: [
    { key: 'DUP', name: 'Duplicates', issues: [{ type: 'Test Plan', summary: 'Plan' }] },
    { key: 'NOC', name: 'No way to close', issues: [{ type: 'Test Plan', summary: 'Plan' }] },
    { key: 'TWO', name: 'Two steps', issues: [] },
  ],
  workflows: [
    {
      // Closing needs a root cause nobody can guess: casebridge labels instead of closing.
      name: 'NOC: Testfall',
      projects: ['NOC'],
      issueTypes: ['Test Case', 'Bug'],
      statuses: [
        { name: 'Neu', category: 'new' },
        { name: 'Fertig', category: 'done' },
      ],
      transitions: [
        {
          id: 11,
          name: 'Abschließen',
          from: ['Neu'],
          to: 'Fertig',
          screen: { fields: ['resolution', 'customfield_10300'], required: ['resolution', 'customfield_10300'] },
        },
      ],
    },
    {
      // No closing transition from the first status; the one from In Arbeit asks for a resolution.
      name: 'TWO: Fehler',
      projects: ['TWO'],
      issueTypes: ['Bug'],
      statuses: [
        { name: 'Offen', category: 'new' },
        { name: 'In Arbeit', category: 'indeterminate' },
        { name: 'Erledigt', category: 'done', editable: false },
      ],
      transitions: [
        { id: 11, name: 'Bearbeiten', from: ['Offen'], to: 'In Arbeit' },
        {
          id: 21,
          name: 'Erledigen',
          from: ['In Arbeit'],
          to: 'Erledigt',
          screen: { fields: ['resolution', 'comment'], required: ['resolution'] },
        },
      ],
    },
  ],
};

let emu: RunningEmulator;
let tm: TestManagementClient;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, profile: 'realistic', jira: { indexLagMs: LAG_MS }, seed: SEED });
  tm = new TestManagementClient({ baseUrl: emu.url, auth: { type: 'bearer', token: TOKEN } });
});
afterAll(async () => {
  await tm?.close();
  await emu?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function result(title: string, status: 'passed' | 'failed' = 'passed', message = 'expected 1 to be 2'): TestResult {
  return {
    id: `dup.spec.ts>${title}`,
    file: 'dup.spec.ts',
    titlePath: [title],
    tags: [],
    annotations: [],
    attempts: [
      {
        retry: 0,
        status,
        durationMs: 1,
        errors: status === 'failed' ? [{ message, stack: `Error: ${message}\n at dup.spec.ts:3:1` }] : [],
        steps: [],
        attachments: [],
      },
    ],
  };
}

const ctx = (cwd: string): EngineContext => ({
  cwd,
  runner: { name: 'jest', version: 'test' },
  env: {},
  out: () => {},
});

/**
 * For the runs under a lag longer than any wait of the engine (LONG_LAG_MS): the engine's clock FAST times faster
 * (its 3 s wait for the index 150 ms, still far shorter than the lag), its patience FAST times longer. Where the
 * lag is shorter than the engine's wait (LAG_MS) and the engine is to see past it, the runs keep the real clock.
 */
const fast = { timeScale: FAST } satisfies Partial<EngineContext>;
const patient = { flushTimeoutMs: 15_000 * FAST };

async function run(
  project: string,
  cycle: string,
  tests: TestResult[],
  extra: Record<string, unknown> = {},
  context: Partial<EngineContext> = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'cb-dup-'));
  const engine = Engine.create(
    {
      url: emu.url,
      token: TOKEN,
      projectKey: project,
      mode: 'cycle',
      testPlan: `${project}-1`,
      cycle,
      autoCreate: true,
      defects: { enabled: false },
      flushTimeoutMs: 15_000,
      ...extra,
    },
    { ...ctx(dir), ...context },
  );
  engine.begin({ tests });
  for (const t of tests) engine.add(t);
  const end = await engine.end();
  const file = join(dir, 'casebridge.keys.json');
  const mapping = (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}) as Record<string, string>;
  return { end, mapping };
}

const issue = (key: string) => emu.store.issues.find((i) => i.key === key);
const cases = (project: string) =>
  emu.store.issues.filter((i) => i.type === 'Test Case' && i.key.startsWith(`${project}-`));
function cycleKeys(cycle: string): string[] {
  const c = emu.store.cycles.find((x) => x.name === cycle);
  return emu.store.runs
    .filter((r) => r.cycleId === c?.id)
    .map((r) => emu.store.issues.get(r.tcId)?.key as string)
    .sort();
}

describe('cases made twice because the search lagged', () => {
  it('two machines into one cycle, the search 2.5 s behind: one open case and one run per test (any made twice closed within the run)', async () => {
    const tests = Array.from({ length: 10 }, (_, i) => result(`shared ${i}`));
    // The second machine starts 300 ms after the first: its first read cannot show the first one's cases yet.
    const a = run('DUP', 'CI shared', tests);
    await sleep(300);
    const b = run('DUP', 'CI shared', tests);
    const [first, second] = await Promise.all([a, b]);
    expect(second.mapping).toEqual(first.mapping);
    const kept = Object.values(first.mapping).sort();
    expect(cycleKeys('CI shared'), 'one run per test, on the survivors').toEqual(kept);
    const made = [...first.end.summary.createdCases, ...second.end.summary.createdCases];
    const dups = [...(first.end.summary.duplicateCases ?? []), ...(second.end.summary.duplicateCases ?? [])];
    // How many cases the second machine made depends on when it saw the first one's cycle and cases (a follower
    // waits for them; under load it may give up and create): what does not depend on it is exact. Each survivor was
    // made once, by one of the two machines, and is named once as created; every other case of these tests is a
    // duplicate one machine named and closed, pointing at its test's survivor.
    expect([...made].sort(), 'the survivors, each created once').toEqual(kept);
    const shared = cases('DUP').filter((c) => c.summary.startsWith('shared'));
    const closed = shared.filter((c) => !kept.includes(c.key));
    expect(dups.map((d) => d.key).sort(), 'every other case: a duplicate named once').toEqual(
      closed.map((c) => c.key).sort(),
    );
    for (const d of dups) {
      expect(issue(d.key)?.resolution).toBe('Duplicate');
      expect(issue(d.kept)?.summary, 'a duplicate points at the survivor of its own test').toBe(issue(d.key)?.summary);
      expect(kept).toContain(d.kept);
    }
    expect(
      shared
        .filter((c) => c.resolution === null)
        .map((c) => c.key)
        .sort(),
    ).toEqual(kept);
    expect(kept).toHaveLength(10);
    console.log(
      `two machines, lag 2.5 s: ${made.length} created and kept, ${dups.length} made twice and closed within the run`,
    );
  }, 60_000);

  it('two machines creating the same tests at once: one run per test in the cycle, none for a case that lost', async () => {
    // Declared shards of one run create at once without waiting for each other (each expects its own tests); given
    // the same tests, every test gets two cases: a case joins the cycle only once the read that decides it has kept
    // it, so no run of a closed duplicate stands in the cycle beside the survivor's.
    const tests = Array.from({ length: 10 }, (_, i) => result(`raced ${i}`));
    const [first, second] = await Promise.all([
      run('DUP', 'CI raced', tests, {}, { shard: { current: 1, total: 2 } }),
      run('DUP', 'CI raced', tests, {}, { shard: { current: 2, total: 2 } }),
    ]);
    expect(second.mapping).toEqual(first.mapping);
    const kept = Object.values(first.mapping).sort();
    const dups = [...(first.end.summary.duplicateCases ?? []), ...(second.end.summary.duplicateCases ?? [])];
    expect(dups.length, 'both machines made every case').toBe(10);
    expect(cycleKeys('CI raced'), 'one run per test, on the survivors: none of a closed duplicate').toEqual(kept);
    const c = emu.store.cycles.find((x) => x.name === 'CI raced');
    const runs = emu.store.runs.filter((r) => r.cycleId === c?.id);
    expect(runs.map((r) => r.status)).toEqual(Array(10).fill('Passed'));
    for (const d of dups) expect(issue(d.key)?.resolution).toBe('Duplicate');
  }, 60_000);

  it('a lag beyond the wait (9 s): the next run closes the newer case of each test, and every run after it agrees', async () => {
    emu.setJira({ indexLagMs: LONG_LAG_MS });
    try {
      const tests = Array.from({ length: 10 }, (_, i) => result(`test ${i}`));
      const first = await run('DUP', 'CI 1', tests, patient, fast);
      expect(first.end.summary.createdCases).toHaveLength(10);
      // A second machine right after the first: its reads do not show the first one's cases yet.
      const second = await run('DUP', 'CI 2', tests, patient, fast);
      expect(second.end.summary.createdCases, 'a lagging search: made again').toHaveLength(10);

      // The lag passes (the emulator's index catches up at once, not on the clock): the next run sees both.
      emu.catchUpIndex();
      emu.clearRequests();
      const third = await run('DUP', 'CI 3', tests, patient, fast);
      expect(third.end.summary.createdCases).toEqual([]);
      const dups = third.end.summary.duplicateCases ?? [];
      expect(dups.map((d) => d.key).sort()).toEqual(Object.values(second.mapping).sort());
      expect(dups.map((d) => d.kept).sort()).toEqual(Object.values(first.mapping).sort());
      // The survivors are the first run's (older) cases; the duplicates are closed as Duplicate.
      expect(third.mapping).toEqual(first.mapping);
      expect(cycleKeys('CI 3')).toEqual(Object.values(first.mapping).sort());
      for (const key of Object.values(second.mapping)) expect(issue(key)?.resolution).toBe('Duplicate');
      const closing = emu.requests().filter((r) => /jira\.(issue|transitions|transition)$/.test(r.op ?? ''));
      console.log(`10 duplicates closed with ${closing.length} requests (${emu.requests().length} in the run)`);

      const fourth = await run('DUP', 'CI 4', tests, patient, fast);
      expect(fourth.end.summary.duplicateCases ?? []).toEqual([]);
      expect(fourth.mapping).toEqual(first.mapping);
    } finally {
      emu.setJira({ indexLagMs: LAG_MS });
    }
  }, 120_000);

  it('a workflow that cannot close them: the duplicates are labelled, named, and every later run ignores them', async () => {
    emu.setJira({ indexLagMs: LONG_LAG_MS });
    try {
      const tests = Array.from({ length: 3 }, (_, i) => result(`labelled ${i}`));
      const first = await run('NOC', 'NOC 1', tests, patient, fast);
      const second = await run('NOC', 'NOC 2', tests, patient, fast);
      expect(second.end.summary.createdCases).toHaveLength(3);
      emu.catchUpIndex();
      const third = await run('NOC', 'NOC 3', tests, patient, fast);
      expect((third.end.summary.duplicateCases ?? []).map((d) => d.key).sort()).toEqual(
        Object.values(second.mapping).sort(),
      );
      expect(third.mapping).toEqual(first.mapping);
      for (const [name, key] of Object.entries(second.mapping)) {
        const dup = issue(key);
        expect(dup?.status).toBe('Neu');
        expect(dup?.description).toMatch(new RegExp(`^casebridge-duplicate-of: ${first.mapping[name]}\\n`));
        expect(identityInDescription(dup?.description ?? '')).toBeUndefined();
      }
      emu.catchUpIndex();
      emu.clearRequests();
      const fourth = await run('NOC', 'NOC 4', tests, patient, fast);
      expect(fourth.end.summary.duplicateCases ?? []).toEqual([]);
      expect(fourth.mapping).toEqual(first.mapping);
      expect(emu.requests().filter((r) => r.op === 'jira.transitions')).toEqual([]);
    } finally {
      emu.setJira({ indexLagMs: LAG_MS });
    }
  }, 120_000);
});

describe('closing a duplicate by the workflow', () => {
  const bug = (project: string, summary: string) => {
    const p = emu.store.projects.find((x) => x.key === project);
    const n = 5000 + emu.store.issues.filter((i) => i.projectId === p?.id).length;
    return insertIssue(emu, {
      project,
      key: `${project}-${n}`,
      type: 'Bug',
      summary,
      description: 'a defect',
      status: 'Offen',
    });
  };

  it('two steps to a done status, resolution Duplicate from the screen; closed already, one read and nothing sent', async () => {
    const kept = bug('TWO', 'the first');
    const dup = bug('TWO', 'the second');
    expect(await closeAsDuplicate(tm, dup.key, undefined, kept.key)).toBe('closed');
    expect(issue(dup.key)?.status).toBe('Erledigt');
    expect(issue(dup.key)?.resolution).toBe('Duplicate');
    // Closed already: one read, nothing more is sent.
    emu.clearRequests();
    expect(await closeAsDuplicate(tm, dup.key, undefined, kept.key)).toBe('already');
    expect(emu.requests().filter((r) => r.op === 'jira.transition')).toEqual([]);
  });

  it("the demo's German Bug workflow: Bearbeiten, then the done transition that needs no root cause", async () => {
    const other = await startEmulator({ port: 0, profile: 'realistic' });
    const client = new TestManagementClient({
      baseUrl: other.url,
      auth: { type: 'bearer', token: 'casebridge-dev-token' },
    });
    try {
      const created = await client.jira.createIssue({
        fields: { project: { key: 'DEMO' }, summary: 'twice', issuetype: { name: 'Bug' } },
      });
      expect(await closeAsDuplicate(client, created.key, undefined, 'DEMO-1')).toBe('closed');
      const after = other.store.issues.find((i) => i.key === created.key);
      expect(after?.status).toBe('Erledigt');
    } finally {
      await client.close();
      await other.close();
    }
  });
});

describe('defect search: every hit checked exactly', () => {
  it('a summary with the same words but not the marker is not linked; of two exact ones the newer is closed', async () => {
    const p = emu.store.projects.find((x) => x.key === 'DUP');
    const insert = (type: string, summary: string) => {
      const n = 5000 + emu.store.issues.filter((i) => i.projectId === p?.id).length;
      const key = `DUP-${n}`;
      return insertIssue(emu, {
        project: 'DUP',
        key,
        type,
        summary,
        description: 'made earlier',
        at: Date.now() - 60_000,
      });
    };
    const testCase = insert('Test Case', 'pays');
    const failing = result(`${testCase.key} pays`, 'failed', 'expected 5 to be 6');
    const hash = groupOf(failing).hash;
    const marker = `[cb-${hash}]`;
    // Jira's ~ finds this one (the words cb and the hash, in any order): it is not the marker.
    const decoy = insert('Bug', `Notes on ${hash} cb migration`);
    const options = { autoCreate: false, defects: { enabled: true } };
    emu.setJira({ indexLagMs: 0 });
    try {
      const hits = await tm.jira.search({ jql: `project = DUP AND summary ~ "cb-${hash}"`, fields: 'summary' });
      expect(
        hits.issues.map((i) => i.key),
        "Jira's ~ finds the decoy",
      ).toContain(decoy.key);
      const one = await run('DUP', 'defects 1', [failing], options);
      expect(one.end.summary.defects.linked).toEqual([]);
      expect(one.end.summary.defects.created).toHaveLength(1);
      const filed = one.end.summary.defects.created[0] as string;
      expect(issue(filed)?.summary).toContain(marker);
      expect(issue(decoy.key)?.resolution).toBeNull();
      // Two exact ones (a lagging search let an earlier run file it again): the newer is closed, the older linked.
      const twice = insert('Bug', `pays: expected 5 to be 6 ${marker}`);
      const again = await run('DUP', 'defects 2', [failing], options);
      expect(again.end.summary.defects.linked).toEqual([filed]);
      expect(again.end.summary.defects.created).toEqual([]);
      expect(issue(twice.key)?.resolution).toBe('Duplicate');
      expect(issue(filed)?.resolution).toBeNull();
    } finally {
      emu.setJira({ indexLagMs: LAG_MS });
    }
  }, 60_000);
});
