/**
 * The Playwright slot: generated suites of plain `test()`s (no browser) in files of 100 tests, run by the real
 * `playwright test` from the repository's node_modules, with the built-in JUnit reporter (baseline) or JUnit plus
 * `@casebridge/playwright` (the one line a user adds). Two timing probes wrap the real reporters: `pre` records the
 * end of the last test, `post` the moment every reporter's onEnd has returned and the process's peak RSS at exit.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, fails, keyOf, PNG_HEX, PROBE_CORE, ROOT, writeFixture } from './common.mjs';

const PER_FILE = 100;

/** The timing probe as a Playwright reporter (also the peers cell's). */
export const TIMING_REPORTER = `
import { probe } from './probe.mjs';
export default class Timing {
  constructor(options) { this.p = probe(options.probe); }
  printsToStdio() { return false; }
  onTestEnd() { this.p.testEnded(); }
  onEnd() { this.p.ended(); }
}
`;

const CONFIG = `
import { defineConfig } from '@playwright/test';

const casebridge = process.env.BENCH_CASEBRIDGE === '1';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  workers: 2,
  fullyParallel: true,
  retries: 0,
  reporter: [
    ['./timing-reporter.mjs', { probe: 'pre' }],
    ['junit', { outputFile: 'junit.xml' }],
    ...(casebridge ? [['@casebridge/playwright', JSON.parse(process.env.BENCH_CB_OPTIONS || '{}')]] : []),
    ['./timing-reporter.mjs', { probe: 'post' }],
  ],
});
`;

function specFile(from, to, variant) {
  const lines = [
    "import { expect, test } from '@playwright/test';",
    '',
    `const PNG = Buffer.from('${PNG_HEX}', 'hex');`,
    '',
  ];
  for (let i = from; i < to; i++) {
    const title = `${keyOf(i)} generated test ${i + 1}`;
    if (fails(variant, i)) {
      lines.push(
        `test('${title}', async ({}, testInfo) => {`,
        "  await testInfo.attach('screenshot', { body: PNG, contentType: 'image/png' });",
        `  expect(${i + 1}, 'generated failure').toBe(0);`,
        '});',
      );
    } else {
      lines.push(`test('${title}', () => {});`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Tests that each attach the same large file by path (Playwright copies it into each test's output folder). */
function filesSpec(count) {
  const lines = ["import { test } from '@playwright/test';", "import { join } from 'node:path';", ''];
  lines.push("const FILE = join(import.meta.dirname, '..', 'big.png');", '');
  for (let i = 0; i < count; i++) {
    lines.push(
      `test('${keyOf(i)} attaches a large file ${i + 1}', async ({}, testInfo) => {`,
      "  await testInfo.attach('screenshot', { path: FILE, contentType: 'image/png' });",
      '});',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The files of a bench Playwright project besides its tests (also the adoption cell's). */
export const playwrightProjectFiles = () => ({
  'playwright.config.mjs': CONFIG,
  'probe.mjs': PROBE_CORE,
  'timing-reporter.mjs': TIMING_REPORTER,
});

export const playwright = {
  name: 'playwright',
  label: 'Playwright',
  sizes: [100, 1000, 10_000],
  /** Null when the slot can run, else why not. */
  unavailable() {
    if (!existsSync(join(BIN, 'playwright'))) return 'node_modules/.bin/playwright is missing (npm install)';
    if (!existsSync(join(ROOT, 'packages', 'playwright', 'dist', 'index.js')))
      return 'packages/playwright/dist is missing (npm run build)';
    return null;
  },
  /** Writes the suite's fixture; returns its folder. */
  suite(size, variant) {
    const files = playwrightProjectFiles();
    for (let from = 0, n = 1; from < size; from += PER_FILE, n++) {
      files[`tests/part-${String(n).padStart(3, '0')}.spec.mjs`] = specFile(
        from,
        Math.min(size, from + PER_FILE),
        variant,
      );
    }
    return writeFixture(`bench-playwright-${size}-${variant}`, files);
  },
  /** The attachment scenario's fixture: `count` tests, each attaching its own copy of one `mb` MB file. */
  filesSuite(count, mb) {
    const dir = writeFixture(`bench-playwright-files-${mb}mb`, {
      ...playwrightProjectFiles(),
      'tests/files.spec.mjs': filesSpec(count),
    });
    // Random bytes: nothing on the way can compress them.
    writeFileSync(join(dir, 'big.png'), randomBytes(mb * 1024 * 1024));
    return dir;
  },
  command(_dir, casebridge) {
    return { command: join(BIN, 'playwright'), args: ['test'], env: { BENCH_CASEBRIDGE: casebridge ? '1' : '0' } };
  },
};
