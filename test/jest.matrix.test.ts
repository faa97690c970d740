import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matrixProject, writeFiles } from './support/matrix.js';
import { run } from './support/runner.js';
import { cycleState } from './support/state.js';

/**
 * The Jest version matrix: Jest 29.7 with ts-jest (a TypeScript test file, type-checked against our declarations)
 * and Jest 30.5 with babel-jest (ES module syntax compiled to CommonJS), each installed from the registry with our
 * packed tarballs, run for real against the emulator. The runtime API is imported through each project's
 * transformer, as users do.
 */

const LOG = 'user demo signed in\n';
const LOG_SHA = createHash('sha256').update(LOG).digest('hex');

/** The test file: the same for both, with or without type annotations. */
const spec = (ts: boolean) => `
import { attach, caseKey, step } from '@casebridge/jest';

jest.retryTimes(1);

test('DEMO-2 logs in', async () => {
  await step('Open the login page', async () => {});
  await step('Enter user name and password', async () => {});
  await step('Press "Log in"', async () => {
    attach('login.log', { body: ${JSON.stringify(LOG)}, contentType: 'text/plain' });
  });
});

let tries${ts ? ': number' : ''} = 0;
test('logs out', async () => {
  caseKey('DEMO-3');
  tries += 1;
  await step('Open the user menu', async () => {});
  await step('Choose "Log out"', async () => {
    expect(tries).toBe(2);
  });
});

describe('checkout', () => {
  test('[DEMO-5] pays with the saved card', async () => {
    const total${ts ? ': number' : ''} = await step('Add a product to the cart', async () => 12);
    await step('Open checkout', async () => {
      expect(total).toBe(13);
    });
  });
});
`;

const reporter = (name: string) => [name, { attachments: { others: true } }];

interface Version {
  name: string;
  jest: string;
  dependencies: Record<string, string>;
  config: Record<string, unknown>;
  files: Record<string, string>;
}

const VERSIONS: Version[] = [
  {
    name: 'jest-29-ts',
    jest: '29.7.0',
    dependencies: { jest: '29.7.0', 'ts-jest': '29.4.15', typescript: '5.9.3', '@types/jest': '29.5.14' },
    config: {
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': 'ts-jest' },
      testMatch: ['**/tests/**/*.test.ts'],
    },
    files: {
      'tests/shop.test.ts': spec(true),
      'tsconfig.json': JSON.stringify({
        compilerOptions: { module: 'commonjs', target: 'es2020', strict: true, types: ['jest'], skipLibCheck: true },
      }),
    },
  },
  {
    name: 'jest-30-babel',
    jest: '30.5.2',
    dependencies: { jest: '30.5.2', '@babel/core': '7.29.13', '@babel/preset-env': '7.29.14' },
    config: { testEnvironment: 'node', testMatch: ['**/tests/**/*.test.js'] },
    files: {
      'tests/shop.test.js': spec(false),
      'babel.config.js': `module.exports = { presets: [['@babel/preset-env', { targets: { node: 'current' } }]] };\n`,
    },
  },
];

let emu: RunningEmulator;
/** Project folder by version name: both installs run at once (a cold matrix is mostly npm's waiting). */
const dirs = new Map<string, string>();
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  await Promise.all(
    VERSIONS.map(async (v) => {
      const dir = await matrixProject({
        name: `matrix-${v.name}`,
        dependencies: v.dependencies,
        casebridge: ['jest'],
        packageJson: { type: 'commonjs' },
      });
      writeFiles(dir, {
        ...v.files,
        'jest.config.js': `module.exports = ${JSON.stringify(
          {
            ...v.config,
            cacheDirectory: '<rootDir>/.jest-cache',
            reporters: ['default', reporter('@casebridge/jest')],
          },
          null,
          2,
        )};\n`,
      });
      dirs.set(v.name, dir);
    }),
  );
}, 600_000);
afterAll(async () => {
  await emu?.close();
});

describe.each(VERSIONS)('Jest $jest ($name)', (v) => {
  it('reports statuses, steps, an attachment, caseKey, a flaky retry and a defect into a cycle', async () => {
    const cycle = `Matrix ${v.name}`;
    const dir = dirs.get(v.name) as string;
    const out = await run(join(dir, 'node_modules', '.bin', 'jest'), ['--ci'], dir, {
      CASEBRIDGE_URL: emu.url,
      CASEBRIDGE_TOKEN: 'casebridge-dev-token',
      CASEBRIDGE_PROJECT: 'DEMO',
      CASEBRIDGE_MODE: 'cycle',
      CASEBRIDGE_TEST_PLAN: 'DEMO-1',
      CASEBRIDGE_CYCLE: cycle,
      CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
    });
    expect(out.code, out.stderr).toBe(1);
    expect(out.stderr).toMatch(new RegExp(`cycle "${cycle}"`));
    const by = Object.fromEntries(cycleState(emu, cycle).map((r) => [r.key, r]));
    expect(by['DEMO-2']).toMatchObject({ status: 'Passed', steps: ['Passed', 'Passed', 'Passed'], files: [LOG_SHA] });
    expect(by['DEMO-3']).toMatchObject({ status: 'Passed', steps: ['Passed', 'Passed'], comment: true });
    expect(by['DEMO-5']).toMatchObject({ status: 'Failed', steps: ['Passed', 'Failed', 'Not Tested'], comment: true });
    expect(by['DEMO-5']?.bugs).toHaveLength(1);
  });
});
