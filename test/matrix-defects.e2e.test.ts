import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixture, playwright } from './support/runner.js';
import { reporterEnv, useEmulator } from './support/world.js';

/**
 * Two jobs of a CI matrix run the same Playwright suite into one cycle, and fail the same way: one defect. The job
 * that made the cycle is behind: the other found the cycle just started (shared), so its new defect waits an index
 * lag from its failure; the maker files at once, a second after the other's failure. Jira's search shows a create
 * 2.5 s late, so after its wait the other's search cannot show the maker's defect yet: the cycle's defect list (no
 * index lag) does.
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

// The same file on both machines (one failure group); GO_FILE holds the maker's failure until the other's is in.
const SPEC = `
import { existsSync } from 'node:fs';
import { expect, test } from '@playwright/test';

test('DEMO-5 pays with the saved card', async () => {
  const go = process.env.GO_FILE;
  if (go) {
    while (!existsSync(go)) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 1000));
  }
  expect('declined', 'the saved card is charged').toBe('paid');
});
`;

describe('two jobs of a matrix fail the same way, the one that made the cycle a second later', () => {
  it('one defect, filed by one and linked by the other; none closed as a duplicate', async () => {
    const lag = emu.jira.indexLagMs;
    emu.setJira({ indexLagMs: 2_500 });
    try {
      const cycle = 'CI matrix 88';
      const dirs = ['maker', 'other'].map((m) =>
        fixture(`matrix-defects-${m}`, { 'playwright.config.mjs': CONFIG, 'tests/pay.spec.mjs': SPEC }),
      );
      const [makerDir, otherDir] = dirs as [string, string];
      const go = join(makerDir, 'go');
      rmSync(go, { force: true });
      const env = reporterEnv(emu, {
        CASEBRIDGE_MODE: 'cycle',
        CASEBRIDGE_TEST_PLAN: 'DEMO-1',
        CASEBRIDGE_CYCLE: cycle,
        CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
      });
      const cycleOf = () => emu.store.cycles.find((c) => c.name === cycle);
      const wait = async (what: string, done: () => boolean) => {
        const deadline = Date.now() + 60_000;
        while (!done()) {
          if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      // Playwright names its tests up front: the maker makes and starts the cycle at its begin.
      const maker = playwright(makerDir, ['test'], { ...env, GO_FILE: go });
      await wait('the maker to start the cycle', () => cycleOf()?.status === 'Active');
      const other = playwright(otherDir, ['test'], env);
      const run = () => emu.store.runs.find((r) => r.cycleId === cycleOf()?.id && r.status === 'Failed');
      await wait("the other job's failed run", () => run() !== undefined);
      writeFileSync(go, '');
      const [m, o] = await Promise.all([maker, other]);
      const said = [m, o].map((out) => out.stdout + out.stderr);
      expect([m.code, o.code], said.join('\n')).toEqual([1, 1]);
      const bugs = emu.store.issues.filter((i) => i.type === 'Bug');
      expect(
        bugs.map((b) => `${b.key} ${b.resolution ?? 'unresolved'}`),
        said.join('\n'),
      ).toHaveLength(1);
      const key = bugs[0]?.key as string;
      expect(said[0]).toMatch(new RegExp(`defects created: 1[\\s\\S]*${key}`));
      expect(said[1]).toMatch(new RegExp(`defects linked: ${key}`));
      expect(emu.store.bugLinks.filter((l) => l.runId === run()?.id).map((l) => l.issueId)).toEqual([bugs[0]?.id]);
      expect(existsSync(go)).toBe(true);
    } finally {
      emu.setJira({ indexLagMs: lag });
    }
  });
});
