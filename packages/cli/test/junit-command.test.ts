import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { commandList } from '../src/command-line.js';
import { junit as junitDefinition } from '../src/commands/junit.js';
import type { JunitJsonSummary } from '../src/junit/index.js';
import { runCli, text } from './support/captured.js';

/**
 * The command's argument handling and exit codes, in dry-run mode (nothing is sent, no server is needed). The
 * end-to-end tests against the emulator are in test/junit.e2e.test.ts.
 */

const ROOT = join(__dirname, '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'cb-junit-cmd-'));
cpSync(join(ROOT, 'test', 'fixtures', 'junit'), dir, { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = {
  CASEBRIDGE_URL: 'http://127.0.0.1:9',
  CASEBRIDGE_TOKEN: 't0ken-for-dry-run',
  CASEBRIDGE_PROJECT: 'DEMO',
};

async function junit(args: string[]) {
  const r = await runCli(['junit', ...args], { cwd: dir, env });
  return { code: r.code, stdout: text(r.stdout), stderr: text(r.stderr) };
}

it('a folder means every *.xml below it; --json prints the summary and the files read with their dialects', async () => {
  const r = await junit(['--dry-run', '--json', '.']);
  expect(r.code, r.stderr).toBe(0);
  const s = JSON.parse(r.stdout) as JunitJsonSummary;
  expect(s.dryRun).toBe(true);
  expect(s.files.map((f) => [f.file, f.dialect, f.testcases])).toEqual([
    ['cypress/mocha-junit.xml', 'mocha', 4],
    ['go/gotestsum-rerun.xml', 'go', 3],
    ['go/gotestsum.xml', 'go', 6],
    ['jest/jest-junit.xml', 'jest', 4],
    ['playwright/playwright-retries.xml', 'playwright', 4],
    ['playwright/playwright.xml', 'playwright', 4],
    ['pytest/pytest-xunit1.xml', 'pytest', 5],
    ['pytest/pytest-xunit2.xml', 'pytest', 5],
    ['surefire/TEST-com.example.shop.CartTest.xml', 'junit', 5],
    ['vitest/vitest.xml', 'vitest', 4],
  ]);
  expect(s.results).toBe(43);
  expect(s.calls?.length).toBeGreaterThan(0);
  expect(r.stderr, 'with --json the text summary goes to stderr').toContain('dry run: nothing was sent');
  expect(r.stdout + r.stderr).not.toContain('t0ken-for-dry-run');
});

it('in a folder, an XML file that is not JUnit (a pom.xml) is skipped; named on the command line it is an error', async () => {
  writeFileSync(join(dir, 'go', 'pom.xml'), '<project><modelVersion>4.0.0</modelVersion></project>');
  const scan = await junit(['--dry-run', 'go']);
  expect(scan.code, scan.stderr).toBe(0);
  expect(scan.stderr).toContain('skipped go/pom.xml: not JUnit XML: the root element is <project>');
  expect(scan.stdout).toContain('read 9 test case(s) from 2 file(s)');
  const named = await junit(['--dry-run', 'go/pom.xml']);
  expect(named.code).toBe(2);
  rmSync(join(dir, 'go', 'pom.xml'));
});

it('a file whose name looks like a pattern is read as the file; a glob is relative to the working directory', async () => {
  cpSync(join(dir, 'jest', 'jest-junit.xml'), join(dir, 'report[1].xml'));
  const r = await junit(['--dry-run', 'report[1].xml', 'go/*.xml']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('read 13 test case(s) from 3 file(s)');
});

it('a missing file beside good ones: the good ones are read, the exit code is 2', async () => {
  const r = await junit(['--dry-run', 'jest/jest-junit.xml', 'gone.xml']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('casebridge junit: gone.xml: no such file');
  expect(r.stdout).toContain('read 4 test case(s) from 1 file(s)');
});

it('a file cut short: the test cases before the problem are reported, the position is named, exit code 2', async () => {
  writeFileSync(
    join(dir, 'cut.xml'),
    '<testsuite name="s">\n<testcase name="DEMO-2 a"/>\n<testcase name="DEMO-3 b"/>\n<testcase name="DEMO-4',
  );
  const r = await junit(['--dry-run', 'cut.xml']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/malformed XML: cut\.xml:4:\d+: /);
  expect(r.stderr).toContain('the 2 test case(s) read before the problem are reported');
  expect(r.stdout).toMatch(/casebridge \(dry run: nothing was sent\): 2 test result\(s\)/);
});

it("junit's rows fit the top-level help: two lines, the command in the first column", () => {
  const lines = commandList([junitDefinition]).split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/^ {2}junit <files\|globs\.\.\.> {5}\S/);
  expect(lines[1]?.startsWith(' '.repeat(29))).toBe(true);
  expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(120);
});
