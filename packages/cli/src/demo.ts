import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestManagementClient } from '@casebridge/core';
import type { RunningEmulator } from '@casebridge/emulator';
import { loadEmulator } from './optional.js';

/**
 * `casebridge demo`: starts the emulator with its demo data, runs the example projects through their reporters in
 * cycle mode, then prints what arrived (per cycle: runs by status, defects, attachments) and where to look.
 */

export interface DemoOptions {
  port?: number;
  /** Keep the emulator serving after the demo (until Ctrl+C). */
  keep: boolean;
  out: (line: string) => void;
}

interface Example {
  runner: string;
  dir: string;
  /** The command, run with the example as working directory. */
  command: (dir: string) => { file: string; args: string[] } | undefined;
}

/** The repository root: the CLI runs from `packages/cli/dist` (built) or `packages/cli/src` (tests). */
function repoRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
}

/** The runner's command-line entry, resolved from the example (its own installed version), run with our Node. */
function bin(pkg: string, file: string, args: string[]): Example['command'] {
  return (dir) => {
    try {
      // Through package.json: the runners' `exports` do not all list their command-line file.
      const cli = join(dirname(createRequire(join(dir, 'package.json')).resolve(`${pkg}/package.json`)), file);
      if (!existsSync(cli)) return undefined;
      return { file: process.execPath, args: [cli, ...args] };
    } catch {
      return undefined;
    }
  };
}

const EXAMPLES: Example[] = [
  { runner: 'playwright', dir: 'examples/playwright', command: bin('@playwright/test', 'cli.js', ['test']) },
  { runner: 'vitest', dir: 'examples/vitest', command: bin('vitest', 'vitest.mjs', ['run']) },
  { runner: 'jest', dir: 'examples/jest', command: bin('jest', 'bin/jest.js', []) },
];

async function freePortOr(port: number): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((done) => {
    const s = createServer();
    s.once('error', () => done(0));
    s.listen(port, '127.0.0.1', () => s.close(() => done(port)));
  });
}

function runExample(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<number | null> {
  return new Promise((done) => {
    const child = spawn(file, args, { cwd, env, stdio: 'inherit' });
    child.on('error', () => done(null));
    child.on('close', (code) => done(code));
  });
}

export async function demo(o: DemoOptions): Promise<number> {
  const { DEFAULT_PORT, startEmulator } = await loadEmulator();
  const root = repoRoot();
  const port = o.port ?? (await freePortOr(DEFAULT_PORT));
  const emu: RunningEmulator = await startEmulator({ port, seed: 'demo' });
  o.out(`casebridge demo: emulator with demo data at ${emu.url} (project DEMO, test plan DEMO-1)`);
  const stamp = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const cycles: Array<{ runner: string; cycle: string; exit: number | null }> = [];
  try {
    for (const ex of EXAMPLES) {
      const dir = join(root, ex.dir);
      const cmd = existsSync(dir) ? ex.command(dir) : undefined;
      if (!cmd) {
        o.out(`casebridge demo: ${ex.runner}: example or runner not installed (${ex.dir}); skipped`);
        continue;
      }
      const cycle = `Demo ${ex.runner} ${stamp}`;
      o.out(`\ncasebridge demo: running ${ex.dir} (${ex.runner}) into cycle "${cycle}"\n`);
      const exit = await runExample(cmd.file, cmd.args, dir, {
        ...process.env,
        CASEBRIDGE_URL: emu.url,
        CASEBRIDGE_TOKEN: 'casebridge-dev-token',
        CASEBRIDGE_PROJECT: 'DEMO',
        CASEBRIDGE_MODE: 'cycle',
        CASEBRIDGE_TEST_PLAN: 'DEMO-1',
        CASEBRIDGE_CYCLE: cycle,
      });
      cycles.push({ runner: ex.runner, cycle, exit });
    }
    o.out('');
    o.out(await table(emu.url, cycles));
    o.out('');
    o.out(
      `Where to look: ${emu.url}/swagger (API browser), ${emu.url}/__emulator/state (everything the emulator holds),`,
    );
    o.out(`  e.g. curl -u admin:admin '${emu.url}/rest/synapse/latest/public/testPlan/DEMO-1/cycles'`);
    o.out(
      "The example suites fail on purpose (a failing and a flaky test): their exit codes are theirs, not the demo's.",
    );
    if (o.keep) {
      o.out(`\nThe emulator keeps serving at ${emu.url}; press Ctrl+C to stop.`);
      await new Promise<void>((done) => {
        process.once('SIGINT', () => done());
        process.once('SIGTERM', () => done());
      });
    } else {
      o.out('Run `casebridge demo --keep` to keep the emulator serving after the demo.');
    }
    return cycles.every((c) => c.exit !== null) ? 0 : 1;
  } finally {
    await emu.close();
  }
}

/** Per cycle: runs by status, defects, attachments, read back through the client. */
async function table(url: string, cycles: Array<{ runner: string; cycle: string }>): Promise<string> {
  const tm = new TestManagementClient({ baseUrl: url, auth: { type: 'bearer', token: 'casebridge-dev-token' } });
  try {
    const all = await tm.plans.cycles({ testPlanIssueKey: 'DEMO-1' });
    const head = ['runner', 'cycle', 'id', 'runs', 'passed', 'failed', 'blocked', 'not tested', 'defects', 'files'];
    const rows: string[][] = [head];
    for (const c of cycles) {
      const cycle = all.find((x) => x.name === c.cycle);
      if (!cycle) {
        rows.push([c.runner, c.cycle, '-', 'nothing arrived', '', '', '', '', '', '']);
        continue;
      }
      const runs = await tm.cycles.testRunsByCycleId({ testPlanIssueKey: 'DEMO-1', cycleId: cycle.id });
      const count = (s: string) => String(runs.filter((r) => r.status === s).length);
      const defects = await tm.defects.ofCycle({ testPlanIssueKey: 'DEMO-1', cycleId: cycle.id });
      let files = 0;
      for (const r of runs) files += (await tm.attachments.getAttachmentDetails({ runId: r.id })).length;
      rows.push([
        c.runner,
        c.cycle,
        String(cycle.id),
        String(runs.length),
        count('Passed'),
        count('Failed'),
        count('Blocked'),
        count('Not Tested'),
        defects.map((d) => d.key).join(' ') || '0',
        String(files),
      ]);
    }
    const widths = head.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
    return rows
      .map((r) =>
        r
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd(),
      )
      .join('\n');
  } finally {
    await tm.close();
  }
}
