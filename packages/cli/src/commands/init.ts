import { defineCommand } from '../command-line.js';
import { initCommand } from '../init/index.js';

/** `casebridge init [dir]`: sets a project up to report (see init/index.ts). */
export const init = defineCommand({
  name: 'init',
  summary: [
    ['init [dir] [options]', 'set a project up: add the reporter to its Playwright, Vitest and Jest configs, write'],
    ['', 'casebridge.config.json, print what to install and the command to run'],
  ],
  usage: `Usage: casebridge init [dir] [--url URL] [--project KEY] [--plan KEY] [--runner playwright|vitest|jest]
                       [--dry-run] [--yes]`,
  about: `Sets up the project in dir (default: the current folder) to report its test results:
  1. finds its runners: playwright.config.*, vitest.config.* (or vite.config.* with a test block), jest.config.*
     or a "jest" key in package.json, and @playwright/test, vitest or jest in package.json; each one found is set up;
  2. adds casebridge's reporter to each runner's config and keeps the reporters it has (Playwright: the reporter
     option, Vitest: test.reporters, Jest: reporters). A config it cannot edit safely (a computed reporter, a config
     made by a function) is left as it is and the lines to add are printed. A runner without a config file gets one
     (Jest: a "jest" key in package.json), unless a subfolder has one: then init names the folder to run it in;
  3. writes url, projectKey and testPlan (with mode "cycle") to casebridge.config.json, merged into the one there
     (a casebridge.config.mjs/.js/.ts is not edited: the options to set are printed); never a token, user or
     password: the reporters read those from CASEBRIDGE_TOKEN (or CASEBRIDGE_USER and CASEBRIDGE_PASSWORD), which
     belong in the CI's secrets;
  4. adds .casebridge/ (where undelivered results wait) to .gitignore;
  5. prints the install command for a reporter package that is not installed (npm, yarn or pnpm, by the lockfile);
     it installs nothing itself;
  6. runs the doctor when CASEBRIDGE_TOKEN or CASEBRIDGE_USER is set;
  7. prints the command that runs the tests.
Every change is printed as a diff on stdout. Running it again changes nothing.`,
  optionsTitle: 'Options:',
  options: {
    url: {
      type: 'string',
      value: 'URL',
      description: ['the Jira base URL, e.g. https://jira.example.com'],
      env: 'CASEBRIDGE_URL',
    },
    project: {
      type: 'string',
      value: 'KEY',
      description: ['the Jira project of the test cases, e.g. PROJ'],
      env: 'CASEBRIDGE_PROJECT',
    },
    plan: {
      type: 'string',
      value: 'KEY',
      description: [
        'the test plan, e.g. PROJ-1: each run goes into a cycle of it; without a plan the results are',
        'reported as ad hoc runs',
      ],
      env: 'CASEBRIDGE_TEST_PLAN',
    },
    runner: {
      type: 'string',
      value: 'R',
      description: ['set up only this runner (playwright, vitest or jest), also when it was not detected'],
    },
    'dry-run': { type: 'boolean', description: ['change nothing; print the changes it would make'] },
    yes: {
      type: 'boolean',
      alias: 'y',
      description: ['accepted for scripts and CI; init never asks anything, with or without it'],
    },
    help: { type: 'boolean', alias: 'h', description: ['this text'] },
  },
  after: `Values given as options replace those in casebridge.config.json; values from CASEBRIDGE_* only fill the ones it
lacks. Other options in the file are kept.

Examples:
  npx @casebridge/cli init --url https://jira.example.com --project PROJ --plan PROJ-1
  npx @casebridge/cli init e2e --runner playwright --dry-run

Exit codes: 0 set up; 1 something could not be done (a config it could not edit: the lines to add are printed; no
runner found; a doctor check failed); 2 wrong usage or input (an option's value, a folder that does not exist).`,
  positionals: true,
  // `init` is usually run through npx before the CLI is installed.
  helpHint: 'npx @casebridge/cli init --help',
  run: ({ values, positionals }, io) => initCommand(values, positionals, io),
});
