import { CasebridgeError } from '@casebridge/core';
import { type CommandDefinition, commandList, helpOf, isParseError, parse, UsageError } from './command-line.js';
import { COMMANDS } from './commands/index.js';
import { MissingPackageError } from './optional.js';
import { type Io, ioOf, type Streams } from './output.js';

/** `casebridge --help`: this head, the command list from the commands' tables, and the tail. */
const OVERVIEW_HEAD = `casebridge: push test results into a Jira test-management service (synapseRT)

Usage: casebridge <command> [options]        casebridge <command> --help for one command

Commands:`;

const OVERVIEW_TAIL = `Options come from the reporter entry of the runner config, CASEBRIDGE_* variables and casebridge.config.* (json,
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

/** The text of `casebridge --help`. */
export function overview(commands: readonly CommandDefinition[] = COMMANDS): string {
  return `${OVERVIEW_HEAD}\n${commandList(commands)}\n\n${OVERVIEW_TAIL}`;
}

/**
 * Runs one `casebridge` command line and resolves to its exit code (0 done, 1 failed, 2 wrong usage); never rejects
 * and never exits the process, so tests call it in process with captured streams. src/cli.ts, the bin, calls it.
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
  const [name, ...rest] = argv;
  const find = (n: string | undefined) => COMMANDS.find((c) => c.name === n);
  if (!name || name === '-h' || name === '--help' || name === 'help') {
    const topic = name === 'help' ? find(rest[0]) : undefined;
    io.out((topic && helpOf(topic)) || overview());
    return name ? 0 : 2;
  }
  const command = find(name);
  if (!command) {
    io.err(`casebridge: unknown command "${name}"; try casebridge --help`);
    return 2;
  }
  // `casebridge <command> --help`, wherever it stands (the emulator has its own).
  const help = helpOf(command);
  if (help && !command.passThrough && (rest.includes('--help') || rest.includes('-h'))) {
    io.out(help);
    return 0;
  }
  try {
    if (command.passThrough) return await command.run({ values: {}, positionals: rest }, io);
    const key = rest[0];
    const subs = command.subcommands;
    const sub = key !== undefined && subs && Object.hasOwn(subs, key) ? subs[key] : undefined;
    const target = sub ?? command;
    const parsed = parse(target, sub ? rest.slice(1) : rest);
    // `-h` among other short options (`init -yh`), in a command whose table lists it.
    if ((parsed.values as Record<string, unknown>).help === true && help) {
      io.out(help);
      return 0;
    }
    return await target.run(parsed, io);
  } catch (err) {
    if (err instanceof MissingPackageError) {
      io.err(`casebridge ${name}: ${err.message}`);
      return 1;
    }
    // parseArgs refuses an unknown option or a missing value with a message naming it: a usage error.
    if (isParseError(err)) {
      io.err(`casebridge ${name}: ${err.message}; try ${command.helpHint ?? `casebridge ${name} --help`}`);
      return 2;
    }
    if (err instanceof UsageError) {
      io.err(`casebridge ${name}: ${err.message}`);
      return 2;
    }
    // An error that carries its exit code (a configuration with problems: 2).
    if (err instanceof CasebridgeError && err.exitCode !== undefined) {
      io.err(`casebridge ${name}: ${err.message}`);
      return err.exitCode;
    }
    throw err;
  }
}
