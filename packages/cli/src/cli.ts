import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Engine } from '@casebridge/core';
import { demo } from './demo.js';

const HELP = `casebridge: push test results into a Jira test-management service (synapseRT)

Usage: casebridge <command> [options]

Commands:
  demo [--port N] [--keep]   start the emulator with demo data, run the example projects through their reporters,
                             print what arrived and where to look
  replay [dir]               deliver the results a run left in the journal (dir: the project root, default .);
                             safe to run twice. Options and credentials as for the reporters (CASEBRIDGE_*,
                             casebridge.config.json)
  emulator [options]         start the emulator (casebridge-emulator --help lists the options)

Options:
  -h, --help                 this text

Examples:
  casebridge demo
  CASEBRIDGE_URL=https://jira.example.com CASEBRIDGE_TOKEN=... casebridge replay
  casebridge emulator --port 8990 --data .casebridge/emulator

Exit codes: 0 done; 1 something was not delivered or failed; 2 wrong usage.
`;

const out = (line: string) => process.stdout.write(`${line}\n`);

async function replay(args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const cwd = resolve(positionals[0] ?? '.');
  const engine = Engine.create({}, { cwd, runner: { name: 'junit' }, out });
  if (!engine.enabled) return 1;
  engine.begin();
  const end = await engine.end();
  const s = end.summary;
  return s.journaled > 0 || s.problems.length > 0 ? 1 : 0;
}

function emulator(args: string[]): Promise<number> {
  const pkg = createRequire(import.meta.url).resolve('@casebridge/emulator/package.json');
  const cli = join(dirname(pkg), 'dist', 'cli.js');
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: 'inherit' });
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
    child.on('close', (code) => done(code ?? 1));
  });
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help' || command === 'help') {
    out(HELP);
    return command ? 0 : 2;
  }
  switch (command) {
    case 'demo': {
      const { values } = parseArgs({
        args: rest,
        options: {
          port: { type: 'string' },
          keep: { type: 'boolean', default: false },
          help: { type: 'boolean', short: 'h' },
        },
      });
      if (values.help) {
        out(HELP);
        return 0;
      }
      const port = values.port === undefined ? undefined : Number(values.port);
      if (port !== undefined && !Number.isInteger(port)) {
        process.stderr.write(`casebridge demo: --port expects a number, got "${values.port}"\n`);
        return 2;
      }
      return demo({ port, keep: values.keep ?? false, out });
    }
    case 'replay':
      return replay(rest);
    case 'emulator':
      return emulator(rest);
    default:
      process.stderr.write(`casebridge: unknown command "${command}"; try casebridge --help\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`casebridge: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
