import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  cpSync,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunSummary } from '@casebridge/core';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../packages/cli/src/main.js';
import { ROOT } from './support/runner.js';
import { adhocState, cycleState, defects } from './support/state.js';

/**
 * `casebridge junit` end to end: the command (called in-process, as cli.ts calls it) reads the committed JUnit
 * samples of test/fixtures/junit and reports them to the real emulator over real HTTP.
 */

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});
beforeEach(async () => {
  await emu.reset();
});

/** A project folder holding a copy of the samples (so the journal and mapping file land in a temp folder). */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cb-junit-e2e-'));
  cpSync(join(ROOT, 'test', 'fixtures', 'junit'), dir, { recursive: true });
  return dir;
}

/** A stream for `main` that keeps what it is given as lines (each write is one line and its newline). */
function lines(into: string[]): { write: (text: string) => void } {
  return { write: (text) => void into.push(text.replace(/\n$/, '')) };
}

async function junit(cwd: string, args: string[], extra: Record<string, string> = {}, url = emu.url) {
  const out: string[] = [];
  const err: string[] = [];
  const env = {
    CASEBRIDGE_URL: url,
    CASEBRIDGE_TOKEN: 'casebridge-dev-token',
    CASEBRIDGE_PROJECT: 'DEMO',
    CASEBRIDGE_FLUSH_TIMEOUT_MS: '20000',
    ...extra,
  };
  const code = await main(['junit', ...args], { stdout: lines(out), stderr: lines(err), cwd, env });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** A generated file: `cases` test cases keyed DEMO-2..DEMO-7 in turn, one in 50 failing, ~`bytes` in all. */
async function largeJunit(file: string, cases: number, bytes: number): Promise<void> {
  const out = createWriteStream(file);
  const log = 'a line of output\n'.repeat(Math.ceil(bytes / cases / 17));
  const write = async (s: string) => {
    if (!out.write(s)) await once(out, 'drain');
  };
  await write('<testsuites>\n<testsuite name="large">\n');
  for (let i = 0; i < cases; i++) {
    const failure = i % 50 === 0 ? `<failure message="boom ${i}">at Large.java:${i}</failure>` : '';
    await write(`<testcase classname="com.example.Large" name="DEMO-${(i % 6) + 2} case ${i}">${failure}`);
    await write(`<system-out>${log}</system-out></testcase>\n`);
  }
  await write('</testsuite>\n</testsuites>\n');
  out.end();
  await once(out, 'finish');
}

const cycle = (name: string) => ({ CASEBRIDGE_MODE: 'cycle', CASEBRIDGE_TEST_PLAN: 'DEMO-1', CASEBRIDGE_CYCLE: name });
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('casebridge junit, cycle mode', () => {
  it('reports pytest results: statuses, a defect for the failure, the screenshot byte for byte, unmapped tests listed; a second run adds nothing', async () => {
    const dir = project();
    const first = await junit(dir, ['--json', 'pytest/pytest-xunit1.xml'], cycle('CI junit'));
    expect(first.code, first.stderr).toBe(0);
    const summary = JSON.parse(first.stdout) as RunSummary & { files: Array<{ file: string; testcases: number }> };
    expect(summary.files).toEqual([expect.objectContaining({ file: 'pytest/pytest-xunit1.xml', testcases: 5 })]);
    expect(summary.unmapped).toEqual([
      'test_shop.py > test_uses_broken_fixture',
      'test_shop.py > test_skipped',
      'test_shop.py > test_unmapped_passes',
    ]);
    expect(summary.defects.created).toHaveLength(1);
    const png = sha256(join(dir, 'pytest', 'screenshots', 'total.png'));
    const state = cycleState(emu, 'CI junit');
    expect(state).toEqual([
      { key: 'DEMO-2', status: 'Passed', steps: expect.any(Array), comment: false, files: [], bugs: [] },
      {
        key: 'DEMO-5',
        status: 'Failed',
        steps: expect.any(Array),
        comment: true,
        files: [png],
        bugs: [expect.stringContaining('total is wrong')],
      },
    ]);
    const runs = emu.store.runs.all().length;

    const second = await junit(dir, ['pytest/pytest-xunit1.xml'], cycle('CI junit'));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/defects linked: DEMO-\d+/);
    // Same runs, statuses and defect. (The engine uploads the screenshot to the run again: see the report.)
    const without = (s: typeof state) => s.map(({ files, ...r }) => ({ ...r, files: [...new Set(files)] }));
    expect(without(cycleState(emu, 'CI junit'))).toEqual(without(state));
    expect(emu.store.runs.all().length).toBe(runs);
    expect(defects(emu)).toHaveLength(1);
  });

  it('reads several dialects through a glob, a folder and a file into one cycle', async () => {
    const dir = project();
    const out = await junit(dir, ['cypress/*.xml', 'jest', 'go/gotestsum.xml'], cycle('CI mixed'));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain('read 14 test case(s) from 3 file(s)');
    expect(cycleState(emu, 'CI mixed').map((r) => [r.key, r.status])).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
      ['DEMO-5', 'Failed'],
      ['DEMO-7', 'Passed'],
    ]);
  });
});

describe('casebridge junit, ad hoc mode', () => {
  it('Surefire: flaky passes with a comment, failed after reruns files a defect', async () => {
    const dir = project();
    const out = await junit(dir, ['surefire/TEST-com.example.shop.CartTest.xml']);
    expect(out.code, out.stderr).toBe(0);
    expect(adhocState(emu).map((r) => [r.key, r.status, r.comment, r.bugs.length])).toEqual([
      ['DEMO-2', 'Passed', false, 0],
      ['DEMO-5', 'Failed', true, 1],
      ['DEMO-7', 'Passed', true, 0],
    ]);
    expect(out.stdout).toMatch(/2 test\(s\) without a case key/);
  });

  it('uploads [[ATTACHMENT|...]] files of Vitest output byte for byte', async () => {
    const dir = project();
    const out = await junit(dir, ['vitest/vitest.xml']);
    expect(out.code, out.stderr).toBe(0);
    const failed = adhocState(emu).find((r) => r.key === 'DEMO-5');
    expect(failed?.files).toEqual([sha256(join(dir, 'vitest', 'attachments', 'total.png'))]);
  });
});

describe('casebridge junit, configuration', () => {
  it('reads casebridge.config.json like the reporters: Playwright XML, its screenshots and (others: true) its other files', async () => {
    const dir = project();
    const config = { url: emu.url, token: 'casebridge-dev-token', projectKey: 'DEMO', attachments: { others: true } };
    writeFileSync(join(dir, 'casebridge.config.json'), JSON.stringify(config));
    const out: string[] = [];
    const code = await main(['junit', 'playwright/playwright.xml'], {
      stdout: lines(out),
      stderr: lines(out),
      cwd: dir,
      env: {},
    });
    expect(code, out.join('\n')).toBe(0);
    const total = adhocState(emu).find((r) => r.key === 'DEMO-5');
    // Both attempts' screenshot and evidence (the same picture), and both error-context.md files.
    expect(total?.files).toHaveLength(6);
    expect(total?.status).toBe('Failed');
  });
});

describe('casebridge junit, problems', () => {
  it('service down: the results wait in the journal, exit code 1; the next run delivers them', async () => {
    const dir = project();
    const down = await junit(
      dir,
      ['pytest/pytest-xunit2.xml'],
      { CASEBRIDGE_FLUSH_TIMEOUT_MS: '3000' },
      'http://127.0.0.1:9',
    );
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/2 result\(s\) not delivered: kept in/);
    expect(readdirSync(join(dir, '.casebridge', 'journal')).filter((f) => f.endsWith('.json'))).toHaveLength(2);
    const again = await junit(dir, ['jest/jest-junit.xml']);
    expect(again.code, again.stderr).toBe(0);
    expect(adhocState(emu).map((r) => r.key)).toEqual(expect.arrayContaining(['DEMO-2', 'DEMO-5', 'DEMO-7']));
  });

  it('usage and input errors exit 2 with a clear line; --help has examples; --dry-run sends nothing', async () => {
    const dir = project();
    writeFileSync(join(dir, 'cut.xml'), '<testsuites>\n<testsuite name="s">\n<testcase name="DEMO-2 a">');
    writeFileSync(join(dir, 'page.xml'), '<html></html>');
    const cut = await junit(dir, ['cut.xml']);
    expect(cut.code).toBe(2);
    expect(cut.stderr).toMatch(/malformed XML: cut\.xml:3:\d+: unclosed tag: testcase.*expected <\/testcase>/);
    expect(await junit(dir, ['page.xml'])).toMatchObject({ code: 2, stderr: expect.stringContaining('not JUnit XML') });
    expect(await junit(dir, ['nope.xml'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('nope.xml: no such file'),
    });
    expect(await junit(dir, ['**/*.junit'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no file matches'),
    });
    expect(await junit(dir, [])).toMatchObject({ code: 2 });
    expect(await junit(dir, ['--frobnicate'])).toMatchObject({ code: 2 });
    const off = await junit(dir, ['jest/jest-junit.xml'], { CASEBRIDGE_PROJECT: 'lowercase' });
    expect(off.code).toBe(1);
    expect(off.stdout).toMatch(/reporting is off[\s\S]*projectKey/);
    expect(off.stdout).toContain('read 4 test case(s) from 1 file(s)');
    const help = await junit(dir, ['--help']);
    expect(help.stdout).toMatch(/Examples:[\s\S]*casebridge junit/);
    const dry = await junit(dir, ['--dry-run', 'pytest/pytest-xunit1.xml']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('dry run: nothing was sent');
    expect(emu.store.runs.all().filter((r) => r.status !== 'Not Tested')).toEqual([]);
    expect(existsSync(join(dir, '.casebridge', 'journal'))).toBe(false);
  });

  it('a large file (20 MB, 5,000 cases) in cycle mode: all delivered in bulk', async () => {
    const dir = project();
    await largeJunit(join(dir, 'large.xml'), 5_000, 20 * 1024 * 1024);
    expect(statSync(join(dir, 'large.xml')).size).toBeGreaterThan(20_000_000);
    const started = Date.now();
    const out = await junit(dir, ['--json', 'large.xml'], cycle('CI large'));
    expect(out.code, out.stderr).toBe(0);
    const summary = JSON.parse(out.stdout) as RunSummary;
    expect(summary).toMatchObject({ results: 5_000, delivered: 5_000, journaled: 0, problems: [] });
    expect(summary.byStatus).toEqual({ passed: 4_900, failed: 100 });
    expect(cycleState(emu, 'CI large').map((r) => r.key)).toEqual([
      'DEMO-2',
      'DEMO-3',
      'DEMO-4',
      'DEMO-5',
      'DEMO-6',
      'DEMO-7',
    ]);
    console.log(`large JUnit: 5,000 cases reported in ${Date.now() - started} ms`);
  }, 120_000);
});
