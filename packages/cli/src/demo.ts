import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestManagementClient } from '@casebridge/core';
import { commitOf, FULL_HASH, gateCycle, requirementCoverage, rulesOf } from '@casebridge/core/internal';
import type { RunningEmulator } from '@casebridge/emulator';
import { loadEmulator } from './optional.js';
import { openReader } from './query/reader.js';

/** The commit the demo reports on outside a git checkout. */
const DEMO_COMMIT = 'dec0de0000000000000000000000000000000001';

/**
 * `casebridge demo`: starts the emulator with its demo data, runs the example projects through their reporters in
 * cycle mode (side by side, their output one after the other), then prints what arrived (per cycle: runs by status,
 * defects, attachments) and where to look.
 */

export interface DemoOptions {
  port?: number;
  /** Where the demo runs: outside the repository, its tiny suites use the runners installed here. */
  cwd?: string;
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

/**
 * Outside the repository (an installed CLI), the demo writes a tiny suite per runner into
 * `.casebridge/demo/<runner>` of the current project and runs it with the runner and reporter installed there:
 * two passing tests and one failing, keyed to the demo data's cases.
 */
const TINY: Record<string, Record<string, string>> = {
  vitest: {
    'vitest.config.mjs': `export default { test: { include: ['demo.test.mjs'], reporters: ['default', '@casebridge/vitest'] } };\n`,
    'demo.test.mjs': `import { expect, test } from 'vitest';
test('DEMO-2 logs in', () => expect(1 + 1).toBe(2));
test('[DEMO-4] search finds the teapot', () => expect('teapot').toContain('tea'));
test('DEMO-5 pays with the saved card (fails on purpose)', () => expect('expired').toBe('valid'));
`,
  },
  jest: {
    'jest.config.cjs': `module.exports = { testMatch: ['**/demo.test.cjs'], reporters: ['default', '@casebridge/jest'] };\n`,
    'demo.test.cjs': `test('DEMO-2 logs in', () => expect(1 + 1).toBe(2));
test('[DEMO-4] search finds the teapot', () => expect('teapot').toContain('tea'));
test('DEMO-5 pays with the saved card (fails on purpose)', () => expect('expired').toBe('valid'));
`,
  },
  playwright: {
    'playwright.config.mjs': `export default { testDir: '.', testMatch: 'demo.spec.mjs', reporter: [['list'], ['@casebridge/playwright']] };\n`,
    'demo.spec.mjs': `import { expect, test } from '@playwright/test';
test('DEMO-2 logs in', () => expect(1 + 1).toBe(2));
test('[DEMO-4] search finds the teapot', () => expect('teapot').toContain('tea'));
test('DEMO-5 pays with the saved card (fails on purpose)', () => expect('expired').toBe('valid'));
`,
  },
};

/** Whether `pkg` resolves from the project in `dir`. */
function installed(dir: string, pkg: string): boolean {
  try {
    createRequire(join(dir, 'package.json')).resolve(`${pkg}/package.json`);
    return true;
  } catch {
    return false;
  }
}

/** The tiny suites for the runners (with their reporters) installed in `cwd`, written into `.casebridge/demo`. */
function tinySuites(cwd: string): Array<Example & { dir: string }> {
  const runners: Array<[string, string, Example['command']]> = [
    ['playwright', '@playwright/test', bin('@playwright/test', 'cli.js', ['test'])],
    ['vitest', 'vitest', bin('vitest', 'vitest.mjs', ['run'])],
    ['jest', 'jest', bin('jest', 'bin/jest.js', [])],
  ];
  const out: Array<Example & { dir: string }> = [];
  for (const [runner, pkg, command] of runners) {
    if (!installed(cwd, pkg) || !installed(cwd, `@casebridge/${runner}`)) continue;
    const dir = join(cwd, '.casebridge', 'demo', runner);
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(TINY[runner] ?? {})) writeFileSync(join(dir, name), text);
    out.push({ runner, dir, command });
  }
  return out;
}

const OUTSIDE_NEEDS = `casebridge demo: outside the casebridge repository the demo runs a tiny suite with each runner installed in
this project that has its casebridge reporter beside it, and none was found here. Either install one, e.g.
  npm i -D vitest @casebridge/vitest @casebridge/emulator @casebridge/cli && npx @casebridge/cli demo
(or jest with @casebridge/jest, @playwright/test with @casebridge/playwright), or run the full demo from the
repository: git clone https://github.com/casebridge/casebridge && cd casebridge && npm run demo`;

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

/**
 * A suite under way. The demo starts every suite at once (each waits mostly on its runner, not on the CPU) and shows
 * them one after the other: the first streams live; each other one keeps its output until its turn, then shows what it
 * kept and streams the rest.
 */
interface Started {
  exit: Promise<number | null>;
  /** Shows the suite's output from now on: what it kept first (a suite started live shows it already). */
  show: () => void;
}

function startExample(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, live: boolean): Started {
  // Kept output keeps its colours when the demo's own output is a terminal, as a live suite's would.
  const colour = !live && process.stdout.isTTY && env.FORCE_COLOR === undefined && env.NO_COLOR === undefined;
  const child = spawn(file, args, {
    cwd,
    env: colour ? { ...env, FORCE_COLOR: '1' } : env,
    stdio: live ? 'inherit' : 'pipe',
  });
  const exit = new Promise<number | null>((done) => {
    child.on('error', () => done(null));
    child.on('close', (code) => done(code));
  });
  if (live) return { exit, show: () => undefined };
  child.stdin?.end();
  const kept: Array<[NodeJS.WriteStream, Buffer]> = [];
  let shown = false;
  const take = (to: NodeJS.WriteStream) => (chunk: Buffer) => {
    if (shown) to.write(chunk);
    else kept.push([to, chunk]);
  };
  child.stdout?.on('data', take(process.stdout));
  child.stderr?.on('data', take(process.stderr));
  return {
    exit,
    show: () => {
      shown = true;
      for (const [to, chunk] of kept.splice(0)) to.write(chunk);
    },
  };
}

export async function demo(o: DemoOptions): Promise<number> {
  const root = repoRoot();
  const inRepo = existsSync(join(root, 'examples'));
  const suites: Array<Example & { dir: string }> = inRepo
    ? EXAMPLES.map((ex) => ({ ...ex, dir: join(root, ex.dir) }))
    : tinySuites(o.cwd ?? process.cwd());
  if (suites.length === 0) {
    o.out(OUTSIDE_NEEDS);
    return 1;
  }
  const { DEFAULT_PORT, startEmulator } = await loadEmulator();
  const port = o.port ?? (await freePortOr(DEFAULT_PORT));
  const emu: RunningEmulator = await startEmulator({ port, seed: 'demo' });
  o.out(`casebridge demo: emulator with demo data at ${emu.url} (project DEMO, test plan DEMO-1)`);
  const stamp = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const cycles: Array<{ runner: string; cycle: string; exit: number | null }> = [];
  const service = {
    CASEBRIDGE_URL: emu.url,
    CASEBRIDGE_TOKEN: 'casebridge-dev-token',
    CASEBRIDGE_PROJECT: 'DEMO',
    CASEBRIDGE_MODE: 'cycle',
    CASEBRIDGE_TEST_PLAN: 'DEMO-1',
  };
  // The pull request the demo's suites report to: Bitbucket's Code Insights on a commit and a GitLab merge request,
  // one report (and note) per runner, as three pipelines of one change would post them.
  const commit = (await commitOf({}, o.cwd ?? process.cwd()).catch(() => undefined)) ?? DEMO_COMMIT;
  const review = {
    CASEBRIDGE_BITBUCKET_URL: emu.url,
    CASEBRIDGE_BITBUCKET_TOKEN: 'casebridge-dev-token',
    CASEBRIDGE_BITBUCKET_REPO: 'DEMO/shop',
    CASEBRIDGE_COMMIT: FULL_HASH.test(commit) ? commit : DEMO_COMMIT,
    CI_SERVER_URL: emu.url,
    CI_PROJECT_ID: '1',
    CI_MERGE_REQUEST_IID: '1',
    CASEBRIDGE_GITLAB_TOKEN: 'casebridge-dev-token',
  };
  try {
    const started: Array<{ runner: string; cycle: string; header: string; run: Started }> = [];
    for (const ex of suites) {
      const dir = ex.dir;
      const shown = relative(inRepo ? root : (o.cwd ?? process.cwd()), dir);
      const cmd = existsSync(dir) ? ex.command(dir) : undefined;
      if (!cmd) {
        o.out(`casebridge demo: ${ex.runner}: example or runner not installed (${shown}); skipped`);
        continue;
      }
      const cycle = `Demo ${ex.runner} ${stamp}`;
      const header = `\ncasebridge demo: running ${shown} (${ex.runner}) into cycle "${cycle}"\n`;
      const live = started.length === 0;
      if (live) o.out(header);
      const env = {
        ...process.env,
        ...service,
        ...review,
        CASEBRIDGE_BITBUCKET_REPORT_KEY: `casebridge-${ex.runner}`,
        CASEBRIDGE_CYCLE: cycle,
      };
      started.push({ runner: ex.runner, cycle, header, run: startExample(cmd.file, cmd.args, dir, env, live) });
    }
    for (const [i, s] of started.entries()) {
      if (i > 0) o.out(s.header);
      s.run.show();
      cycles.push({ runner: s.runner, cycle: s.cycle, exit: await s.run.exit });
    }
    o.out('');
    const read = await table(emu.url, cycles);
    o.out(read.text);
    for (const [cycle, text] of read.matrices) o.out(`\nRuns by attribute set in cycle "${cycle}":\n${text}`);
    o.out('');
    const reading = (suites[0] as { dir: string }).dir;
    const how = { keep: o.keep === true, cli: inRepo ? 'npx casebridge' : 'npx @casebridge/cli' };
    o.out(await readBack(reading, service, cycles, how));
    o.out('');
    o.out(
      o.keep
        ? 'See the results in the web UI (the emulator keeps serving):'
        : `See the results in the web UI (\`${inRepo ? 'npm run demo -- --keep' : 'npx @casebridge/cli demo --keep'}\` keeps the emulator serving after the demo):`,
    );
    const links: Array<[string, string]> = [[`${emu.url}/`, 'projects, test plans and their latest cycles']];
    for (const c of cycles) {
      const id = read.ids.get(c.cycle);
      if (id === undefined) continue;
      // An advanced cycle's page opens at its matrix: a row per case, a column per attribute set.
      if (read.matrices.has(c.cycle)) {
        links.push([
          `${emu.url}/browse/DEMO-1?cycle=${id}#matrix-heading`,
          `cycle "${c.cycle}", its runs by attribute set`,
        ]);
      } else links.push([`${emu.url}/browse/DEMO-1?cycle=${id}`, `cycle "${c.cycle}"`]);
    }
    links.push([
      `${emu.url}/projects/DEMO/repos/shop/commits/${review.CASEBRIDGE_COMMIT}`,
      "the commit as Bitbucket's pull request shows it: each runner's report, annotations, build status",
    ]);
    links.push([`${emu.url}/demo/shop/-/merge_requests/1`, "the GitLab merge request: each runner's note"]);
    const lastId = read.ids.get(cycles.at(-1)?.cycle ?? '');
    links.push([
      `${emu.url}/projects/DEMO/requirements${lastId === undefined ? '' : `?plan=DEMO-1&cycle=${lastId}`}`,
      "the requirements and their coverage in the last runner's cycle",
    ]);
    links.push([`${emu.url}/rehearsal/requests`, 'every request the reporters made']);
    const width = Math.max(...links.map(([u]) => u.length));
    for (const [u, what] of links) o.out(`  ${u.padEnd(width)}  ${what}`);
    o.out(`The API: ${emu.url}/swagger (API browser), e.g.`);
    o.out(`  curl -u admin:admin '${emu.url}/rest/synapse/latest/public/testPlan/DEMO-1/cycles'`);
    o.out(
      inRepo
        ? "The example suites fail on purpose (a failing and a flaky test; in Playwright one more on Mobile only): their exit codes are theirs, not the demo's."
        : "The demo suites (in .casebridge/demo) fail on purpose (one failing test): their exit codes are theirs, not the demo's.",
    );
    if (o.keep) {
      o.out(`\nThe emulator keeps serving at ${emu.url}/ (web UI and API); press Ctrl+C to stop.`);
      await new Promise<void>((done) => {
        process.once('SIGINT', () => done());
        process.once('SIGTERM', () => done());
      });
    }
    return cycles.every((c) => c.exit !== null) ? 0 : 1;
  } finally {
    await emu.close();
  }
}

/**
 * What a pipeline, a script and an assistant read back from each cycle, through the code `casebridge gate`,
 * `failures` and `mcp` answer from (core's query/gate.ts and results.ts): the gate's verdict under the configuration's
 * rules (the defaults in the examples) and the failures as the reporters classified them.
 */
async function readBack(
  cwd: string,
  service: Record<string, string>,
  cycles: ReadonlyArray<{ runner: string; cycle: string }>,
  how: { keep: boolean; cli: string },
): Promise<string> {
  const lines = ['Read back as a pipeline, a script and an assistant do (casebridge gate, failures --json, mcp):'];
  const o = await openReader(cwd, { ...process.env, ...service });
  try {
    for (const c of cycles) {
      try {
        const { verdict, failures } = await gateCycle(o.reader, 'DEMO-1', c.cycle, rulesOf(o.config.gate));
        const failed = verdict.rules.filter((r) => !r.pass).map((r) => `${r.rule}: ${r.figure}`);
        lines.push(`  ${c.runner}: gate ${verdict.pass ? 'passed' : `FAILED (${failed.join('; ')})`}`);
        const rows = failures.map((f) => [
          f.key,
          f.set ?? '',
          f.classification,
          f.defects.join(' ') || '-',
          f.error ?? '',
        ]);
        if (rows.length > 0) lines.push(columns(rows, '    '));
      } catch (err) {
        lines.push(`  ${c.runner}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // The requirements the suites name (requirement(), annotations) and the seed's links, judged in the last cycle.
    const last = cycles.at(-1);
    if (last) {
      try {
        const cov = await requirementCoverage(o.reader, 'DEMO-1', last.cycle, 'DEMO');
        lines.push(`Requirement coverage in cycle "${last.cycle}" (casebridge coverage, MCP requirement_coverage):`);
        const rows = cov.requirements.map((x) => [
          x.key,
          x.state,
          x.cases.map((k) => `${k.key}${k.result ? ` ${k.result}` : ''}`).join(', ') || '-',
          x.summary,
        ]);
        if (rows.length > 0) lines.push(columns(rows, '  '));
      } catch (err) {
        lines.push(`  coverage: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  } finally {
    await o.close();
  }
  const vars = Object.entries(service)
    .filter(([k]) => k !== 'CASEBRIDGE_MODE')
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const last = cycles.at(-1)?.cycle ?? '';
  lines.push(
    `${how.keep ? 'Ask' : 'With --keep, ask'} yourself: ${vars} ${how.cli} failures --cycle "${last}" --json`,
    '  (or gate, history DEMO-5, flaky; `casebridge mcp` with the same variables answers an assistant)',
  );
  return lines.join('\n');
}

/** Lines of cells, each column as wide as its widest cell. */
function columns(rows: string[][], indent = ''): string {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map(
      (r) =>
        indent +
        r
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd(),
    )
    .join('\n');
}

/**
 * The runs of an advanced cycle as its page groups them: a row per case, a column per attribute set
 * (`Device: Mobile`), each cell the run's status (`-`: no run). Undefined when no run has attributes.
 */
function matrixOf(
  runs: ReadonlyArray<{ testCaseKey: string; status: string; attributeValues?: Record<string, string> }>,
) {
  const label = (values: Record<string, string> | undefined) =>
    Object.entries(values ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ');
  if (!runs.some((r) => label(r.attributeValues) !== '')) return undefined;
  const sets = [...new Set(runs.map((r) => label(r.attributeValues)))].sort();
  const keys = [...new Set(runs.map((r) => r.testCaseKey))].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const cell = (key: string, set: string) =>
    runs
      .filter((r) => r.testCaseKey === key && label(r.attributeValues) === set)
      .map((r) => r.status)
      .join(' / ') || '-';
  return columns(
    [['case', ...sets.map((s) => s || 'no attributes')], ...keys.map((k) => [k, ...sets.map((s) => cell(k, s))])],
    '  ',
  );
}

/** Per cycle: runs by status, defects, attachments, read back through the client; an advanced cycle's matrix. */
async function table(
  url: string,
  cycles: Array<{ runner: string; cycle: string }>,
): Promise<{ text: string; ids: Map<string, number>; matrices: Map<string, string> }> {
  const ids = new Map<string, number>();
  const matrices = new Map<string, string>();
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
      ids.set(c.cycle, cycle.id);
      const runs = await tm.cycles.testRunsByCycleId({ testPlanIssueKey: 'DEMO-1', cycleId: cycle.id });
      const matrix = matrixOf(runs);
      if (matrix !== undefined) matrices.set(c.cycle, matrix);
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
    return { text: columns(rows), ids, matrices };
  } finally {
    await tm.close();
  }
}
