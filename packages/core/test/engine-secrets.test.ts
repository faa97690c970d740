import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestResult } from '../src/index.js';
import { closedPort } from './support/emulator.js';
import { ctx, FAST, last, project, report, result, useEngineWorld } from './support/engine-world.js';

/**
 * Secrets in everything the engine writes, with debug on, against the real emulator over real HTTP: printed lines,
 * journal entries, summaries, the step summary, the run comment and the defect, with the service up and down.
 */

const world = useEngineWorld();
const { runsOfCycle, bugs } = world;
let emu: RunningEmulator;
beforeAll(() => {
  emu = world.emulator();
});

describe('secrets', () => {
  const password = 'Pw-7d1e93c0b4aa';
  const token = 'repo-token-5f0c2e6b9d';
  const basic = Buffer.from(`ci-bot:${password}`).toString('base64');

  function addUser() {
    emu.store.users.insert({
      name: 'ci-bot',
      displayName: 'CI bot',
      email: 'ci-bot@example.test',
      password,
      tokens: [token],
      licensed: true,
      admin: false,
    });
  }

  /** A failing test whose error and output carry the password, with a screenshot. */
  function leaky(dir: string): TestResult {
    const t = result('DEMO-5 checkout as ci-bot', 'failed');
    const a = last(t);
    a.errors = [{ message: `login as ci-bot/${password} refused`, stack: `Error: ${password}\n at t.spec.ts:7:3` }];
    a.stdout = `password=${password}`;
    a.attachments = [
      { name: 'screenshot', contentType: 'image/png', path: join(dir, 'shot.png') },
      { name: 'log', contentType: 'text/plain', body: Buffer.from('GET /cart 500') },
    ];
    return t;
  }

  function expectClean(what: string, text: string) {
    for (const secret of [password, token, basic]) expect(text, `${what} holds a secret`).not.toContain(secret);
  }

  const options = (url: string, extra: Record<string, unknown> = {}) => ({
    url,
    user: 'ci-bot',
    password,
    projectKey: 'DEMO',
    mode: 'cycle',
    testPlan: 'DEMO-1',
    cycle: 'CI secrets',
    debug: true,
    repository: { url, token },
    attachments: { repositoryMinBytes: 1, others: true },
    ...extra,
  });

  it('with debug on, nothing printed, journaled or summarised holds the password, the token or the Basic value', async () => {
    // Both runs on the engine's faster clock (support/engine-world.ts, FAST), their patience FAST times longer.
    addUser();
    const dir = project();
    const file = join(dir, 'step-summary.md');
    const lines: string[] = [];
    const up = await report(
      options(emu.url, { flushTimeoutMs: 20_000 * FAST }),
      [leaky(dir), result('DEMO-2 a', 'passed')],
      ctx(dir, lines, { GITHUB_STEP_SUMMARY: file }, FAST),
    );
    expect(up.summary.problems).toEqual([]);
    expect(
      runsOfCycle('CI secrets')
        .map((r) => [r.key, r.status])
        .sort(),
    ).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-5', 'Failed'],
    ]);
    expect(lines.some((l) => l.startsWith('casebridge debug:'))).toBe(true);
    // What went to the service: the run comment and the defect filed for the failure.
    const failedRun = runsOfCycle('CI secrets').find((r) => r.key === 'DEMO-5')?.run;
    expect(failedRun?.comment).toContain('refused');
    expectClean('the run comment', JSON.stringify(failedRun));
    expect(bugs().length).toBeGreaterThan(0);
    expectClean('the defect', JSON.stringify(bugs()));

    const down = `http://127.0.0.1:${await closedPort()}`;
    const downLines: string[] = [];
    const off = await report(
      options(down, { flushTimeoutMs: 1_500 * FAST, cycle: 'CI secrets down' }),
      [leaky(dir), result('DEMO-2 a', 'passed')],
      ctx(dir, downLines, { GITHUB_STEP_SUMMARY: file }, FAST),
    );
    expect(off.summary.journaled).toBe(2);
    const journalDir = join(dir, '.casebridge/journal');
    const entries = readdirSync(journalDir).filter((f) => f.endsWith('.json'));
    expect(entries).toHaveLength(2);
    for (const e of entries) expectClean(`journal entry ${e}`, readFileSync(join(journalDir, e), 'utf8'));
    expect(readdirSync(join(journalDir, 'blobs'))).toHaveLength(1);
    expectClean('printed lines', [...lines, ...downLines].join('\n'));
    expectClean('summaries', JSON.stringify([up.summary, off.summary]));
    expectClean('step summary', readFileSync(file, 'utf8'));
  });
});
