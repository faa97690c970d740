import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, type TestResult } from '@casebridge/core';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { fixture, hasChromium, ROOT, run } from './support/runner.js';
import { cycleState } from './support/state.js';

/** The `casebridge` command, built, as a user runs it. */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');

describe('casebridge demo', () => {
  it('runs the Playwright, Vitest and Jest examples into the emulator and prints what arrived and where to look', async () => {
    const out = await run(process.execPath, [CLI, 'demo', '--port', '0'], ROOT);
    expect(out.code, out.stderr).toBe(0);
    const text = out.stdout + out.stderr;
    expect(text).toMatch(/emulator with demo data at http:\/\/127\.0\.0\.1:\d+/);
    // The reporter's own summary (the Playwright example in two projects: 7 tests in Desktop, the 5 browser tests in
    // Mobile), then the demo's table read back from the emulator.
    expect(text).toMatch(/casebridge: 12 test result\(s\)/);
    const row = text.split('\n').find((l) => l.startsWith('playwright  Demo playwright'));
    expect(row, text).toBeDefined();
    const cells = (row ?? '').split(/\s{2,}/);
    // runner, cycle, id, runs, passed, failed, blocked, not tested, defects, files. Without Chromium the example's
    // browser tests are skipped (it says so) and only its API tests report.
    if (hasChromium) {
      // A run per case and device (DEMO-7, an API test, in Desktop only): DEMO-5 fails in both, DEMO-3 in Mobile.
      expect(cells.slice(3, 8)).toEqual(['11', '8', '3', '0', '0']);
      expect(cells[8]).toMatch(/^DEMO-\d+( DEMO-\d+)*$/);
      expect(Number(cells[9])).toBeGreaterThanOrEqual(2);
      // The advanced cycle's matrix, as read back: each case's run per Device with that project's status.
      const cycle = /^playwright\s+(Demo playwright [^\n]*?)\s{2,}\d+\s/m.exec(text)?.[1];
      const at = text.indexOf(`Runs by attribute set in cycle "${cycle}":`);
      expect(at, text).toBeGreaterThan(0);
      const matrix = text
        .slice(at)
        .split('\n')
        .slice(1, 8)
        .map((l) => l.trim().split(/\s{2,}/));
      expect(matrix).toEqual([
        ['case', 'Device: Desktop', 'Device: Mobile'],
        ['DEMO-2', 'Passed', 'Passed'],
        ['DEMO-3', 'Passed', 'Failed'],
        ['DEMO-4', 'Passed', 'Passed'],
        ['DEMO-5', 'Failed', 'Failed'],
        ['DEMO-6', 'Passed', 'Passed'],
        ['DEMO-7', 'Passed', '-'],
      ]);
      // The link to its page opens at the matrix.
      const id = cells[2];
      expect(text).toMatch(
        new RegExp(
          `/browse/DEMO-1\\?cycle=${id}#matrix-heading\\s+cycle "Demo playwright [^"]+", its runs by attribute set`,
        ),
      );
    } else {
      expect(text).toMatch(/Chromium not found/);
    }
    // Vitest and Jest need no browser: their rows are the same on every machine.
    for (const runner of ['vitest', 'jest']) {
      const line = text.split('\n').find((l) => new RegExp(`^${runner}\\s+Demo ${runner}`).test(l));
      expect(line, text).toBeDefined();
      const c = (line ?? '').split(/\s{2,}/);
      expect(c.slice(3, 8), line).toEqual(['6', '5', '1', '0', '0']);
      expect(c[8]).toMatch(/^DEMO-\d+$/);
      expect(Number(c[9])).toBe(2);
    }
    expect(text).toContain('/swagger');
    // It ends with the web UI's address and each cycle's page, by the id in the table.
    const base = /emulator with demo data at (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
    expect(text).toContain(`  ${base}/ `);
    for (const runner of ['vitest', 'jest']) {
      const line = text.split('\n').find((l) => new RegExp(`^${runner}\\s+Demo ${runner}`).test(l)) ?? '';
      const id = line.split(/\s{2,}/)[2];
      expect(text).toMatch(new RegExp(`${base}/browse/DEMO-1\\?cycle=${id}\\s+cycle "Demo ${runner}`));
    }
    // Only the advanced cycle (the Playwright example reports run attributes) has a matrix.
    expect(text.match(/Runs by attribute set in cycle/g) ?? []).toHaveLength(1);
    // Read back through the gate's and the queries' code: each cycle's verdict, its failures as classified, and how
    // to ask for them.
    const back = text.slice(text.indexOf('Read back as a pipeline'));
    for (const runner of ['vitest', 'jest']) {
      expect(back).toContain(`  ${runner}: gate FAILED (new failures ≤ 0: 1 new: DEMO-5 Checkout with a saved card)`);
    }
    expect(back).toMatch(/^ {4}DEMO-5\s+new\s+DEMO-\d+\s+Error: expect\(received\)\.toMatchObject/m);
    if (hasChromium) {
      expect(back).toContain(
        '  playwright: gate FAILED (new failures ≤ 0: 3 new in 2 cases: DEMO-5 Checkout with a saved card, DEMO-3 User logs out)',
      );
      expect(back).toMatch(/^ {4}DEMO-3\s+Device "Mobile"\s+new\s+DEMO-\d+/m);
    }
    expect(back).toMatch(/With --keep, ask yourself: CASEBRIDGE_URL=\S+ .* npx casebridge failures --cycle "Demo jest/);
  }, 300_000);

  it('--help lists the commands with examples; an unknown command is a usage error', async () => {
    const help = await run(process.execPath, [CLI, '--help'], ROOT);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/demo[\s\S]*replay[\s\S]*emulator[\s\S]*Examples:/);
    const wrong = await run(process.execPath, [CLI, 'frobnicate'], ROOT);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('unknown command "frobnicate"');
  });
});

describe('casebridge replay', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ port: 0 });
  });
  afterAll(async () => {
    await emu?.close();
  });

  it('delivers what a run left in the journal, once, and is safe to run twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-replay-'));
    const options = {
      url: 'http://127.0.0.1:9',
      token: 'casebridge-dev-token',
      projectKey: 'DEMO',
      mode: 'cycle',
      testPlan: 'DEMO-1',
      cycle: 'CI replayed',
      flushTimeoutMs: 3000,
    };
    const engine = Engine.create(options, { cwd: dir, runner: { name: 'playwright' }, env: {}, out: () => undefined });
    const test = (title: string, status: 'passed' | 'failed'): TestResult => ({
      id: title,
      file: 'a.spec.ts',
      titlePath: [title],
      tags: [],
      annotations: [],
      attempts: [
        {
          retry: 0,
          status,
          durationMs: 1,
          errors: status === 'failed' ? [{ message: 'boom' }] : [],
          steps: [],
          attachments: [],
        },
      ],
    });
    engine.begin();
    engine.add(test('DEMO-2 a', 'passed'));
    engine.add(test('DEMO-5 b', 'failed'));
    expect((await engine.end()).summary.journaled).toBe(2);

    const env = { CASEBRIDGE_URL: emu.url, CASEBRIDGE_TOKEN: 'casebridge-dev-token', CASEBRIDGE_PROJECT: 'DEMO' };
    for (let i = 0; i < 2; i++) {
      const out = await run(process.execPath, [CLI, 'replay', dir], ROOT, env);
      expect(out.code, out.stdout + out.stderr).toBe(0);
      expect(out.stdout).not.toContain('casebridge-dev-token');
      // Off a terminal, progress is plain lines: the first replay has two results to deliver, the second none.
      if (i === 0) expect(out.stderr).toContain('casebridge replay: 2/2 result(s)');
      else expect(out.stderr).not.toContain('casebridge replay:');
    }
    expect(cycleState(emu, 'CI replayed').map((r) => [r.key, r.status])).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-5', 'Failed'],
    ]);
    expect(readdirSync(join(dir, '.casebridge', 'journal')).filter((f) => f.endsWith('.json'))).toEqual([]);
  });
});

describe('doctor and replay read the options in the runner config', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ port: 0 });
  });
  afterAll(async () => {
    await emu?.close();
  });

  it('doctor passes with options only in jest.config.js; replay delivers with only the token in the environment', async () => {
    const options = {
      url: emu.url,
      projectKey: 'DEMO',
      mode: 'cycle',
      testPlan: 'DEMO-1',
      cycle: 'CI runner options',
      flushTimeoutMs: 1500,
    };
    const dir = fixture('cli-runner-options', {
      'package.json': JEST_PACKAGE,
      'jest.config.js': jestConfig(options),
      'a.test.js': "test('DEMO-2 logs in', () => {});\ntest('DEMO-5 pays', () => { expect(1).toBe(2); });\n",
    });
    const token = { CASEBRIDGE_TOKEN: 'casebridge-dev-token' };

    const doctor = await run(process.execPath, [CLI, 'doctor'], dir, token);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect(doctor.stdout).toContain("read the casebridge reporter's options in jest.config.js");
    expect(doctor.stdout).toMatch(
      /config .*project DEMO, test plan DEMO-1 \(from .*reporter options in jest\.config\.js/,
    );
    expect(doctor.stdout).toContain('looked in: ./casebridge.config.{json,mjs,cjs,js,ts,mts,cts}');

    // The service refuses everything while the tests run: both results wait in the journal, with the options.
    emu.faults.set([{ route: '**', errors: { 503: 1 } }]);
    const down = await jest(dir, [], token);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/2 result\(s\) not delivered/);
    const recorded = JSON.parse(readFileSync(join(dir, '.casebridge', 'journal', 'run-options'), 'utf8'));
    expect(recorded.options).toMatchObject({ projectKey: 'DEMO', testPlan: 'DEMO-1' });
    expect(JSON.stringify(recorded)).not.toContain('casebridge-dev-token');
    emu.faults.set([]);

    const replay = await run(process.execPath, [CLI, 'replay'], dir, token);
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect(replay.stderr).toContain('using the options the jest reporter had in its run');
    expect(cycleState(emu, 'CI runner options').map((r) => [r.key, r.status])).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-5', 'Failed'],
    ]);
  });

  it('doctor says where it looked when nothing gives the url', async () => {
    const dir = fixture('cli-no-options', { 'package.json': JEST_PACKAGE });
    const doctor = await run(process.execPath, [CLI, 'doctor'], dir, { CASEBRIDGE_TOKEN: 'casebridge-dev-token' });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/url \(CASEBRIDGE_URL\): required/);
    expect(doctor.stdout).toContain('no runner config in this folder names a casebridge reporter');
    expect(doctor.stdout).toMatch(
      /looked in: \.\/casebridge\.config\.\{json,mjs,cjs,js,ts,mts,cts\}, CASEBRIDGE_\* environment variables/,
    );
  });
});
