import { spawn } from 'node:child_process';
import { defineCommand } from '../command-line.js';
import { emulatorCli } from '../optional.js';

/** `casebridge emulator [options]`: the emulator's own command line, run with the arguments as given. */
export const emulator = defineCommand({
  name: 'emulator',
  summary: [
    ['emulator [options]', 'start the emulator (casebridge emulator --help lists the options); emulator and demo'],
    ['', 'need the package @casebridge/emulator installed beside this one'],
  ],
  // No usage: `casebridge emulator --help` is the emulator's own help.
  options: {},
  positionals: true,
  passThrough: true,
  run({ positionals }) {
    const cli = emulatorCli();
    return new Promise((done) => {
      // The emulator serves until Ctrl+C: it writes to the terminal itself, and the signal is passed on to it.
      const child = spawn(process.execPath, [cli, ...positionals], { stdio: 'inherit' });
      for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
      child.on('close', (code) => done(code ?? 1));
    });
  },
});
