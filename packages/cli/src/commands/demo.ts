import { defineCommand } from '../command-line.js';
import { demo as runDemo } from '../demo.js';

/** `casebridge demo`: the emulator with demo data and the example projects run into it (see demo.ts). */
export const demo = defineCommand({
  name: 'demo',
  summary: [
    ['demo [--port N] [--keep]', 'start the emulator with demo data, run the example projects (Playwright, Vitest,'],
    ['', 'Jest) through their reporters, print what arrived and where to look'],
  ],
  usage: 'Usage: casebridge demo [--port N] [--keep]',
  about: `Starts the emulator with its demo data (project DEMO, test plan DEMO-1), runs examples/playwright, examples/vitest
and examples/jest through their reporters into one cycle each, then prints a table of what arrived (runs by
status, defects, files) and where to look. Without Chromium the Playwright example's browser tests are skipped.`,
  options: {
    port: {
      type: 'number',
      value: 'N',
      description: ["the emulator's port (default 8990, or a free one when taken; 0: any free port)"],
    },
    keep: { type: 'boolean', description: ['keep the emulator serving after the demo, until Ctrl+C'] },
  },
  after: `Example:
  casebridge demo --keep`,
  positionals: false,
  run: ({ values }, io) => runDemo({ port: values.port, keep: values.keep, out: io.out, cwd: io.cwd }),
});
