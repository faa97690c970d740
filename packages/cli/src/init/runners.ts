import type { Runner } from '../sync/list.js';

/** What init knows of each runner: its names, config files, reporter package, and where the reporters go. */

export const RUNNERS: readonly Runner[] = ['playwright', 'vitest', 'jest'];
export const NAME: Record<Runner, string> = { playwright: 'Playwright', vitest: 'Vitest', jest: 'Jest' };
export const REPORTER: Record<Runner, string> = {
  playwright: '@casebridge/playwright',
  vitest: '@casebridge/vitest',
  jest: '@casebridge/jest',
};
export const TEST_COMMAND: Record<Runner, string> = {
  playwright: 'npx playwright test',
  vitest: 'npx vitest run',
  jest: 'npx jest',
};
/** Config file names in the order each runner looks for them. */
export const CONFIG_NAMES: Record<Runner, string[]> = {
  playwright: ['ts', 'js', 'mts', 'mjs', 'cts', 'cjs'].map((x) => `playwright.config.${x}`),
  vitest: ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs'].map((x) => `vitest.config.${x}`),
  jest: ['js', 'ts', 'mjs', 'cjs', 'mts', 'cts', 'json'].map((x) => `jest.config.${x}`),
};
export const VITE_CONFIGS = ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs'].map((x) => `vite.config.${x}`);
export const RUNNER_PACKAGE: Record<Runner, string> = {
  playwright: '@playwright/test',
  vitest: 'vitest',
  jest: 'jest',
};

export interface Target {
  /** Where the reporters live in the config object. */
  path: string[];
  /** The option's value when it is absent (the runner's default reporter kept). */
  fresh: (q: string) => string;
  /** What to append to an array of reporters. */
  item: (q: string) => string;
  /** The value for a single reporter given as a string; undefined: a string is not a valid value. */
  fromString?: (text: string, q: string) => string;
  /** The lines to add by hand. */
  snippet: string;
}

/** Per runner: where its reporters go in a JS/TS config, what to add there, and the lines to add by hand. */
export const TARGETS: Record<Runner, Target> = {
  playwright: {
    path: ['reporter'],
    fresh: (q) => `[[${q}list${q}], [${q}@casebridge/playwright${q}]]`,
    item: (q) => `[${q}@casebridge/playwright${q}]`,
    fromString: (text, q) => `[[${text}], [${q}@casebridge/playwright${q}]]`,
    snippet: `export default defineConfig({
  // your reporters (Playwright's default: ['list']) and casebridge's
  reporter: [['list'], ['@casebridge/playwright']],
});`,
  },
  vitest: {
    path: ['test', 'reporters'],
    fresh: (q) => `[${q}default${q}, ${q}@casebridge/vitest${q}]`,
    item: (q) => `${q}@casebridge/vitest${q}`,
    fromString: (text, q) => `[${text}, ${q}@casebridge/vitest${q}]`,
    snippet: `export default defineConfig({
  test: {
    // your reporters (Vitest's default: 'default') and casebridge's
    reporters: ['default', '@casebridge/vitest'],
  },
});`,
  },
  jest: {
    path: ['reporters'],
    fresh: (q) => `[${q}default${q}, ${q}@casebridge/jest${q}]`,
    item: (q) => `${q}@casebridge/jest${q}`,
    snippet: `module.exports = {
  // your reporters (Jest's default: 'default') and casebridge's
  reporters: ['default', '@casebridge/jest'],
};`,
  },
};

/** Jest's reporters as JSON, for the lines to add by hand to jest.config.json or package.json. */
export const JSON_SNIPPET = `  "reporters": ["default", "@casebridge/jest"]`;
