import { describe, expect, it } from 'vitest';
import { editScript } from '../src/init/edit-js.js';
import type { Runner } from '../src/sync/list.js';

/**
 * init's edit of a JS/TS runner config, over strings: the configs a hand-made lexer misread (a regular expression
 * after `)`), TypeScript's `satisfies` and generics, the `defineConfig` / `mergeConfig` wrappers, ESM and CommonJS;
 * each edit is one splice, so the expected text is the input with that splice made, and nothing else.
 */

async function edit(src: string, runner: Runner, vite = false): Promise<string> {
  const r = await editScript(src, runner, vite);
  if (!('after' in r)) throw new Error(`not edited: ${JSON.stringify(r)}`);
  return r.after;
}

async function why(src: string, runner: Runner): Promise<string> {
  const r = await editScript(src, runner, false);
  if (!('why' in r)) throw new Error(`expected a reason, got ${JSON.stringify(r)}`);
  return r.why;
}

describe('configs a lexer misreads', () => {
  it('a regular expression after `)` (issue 40): read, and the reporter added', async () => {
    const src = `import { defineConfig } from '@playwright/test';

function quoted(x: string) {
  if (x) /['"{]/.test(x);
  return (x) / 2 > 1 ? /}/ : /{/;
}

export default defineConfig({
  testDir: './e2e',
  reporter: 'html',
});
`;
    expect(await edit(src, 'playwright')).toBe(
      src.replace("reporter: 'html',", "reporter: [['html'], ['@casebridge/playwright']],"),
    );
  });

  it('template literals with `${}`, braces in strings and comments, a division after `)`', async () => {
    const src = `const dir = \`\${process.cwd()}/{e2e}\`; // } ]
const half = (10) / 2; /* { */
module.exports = {
  testMatch: ['**/*.{test,spec}.js'],
  rootDir: dir,
};
`;
    expect(await edit(src, 'jest')).toBe(
      src.replace('module.exports = {\n', "module.exports = {\n  reporters: ['default', '@casebridge/jest'],\n"),
    );
  });
});

describe('the config object', () => {
  it('`satisfies PlaywrightTestConfig`, with TypeScript types and generics elsewhere in the file', async () => {
    const src = `import type { PlaywrightTestConfig } from '@playwright/test';

type Env<T extends string = 'ci'> = Record<T, boolean>;
const flags: Env = { ci: !!process.env.CI };
function pick<T>(xs: T[]): T | undefined { return xs[0]; }

export default {
  retries: flags.ci ? 2 : 0,
  reporter: [['list']] as const,
} satisfies PlaywrightTestConfig;
`;
    expect(await edit(src, 'playwright')).toBe(
      src.replace("reporter: [['list']] as const", "reporter: [['list'], ['@casebridge/playwright']] as const"),
    );
  });

  it('a typed variable exported later, in double quotes: the quotes follow the file', async () => {
    const src = `import { defineConfig, type PlaywrightTestConfig } from "@playwright/test";

const config: PlaywrightTestConfig = defineConfig({
  testDir: "./e2e",
});

export default config;
`;
    expect(await edit(src, 'playwright')).toBe(
      src.replace('({\n', '({\n  reporter: [["list"], ["@casebridge/playwright"]],\n'),
    );
  });

  it("Vitest's defineConfig: the missing test block is added", async () => {
    const src = `import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [],
});
`;
    expect(await edit(src, 'vitest')).toBe(
      src.replace('({\n', "({\n  test: { reporters: ['default', '@casebridge/vitest'] },\n"),
    );
  });

  it('mergeConfig(viteConfig, defineConfig({ test })): the object that holds `test` is edited', async () => {
    const src = `import { defineConfig, mergeConfig } from 'vitest/config';
import viteConfig from './vite.config';

const local = defineConfig({ plugins: [] });

export default mergeConfig(
  mergeConfig(viteConfig, local),
  defineConfig({
    test: {
      environment: 'jsdom',
    },
  }),
);
`;
    expect(await edit(src, 'vitest')).toBe(
      src.replace('    test: {\n', "    test: {\n      reporters: ['default', '@casebridge/vitest'],\n"),
    );
  });

  it('export default { ... } (ESM) and module.exports = { ... } (CommonJS) objects', async () => {
    expect(await edit("export default {\n  testEnvironment: 'node',\n};\n", 'jest')).toBe(
      "export default {\n  reporters: ['default', '@casebridge/jest'],\n  testEnvironment: 'node',\n};\n",
    );
    const cjs = `'use strict';
/** @type {import('jest').Config} */
const config = {
  verbose: true,
};
module.exports = config;
`;
    expect(await edit(cjs, 'jest')).toBe(
      cjs.replace('const config = {\n', "const config = {\n  reporters: ['default', '@casebridge/jest'],\n"),
    );
    expect(await edit('module.exports = {};\n', 'jest')).toBe(
      "module.exports = { reporters: ['default', '@casebridge/jest'] };\n",
    );
  });

  it('TypeScript `export =` and a CommonJS config with JSX elsewhere are read too', async () => {
    expect(await edit('export = { testTimeout: 5000 };\n', 'jest')).toBe(
      "export = { reporters: ['default', '@casebridge/jest'], testTimeout: 5000 };\n",
    );
    const jsx = `const Badge = () => <b>{'ok'}</b>;
module.exports = { reporters: ['default'] };
`;
    expect(await edit(jsx, 'jest')).toBe(jsx.replace("['default']", "['default', '@casebridge/jest']"));
  });
});

describe('the reporter option', () => {
  it("a string (reporter: 'html') becomes a list that keeps it", async () => {
    const src = "export default { reporter: 'html' };\n";
    expect(await edit(src, 'playwright')).toBe(
      "export default { reporter: [['html'], ['@casebridge/playwright']] };\n",
    );
    expect(await edit('export default { test: { reporters: "dot" } };\n', 'vitest')).toBe(
      'export default { test: { reporters: ["dot", "@casebridge/vitest"] } };\n',
    );
  });

  it('an array one item a line: appended after the last, trailing comma and comments kept', async () => {
    const src = `export default {
  reporter: [
    ['list'], // on the terminal
    ['junit', { outputFile: 'results.xml' }], // for CI
  ],
};
`;
    expect(await edit(src, 'playwright')).toBe(
      src.replace('// for CI\n', "// for CI\n    ['@casebridge/playwright'],\n"),
    );
    const noComma = `module.exports = {
\treporters: [
\t\t'default',
\t\t'jest-junit' /* xml */
\t]
};
`;
    expect(await edit(noComma, 'jest')).toBe(
      noComma.replace("'jest-junit' /* xml */\n", "'jest-junit', /* xml */\n\t\t'@casebridge/jest'\n"),
    );
  });

  it('an array on one line, and an empty one', async () => {
    expect(await edit("export default { reporters: ['default', 'jest-junit'] };\n", 'jest')).toBe(
      "export default { reporters: ['default', 'jest-junit', '@casebridge/jest'] };\n",
    );
    expect(await edit('export default { test: { reporters: [ ] } };\n', 'vitest')).toBe(
      "export default { test: { reporters: ['@casebridge/vitest'] } };\n",
    );
  });

  it('no reporter key: added first, before the comment of the first option; CRLF line ends kept', async () => {
    const src =
      'export default defineConfig({ // the config\r\n  // where the tests are\r\n  testDir: "e2e",\r\n});\r\n';
    expect(await edit(src, 'playwright')).toBe(
      'export default defineConfig({ // the config\r\n  reporter: [["list"], ["@casebridge/playwright"]],\r\n  // where the tests are\r\n  testDir: "e2e",\r\n});\r\n',
    );
  });

  it('already naming casebridge: no change (running init twice changes nothing); a comment naming it does not count', async () => {
    expect(
      await editScript("export default { reporter: [['@casebridge/playwright']] };\n", 'playwright', false),
    ).toEqual({
      present: true,
    });
    const once = await edit('// TODO: add @casebridge/jest\nmodule.exports = { verbose: true };\n', 'jest');
    expect(once).toBe(
      "// TODO: add @casebridge/jest\nmodule.exports = { reporters: ['default', '@casebridge/jest'], verbose: true };\n",
    );
    expect(await editScript(once, 'jest', false)).toEqual({ present: true });
  });
});

describe('configs not edited: the reason, for the "add by hand" message', () => {
  it('a reporter computed by a call or a condition, or held in a variable', async () => {
    expect(await why("export default { reporter: reporters('ci') };\n", 'playwright')).toBe(
      "its `reporter` option is computed (`reporters('ci')`)",
    );
    expect(await why("export default { reporter: process.env.CI ? 'dot' : 'list' };\n", 'playwright')).toBe(
      "its `reporter` option is computed (`process.env.CI ? 'dot' : 'list'`)",
    );
    expect(await why("const r = ['dot'];\nexport default { reporter: r };\n", 'playwright')).toBe(
      'its `reporter` option is the variable `r`, set elsewhere',
    );
    expect(await why('const reporters = ["default"];\nmodule.exports = { reporters };\n', 'jest')).toBe(
      'its `reporters` option is the variable `reporters`, set elsewhere',
    );
    expect(await why("module.exports = { reporters: 'default' };\n", 'jest')).toBe(
      "its `reporters` option is a string, not a list (`'default'`)",
    );
  });

  it('a config made by a function, a spread that may set it, two configs, a file that does not parse', async () => {
    expect(await why('export default defineConfig(({ mode }) => ({ test: {} }));\n', 'vitest')).toContain(
      'no config object was found',
    );
    expect(await why('export default { ...base, testDir: "e2e" };\n', 'playwright')).toContain(
      'a spread (`...`) or computed key that may set it',
    );
    expect(
      await why(
        'const a = { testDir: "a" };\nconst b = { testDir: "b" };\nexport default mergeConfig(a, b);\n',
        'playwright',
      ),
    ).toBe('it holds more than one config object and it is not clear which is used');
    expect(await why('export default { reporter: [ };\n', 'playwright')).toMatch(
      /^casebridge could not parse it as JavaScript or TypeScript \(Unexpected token \(1:\d+\)\)$/,
    );
  });

  it('a configDefaults spread: the reporters go after it, so that they win', async () => {
    expect(await edit('export default { test: { ...configDefaults } };\n', 'vitest')).toBe(
      "export default { test: { ...configDefaults, reporters: ['default', '@casebridge/vitest'] } };\n",
    );
  });
});
