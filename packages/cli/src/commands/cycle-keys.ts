import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { defineCommand } from '../command-line.js';
import { CycleError } from '../cycle.js';
import { cycleKeys, formatKeys, KEYS_FORMATS, type KeysFormat, RUNNERS, splitStatuses } from '../cycle-keys.js';
import type { Runner } from '../grep-pattern.js';
import type { Io } from '../output.js';
import { formatQuarantined, LABEL, quarantinedKeys } from '../quarantine-keys.js';

/**
 * `casebridge cycle keys`: the keys a plan or cycle asks for, as a runner filter (see cycle-keys.ts); with
 * `--quarantined`, the project's quarantined cases, as a filter that leaves them out (see quarantine-keys.ts).
 */
export const cycleKeysCommand = defineCommand({
  name: 'cycle keys',
  summary: [
    [
      'cycle keys --plan P [--cycle C] [--status S] [--tester me]',
      'the cases a test plan or cycle asks for, as a --grep / -t pattern (or JSON, lines)',
    ],
    ['cycle keys --quarantined', 'the quarantined cases (Jira label), as a pattern that leaves them out of the run'],
  ],
  usage: `Usage: casebridge cycle keys [--plan KEY] [--cycle NAME|#ID] [--status S,...] [--tester me|USER]
                             [--format grep|json|lines] [--runner playwright|vitest|jest] [--file PATH]
       casebridge cycle keys --quarantined [--label L] [--format grep|json|lines] [--runner playwright|vitest|jest]
                             [--file PATH]`,
  about: `The test cases a test plan or one of its cycles asks for, to feed the runner's filter. Without --cycle: the plan's
test cases. With --cycle (a name, #ID or an id): the cases of the cycle's runs, filtered by --status (Passed,
Failed, Blocked, Not Tested, NA or a custom status the runs show; comma-separated or repeated, any case) and by
--tester (the run's assigned tester; me: the user of the credentials). --status and --tester need --cycle.

With --quarantined: the project's quarantined cases, as the reporters read them (option quarantine): the open test
cases carrying the label (quarantine.label, default casebridge-quarantine; --label to name another), and the cases
whose runs an open issue carrying it (a known bug marked so) is linked to. No plan or cycle is read; --status,
--tester, --plan and --cycle do not apply. The pattern leaves them out of the run: without --runner and with
--runner playwright it matches the tests to leave out, for --grep-invert; with --runner jest or vitest it matches
every test but those, for -t, which only selects. Costs one search, plus one request per open labelled bug.`,
  // Laid out 3 apart before the list was generated; kept so the help reads as it did.
  optionGap: 3,
  options: {
    plan: { type: 'string' },
    cycle: { type: 'string' },
    status: { type: 'list' },
    tester: { type: 'string' },
    quarantined: { type: 'boolean' },
    label: { type: 'string' },
    format: {
      type: 'string',
      choices: {
        grep: [
          '(default) one regular expression for Playwright --grep, Vitest -t and Jest -t: the keys as whole',
          'words, and the title paths of the tests the mapping file (casebridge.keys.json) maps to them',
        ],
        json: [
          '{ plan, cycle?, keys, titles (mapping-file test names), grep } (--json too); with --quarantined',
          '{ label, keys, why, titles, grep, invert } (invert: grep matches the tests to leave out)',
        ],
        lines: ['one key per line'],
      },
    },
    runner: {
      type: 'string',
      value: 'R',
      description: [
        "read the casebridge reporter's options from R's config as well (as doctor does), and shape the",
        'title patterns for R (jest: anchored at both ends; with --quarantined, jest and vitest: a pattern',
        'that matches every test but the quarantined ones)',
      ],
    },
    json: { type: 'boolean' },
    file: {
      type: 'string',
      value: 'PATH',
      description: [
        'write the output to PATH instead of stdout (the grep format without a final newline, so a config',
        'can read it as it is: no argument-length limit); nothing selected: PATH is removed, exit code 1',
      ],
    },
  },
  after: `Nothing selected: nothing on stdout, a note on stderr, exit code 1 (so a CI step can skip the run); 2 for wrong
usage or configuration. The plan and the service come from --plan, testPlan and the other options (casebridge.config.*,
CASEBRIDGE_*), as for the reporters.

With --quarantined, nothing quarantined is "nothing selected" too: run every test.

With --file PATH the output goes to that file (a note on stderr says how many keys): a runner config reads it
(Playwright grep, Jest and Vitest testNamePattern), which no argument-length limit holds back at thousands of keys.
Playwright 1.62+ can select inside the runner instead: the reporter's option select (see its README).

Examples:
  npx playwright test --grep "$(casebridge cycle keys --plan PROJ-1 --cycle Nightly --status Failed)"
  npx vitest run -t "$(casebridge cycle keys --plan PROJ-1 --cycle '#42' --tester me)"
  casebridge cycle keys --plan PROJ-1 --cycle Nightly --runner jest --file .casebridge/select.txt
  casebridge cycle keys --plan PROJ-1 --format lines
  npx playwright test --grep-invert "$(casebridge cycle keys --quarantined)"
  npx jest -t "$(casebridge cycle keys --quarantined --runner jest)"
  casebridge cycle keys --quarantined --label known-broken --format lines`,
  positionals: true,
  async run({ values, positionals }, io) {
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
      ['file', values.file],
    ] as const) {
      if (value !== undefined && value.trim() === '') return usage(`--${name} is empty`);
    }
    if (values.quarantined) {
      const stray = [
        ['plan', values.plan !== undefined],
        ['cycle', values.cycle !== undefined],
        ['status', values.status.length > 0],
        ['tester', values.tester !== undefined],
      ].find(([, given]) => given);
      if (stray) {
        return usage(
          `--quarantined lists the project's quarantined cases, not a plan's or a cycle's: --${stray[0]} does not apply; leave it out`,
        );
      }
      if (values.label !== undefined && !LABEL.test(values.label)) {
        return usage(
          `--label expects a Jira label (no spaces or quotes), e.g. casebridge-quarantine; got "${values.label}"`,
        );
      }
      return quarantined(values.label, format, runner, values.file, io);
    }
    if (values.label !== undefined) return usage('--label names the quarantine label: it goes with --quarantined');
    try {
      const result = await cycleKeys(
        {
          plan: values.plan,
          cycle: values.cycle,
          statuses: splitStatuses(values.status),
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
        io.err(`casebridge cycle keys: no test case matches; ${nothingWritten(values.file, io)} (exit code 1)`);
        return 1;
      }
      return output(text, format, values.file, result.keys.length, io);
    } catch (err) {
      io.err(`casebridge cycle keys: ${err instanceof Error ? err.message : String(err)}`);
      return err instanceof CycleError ? err.exitCode : 1;
    }
  },
});

/** `cycle keys --quarantined`: prints the pattern that leaves the quarantined tests out; 1 when there are none. */
async function quarantined(
  label: string | undefined,
  format: KeysFormat,
  runner: Runner | undefined,
  file: string | undefined,
  io: Io,
) {
  try {
    const result = await quarantinedKeys(
      { ...(label ? { label } : {}), ...(runner ? { runner } : {}) },
      io.cwd,
      io.env,
    );
    for (const note of result.notes) io.err(`casebridge cycle keys: ${note}`);
    const text = formatQuarantined(result, format, runner);
    if (!text) {
      io.err(
        `casebridge cycle keys: no test case is quarantined (label ${result.label}); ${nothingWritten(file, io)} (exit code 1): run every test`,
      );
      return 1;
    }
    return output(text, format, file, result.keys.length, io);
  } catch (err) {
    io.err(`casebridge cycle keys: ${err instanceof Error ? err.message : String(err)}`);
    return err instanceof CycleError ? err.exitCode : 1;
  }
}

/**
 * `text` on stdout, or with `--file` in that file (folders made as needed). The grep format is written without a
 * final newline: a config reads it as the pattern it is (`new RegExp(readFileSync(path, 'utf8'))`).
 */
function output(text: string, format: KeysFormat, file: string | undefined, keys: number, io: Io): number {
  if (file === undefined) {
    io.out(text);
    return 0;
  }
  const path = resolve(io.cwd, file);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, format === 'grep' ? text : `${text}\n`);
  } catch (err) {
    io.err(`casebridge cycle keys: --file: cannot write ${file}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  io.err(`casebridge cycle keys: ${keys} key(s) written to ${file} (${format})`);
  return 0;
}

/**
 * What "nothing selected" leaves behind: nothing on stdout; with `--file`, no file either (one left by an earlier
 * call is removed: `--grep "$(cat PATH)"` fails instead of running a stale selection, or every test).
 */
function nothingWritten(file: string | undefined, io: Io): string {
  if (file === undefined) return 'nothing printed';
  try {
    rmSync(resolve(io.cwd, file), { force: true });
  } catch {
    return `nothing written (${file} could not be removed: remove it before the run)`;
  }
  return `nothing written (${file} removed)`;
}
