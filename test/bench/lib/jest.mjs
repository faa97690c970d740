/**
 * The Jest slot (100, 1,000 and 10,000 tests, 100 a file, each file using the runtime API's `attach`): a CommonJS
 * fixture run by the real `jest --ci`, in band on a 2-core machine. Jest has no built-in JUnit reporter
 * (and jest-junit is not a dependency), so the baseline is Jest's own `summary` reporter; casebridge is the one line
 * `['@casebridge/jest', {}]`. Jest calls the reporters' end hooks one after the other, like Playwright.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, fails, keyOf, PNG_HEX, probeSource, ROOT, writeFixture } from './common.mjs';

const PER_FILE = 100;

const TIMING_REPORTER = `
const { probe } = require('./probe.cjs');
class Timing {
  constructor(_globalConfig, options) { this.p = probe(options.probe); }
  onTestCaseResult() { this.p.testEnded(); }
  onRunComplete() { this.p.ended(); }
  getLastError() { return undefined; }
}
module.exports = Timing;
`;

const CONFIG = `
const casebridge = process.env.BENCH_CASEBRIDGE === '1';
module.exports = {
  testEnvironment: 'node',
  cacheDirectory: '<rootDir>/.jest-cache',
  testMatch: ['<rootDir>/tests/**/*.test.js'],
  reporters: [
    ['<rootDir>/timing-reporter.cjs', { probe: 'pre' }],
    'summary',
    ...(casebridge ? [['@casebridge/jest', JSON.parse(process.env.BENCH_CB_OPTIONS || '{}')]] : []),
    ['<rootDir>/timing-reporter.cjs', { probe: 'post' }],
  ],
};
`;

/**
 * The files of a Jest fixture besides its tests (`tests/<name>.test.js`): package.json, the config (timing probes
 * first and last, casebridge when BENCH_CASEBRIDGE=1) and the probe. Other cells (lib/adoption.mjs) add their own
 * tests to it.
 */
export function jestProjectFiles() {
  return {
    'package.json': `${JSON.stringify({ name: 'casebridge-bench-jest', private: true, type: 'commonjs' })}\n`,
    'jest.config.cjs': CONFIG,
    'probe.cjs': probeSource('cjs'),
    'timing-reporter.cjs': TIMING_REPORTER,
  };
}

function testFile(from, to, variant) {
  const lines = [
    "const { attach } = require('@casebridge/jest');",
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
        `  expect(${i + 1}).toBe(0);`,
        '});',
      );
    } else {
      lines.push(`test('${title}', () => {});`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export const jest = {
  name: 'jest',
  label: 'Jest',
  sizes: [100, 1000, 10_000],
  unavailable() {
    if (!existsSync(join(BIN, 'jest'))) return 'node_modules/.bin/jest is missing (npm install)';
    if (!existsSync(join(ROOT, 'packages', 'jest', 'dist', 'index.cjs')))
      return 'packages/jest/dist is missing (npm run build)';
    return null;
  },
  /** The keyed suite in `test/.fixtures/<name>` (default `bench-jest-<size>-<variant>`). */
  suite(size, variant, name = `bench-jest-${size}-${variant}`) {
    const files = jestProjectFiles();
    for (let from = 0, n = 1; from < size; from += PER_FILE, n++) {
      files[`tests/part-${String(n).padStart(3, '0')}.test.js`] = testFile(
        from,
        Math.min(size, from + PER_FILE),
        variant,
      );
    }
    return writeFixture(name, files);
  },
  command(_dir, casebridge) {
    return {
      command: join(BIN, 'jest'),
      args: ['--ci', '--config', 'jest.config.cjs'],
      env: { BENCH_CASEBRIDGE: casebridge ? '1' : '0' },
    };
  },
};
