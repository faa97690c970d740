import { defineCommand } from '../command-line.js';
import { syncCommand } from '../sync/index.js';

/** `casebridge sync [dir]`: creates the missing test cases and writes their keys (see sync/index.ts). */
export const sync = defineCommand({
  name: 'sync',
  summary: [
    [
      'sync [dir] [--write-keys]',
      "list the project's tests (Playwright, Vitest, Jest), create the missing test cases and",
    ],
    ['', 'write their keys to the mapping file (or, --write-keys, into the test titles);'],
    ['     [--update [--yes]]', '--update shows how existing cases differ from the code, --yes applies it'],
  ],
  usage:
    'Usage: casebridge sync [dir] [--runner playwright|vitest|jest] [--write-keys] [--update [--yes]] [--dry-run] [--json]',
  about: `Lists the tests of the project in dir (default: the current folder) through the runner's own list mode (the
runner is found from its config file), creates a test case for each test that has no key (steps from the
\`step('...')\` / \`test.step('...')\` titles in its source, filed in the test suite of its file path), and writes the
new keys into the mapping file (casebridge.keys.json). Running it again changes nothing.`,
  // Laid out 3 apart before the list was generated; kept so the help reads as it did.
  optionGap: 3,
  options: {
    'write-keys': {
      type: 'boolean',
      description: [
        'put the keys into the test titles in the source instead ("logs in" -> "PROJ-12 logs in"),',
        'for tests created now and tests keyed only by the mapping file; review the diff and commit it',
      ],
    },
    'dry-run': { type: 'boolean', description: ['create and write nothing; show what would be done'] },
    runner: { type: 'string', value: 'R', description: ['when the project has no runner config file in dir'] },
    update: {
      type: 'boolean',
      description: [
        'compare the summary and steps of every keyed case with the code and show the differences; a dry',
        'run of the whole command unless --yes is given',
      ],
    },
    yes: { type: 'boolean', description: ['with --update: apply the summary and step changes'] },
    json: { type: 'boolean' },
  },
  after: `Examples:
  casebridge sync --dry-run
  casebridge sync --update && casebridge sync --update --yes
  casebridge junit 'build/test-results/**/*.xml'
  casebridge sync e2e --write-keys && git diff e2e`,
  positionals: true,
  run: ({ values, positionals }, io) => syncCommand(values, positionals, io),
});
