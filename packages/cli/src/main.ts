import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Engine } from '@casebridge/core';
import { CYCLE_ACTIONS, type CycleAction, CycleError, cycleCommand } from './cycle.js';
import { cycleKeys, formatKeys, KEYS_FORMATS, type KeysFormat, RUNNERS, splitStatuses } from './cycle-keys.js';
import { demo } from './demo.js';
import { doctor } from './doctor.js';
import type { Runner } from './grep-pattern.js';
import { INIT_HELP, INIT_USAGE, initCommand } from './init/index.js';
import { JUNIT_HELP, JUNIT_USAGE, junitCommand } from './junit/index.js';
import { emulatorCli, MissingPackageError } from './optional.js';
import { replayOptions, runnerConfigOptions } from './options.js';
import { type Io, ioOf, paint, type Streams } from './output.js';
import { syncCommand } from './sync/index.js';

const HELP = `casebridge: push test results into a Jira test-management service (synapseRT)

Usage: casebridge <command> [options]        casebridge <command> --help for one command

Commands:
${INIT_HELP}
  demo [--port N] [--keep]   start the emulator with demo data, run the example projects (Playwright, Vitest,
                             Jest) through their reporters, print what arrived and where to look
  replay [dir]               deliver the results a run left in the journal; safe to run twice
${JUNIT_HELP}
  doctor [dir]               check config, credentials, project, plan, cycle, proxy, TLS, clock; ✓/✗ and the fix
  cycle <action> [options]   create | start | complete | abort | resume the run's cycle; prints its id
  cycle keys --plan P [--cycle C] [--status S] [--tester me]
                             the cases a test plan or cycle asks for, as a --grep / -t pattern (or JSON, lines)
  sync [dir] [--write-keys]  list the project's tests (Playwright, Vitest, Jest), create the missing test cases and
                             write their keys to the mapping file (or, --write-keys, into the test titles);
       [--update [--yes]]    --update shows how existing cases differ from the code, --yes applies it
  emulator [options]         start the emulator (casebridge emulator --help lists the options); emulator and demo
                             need the package @casebridge/emulator installed beside this one

Options come from the reporter entry of the runner config, CASEBRIDGE_* variables and casebridge.config.* (json,
mjs, cjs, js, ts), as for the reporters; credentials best from CASEBRIDGE_TOKEN.

Global options:
  -h, --help                 help
  --json                     machine-readable output on stdout (replay, doctor, cycle, cycle keys, sync, junit)

Examples:
  npx @casebridge/cli init --url https://jira.example.com --project PROJ --plan PROJ-1
  casebridge demo
  CASEBRIDGE_URL=https://jira.example.com CASEBRIDGE_TOKEN=... casebridge doctor
  CYCLE_ID=$(casebridge cycle start --plan PROJ-1 --name "CI $GITHUB_RUN_ID")
  npx playwright test --grep "$(casebridge cycle keys --plan PROJ-1 --cycle Nightly --status Failed)"
  casebridge sync --dry-run
  casebridge junit 'build/test-results/**/*.xml'
  casebridge replay
  casebridge emulator --port 8990 --data .casebridge/emulator

Exit codes: 0 done (doctor: every check passed); 1 something failed or was not delivered; 2 wrong usage or
input. Colour only on a terminal, never with NO_COLOR set.
`;

const COMMAND_HELP: Record<string, string> = {
  init: INIT_USAGE,
  junit: JUNIT_USAGE,
  demo: `Usage: casebridge demo [--port N] [--keep]

Starts the emulator with its demo data (project DEMO, test plan DEMO-1), runs examples/playwright, examples/vitest
and examples/jest through their reporters into one cycle each, then prints a table of what arrived (runs by
status, defects, files) and where to look. Without Chromium the Playwright example's browser tests are skipped.

  --port N    the emulator's port (default 8990, or a free one when taken; 0: any free port)
  --keep      keep the emulator serving after the demo, until Ctrl+C

Example:
  casebridge demo --keep
`,
  replay: `Usage: casebridge replay [dir] [--json]

Delivers what earlier runs left in the journal of the project in dir (default: the current folder;
.casebridge/journal or journalDir). Each entry records what already reached the service, so running it twice, or
after a run that delivered part of it, never creates a second run or defect.

Examples:
  casebridge replay
  CASEBRIDGE_TOKEN=... casebridge replay ./e2e --json
`,
  doctor: `Usage: casebridge doctor [dir] [--json]

Checks, with the configuration of the project in dir (default: the current folder): the config, the proxy and CA
file, the credentials, the clock against the server's, the project, the test plan and the cycle (cycle mode), the
content repository (when configured) and the mapping file. Prints ✓ or ✗ per check with the fix. Exit code 0 only
when all pass.

Example:
  CASEBRIDGE_URL=https://jira.example.com CASEBRIDGE_TOKEN=... CASEBRIDGE_PROJECT=PROJ casebridge doctor
`,
  cycle: `Usage: casebridge cycle <create|start|complete|abort|resume> [--plan KEY] [--name NAME] [--json]
       casebridge cycle keys [options]             (below)

Cycle control for pipelines that fan out into shards: start the cycle before the shards, complete it after them.
The plan and the name come from --plan/--name or from testPlan and cycle (CASEBRIDGE_TEST_PLAN, CASEBRIDGE_CYCLE;
the name template expands \${build}, \${environment}, \${date}, \${branch} and any \${ENV_VAR}). Prints the cycle id on
stdout (with --json: id, name, plan, status, created). Safe to run from several jobs at once: an action that
another job already did is not an error.

  create     find or create the cycle (left in Draft)
  start      find or create it, and start it when it is a Draft
  complete   complete an Active cycle
  abort      abort an Active cycle
  resume     resume a Completed or Aborted cycle

Examples:
  CYCLE_ID=$(casebridge cycle start --plan PROJ-1 --name "CI $GITHUB_RUN_ID")
  casebridge cycle complete --plan PROJ-1 --name "CI $GITHUB_RUN_ID"

Usage: casebridge cycle keys [--plan KEY] [--cycle NAME|#ID] [--status S,...] [--tester me|USER]
                             [--format grep|json|lines] [--runner playwright|vitest|jest]

The test cases a test plan or one of its cycles asks for, to feed the runner's filter. Without --cycle: the plan's
test cases. With --cycle (a name, #ID or an id): the cases of the cycle's runs, filtered by --status (Passed,
Failed, Blocked, Not Tested, NA or a custom status the runs show; comma-separated or repeated, any case) and by
--tester (the run's assigned tester; me: the user of the credentials). --status and --tester need --cycle.

  --format grep    (default) one regular expression for Playwright --grep, Vitest -t and Jest -t: the keys as whole
                   words, and the title paths of the tests the mapping file (casebridge.keys.json) maps to them
  --format json    { plan, cycle?, keys, titles (mapping-file test names), grep } (--json too)
  --format lines   one key per line
  --runner R       read the casebridge reporter's options from R's config as well (as doctor does), and shape the
                   title patterns for R (jest: anchored at both ends)

Nothing selected: nothing on stdout, a note on stderr, exit code 1 (so a CI step can skip the run); 2 for wrong
usage or configuration. The plan and the service come from --plan, testPlan and the other options (casebridge.config.*,
CASEBRIDGE_*), as for the reporters.

Examples:
  npx playwright test --grep "$(casebridge cycle keys --plan PROJ-1 --cycle Nightly --status Failed)"
  npx vitest run -t "$(casebridge cycle keys --plan PROJ-1 --cycle '#42' --tester me)"
  casebridge cycle keys --plan PROJ-1 --format lines
`,
  sync: `Usage: casebridge sync [dir] [--runner playwright|vitest|jest] [--write-keys] [--update [--yes]] [--dry-run] [--json]

Lists the tests of the project in dir (default: the current folder) through the runner's own list mode (the
runner is found from its config file), creates a test case for each test that has no key (steps from the
\`step('...')\` / \`test.step('...')\` titles in its source, filed in the test suite of its file path), and writes the
new keys into the mapping file (casebridge.keys.json). Running it again changes nothing.

  --write-keys   put the keys into the test titles in the source instead ("logs in" -> "PROJ-12 logs in"),
                 for tests created now and tests keyed only by the mapping file; review the diff and commit it
  --dry-run      create and write nothing; show what would be done
  --runner R     when the project has no runner config file in dir
  --update       compare the summary and steps of every keyed case with the code and show the differences; a dry
                 run of the whole command unless --yes is given
  --yes          with --update: apply the summary and step changes

Examples:
  casebridge sync --dry-run
  casebridge sync --update && casebridge sync --update --yes
  casebridge junit 'build/test-results/**/*.xml'
  casebridge sync e2e --write-keys && git diff e2e
`,
};

/** The arguments of `replay` and `doctor`: an optional project folder and `--json`. */
function folderAndJson(args: string[], io: Io): { dir: string; json: boolean } {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  return { dir: resolve(io.cwd, positionals[0] ?? '.'), json: values.json };
}

async function replay(args: string[], io: Io): Promise<number> {
  const { dir: cwd, json } = folderAndJson(args, io);
  // With --json the engine's summary goes to stderr and the machine-readable one to stdout. Progress: a bar that
  // redraws itself on a terminal, a plain line per tenth in CI logs.
  const p = paint(io);
  let lastTenth = -1;
  const onReplay = ({ done, total, key, ok }: { done: number; total: number; key: string; ok: boolean }) => {
    if (io.errTty) {
      const width = 30;
      const filled = Math.round((done / total) * width);
      io.progress(
        `\r${p.green('█'.repeat(filled))}${p.dim('░'.repeat(width - filled))} ${done}/${total} ${ok ? '' : p.red(`${key} not delivered`)}\u001b[K${done === total ? '\n' : ''}`,
      );
      return;
    }
    const tenth = Math.floor((done / total) * 10);
    if (tenth !== lastTenth || !ok || done === total) {
      lastTenth = tenth;
      io.err(`casebridge replay: ${done}/${total} result(s)${ok ? '' : ` (${key} not delivered)`}`);
    }
  };
  // The options the run that journaled had (or, for an older journal, the runner configs' ones).
  const found = await replayOptions(cwd, io.env);
  for (const note of [...found.notes, ...(found.warnings ?? [])]) io.err(`casebridge replay: ${note}`);
  const source = found.source ?? 'reporter options';
  const engine = Engine.create(found.recorded ? {} : found.options, {
    cwd,
    runner: { name: 'junit' },
    env: io.env,
    out: json ? io.err : io.out,
    onReplay,
    ...(found.recorded ? { baseOptions: { options: found.options, source } } : { optionsSource: source }),
  });
  if (!engine.enabled) return 1;
  engine.begin();
  const end = await engine.end();
  const s = end.summary;
  if (json) io.out(JSON.stringify(s, null, 2));
  return s.journaled > 0 || s.problems.length > 0 ? 1 : 0;
}

async function doctorCommand(args: string[], io: Io): Promise<number> {
  const { dir, json } = folderAndJson(args, io);
  const checks = await doctor(dir, io.env, await runnerConfigOptions(dir, io.env));
  const ok = checks.every((c) => c.ok);
  if (json) {
    io.out(JSON.stringify({ ok, checks }, null, 2));
  } else {
    const p = paint(io);
    const width = Math.max(...checks.map((c) => c.name.length));
    for (const c of checks) {
      const mark = !c.ok ? p.red('✗') : c.warning ? p.yellow('!') : p.green('✓');
      io.out(`${mark} ${c.name.padEnd(width)}  ${c.detail}`);
      if (!c.ok && c.fix) io.out(`  ${' '.repeat(width)}  ${p.dim('fix:')} ${c.fix}`);
    }
    io.out(ok ? p.green('All checks passed.') : p.red(`${checks.filter((c) => !c.ok).length} check(s) failed.`));
  }
  return ok ? 0 : 1;
}

/** `casebridge cycle keys`: the keys a plan or cycle asks for, as a runner filter (see cycle-keys.ts). */
async function cycleKeysCli(args: string[], io: Io): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      plan: { type: 'string' },
      cycle: { type: 'string' },
      status: { type: 'string', multiple: true },
      tester: { type: 'string' },
      format: { type: 'string' },
      runner: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const usage = (message: string) => {
    io.err(`casebridge cycle keys: ${message}; try casebridge help cycle`);
    return 2;
  };
  if (positionals.length > 0) return usage(`unexpected argument ${positionals.join(' ')}`);
  const format = (values.format ?? (values.json ? 'json' : 'grep')) as KeysFormat;
  if (!KEYS_FORMATS.includes(format)) return usage(`--format expects ${KEYS_FORMATS.join(', ')}, got "${format}"`);
  const runner = values.runner as Runner | undefined;
  if (runner !== undefined && !RUNNERS.includes(runner)) {
    return usage(`--runner expects ${RUNNERS.join(', ')}, got "${runner}"`);
  }
  for (const [name, value] of [
    ['plan', values.plan],
    ['cycle', values.cycle],
    ['tester', values.tester],
  ] as const) {
    if (value !== undefined && value.trim() === '') return usage(`--${name} is empty`);
  }
  try {
    const result = await cycleKeys(
      {
        plan: values.plan,
        cycle: values.cycle,
        statuses: splitStatuses(values.status ?? []),
        tester: values.tester,
        runner,
      },
      io.cwd,
      io.env,
    );
    for (const note of result.notes) io.err(`casebridge cycle keys: ${note}`);
    const text = formatKeys(result, format, runner);
    // Nothing selected: nothing on stdout (an empty --grep would select every test) and exit 1, so a CI step can
    // skip the run.
    if (!text) {
      io.err('casebridge cycle keys: no test case matches; nothing printed (exit code 1)');
      return 1;
    }
    io.out(text);
    return 0;
  } catch (err) {
    io.err(`casebridge cycle keys: ${err instanceof Error ? err.message : String(err)}`);
    return err instanceof CycleError ? err.exitCode : 1;
  }
}

/** The options of `casebridge cycle <action>`. */
const CYCLE_OPTIONS = {
  plan: { type: 'string' },
  name: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

async function cycle(args: string[], io: Io): Promise<number> {
  if (args[0] === 'keys') return cycleKeysCli(args.slice(1), io);
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: CYCLE_OPTIONS });
  const action = positionals[0] as CycleAction | undefined;
  if (!action || !CYCLE_ACTIONS.includes(action) || positionals.length > 1) {
    io.err(
      `casebridge cycle: expected one of ${[...CYCLE_ACTIONS, 'keys'].join(', ')}, got ${positionals.join(' ') || 'nothing'}`,
    );
    io.err(COMMAND_HELP.cycle ?? '');
    return 2;
  }
  try {
    const info = await cycleCommand(action, { name: values.name, plan: values.plan }, io.cwd, io.env);
    if (values.json) io.out(JSON.stringify(info));
    else io.out(String(info.id));
    io.err(
      `casebridge: cycle "${info.name}" (id ${info.id}) of test plan ${info.plan} is ${info.status}${info.created ? ' (created now)' : ''}`,
    );
    return 0;
  } catch (err) {
    io.err(`casebridge cycle ${action}: ${err instanceof Error ? err.message : String(err)}`);
    return err instanceof CycleError ? err.exitCode : 1;
  }
}

function emulator(args: string[]): Promise<number> {
  const cli = emulatorCli();
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: 'inherit' });
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
    child.on('close', (code) => done(code ?? 1));
  });
}

async function demoCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string' }, keep: { type: 'boolean', default: false } },
  });
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !Number.isInteger(port)) {
    io.err(`casebridge demo: --port expects a number, got "${values.port}"`);
    return 2;
  }
  return await demo({ port, keep: values.keep ?? false, out: io.out, cwd: io.cwd });
}

const COMMANDS: Record<string, (args: string[], io: Io) => Promise<number>> = {
  demo: demoCommand,
  init: initCommand,
  replay,
  doctor: doctorCommand,
  cycle,
  sync: syncCommand,
  junit: junitCommand,
  emulator: (args) => emulator(args),
};

/**
 * Runs one `casebridge` command line and resolves to its exit code (0 done, 1 failed, 2 wrong usage); never rejects
 * and never exits the process, so tests call it in process with captured streams. Only src/cli.ts touches `process`.
 */
export async function main(argv: string[], streams: Streams): Promise<number> {
  const io = ioOf(streams);
  try {
    return await dispatch(argv, io);
  } catch (err) {
    io.err(`casebridge: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

async function dispatch(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help' || command === 'help') {
    const topic = command === 'help' ? rest[0] : undefined;
    io.out((topic && COMMAND_HELP[topic]) || HELP);
    return command ? 0 : 2;
  }
  // `casebridge <command> --help` (the emulator has its own).
  if (command !== 'emulator' && (rest.includes('--help') || rest.includes('-h'))) {
    const text = COMMAND_HELP[command];
    if (text) {
      io.out(text);
      return 0;
    }
  }
  try {
    const run = command && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!run) {
      io.err(`casebridge: unknown command "${command}"; try casebridge --help`);
      return 2;
    }
    return await run(rest, io);
  } catch (err) {
    if (err instanceof MissingPackageError) {
      io.err(`casebridge ${command}: ${err.message}`);
      return 1;
    }
    // parseArgs refuses unknown options with a clear message: a usage error.
    if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      io.err(`casebridge ${command}: ${err.message}; try casebridge ${command} --help`);
      return 2;
    }
    throw err;
  }
}
