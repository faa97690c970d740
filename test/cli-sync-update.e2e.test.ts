import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { demoSeed, type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, ROOT, run } from './support/runner.js';

/**
 * `casebridge sync --update`, built, on a Jest fixture project whose tests carry the keys of seeded cases with other
 * titles and steps, against the real emulator: the dry run shows the diff and changes nothing, `--yes` makes the
 * cases' steps those of the code (keeping expected results), never touches what is not a test case of the project,
 * and a second run has nothing left to change.
 */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');

let emu: RunningEmulator;
beforeAll(async () => {
  const [demo] = demoSeed.projects ?? [];
  if (!demo) throw new Error('the demo seed has no project');
  emu = await startEmulator({
    port: 0,
    seed: {
      ...demoSeed,
      projects: [
        demo,
        {
          key: 'OTHER',
          name: 'Another team',
          issues: [{ type: 'Test Case', summary: 'Not ours', steps: [{ step: 'keep me', expectedResult: '' }] }],
        },
      ],
    },
  });
});
afterAll(async () => {
  await emu?.close();
});

const sync = (dir: string, args: string[] = []) =>
  run(process.execPath, [CLI, 'sync', dir, ...args], ROOT, {
    CASEBRIDGE_URL: emu.url,
    CASEBRIDGE_TOKEN: 'casebridge-dev-token',
    CASEBRIDGE_PROJECT: 'DEMO',
  });

interface Held {
  summary: string;
  type: string;
  steps: Array<[string, string, string | null]>;
}

/** Every issue the emulator holds, by key, with its steps as [step, expected result, test data]. */
function held(): Record<string, Held> {
  const s = emu.store;
  const out: Record<string, Held> = {};
  for (const i of s.issues.filter(() => true)) {
    out[i.key] = {
      summary: i.summary,
      type: i.type,
      steps: s.caseSteps
        .filter((x) => x.tcId === i.id)
        .sort((a, b) => a.seq - b.seq)
        .map((x) => [x.step, x.expectedResult, x.stepData]),
    };
  }
  return out;
}

const stepsOf = (key: string) => held()[key]?.steps.map((s) => s[0]);

// Any upper-case key, so that OTHER-1 is read as a key and must be refused for being in another project.
const FILES = {
  'jest.config.cjs': `module.exports = { testMatch: ['**/tests/**/*.test.js'] };`,
  'casebridge.config.json': `{ "keyPattern": "[A-Z]+-[1-9][0-9]*" }`,
  'tests/shop.test.js': `
describe('account', () => {
  test('DEMO-2 signs in', async () => {
    await step('Open the login page', f);
    await step('Type the user name', f);
    await step('Press "Log in"', f);
    await step('See the dashboard', f);
  });
  test('DEMO-3 User logs out', async () => {
    await step('Open the user menu', f);
  });
});
test('DEMO-4 searches by name', () => {});
test('DEMO-5 pays', async () => {
  await step(\`Pay with \${'card'}\`, f);
});
test('DEMO-6 Profile page shows the user name', async () => {
  await step('Open the profile', f);
});
test('DEMO-8 is a requirement', async () => {
  await step('Nothing to do here', f);
});
test('OTHER-1 belongs to another team', async () => {
  await step('Replace me', f);
});
test('DEMO-999 was deleted', async () => {
  await step('Gone', f);
});
test('has no key yet', async () => {
  await step('Be created', f);
});
const f = async () => {};
async function step(title, body) { return body(); }
`,
};

describe('casebridge sync --update', () => {
  it('shows the diff first, applies the summary and step changes with --yes, and has nothing left to change after', async () => {
    const dir = fixture('sync-update', FILES);
    const before = held();
    expect(before['DEMO-8']?.type).toBe('Requirement');

    const dry = await sync(dir, ['--update']);
    expect(dry.code, dry.stderr).toBe(0);
    const out = dry.stdout;
    expect(out).toContain('dry run');
    expect(out).toContain('update (dry run: nothing changed; add --yes to apply): 5 keyed case(s) compared');
    expect(out).toContain('    summary: "User logs in with valid credentials" -> "signs in"\n');
    expect(out).toContain('    ~ step 2: "Enter user name and password" -> "Type the user name"');
    expect(out).toContain('    + step 4: "See the dashboard"');
    expect(out).toContain('    - step 2: "Choose \\"Log out\\""');
    expect(out).toContain('    + step 1: "Open the profile"');
    expect(out).toContain('    summary: "Search finds products by name" -> "searches by name"');
    expect(out).toMatch(/not compared: DEMO-8 .*the issue is a Requirement, not a Test Case/);
    expect(out).toMatch(/not compared: OTHER-1 .*the issue is in project OTHER, not DEMO/);
    expect(out).toMatch(/not compared: DEMO-999 .*no issue has this key/);
    expect(out).toContain('steps left alone for 2 case(s)');
    expect(out).toContain('DEMO-5 (step titles built at run time)');
    expect(out).toContain('DEMO-4 (no step calls in the test body)');
    expect(out).toContain('  5 cases would change: 3 summaries, 4 steps');
    // Nothing changed: no case, no step, no mapping file.
    expect(held()).toEqual(before);
    expect(existsSync(join(dir, 'casebridge.keys.json'))).toBe(false);
    const dryRun = await sync(dir, ['--update', '--yes', '--dry-run']);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.stdout).toContain('5 cases would change');
    expect(held()).toEqual(before);

    const applied = await sync(dir, ['--update', '--yes']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('update: 5 keyed case(s) compared with the code');
    expect(applied.stdout).toContain('  5 cases changed: 3 summaries, 4 steps');
    const after = held();
    // A changed step keeps its expected result and test data; an added one has none.
    expect(after['DEMO-2']?.steps).toEqual([
      ['Open the login page', 'The login form is shown', null],
      ['Type the user name', 'Fields accept input', 'demo / demo'],
      ['Press "Log in"', 'The dashboard is shown', null],
      ['See the dashboard', '', null],
    ]);
    expect(stepsOf('DEMO-3')).toEqual(['Open the user menu']);
    expect(stepsOf('DEMO-6')).toEqual(['Open the profile']);
    // Steps not known from the code are left alone; summaries follow the code (Jira's issue edit).
    expect(after['DEMO-4']?.steps).toEqual(before['DEMO-4']?.steps);
    expect(after['DEMO-5']?.steps).toEqual(before['DEMO-5']?.steps);
    expect(
      Object.fromEntries(['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6'].map((k) => [k, after[k]?.summary])),
    ).toEqual({
      'DEMO-2': 'signs in',
      'DEMO-3': before['DEMO-3']?.summary,
      'DEMO-4': 'searches by name',
      'DEMO-5': 'pays',
      'DEMO-6': before['DEMO-6']?.summary,
    });
    // Not a test case of the project: untouched.
    expect(after['DEMO-8']).toEqual(before['DEMO-8']);
    expect(after['OTHER-1']).toEqual(before['OTHER-1']);
    // The unkeyed test got its case, as a plain sync does.
    const made = Object.entries(after).find(([, v]) => v.summary === 'has no key yet');
    expect(made?.[1].steps.map((s) => s[0])).toEqual(['Be created']);

    const again = await sync(dir, ['--update', '--yes', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const report = JSON.parse(again.stdout) as {
      created: unknown[];
      update: { applied: boolean; compared: number; cases: Array<{ key: string; steps: unknown[] }>; total: string };
    };
    expect(report.created).toEqual([]);
    expect(report.update.applied).toBe(true);
    // The new case is keyed by the mapping file now, and compared too.
    expect(report.update.compared).toBe(6);
    expect(report.update.cases.every((c) => c.steps.length === 0)).toBe(true);
    expect(report.update.total).toBe('no case changed: the keyed cases match the code');
    expect(held()).toEqual(after);
  });

  it('--yes without --update is a usage error', async () => {
    const dir = fixture('sync-update-yes', FILES);
    const out = await sync(dir, ['--yes']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('add --update');
  });
});
