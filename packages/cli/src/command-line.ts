import { parseArgs } from 'node:util';
import { CasebridgeError } from '@casebridge/core';
import type { Io } from './output.js';

/**
 * The command line's one table-driven piece: every command declares its options here once, and the same table
 * parses its arguments (node:util parseArgs) and writes its option list in `--help`. The prose of a help text
 * (what the command does, examples, exit codes) is the command's own and is printed as written.
 */

export type OptionType = 'string' | 'boolean' | 'number' | 'list';

export interface OptionSpec {
  type: OptionType;
  /** One letter: `-y` for `--yes`. */
  alias?: string;
  /** The value's name in the help: `--port N`. */
  value?: string;
  /**
   * The help lines, wrapped by hand. Without them the option is parsed but not listed (the command's prose
   * describes it, as `--json` of replay).
   */
  description?: string[];
  /** One help row per value (`--format grep`, `--format json`), in place of `description`. */
  choices?: Record<string, string[]>;
  /** Used when the option is not given; booleans default to false and lists to []. */
  default?: string | number;
  /**
   * The variable the command falls back to, named in the help as "(default: ENV)". The command reads it, not the
   * parser: init ranks a value from the environment below the config file, an option above it.
   */
  env?: string;
}

export type OptionTable = Record<string, OptionSpec>;

/** An option's parsed value, typed by its spec. */
export type ValueOf<S extends OptionSpec> = S['type'] extends 'boolean'
  ? boolean
  : S['type'] extends 'list'
    ? string[]
    : S['type'] extends 'number'
      ? S['default'] extends number
        ? number
        : number | undefined
      : S['default'] extends string
        ? string
        : string | undefined;

export interface Parsed<O extends OptionTable = OptionTable> {
  values: { [K in keyof O]: ValueOf<O[K]> };
  positionals: string[];
}

/** A row of `casebridge --help`'s command list: the synopsis (empty on a continuation line) and the text. */
export type SummaryRow = readonly [synopsis: string, text: string];

export interface CommandDefinition<O extends OptionTable = OptionTable> {
  name: string;
  /** Its rows in `casebridge --help`, wrapped by hand. */
  summary: readonly SummaryRow[];
  /** The first line(s) of its help: `Usage: casebridge demo [--port N] [--keep]`. Absent: no help of its own. */
  usage?: string;
  /** The prose between the usage and the option list. */
  about?: string;
  /** A heading over the option list (`Options:`). */
  optionsTitle?: string;
  /** Spaces between the widest option and its text (4 unless the text was laid out otherwise). */
  optionGap?: number;
  /** The prose after the option list: notes, examples, exit codes. */
  after?: string;
  options: O;
  /** Whether it takes arguments besides its options (a folder, files). */
  positionals: boolean;
  /** Its arguments go to another program as they are, unparsed (the emulator's own command line). */
  passThrough?: boolean;
  /** What a usage error tells the user to run (default `casebridge <name> --help`). */
  helpHint?: string;
  /** Commands chosen by the first argument (`cycle keys`), printed after this one in its help. */
  subcommands?: Record<string, CommandDefinition>;
  run(options: Parsed<O>, io: Io): Promise<number>;
}

/** Keeps the table's literal types, so `run` sees `values.port` as a number. */
export function defineCommand<const O extends OptionTable>(definition: CommandDefinition<O>): CommandDefinition<O> {
  return definition;
}

/** A usage error from the parser: the command prints it with its help hint and exits 2. */
export class UsageError extends CasebridgeError {
  constructor(message: string) {
    super('usage', message, {}, false, { exitCode: 2 });
  }
}

/**
 * Parses `args` against the command's table. Unknown options and missing values throw parseArgs' own errors
 * (code `ERR_PARSE_ARGS_*`, naming the option); a number that is not an integer throws a UsageError.
 */
export function parse<O extends OptionTable>(command: CommandDefinition<O>, args: string[]): Parsed<O> {
  const config: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  for (const [name, spec] of Object.entries(command.options)) {
    config[name] = {
      type: spec.type === 'boolean' ? 'boolean' : 'string',
      ...(spec.type === 'list' ? { multiple: true } : {}),
      ...(spec.alias ? { short: spec.alias } : {}),
    };
  }
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: command.positionals,
    strict: true,
    options: config,
  });
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(command.options)) {
    const given = values[name];
    if (spec.type === 'boolean') out[name] = given === true;
    else if (spec.type === 'list') out[name] = given ?? [];
    else if (given === undefined) out[name] = spec.default;
    else if (spec.type === 'number') {
      const n = Number(given);
      if (!Number.isInteger(n)) throw new UsageError(`--${name} expects a number, got "${String(given)}"`);
      out[name] = n;
    } else out[name] = given;
  }
  return { values: out as Parsed<O>['values'], positionals };
}

/** Whether `err` is parseArgs refusing the arguments (an unknown option, a missing value, an argument too many). */
export function isParseError(err: unknown): err is Error {
  return err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS');
}

/** The option list of a command's help: one row per described option (per value with `choices`). */
function optionRows(command: CommandDefinition): string[] {
  const rows: Array<[string, string[]]> = [];
  for (const [name, spec] of Object.entries(command.options)) {
    const flag = `${spec.alias ? `-${spec.alias}, ` : ''}--${name}`;
    if (spec.choices) {
      for (const [choice, lines] of Object.entries(spec.choices)) rows.push([`${flag} ${choice}`, lines]);
    } else if (spec.description) {
      const lines = [...spec.description];
      if (spec.env) lines[lines.length - 1] = `${lines[lines.length - 1]} (default: ${spec.env})`;
      rows.push([spec.value ? `${flag} ${spec.value}` : flag, lines]);
    }
  }
  if (rows.length === 0) return [];
  const width = Math.max(...rows.map(([label]) => label.length)) + (command.optionGap ?? 4);
  return rows.flatMap(([label, lines]) =>
    lines.map((line, k) => `  ${(k === 0 ? label : '').padEnd(width)}${line}`.trimEnd()),
  );
}

/** The text of `casebridge <command> --help`: usage, prose, the option list from the table, prose; then subcommands'. */
export function helpOf(command: CommandDefinition): string | undefined {
  if (!command.usage) return undefined;
  const rows = optionRows(command);
  const list = rows.length > 0 ? [command.optionsTitle, ...rows].filter((l) => l !== undefined).join('\n') : undefined;
  const parts = [command.usage, command.about, list, command.after].filter((p): p is string => p !== undefined);
  const own = `${parts.join('\n\n')}\n`;
  const subs = Object.values(command.subcommands ?? {})
    .map(helpOf)
    .filter((t): t is string => t !== undefined);
  return [own, ...subs].join('\n');
}

/** The synopsis column of `casebridge --help`'s command list; a longer synopsis gets a line of its own. */
const SYNOPSIS_WIDTH = 27;

/** The command list of `casebridge --help`: each command's rows, then its subcommands' rows. */
export function commandList(commands: readonly CommandDefinition[]): string {
  const rows = (c: CommandDefinition): string[] => [
    ...c.summary.map(([synopsis, text]) =>
      synopsis.length < SYNOPSIS_WIDTH - 1
        ? `  ${synopsis.padEnd(SYNOPSIS_WIDTH)}${text}`
        : `  ${synopsis}\n  ${' '.repeat(SYNOPSIS_WIDTH)}${text}`,
    ),
    ...Object.values(c.subcommands ?? {}).flatMap(rows),
  ];
  return commands.flatMap(rows).join('\n');
}
