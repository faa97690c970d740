import { defineCommand } from '../command-line.js';
import { junitCommand } from '../junit/index.js';

/** `casebridge junit <files...>`: reports JUnit XML through the engine (see junit/index.ts). */
export const junit = defineCommand({
  name: 'junit',
  summary: [
    [
      'junit <files|globs...>',
      'report JUnit XML written by pytest, go test (gotestsum), Maven Surefire, Jest, Vitest,',
    ],
    ['', "Playwright or Cypress, with the reporters' options; streams large files"],
  ],
  usage: 'Usage: casebridge junit [--json] [--dry-run] <files, folders or globs...>',
  about: `Reads JUnit XML as written by pytest (--junitxml), go-junit-report and gotestsum, Maven Surefire/Failsafe,
jest-junit, Vitest and Playwright (--reporter=junit) and Cypress (mocha-junit-reporter); large files are streamed.
Each <testcase> is one test: its case keys come from its name ("PROJ-12 logs in", "[PROJ-12]"), from properties
(<property name="testCase" value="PROJ-12"/>, name "tags"), or from the mapping file (casebridge.keys.json, names
"<file> > <title path>"). Failures file defects; flaky and rerun attempts count as retries; files named by
[[ATTACHMENT|path]] lines or <property name="attachment" value="path"/> are uploaded (paths relative to the XML's
folder, then to the working directory). A folder means every *.xml below it (other XML files there are skipped);
globs are relative to the working directory (quote them so the shell leaves them alone).

Options and credentials are the reporters': CASEBRIDGE_* variables (URL, TOKEN, PROJECT, MODE, TEST_PLAN, CYCLE,
...) and casebridge.config.json in the working directory.`,
  optionsTitle: 'Options:',
  options: {
    json: {
      type: 'boolean',
      description: ['print the summary as JSON on stdout (the run summary plus the files read); text goes to stderr'],
    },
    'dry-run': {
      type: 'boolean',
      description: ['send nothing; count the calls that would be made (CASEBRIDGE_DEBUG=1 lists them)'],
    },
    help: { type: 'boolean', alias: 'h', description: ['this text'] },
  },
  after: `Examples:
  CASEBRIDGE_URL=https://jira.example.com CASEBRIDGE_TOKEN=... CASEBRIDGE_PROJECT=PROJ casebridge junit report.xml
  CASEBRIDGE_MODE=cycle CASEBRIDGE_TEST_PLAN=PROJ-1 casebridge junit 'build/test-results/**/TEST-*.xml'
  pytest --junitxml=out/pytest.xml; casebridge junit --dry-run out/
  gotestsum --junitfile go.xml ./...; casebridge junit --json go.xml > casebridge-summary.json

Exit codes: 0 every result was delivered (or, with --dry-run, read); 1 something was not delivered, the service
reported a problem or the configuration has one (the summary says what; undelivered results wait in the journal
for \`casebridge replay\`); 2 wrong usage or unusable input (no file matched, a missing file, malformed XML, a file
that is not JUnit XML).`,
  positionals: true,
  run: ({ values, positionals }, io) => junitCommand(values, positionals, io),
});
