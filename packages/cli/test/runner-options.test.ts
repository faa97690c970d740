import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { INSTANCE_NOT_READABLE, oneLine, readRunnerOptions } from '../src/runner-options.js';

/**
 * The real runners (Playwright, Vitest and Jest installed at the repository's root) read small fixture projects
 * under test/.fixtures/ (git-ignored), from which they and our reporter packages resolve as from a user's project.
 */

const ROOT = join(__dirname, '..', '..', '..');

function fixture(name: string, files: Record<string, string>): string {
  const dir = join(ROOT, 'test', '.fixtures', `runner-options-${name}`);
  rmSync(dir, { recursive: true, force: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Ours without what Vitest sets for its workers and without CASEBRIDGE_*, as a user's shell has it. */
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(VITEST|CASEBRIDGE_|TEST$|CI$|NODE_ENV$)/.test(k)),
);

const TESTS = {
  'tests/a.spec.ts': `import { test } from '@playwright/test';\ntest('a', () => {});\n`,
  'tests/a.test.ts': `import { test } from 'vitest';\ntest('a', () => {});\n`,
  'tests/a.test.js': `test('a', () => {});\n`,
};

const PW_TEST_MATCH = `testMatch: '**/*.spec.ts'`;
const VT_INCLUDE = `include: ['tests/**/*.test.ts']`;

it('reads the options of a reporter tuple from TypeScript Playwright and Vitest configs and a Jest config', async () => {
  const dir = fixture('tuples', {
    ...TESTS,
    'playwright.config.ts': `import { defineConfig } from '@playwright/test';
const projectKey: string = 'PROJ';
export default defineConfig({
  testDir: 'tests',
  ${PW_TEST_MATCH},
  reporter: [
    ['list'],
    ['@casebridge/playwright', { url: 'https://jira.example.com', projectKey, testPlan: 'PROJ-1', token: 'pw-t0ken', grep: /x/, fn: () => 1 }],
  ],
});
`,
    'vitest.config.ts': `import { defineConfig } from 'vitest/config';
const testPlan: string = 'PROJ-2';
export default defineConfig({
  test: {
    ${VT_INCLUDE},
    reporters: ['default', ['@casebridge/vitest', { url: 'https://jira.example.com', projectKey: 'PROJ', testPlan }]],
  },
});
`,
    'jest.config.js': `export default {
  testMatch: ['**/tests/**/*.test.js'],
  reporters: ['default', ['@casebridge/jest', { url: 'https://jira.example.com', projectKey: 'PROJ', testPlan: 'PROJ-3' }]],
};
`,
  });
  const r = await readRunnerOptions(dir, env);
  expect(r).toEqual([
    {
      runner: 'playwright',
      configFile: join(dir, 'playwright.config.ts'),
      // The RegExp and the function do not survive JSON; the token stays, in memory.
      options: { url: 'https://jira.example.com', projectKey: 'PROJ', testPlan: 'PROJ-1', token: 'pw-t0ken' },
    },
    {
      runner: 'vitest',
      configFile: join(dir, 'vitest.config.ts'),
      options: { url: 'https://jira.example.com', projectKey: 'PROJ', testPlan: 'PROJ-2' },
    },
    {
      runner: 'jest',
      configFile: join(dir, 'jest.config.js'),
      options: { url: 'https://jira.example.com', projectKey: 'PROJ', testPlan: 'PROJ-3' },
    },
  ]);
});

it('reads a Vitest reporter instance, a string reporter in Playwright and a jest key in package.json', async () => {
  const dir = fixture('instance', {
    ...TESTS,
    // CommonJS here (package.json has no type): Playwright requires the transformed config.
    'playwright.config.ts': `const name: string = '@casebridge/playwright';\nexport default { testDir: 'tests', ${PW_TEST_MATCH}, reporter: name };\n`,
    'vite.config.mts': `import CasebridgeReporter from '@casebridge/vitest';
import { defineConfig } from 'vitest/config';
export default defineConfig({
  test: { ${VT_INCLUDE}, reporters: ['default', new CasebridgeReporter({ projectKey: 'INST', testPlan: 'INST-1' })] },
});
`,
    'package.json': JSON.stringify({
      name: 'runner-options-instance',
      jest: { testMatch: ['**/tests/**/*.test.js'], reporters: ['@casebridge/jest'] },
    }),
  });
  expect(await readRunnerOptions(dir, env)).toEqual([
    { runner: 'playwright', configFile: join(dir, 'playwright.config.ts'), options: {} },
    // Read from the instance's \`options\` field.
    { runner: 'vitest', configFile: join(dir, 'vite.config.mts'), options: { projectKey: 'INST', testPlan: 'INST-1' } },
    { runner: 'jest', configFile: join(dir, 'package.json'), options: {} },
  ]);
});

it('leaves out configs without a casebridge reporter, also one that names casebridge only in a comment', async () => {
  const dir = fixture('none', {
    ...TESTS,
    'playwright.config.ts': `export default { testDir: 'tests', reporter: [['list']] };\n`,
    'vitest.config.ts': `// Reporting: casebridge.config.json (CI only).\nexport default { test: { ${VT_INCLUDE} } };\n`,
    'jest.config.js': `export default { reporters: ['default'] };\n`,
  });
  expect(await readRunnerOptions(dir, env)).toEqual([]);
});

it('a config that does not load gives a one-line problem per runner, without the source around the error', async () => {
  const secret = `token: 'do-not-print-me'`;
  const dir = fixture('broken', {
    ...TESTS,
    'playwright.config.ts': `export default { testDir: 'tests', reporter: [['@casebridge/playwright', { ${secret} ,, }]] };\n`,
    'vitest.config.ts': `export default { test: { reporters: [['@casebridge/vitest', { ${secret} ,, }]] } };\n`,
    'jest.config.js': `export default { reporters: [['@casebridge/jest', { ${secret} ,, }]] };\n`,
  });
  const r = await readRunnerOptions(dir, env);
  expect(r.map((x) => [x.runner, x.options])).toEqual([
    ['playwright', undefined],
    ['vitest', undefined],
    ['jest', undefined],
  ]);
  for (const x of r) {
    expect(x.problem).toMatch(/^could not read (playwright|vitest|jest)\.config\.[jt]s: .*(SyntaxError|PARSE_ERROR)/);
    expect(x.problem).not.toContain('\n');
    expect(x.problem).not.toContain('do-not-print-me');
  }
});

it('a TypeScript Jest config without ts-node, a runner not installed, a config that hangs and an unreadable instance give problems', async () => {
  const ts = fixture('jest-ts', {
    ...TESTS,
    'jest.config.ts': `const plan: string = 'PROJ-1';\nexport default { reporters: [['@casebridge/jest', { testPlan: plan }]] };\n`,
  });
  const hangs = fixture('hangs', {
    ...TESTS,
    'jest.config.js': `setInterval(() => {}, 1000);\nawait new Promise(() => {});\nexport default { reporters: ['@casebridge/jest'] };\n`,
  });
  const other = fixture('instance-without-options', {
    ...TESTS,
    'vitest.config.ts': `class CasebridgeLikeReporter {\n  constructor(o) { this.settings = o; }\n}\nexport default { test: { ${VT_INCLUDE}, reporters: [new CasebridgeLikeReporter({ projectKey: 'X' })] } };\n`,
  });
  // Outside the repository nothing resolves: no runner is installed there.
  const bare = mkdtempSync(join(tmpdir(), 'cb-runner-options-'));
  writeFileSync(join(bare, 'playwright.config.ts'), `export default { reporter: [['@casebridge/playwright']] };\n`);

  const [a, b, c, d] = await Promise.all([
    readRunnerOptions(ts, env),
    readRunnerOptions(hangs, env, { timeoutMs: 2000 }),
    readRunnerOptions(bare, env).finally(() => rmSync(bare, { recursive: true, force: true })),
    readRunnerOptions(other, env),
  ]);
  expect(a).toEqual([{ runner: 'jest', configFile: join(ts, 'jest.config.ts'), problem: expect.any(String) }]);
  expect(a[0]?.problem).toMatch(/^could not read jest\.config\.ts: .*'ts-node' is required/);
  expect(b).toEqual([
    {
      runner: 'jest',
      configFile: join(hangs, 'jest.config.js'),
      problem:
        'could not read jest.config.js: jest --showConfig did not finish in 2 s (does the config wait on something?)',
    },
  ]);
  expect(c).toEqual([
    {
      runner: 'playwright',
      configFile: join(bare, 'playwright.config.ts'),
      problem: `could not read playwright.config.ts: @playwright/test is not installed in ${bare}: install the project's dependencies first`,
    },
  ]);
  expect(d).toEqual([
    { runner: 'vitest', configFile: join(other, 'vitest.config.ts'), problem: INSTANCE_NOT_READABLE },
  ]);
});

it('oneLine keeps the error lines of a message and drops code frames, stacks and colours', () => {
  expect(
    oneLine(
      'Build failed with 1 error:\n\n\u001b[31m[PARSE_ERROR] \u001b[0mUnexpected token\n   ╭─[ vitest.config.ts:7:13 ]\n 7 │ token: "x",,\n',
    ),
  ).toBe('Build failed with 1 error; [PARSE_ERROR] Unexpected token');
  expect(
    oneLine(
      "Error: Jest: Failed to parse the TypeScript config file /p/jest.config.ts\n  Error: Jest: 'ts-node' is required\n    at readConfig (x.js:1:1)\n",
    ),
  ).toBe("Jest: Failed to parse the TypeScript config file /p/jest.config.ts; Jest: 'ts-node' is required");
  expect(
    oneLine(
      '● Reporter Validation Error:\n\n  Unexpected value for Reporter Configuration\n  Reporter configuration:\n  ["x", { token: "t" }]\n',
    ),
  ).toBe('Reporter Validation Error; Unexpected value for Reporter Configuration');
  expect(oneLine('\nsomething odd\n')).toBe('something odd');
});
