import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, describe, expect, it } from 'vitest';
import { helpOf } from '../src/command-line.js';
import { init as initDefinition } from '../src/commands/init.js';
import { unifiedDiff } from '../src/init/index.js';
import { runCli, text } from './support/captured.js';

/**
 * `casebridge init` on small projects written to temporary folders: the config edits (as text, formatting kept),
 * casebridge.config.json, .gitignore, the hints, the exit codes. The last tests load the edited configs with the
 * real Playwright, Vitest and Jest of the repository, and run the doctor against the emulator.
 */

const ROOT = join(__dirname, '..', '..', '..');
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function project(files: Record<string, string>, parent = tmpdir()): string {
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, 'cb-init-'));
  made.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

async function init(dir: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const r = await runCli(['init', ...args], { cwd: dir, env });
  const out = text(r.stdout);
  const err = text(r.stderr);
  return { code: r.code, out, err, all: [out, err].filter((t) => t !== '').join('\n') };
}

const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8');
const json = (dir: string, file: string) => JSON.parse(read(dir, file)) as Record<string, unknown>;

/** Every file below dir with its text. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out[path.slice(dir.length + 1)] = readFileSync(path, 'utf8');
    }
  };
  walk(dir);
  return out;
}

// What `npm init playwright` writes, plus a regular expression with a slash in it.
const PLAYWRIGHT_GENERATED = `import { defineConfig, devices } from '@playwright/test';

/**
 * Read environment variables from file.
 * https://github.com/motdotla/dotenv
 */
// import dotenv from 'dotenv';
// dotenv.config({ path: path.resolve(__dirname, '.env') });

/**
 * See https://playwright.dev/docs/test-configuration.
 */
export default defineConfig({
  testDir: './tests',
  testMatch: /e2e\\/.*\\.spec\\.ts/,
  /* Run tests in files in parallel */
  fullyParallel: true,
  /* Fail the build on CI if you accidentally left test.only in the source code. */
  forbidOnly: !!process.env.CI,
  retries: process.env.CI ? 2 : 0,
  workers: process.env.CI ? 1 : undefined,
  /* Reporter to use. See https://playwright.dev/docs/test-reporters */
  reporter: 'html',
  use: {
    /* Base URL to use in actions like \`await page.goto('/')\`. */
    // baseURL: 'http://localhost:3000',
    trace: 'on-first-retry',
  },
  projects: [
    {
      name: 'chromium',
      use: { ...devices['Desktop Chrome'] },
    },
  ],
});
`;

const PW_PACKAGE = JSON.stringify({ name: 'e2e', devDependencies: { '@playwright/test': '^1.50.0' } }, null, 2);

describe('Playwright', () => {
  it("reporter: 'html' becomes a list with casebridge's; nothing else in the file changes", async () => {
    const dir = project({ 'playwright.config.ts': PLAYWRIGHT_GENERATED, 'package.json': PW_PACKAGE });
    const r = await init(dir, ['--url', 'https://jira.example.com', '--project', 'PROJ']);
    expect(r.code, r.all).toBe(0);
    expect(read(dir, 'playwright.config.ts')).toBe(
      PLAYWRIGHT_GENERATED.replace("reporter: 'html',", "reporter: [['html'], ['@casebridge/playwright']],"),
    );
    expect(r.out).toContain(
      [
        '--- playwright.config.ts',
        '+++ playwright.config.ts',
        '@@ -20,7 +20,7 @@',
        '   retries: process.env.CI ? 2 : 0,',
        '   workers: process.env.CI ? 1 : undefined,',
        '   /* Reporter to use. See https://playwright.dev/docs/test-reporters */',
        "-  reporter: 'html',",
        "+  reporter: [['html'], ['@casebridge/playwright']],",
      ].join('\n'),
    );
    // Not installed in a bare temp folder: the install command, then the test command.
    expect(r.err).toContain('not installed: @casebridge/playwright; install with: npm i -D @casebridge/playwright');
    expect(r.err).toContain('set CASEBRIDGE_TOKEN, then run `npx @casebridge/cli doctor`');
    expect(r.out).toMatch(
      /Next:\n {2}npm i -D @casebridge\/playwright\n {2}export CASEBRIDGE_TOKEN=.*\n {2}npx playwright test\n/,
    );
    expect(r.out).toContain('Results appear as ad hoc runs of the test cases in PROJ');
    expect(r.all).not.toMatch(/npx casebridge/);
  });

  it('no reporter option: one line with the default list reporter kept, before the first option', async () => {
    const dir = project({
      'playwright.config.js': `// @ts-check
const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({ // comment on the brace line
  // comment of testDir
  testDir: './e2e',
});
`,
    });
    const r = await init(dir, ['--runner', 'playwright']);
    expect(r.code, r.all).toBe(0);
    expect(read(dir, 'playwright.config.js')).toBe(`// @ts-check
const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({ // comment on the brace line
  reporter: [['list'], ['@casebridge/playwright']],
  // comment of testDir
  testDir: './e2e',
});
`);
  });

  it('a reporter list is appended to in its own layout: one per line (trailing comma kept) or all on one line', async () => {
    const multi = project({
      'playwright.config.ts': `import { defineConfig } from '@playwright/test';
export default defineConfig({
  reporter: [
    ['list'],
    ['junit', { outputFile: 'results.xml' }],
  ],
});
`,
      'package.json': PW_PACKAGE,
    });
    expect((await init(multi)).code).toBe(0);
    expect(read(multi, 'playwright.config.ts')).toContain(`  reporter: [
    ['list'],
    ['junit', { outputFile: 'results.xml' }],
    ['@casebridge/playwright'],
  ],`);

    // A config held in a variable, double quotes, no trailing comma.
    const one = project({
      'playwright.config.ts': `import type { PlaywrightTestConfig } from "@playwright/test";
const config: PlaywrightTestConfig = { reporter: [["dot"], ["html", { open: "never" }]] };
export default config;
`,
      'package.json': PW_PACKAGE,
    });
    expect((await init(one)).code).toBe(0);
    expect(read(one, 'playwright.config.ts')).toContain(
      'const config: PlaywrightTestConfig = { reporter: [["dot"], ["html", { open: "never" }], ["@casebridge/playwright"]] };',
    );
  });

  it('a computed reporter is not edited: the file stays, the lines to add are printed, exit code 1', async () => {
    const text = `import { defineConfig } from '@playwright/test';
export default defineConfig({
  reporter: process.env.CI ? 'dot' : 'list',
});
`;
    const dir = project({ 'playwright.config.ts': text, 'package.json': PW_PACKAGE });
    const r = await init(dir);
    expect(r.code).toBe(1);
    expect(read(dir, 'playwright.config.ts')).toBe(text);
    expect(r.err).toContain(
      "playwright.config.ts: not edited: its `reporter` option is computed (`process.env.CI ? 'dot' : 'list'`)",
    );
    expect(r.out).toContain("reporter: [['list'], ['@casebridge/playwright']],");
    expect(r.out).not.toContain('--- playwright.config.ts');
  });

  it('a spread that may set the reporter, or a config made by a function: not edited', async () => {
    const spread = project({
      'playwright.config.ts': `import { defineConfig } from '@playwright/test';
import base from './base.config';
export default defineConfig({ ...base, testDir: 'e2e' });
`,
      'package.json': PW_PACKAGE,
    });
    const r = await init(spread);
    expect(r.code).toBe(1);
    expect(r.err).toContain('a spread (`...`)');
    const fn = project({
      'playwright.config.ts': 'export default async () => ({ testDir: "e2e" });\n',
      'package.json': PW_PACKAGE,
    });
    const f = await init(fn);
    expect(f.code).toBe(1);
    expect(f.err).toContain('no config object was found');
  });

  it('only @playwright/test in package.json: a config is created (TypeScript when the project is)', async () => {
    const dir = project({ 'package.json': PW_PACKAGE, 'tsconfig.json': '{}' });
    const r = await init(dir);
    expect(r.code, r.all).toBe(0);
    expect(read(dir, 'playwright.config.ts')).toBe(`import { defineConfig } from '@playwright/test';

export default defineConfig({
  reporter: [['list'], ['@casebridge/playwright']],
});
`);
    expect(r.out).toContain('--- /dev/null\n+++ playwright.config.ts\n@@ -0,0 +1,5 @@');
  });
});

describe('Vitest', () => {
  const VITEST_PACKAGE = JSON.stringify({ name: 'unit', devDependencies: { vitest: '^3.0.0' } }, null, 2);

  it('a test block without reporters gets them, with the default reporter kept', async () => {
    const dir = project({
      'vitest.config.ts': `import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'node',
  },
});
`,
    });
    const r = await init(dir);
    expect(r.code, r.all).toBe(0);
    expect(read(dir, 'vitest.config.ts')).toBe(`import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['default', '@casebridge/vitest'],
    environment: 'node',
  },
});
`);
  });

  it('test.reporters: a list is appended to, a single reporter becomes a list', async () => {
    const list = project({
      'vitest.config.mts': `import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { reporters: ['verbose', ['junit', { outputFile: 'junit.xml' }]] } });
`,
    });
    expect((await init(list)).code).toBe(0);
    expect(read(list, 'vitest.config.mts')).toContain(
      "test: { reporters: ['verbose', ['junit', { outputFile: 'junit.xml' }], '@casebridge/vitest'] }",
    );
    const single = project({
      'vitest.config.js': `export default {
  test: {
    reporters: 'dot',
  },
};
`,
    });
    expect((await init(single)).code).toBe(0);
    expect(read(single, 'vitest.config.js')).toContain("    reporters: ['dot', '@casebridge/vitest'],");
  });

  it('a vite.config.ts without a test block (vitest in package.json) gets one, and the vitest/config types', async () => {
    const dir = project({
      'vite.config.ts': `import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
});
`,
      'package.json': VITEST_PACKAGE,
    });
    const r = await init(dir);
    expect(r.code, r.all).toBe(0);
    expect(read(dir, 'vite.config.ts')).toBe(`/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  test: { reporters: ['default', '@casebridge/vitest'] },
  plugins: [react()],
});
`);
    expect(r.out).toContain('npx vitest run');
  });

  it("after Vitest's configDefaults (which hold reporters: []) the reporters go last, so that they win", async () => {
    const dir = project({
      'vitest.config.ts': `import { configDefaults, defineConfig } from 'vitest/config';
export default defineConfig({
\ttest: {
\t\t...configDefaults,
\t\tcoverage: { reporter: ['text'] }
\t}
});
`,
    });
    expect((await init(dir)).code).toBe(0);
    expect(read(dir, 'vitest.config.ts')).toContain(
      "\t\tcoverage: { reporter: ['text'] },\n\t\treporters: ['default', '@casebridge/vitest']\n\t}",
    );
  });

  it('a test block that is not an object literal: the lines to add, exit code 1', async () => {
    const text =
      "import { defineConfig } from 'vitest/config';\nimport shared from './shared';\nexport default defineConfig({ test: shared });\n";
    const dir = project({ 'vitest.config.ts': text });
    const r = await init(dir);
    expect(r.code).toBe(1);
    expect(read(dir, 'vitest.config.ts')).toBe(text);
    expect(r.err).toContain('its `test` option is not an object literal (`shared`)');
    expect(r.out).toContain("reporters: ['default', '@casebridge/vitest'],");
  });
});

describe('Jest', () => {
  it('jest.config.js: reporters added with the default one kept; a list is appended to', async () => {
    const dir = project({
      'jest.config.js': `/** @type {import('jest').Config} */
const config = {
  testEnvironment: 'node',
};

module.exports = config;
`,
    });
    expect((await init(dir)).code).toBe(0);
    expect(read(dir, 'jest.config.js')).toContain(`const config = {
  reporters: ['default', '@casebridge/jest'],
  testEnvironment: 'node',
};`);
    const list = project({ 'jest.config.ts': "export default {\n  reporters: ['default', 'jest-junit']\n};\n" });
    expect((await init(list)).code).toBe(0);
    expect(read(list, 'jest.config.ts')).toBe(
      "export default {\n  reporters: ['default', 'jest-junit', '@casebridge/jest']\n};\n",
    );
  });

  it('jest.config.json: edited as JSON, the other keys and their order kept', async () => {
    const dir = project({ 'jest.config.json': '{\n  "testEnvironment": "node",\n  "verbose": true\n}\n' });
    const r = await init(dir);
    expect(r.code, r.all).toBe(0);
    expect(read(dir, 'jest.config.json')).toBe(
      '{\n  "testEnvironment": "node",\n  "verbose": true,\n  "reporters": [\n    "default",\n    "@casebridge/jest"\n  ]\n}\n',
    );
  });

  it('the "jest" key of package.json is edited; without any config, package.json gets one', async () => {
    const keyed = project({
      'package.json': JSON.stringify(
        {
          name: 'app',
          scripts: { test: 'jest' },
          jest: { reporters: ['default'], testEnvironment: 'node' },
          devDependencies: { jest: '^30.0.0' },
        },
        null,
        2,
      ),
    });
    expect((await init(keyed)).code).toBe(0);
    const k = json(keyed, 'package.json');
    expect(Object.keys(k)).toEqual(['name', 'scripts', 'jest', 'devDependencies']);
    expect(k.jest).toEqual({ reporters: ['default', '@casebridge/jest'], testEnvironment: 'node' });

    const bare = project({
      'package.json': '{\n    "name": "app",\n    "devDependencies": {\n        "jest": "^30.0.0"\n    }\n}\n',
    });
    const r = await init(bare);
    expect(r.code, r.all).toBe(0);
    // The file's own indentation (4 spaces) is kept.
    expect(read(bare, 'package.json')).toBe(
      '{\n    "name": "app",\n    "devDependencies": {\n        "jest": "^30.0.0"\n    },\n    "jest": {\n        "reporters": [\n            "default",\n            "@casebridge/jest"\n        ]\n    }\n}\n',
    );
    expect(r.out).toContain('npx jest');
  });
});

describe('the project', () => {
  it('several runners are each set up; running init again changes nothing', async () => {
    const dir = project({
      'package.json': JSON.stringify(
        { name: 'both', devDependencies: { '@playwright/test': '1', vitest: '3', jest: '30' } },
        null,
        2,
      ),
      'playwright.config.ts': PLAYWRIGHT_GENERATED,
      'vitest.config.ts': "import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: {} });\n",
      'jest.config.cjs': 'module.exports = {};\n',
      '.gitignore': 'node_modules',
    });
    const args = ['--url', 'https://jira.example.com', '--project', 'PROJ', '--plan', 'PROJ-7', '--yes'];
    const first = await init(dir, args);
    expect(first.code, first.all).toBe(0);
    expect(read(dir, 'vitest.config.ts')).toContain("test: { reporters: ['default', '@casebridge/vitest'] }");
    expect(read(dir, 'jest.config.cjs')).toBe("module.exports = { reporters: ['default', '@casebridge/jest'] };\n");
    expect(read(dir, '.gitignore')).toBe('node_modules\n.casebridge/\n');
    expect(first.err).toContain('not installed: @casebridge/playwright, @casebridge/vitest, @casebridge/jest');
    expect(first.out).toContain('  npx playwright test\n  npx vitest run\n  npx jest');
    expect(first.out).toContain('Results appear in test plan PROJ-7');

    const before = snapshot(dir);
    const again = await init(dir, args);
    expect(again.code, again.all).toBe(0);
    expect(snapshot(dir)).toEqual(before);
    expect(again.out).not.toMatch(/^(---|\+\+\+) /m);
    for (const f of ['playwright.config.ts', 'vitest.config.ts', 'jest.config.cjs']) {
      expect(again.err).toContain(`${f}: already set up`);
    }
    expect(again.err).toContain('casebridge.config.json: up to date');
  });

  it('casebridge.config.json: url, project, plan and cycle mode; never a credential, even from the environment', async () => {
    const dir = project({ 'jest.config.js': 'module.exports = {};\n' });
    const secret = 'tok-3f9a-never-written';
    const env = {
      CASEBRIDGE_URL: 'https://jira.example.com/',
      CASEBRIDGE_PROJECT: 'SHOP',
      CASEBRIDGE_TEST_PLAN: 'SHOP-12',
      CASEBRIDGE_TOKEN: secret,
      CASEBRIDGE_USER: 'ci-bot',
      CASEBRIDGE_PASSWORD: `${secret}-pw`,
    };
    // --dry-run so that the doctor, which would sign in with these, is not run.
    const dry = await init(dir, ['--dry-run'], env);
    expect(dry.code, dry.all).toBe(0);
    expect(dry.err).toContain('dry run: the doctor was not run');
    const r = await init(dir, ['--runner', 'jest', '--url', 'http://127.0.0.1:9'], { ...env, CASEBRIDGE_URL: '' });
    expect(json(dir, 'casebridge.config.json')).toEqual({
      url: 'http://127.0.0.1:9',
      projectKey: 'SHOP',
      mode: 'cycle',
      testPlan: 'SHOP-12',
    });
    const everything = JSON.stringify(snapshot(dir)) + r.all + dry.all;
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain('ci-bot');
    // Credentials were there, so the doctor ran, and could not reach the service.
    expect(r.out).toMatch(/^✗ credentials +cannot reach http:\/\/127\.0\.0\.1:9/m);
    expect(r.code).toBe(1);
  });

  it('an existing casebridge.config.json is merged: options given replace, the environment only fills gaps', async () => {
    const dir = project({
      'jest.config.js': "module.exports = { reporters: ['@casebridge/jest'] };\n",
      'casebridge.config.json': `${JSON.stringify({ url: 'https://old.example.com', projectKey: 'OLD', token: 'x', attachments: { traces: true } }, null, 2)}\n`,
    });
    const r = await init(dir, ['--project', 'NEW'], {
      CASEBRIDGE_URL: 'https://env.example.com',
      CASEBRIDGE_TEST_PLAN: 'NEW-3',
    });
    expect(r.code, r.all).toBe(0);
    const doc = json(dir, 'casebridge.config.json');
    expect(doc).toEqual({
      url: 'https://old.example.com',
      projectKey: 'NEW',
      token: 'x',
      attachments: { traces: true },
      mode: 'cycle',
      testPlan: 'NEW-3',
    });
    expect(Object.keys(doc)).toEqual(['url', 'projectKey', 'token', 'attachments', 'mode', 'testPlan']);
    expect(r.err).toContain('casebridge.config.json holds token: anyone who can read the repository can use them');
    expect(r.out).toContain('-  "projectKey": "OLD",\n+  "projectKey": "NEW",');
  });

  it('a casebridge.config.mjs is the config: no second config file; the options to set are printed', async () => {
    const dir = project({
      'jest.config.js': "module.exports = { reporters: ['default', '@casebridge/jest'] };\n",
      'casebridge.config.mjs': "export default { url: 'https://jira.example.com' };\n",
    });
    const r = await init(dir, ['--project', 'PROJ', '--plan', 'PROJ-2']);
    expect(r.code).toBe(1);
    expect(snapshot(dir)['casebridge.config.json']).toBeUndefined();
    expect(r.out).toContain('  projectKey: "PROJ",\n  mode: "cycle",\n  testPlan: "PROJ-2",');
    expect((await init(dir)).code, 'nothing to set: nothing to do').toBe(0);
  });

  it('wrong values are usage errors (exit code 2) and nothing is written', async () => {
    const dir = project({ 'jest.config.js': 'module.exports = {};\n' });
    const before = snapshot(dir);
    const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
      [['--project', 'proj'], {}, '--project: expected a Jira project key such as PROJ'],
      [['--project', 'P'], {}, 'got "P"'],
      [['--plan', 'PROJ-0'], {}, "--plan: expected a test plan's issue key such as PROJ-1"],
      [['--url', 'jira.example.com'], {}, '--url: expected the Jira base URL (http or https)'],
      [['--url', 'ftp://jira.example.com'], {}, '--url: expected'],
      [[], { CASEBRIDGE_PROJECT: 'lower' }, 'CASEBRIDGE_PROJECT: expected a Jira project key'],
      [['--runner', 'mocha'], {}, '--runner: expected playwright, vitest or jest, got "mocha"'],
      [['--token', 'x'], {}, "Unknown option '--token'"],
      [['a', 'b'], {}, 'expected at most one folder'],
      [['missing-folder'], {}, 'missing-folder: no such folder'],
    ];
    for (const [args, env, message] of cases) {
      const r = await init(dir, args, env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toContain(message);
    }
    expect(snapshot(dir)).toEqual(before);
    const help = await init(dir, ['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toBe(helpOf(initDefinition));
  });

  it('--dry-run changes no file and prints every change as a diff', async () => {
    const dir = project({
      'playwright.config.ts': PLAYWRIGHT_GENERATED,
      'package.json': PW_PACKAGE,
      '.gitignore': 'node_modules/\n',
    });
    const before = snapshot(dir);
    const r = await init(dir, ['--dry-run', '--url', 'https://jira.example.com', '--project', 'PROJ']);
    expect(r.code, r.all).toBe(0);
    expect(snapshot(dir)).toEqual(before);
    expect(r.out).toContain("-  reporter: 'html',\n+  reporter: [['html'], ['@casebridge/playwright']],");
    expect(r.out).toContain(
      '--- /dev/null\n+++ casebridge.config.json\n@@ -0,0 +1,4 @@\n+{\n+  "url": "https://jira.example.com",\n+  "projectKey": "PROJ"\n+}',
    );
    expect(r.out).toContain('--- .gitignore\n+++ .gitignore\n@@ -1,1 +1,2 @@\n node_modules/\n+.casebridge/');
    expect(r.out).toContain('+.casebridge/');
    expect(r.out).toContain('Next, after init without --dry-run:');
  });

  it('.gitignore: .casebridge/ added once, not when it is ignored already', async () => {
    const dir = project({ 'jest.config.js': 'module.exports = {};\n', '.gitignore': 'dist/\r\n/.casebridge\r\n' });
    await init(dir);
    expect(read(dir, '.gitignore')).toBe('dist/\r\n/.casebridge\r\n');
    const crlf = project({ 'jest.config.js': 'module.exports = {};\n', '.gitignore': 'dist/\r\n' });
    const r = await init(crlf);
    expect(read(crlf, '.gitignore')).toBe('dist/\r\n.casebridge/\r\n');
    expect(r.err).toContain('.gitignore: added .casebridge/');
  });

  it('the install command follows the lockfile: yarn, pnpm (also a workspace root above), npm', async () => {
    const yarn = project({ 'jest.config.js': 'module.exports = {};\n', 'yarn.lock': '' });
    expect((await init(yarn)).err).toContain('install with: yarn add -D @casebridge/jest');
    const root = project({ 'pnpm-lock.yaml': '', 'packages/web/vitest.config.ts': 'export default { test: {} };\n' });
    const r = await init(root, ['packages/web']);
    expect(r.err).toContain('install with: pnpm add -D @casebridge/vitest');
    expect(r.out).toContain('  cd packages/web\n  pnpm add -D @casebridge/vitest\n');
    expect(r.out).toContain('--- packages/web/vitest.config.ts');
  });

  it('a workspace root that only lists the runner: the config in its subfolder is named, nothing is created', async () => {
    const root = project({
      'package.json': PW_PACKAGE,
      'apps/e2e/playwright.config.ts': PLAYWRIGHT_GENERATED,
    });
    const r = await init(root);
    expect(r.code).toBe(1);
    expect(r.err).toContain('Playwright: no config in this folder, but apps/e2e/playwright.config.ts');
    expect(r.err).toContain('run npx @casebridge/cli init apps/e2e');
    expect(snapshot(root)['playwright.config.ts']).toBeUndefined();
  });

  it('no runner at all: exit code 1, nothing written', async () => {
    const dir = project({ 'README.md': '# hi\n', '.gitignore': 'x\n' });
    const r = await init(dir, ['--project', 'PROJ']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('no Playwright, Vitest or Jest found');
    expect(snapshot(dir)).toEqual({ 'README.md': '# hi\n', '.gitignore': 'x\n' });
  });

  it('package.json scripts that replace the reporters are named', async () => {
    const dir = project({
      'package.json': JSON.stringify({
        scripts: { test: 'vitest run --reporter=dot' },
        devDependencies: { vitest: '3' },
      }),
      'vitest.config.ts': 'export default { test: {} };\n',
    });
    const r = await init(dir);
    expect(r.err).toContain(
      'package.json script "test" gives Vitest reporters on the command line, which replace the config\'s: add --reporter=default --reporter=@casebridge/vitest there',
    );
  });
});

describe('unifiedDiff', () => {
  it('hunks with three lines of context, separate hunks for changes far apart', () => {
    const a = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    const b = [...a];
    b.splice(1, 0, 'new 2');
    b[18] = 'changed 18';
    expect(unifiedDiff('f', `${a.join('\n')}\n`, `${b.join('\n')}\n`)).toEqual([
      '--- f',
      '+++ f',
      '@@ -1,4 +1,5 @@',
      ' line 1',
      '+new 2',
      ' line 2',
      ' line 3',
      ' line 4',
      '@@ -15,6 +16,6 @@',
      ' line 15',
      ' line 16',
      ' line 17',
      '-line 18',
      '+changed 18',
      ' line 19',
      ' line 20',
    ]);
  });
});

describe('with the real runners and the emulator', () => {
  it('the edited configs load in Playwright, Vitest and Jest with casebridge reporters, which resolve', async () => {
    const dir = project(
      {
        'package.json': JSON.stringify(
          { name: 'real', private: true, devDependencies: { '@playwright/test': '*', vitest: '*', jest: '*' } },
          null,
          2,
        ),
        'playwright.config.mjs': PLAYWRIGHT_GENERATED,
        'vitest.config.mjs':
          "import { defineConfig } from 'vitest/config';\n\nexport default defineConfig({\n  test: {\n    reporters: ['dot'],\n  },\n});\n",
        'jest.config.js': "module.exports = {\n  testEnvironment: 'node',\n};\n",
      },
      join(ROOT, 'test', '.fixtures'),
    );
    const r = await init(dir, ['--url', 'https://jira.example.com', '--project', 'PROJ']);
    expect(r.code, r.all).toBe(0);
    // Resolvable from the project (the repository's workspaces): no install command.
    expect(r.err).not.toContain('not installed');
    const load = (code: string) =>
      JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: dir, encoding: 'utf8' }));
    expect(
      load("const c = (await import('./playwright.config.mjs')).default; console.log(JSON.stringify(c.reporter))"),
    ).toEqual([['html'], ['@casebridge/playwright']]);
    expect(
      load("const c = (await import('./vitest.config.mjs')).default; console.log(JSON.stringify(c.test.reporters))"),
    ).toEqual(['dot', '@casebridge/vitest']);
    expect(
      load(
        "import { createRequire } from 'node:module'; const c = createRequire(process.cwd() + '/')('./jest.config.js'); console.log(JSON.stringify(c.reporters))",
      ),
    ).toEqual(['default', '@casebridge/jest']);
  });

  let emu: RunningEmulator | undefined;
  afterAll(async () => {
    await emu?.close();
  });

  it('with credentials the doctor runs: ✓ per check against the emulator, exit code 0', async () => {
    emu = await startEmulator({ port: 0 });
    const dir = project({ 'jest.config.js': 'module.exports = {};\n' });
    const r = await init(dir, ['--url', emu.url, '--project', 'DEMO', '--plan', 'DEMO-1'], {
      CASEBRIDGE_TOKEN: 'casebridge-dev-token',
    });
    expect(r.code, r.all).toBe(0);
    for (const check of ['config', 'credentials', 'project', 'test plan', 'cycle']) {
      expect(r.out).toMatch(new RegExp(`^✓ ${check} `, 'm'));
    }
    expect(r.all).not.toContain('casebridge-dev-token');
    expect(read(dir, 'casebridge.config.json')).not.toContain('token');
  });
});
