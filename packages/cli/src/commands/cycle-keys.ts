import { defineCommand } from '../command-line.js';
import { CycleError } from '../cycle.js';
import { cycleKeys, formatKeys, KEYS_FORMATS, type KeysFormat, RUNNERS, splitStatuses } from '../cycle-keys.js';
import type { Runner } from '../grep-pattern.js';

/** `casebridge cycle keys`: the keys a plan or cycle asks for, as a runner filter (see cycle-keys.ts). */
export const cycleKeysCommand = defineCommand({
  name: 'cycle keys',
  summary: [
    [
      'cycle keys --plan P [--cycle C] [--status S] [--tester me]',
      'the cases a test plan or cycle asks for, as a --grep / -t pattern (or JSON, lines)',
    ],
  ],
  usage: `Usage: casebridge cycle keys [--plan KEY] [--cycle NAME|#ID] [--status S,...] [--tester me|USER]
                             [--format grep|json|lines] [--runner playwright|vitest|jest]`,
  about: `The test cases a test plan or one of its cycles asks for, to feed the runner's filter. Without --cycle: the plan's
test cases. With --cycle (a name, #ID or an id): the cases of the cycle's runs, filtered by --status (Passed,
Failed, Blocked, Not Tested, NA or a custom status the runs show; comma-separated or repeated, any case) and by
--tester (the run's assigned tester; me: the user of the credentials). --status and --tester need --cycle.`,
  // Laid out 3 apart before the list was generated; kept so the help reads as it did.
  optionGap: 3,
  options: {
    plan: { type: 'string' },
    cycle: { type: 'string' },
    status: { type: 'list' },
    tester: { type: 'string' },
    format: {
      type: 'string',
      choices: {
        grep: [
          '(default) one regular expression for Playwright --grep, Vitest -t and Jest -t: the keys as whole',
          'words, and the title paths of the tests the mapping file (casebridge.keys.json) maps to them',
        ],
        json: ['{ plan, cycle?, keys, titles (mapping-file test names), grep } (--json too)'],
        lines: ['one key per line'],
      },
    },
    runner: {
      type: 'string',
      value: 'R',
      description: [
        "read the casebridge reporter's options from R's config as well (as doctor does), and shape the",
        'title patterns for R (jest: anchored at both ends)',
      ],
    },
    json: { type: 'boolean' },
  },
  after: `Nothing selected: nothing on stdout, a note on stderr, exit code 1 (so a CI step can skip the run); 2 for wrong
usage or configuration. The plan and the service come from --plan, testPlan and the other options (casebridge.config.*,
CASEBRIDGE_*), as for the reporters.

Examples:
  npx playwright test --grep "$(casebridge cycle keys --plan PROJ-1 --cycle Nightly --status Failed)"
  npx vitest run -t "$(casebridge cycle keys --plan PROJ-1 --cycle '#42' --tester me)"
  casebridge cycle keys --plan PROJ-1 --format lines`,
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
    ] as const) {
      if (value !== undefined && value.trim() === '') return usage(`--${name} is empty`);
    }
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
        io.err('casebridge cycle keys: no test case matches; nothing printed (exit code 1)');
        return 1;
      }
      io.out(text);
      return 0;
    } catch (err) {
      io.err(`casebridge cycle keys: ${err instanceof Error ? err.message : String(err)}`);
      return err instanceof CycleError ? err.exitCode : 1;
    }
  },
});
