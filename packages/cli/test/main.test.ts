import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CommandDefinition, commandList, helpOf, parse } from '../src/command-line.js';
import { cycleKeysCommand } from '../src/commands/cycle-keys.js';
import { demo } from '../src/commands/demo.js';
import { COMMANDS } from '../src/commands/index.js';
import { init } from '../src/commands/init.js';
import { overview } from '../src/main.js';
import { runCli } from './support/captured.js';

/**
 * `main(argv, streams)` in process: the help of every command, usage errors and their exit codes, and the command
 * table (a command is one file in src/commands and one line in its index). What the commands do is tested in
 * their own files and, through the built bin, in test/cli*.e2e.test.ts.
 */

const withHelp = COMMANDS.filter((c) => helpOf(c) !== undefined);

describe('help', () => {
  it('casebridge --help lists every command; without a command the list goes out with exit code 2', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(`${overview()}\n`);
    expect(help.stdout).toMatchSnapshot();
    const none = await runCli([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe(help.stdout);
    // A topic that is not a command (or has no help of its own) shows the list too.
    for (const topic of ['keys', 'emulator', 'nope']) expect((await runCli(['help', topic])).stdout).toBe(help.stdout);
  });

  // The test's name holds the command's name and nothing more (each argument fills a %s): its snapshot's name must
  // not change with its help.
  const cases = withHelp.map((c) => [c.name, c.name, c] as const);
  it.each(cases)('casebridge %s --help, -h and help %s', async (name, _, command) => {
    const help = await runCli([name, '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stderr).toBe('');
    expect(help.stdout).toBe(`${helpOf(command)}\n`);
    expect(help.stdout).toMatch(new RegExp(`^Usage: casebridge ${name}[\\s\\S]*Example`));
    expect(help.stdout).toMatchSnapshot();
    expect((await runCli([name, '-h'])).stdout).toBe(help.stdout);
    expect((await runCli(['help', name])).stdout).toBe(help.stdout);
  });

  it('the help of cycle holds cycle keys; -h among short options prints the help where the table lists -h', async () => {
    const cycle = await runCli(['cycle', 'keys', '--help']);
    expect(cycle.stdout).toContain(`\n${helpOf(cycleKeysCommand)}`);
    const yh = await runCli(['init', '-yh']);
    expect(yh.code).toBe(0);
    expect(yh.stdout).toBe(`${helpOf(init)}\n`);
  });

  it('an option with a variable names it as its default; a value placeholder follows the flag', () => {
    const text = helpOf(init) ?? '';
    expect(text).toContain(
      '  --url URL        the Jira base URL, e.g. https://jira.example.com (default: CASEBRIDGE_URL)\n',
    );
    expect(text).toContain('  -y, --yes        accepted for scripts and CI');
  });
});

describe('usage errors: exit code 2, the option or argument named, and what to run', () => {
  it('an unknown option', async () => {
    const doctor = await runCli(['doctor', '--frobnicate']);
    expect(doctor.code).toBe(2);
    expect(doctor.stdout).toBe('');
    expect(doctor.stderr).toMatch(
      /^casebridge doctor: Unknown option '--frobnicate'.*; try casebridge doctor --help\n$/,
    );
    // init is run through npx before the CLI is installed: its hint says so.
    const init = await runCli(['init', '--frobnicate']);
    expect(init.code).toBe(2);
    expect(init.stderr).toMatch(
      /^casebridge init: Unknown option '--frobnicate'.*; try npx @casebridge\/cli init --help\n$/,
    );
    // A subcommand's options are its own; the error names the command.
    const keys = await runCli(['cycle', 'keys', '--name', 'x']);
    expect(keys.code).toBe(2);
    expect(keys.stderr).toMatch(/^casebridge cycle: Unknown option '--name'.*; try casebridge cycle --help\n$/);
  });

  it('an unknown command', async () => {
    const r = await runCli(['frobnicate']);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: 'casebridge: unknown command "frobnicate"; try casebridge --help\n',
    });
    expect((await runCli(['--version'])).stderr).toContain('unknown command "--version"');
  });

  it('a missing value, a value of the wrong type, an argument a command does not take', async () => {
    const missing = await runCli(['demo', '--port']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^casebridge demo: Option '--port <value>' argument missing; try casebridge demo --help\n$/,
    );
    const wrong = await runCli(['demo', '--port', 'abc']);
    expect(wrong).toEqual({ code: 2, stdout: '', stderr: 'casebridge demo: --port expects a number, got "abc"\n' });
    const extra = await runCli(['demo', 'extra']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain("Unexpected argument 'extra'");
  });

  it('a missing required argument: the files of junit, the action of cycle (with the help on stderr)', async () => {
    const junit = await runCli(['junit']);
    expect(junit.code).toBe(2);
    expect(junit.stderr).toBe(
      'casebridge junit: expected one or more JUnit XML files, folders or globs, e.g. casebridge junit report.xml\n',
    );
    const cycle = await runCli(['cycle']);
    expect(cycle.code).toBe(2);
    expect(cycle.stderr).toContain(
      'casebridge cycle: expected one of create, start, complete, abort, resume, keys, got nothing\n',
    );
    expect(cycle.stderr).toContain('Usage: casebridge cycle keys');
    const keys = await runCli(['cycle', 'keys', '--format', 'xml']);
    expect(keys.stderr).toBe(
      'casebridge cycle keys: --format expects grep, json, lines, got "xml"; try casebridge help cycle\n',
    );
  });
});

describe('the table', () => {
  it('types the values: booleans false and lists empty when not given, numbers converted', () => {
    expect(parse(demo, [])).toEqual({ values: { port: undefined, keep: false }, positionals: [] });
    expect(parse(demo, ['--port', '0', '--keep']).values).toEqual({ port: 0, keep: true });
    const keys = parse(cycleKeysCommand, ['--status', 'Failed', '--status=Blocked', '--plan', 'P-1']);
    expect(keys.values.status).toEqual(['Failed', 'Blocked']);
    expect(keys.values.plan).toBe('P-1');
  });

  it('a new command is one file in src/commands and one line in its index: every file is listed and helped', async () => {
    const dir = join(__dirname, '..', 'src', 'commands');
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'index.ts');
    const listed = new Set<CommandDefinition>(COMMANDS.flatMap((c) => [c, ...Object.values(c.subcommands ?? {})]));
    const list = commandList(COMMANDS);
    for (const file of files) {
      const exported = Object.values(await import(join(dir, file))) as CommandDefinition[];
      const definitions = exported.filter((d) => typeof d === 'object' && d !== null && 'run' in d);
      expect(definitions, file).toHaveLength(1);
      const d = definitions[0] as CommandDefinition;
      expect(listed.has(d), `${file}: add ${d.name} to COMMANDS in src/commands/index.ts`).toBe(true);
      expect(file, 'file names are the command, kebab-case').toBe(`${d.name.replace(' ', '-')}.ts`);
      expect(list).toContain(`  ${d.summary[0]?.[0]}`);
      // Every option the table describes is in the help, and every option parses.
      const help = helpOf(d) ?? '';
      for (const [name, spec] of Object.entries(d.options)) {
        if (spec.description || spec.choices) expect(help, `${d.name} --${name}`).toContain(`--${name}`);
        if (!d.passThrough)
          expect(() => parse(d, spec.type === 'boolean' ? [`--${name}`] : [`--${name}`, '1'])).not.toThrow();
      }
    }
    expect(listed.size).toBe(files.length);
  });

  it('no line of a help is wider than 120 columns', () => {
    for (const text of [overview(), ...withHelp.map((c) => helpOf(c) ?? '')]) {
      for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(120);
    }
  });
});
