/**
 * The Vitest slot: generated suites of plain `test()`s in files of 100, run by the real `vitest run` with the built-in
 * JUnit reporter (baseline) or `reporters: ['junit', ['@casebridge/vitest', {}]]`. A failing test attaches its PNG
 * with the casebridge runtime API (`attach`), which does nothing without the reporter. Vitest calls the reporters'
 * end hooks at once, not one after the other, so "+end hook" is not meaningful here; drain (parent) is.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, fails, keyOf, PNG_HEX, PROBE_CORE, ROOT, writeFixture } from './common.mjs';

const PER_FILE = 100;

const TIMING_REPORTER = `
import { probe } from './probe.mjs';
export default class Timing {
  constructor(name) { this.p = probe(name); }
  onTestCaseResult() { this.p.testEnded(); }
  onTestRunEnd() { this.p.ended(); }
}
`;

const CONFIG = `
import { defineConfig } from 'vitest/config';
import Timing from './timing-reporter.mjs';

const casebridge = process.env.BENCH_CASEBRIDGE === '1';
// The reporter as installed in this project (see writeFixture). Named '@casebridge/vitest', Vitest resolves it from
// its own location, to the repository's workspace link, whose real path is outside node_modules: Vite would then
// transform the reporter and the core instead of letting Node load them, as it does for a user.
const reporter = new URL('./node_modules/@casebridge/vitest/dist/index.js', import.meta.url).pathname;
export default defineConfig({
  test: {
    include: ['tests/**/*.spec.mjs'],
    reporters: [
      new Timing('pre'),
      ['junit', { outputFile: 'junit.xml' }],
      ...(casebridge ? [[reporter, JSON.parse(process.env.BENCH_CB_OPTIONS || '{}')]] : []),
      new Timing('post'),
    ],
  },
});
`;

function specFile(from, to, variant) {
  const lines = [
    "import { expect, test } from 'vitest';",
    "import { attach } from '@casebridge/vitest';",
    '',
    `const PNG = Buffer.from('${PNG_HEX}', 'hex');`,
    '',
  ];
  for (let i = from; i < to; i++) {
    const title = `${keyOf(i)} generated test ${i + 1}`;
    if (fails(variant, i)) {
      lines.push(
        `test('${title}', () => {`,
        "  attach('screenshot', { body: PNG, contentType: 'image/png' });",
        `  expect(${i + 1}, 'generated failure').toBe(0);`,
        '});',
      );
    } else {
      lines.push(`test('${title}', () => {});`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The files of a Vitest project (config and probes), for a suite written by another cell (adoption.mjs). */
export function vitestProjectFiles() {
  return { 'vitest.config.mjs': CONFIG, 'probe.mjs': PROBE_CORE, 'timing-reporter.mjs': TIMING_REPORTER };
}

export const vitest = {
  name: 'vitest',
  label: 'Vitest',
  sizes: [100, 1000, 10_000],
  unavailable() {
    if (!existsSync(join(BIN, 'vitest'))) return 'node_modules/.bin/vitest is missing (npm install)';
    if (!existsSync(join(ROOT, 'packages', 'vitest', 'dist', 'index.js')))
      return 'packages/vitest/dist is missing (npm run build)';
    return null;
  },
  suite(size, variant) {
    const files = vitestProjectFiles();
    for (let from = 0, n = 1; from < size; from += PER_FILE, n++) {
      files[`tests/part-${String(n).padStart(3, '0')}.spec.mjs`] = specFile(
        from,
        Math.min(size, from + PER_FILE),
        variant,
      );
    }
    return writeFixture(`bench-vitest-${size}-${variant}`, files);
  },
  command(_dir, casebridge) {
    return { command: join(BIN, 'vitest'), args: ['run'], env: { BENCH_CASEBRIDGE: casebridge ? '1' : '0' } };
  },
};
