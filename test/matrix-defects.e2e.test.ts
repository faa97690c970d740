import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixture, playwright } from './support/runner.js';
import { admin, reporterEnv, useEmulator } from './support/world.js';

/**
 * Two jobs of a CI matrix run the same Playwright suite into one cycle, and fail the same way: one defect. The job
 * that made the cycle is behind. The other found the cycle just started (shared), so its new defect waits an index lag
 * from its failure; Jira's search shows a create 2.5 s late, so a look at the search alone misses a defect of a moment
 * ago, and the cycle's defect list (no index lag) shows it.
 */

const world = useEmulator();
let emu: RunningEmulator;
beforeAll(() => {
  emu = world();
});

const CONFIG = `
export default {
  testDir: 'tests',
  outputDir: 'test-results',
  workers: 1,
  reporter: [['line'], ['@casebridge/playwright', {}]],
};
`;

/**
 * The same file on both machines. GO_FILE is the maker's alone: its failure of DEMO-5 waits until the other's is in,
 * then `behindMs`; with `early`, the maker fails DEMO-4 first, in a group of its own (the other passes it).
 */
const spec = (behindMs: number, early: boolean) => `
import { existsSync } from 'node:fs';
import { expect, test } from '@playwright/test';

test('DEMO-4 search finds the teapot', async () => {
  expect(${early} && process.env.GO_FILE ? 'a kettle' : 'the teapot', 'the first hit').toBe('the teapot');
});

test('DEMO-5 pays with the saved card', async () => {
  const go = process.env.GO_FILE;
  if (go) {
    while (!existsSync(go)) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, ${behindMs}));
  }
  expect('declined', 'the saved card is charged').toBe('paid');
});
`;

/**
 * Runs the maker, then the other once the maker started the cycle; the maker's DEMO-5 fails `behindMs` after the
 * other's. `found`: the cycle is a fixed name started 20 minutes before (both jobs find it; "maker" starts first).
 */
async function matrix(name: string, behindMs: number, early: boolean, found = false) {
  const lag = emu.jira.indexLagMs;
  emu.setJira({ indexLagMs: 2_500 });
  try {
    const cycle = `CI ${name}`;
    const [makerDir, otherDir] = ['maker', 'other'].map((m) =>
      fixture(`${name}-${m}`, { 'playwright.config.mjs': CONFIG, 'tests/pay.spec.mjs': spec(behindMs, early) }),
    ) as [string, string];
    const go = join(makerDir, 'go');
    rmSync(go, { force: true });
    const env = reporterEnv(emu, {
      CASEBRIDGE_MODE: 'cycle',
      CASEBRIDGE_TEST_PLAN: 'DEMO-1',
      CASEBRIDGE_CYCLE: cycle,
      CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
    });
    const cycleOf = () => emu.store.cycles.find((c) => c.name === cycle);
    const runOf = (key: string) =>
      emu.store.runs.find((r) => r.cycleId === cycleOf()?.id && emu.store.issues.get(r.tcId)?.key === key);
    const wait = async (what: string, done: () => boolean) => {
      const deadline = Date.now() + 60_000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    if (found) {
      const tm = admin(emu);
      await tm.plans.addCycle({ testPlanIssueKey: 'DEMO-1', name: cycle, preloadRuns: 'no' });
      await tm.cycles.workflow({ testPlanIssueKey: 'DEMO-1', cycleName: cycle, action: 'Start' });
      await tm.close();
      (cycleOf() as { startedAt: number | null }).startedAt = Date.now() - 20 * 60_000;
    }
    // Playwright names its tests up front: the maker makes (or finds) and starts the cycle at its begin, adds its
    // runs and reads the cycle's run list.
    const maker = playwright(makerDir, ['test'], { ...env, GO_FILE: go });
    await wait('the maker to start the cycle', () => cycleOf()?.status === 'Active' && runOf('DEMO-5') !== undefined);
    if (early) await wait("the maker's first failure", () => runOf('DEMO-4')?.status === 'Failed');
    const other = playwright(otherDir, ['test'], env);
    await wait("the other job's failed run", () => runOf('DEMO-5')?.status === 'Failed');
    writeFileSync(go, '');
    const outs = await Promise.all([maker, other]);
    const said = outs.map((out) => out.stdout + out.stderr);
    expect(
      outs.map((o) => o.code),
      said.join('\n'),
    ).toEqual([1, 1]);
    const marker = (k: string) => emu.store.issues.find((i) => i.key === k)?.summary ?? '';
    const bugs = emu.store.issues.filter((i) => i.type === 'Bug' && /saved card/.test(i.summary));
    expect(
      bugs.map((b) => `${b.key} ${b.resolution ?? 'unresolved'}`),
      said.join('\n'),
    ).toHaveLength(1);
    const bug = bugs[0] as { key: string; id: number };
    expect(emu.store.bugLinks.filter((l) => l.runId === runOf('DEMO-5')?.id).map((l) => l.issueId)).toEqual([bug.id]);
    expect(marker(bug.key)).toMatch(/\[cb-[0-9a-f]+\]$/);
    return { said, bug };
  } finally {
    emu.setJira({ indexLagMs: lag });
  }
}

/** One job filed the defect and the other linked it: the one that failed first, once the maker knows the cycle is shared. */
function oneFiledOneLinked(said: string[], key: string): void {
  // The summary lists each created defect on a line of its own under "defects created: N".
  const filed = said.filter((t) => new RegExp(`defects created: \\d+\\n(?:\\s+\\S+\\s+\\S+\\n)*\\s+${key}\\s`).test(t));
  const linked = said.filter((t) => new RegExp(`defects linked: ${key}\\b`).test(t));
  expect([filed.length, linked.length], said.join('\n')).toEqual([1, 1]);
}

describe('two jobs of a matrix fail the same way, the one that made the cycle later', () => {
  it('a second later: one defect', async () => {
    const { said, bug } = await matrix('matrix-second', 1_000, false);
    oneFiledOneLinked(said, bug.key);
  });

  it("4 s later, with the cycle's defect list read at an earlier failure: one defect", async () => {
    const { said, bug } = await matrix('matrix-later', 4_000, true);
    oneFiledOneLinked(said, bug.key);
  });

  it('into a fixed-name cycle started 20 minutes before (neither job shared), the first to start a second later, with its list read at an earlier failure: one defect', async () => {
    const { said, bug } = await matrix('matrix-fixed', 1_000, true, true);
    oneFiledOneLinked(said, bug.key);
  });
});
