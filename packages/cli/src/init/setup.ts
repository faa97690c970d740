import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Found } from './detect.js';
import { editScript } from './edit-js.js';
import { editJestJson } from './edit-json.js';
import { JSON_SNIPPET, NAME, REPORTER, TARGETS } from './runners.js';

/** What setting one runner up came to: the edit to make, "already set up", or the lines to add by hand and why. */
export type Outcome =
  | { kind: 'edit'; file: string; before?: string; after: string; what: string }
  | { kind: 'present'; file: string }
  | { kind: 'manual'; file: string; why: string; snippet: string };

/** The reporter's setup for one runner: the edit, "already set up", or the lines to add by hand and why. */
export async function setUp(dir: string, found: Found): Promise<Outcome> {
  const { runner, file } = found;
  const path = join(dir, file);
  const target = TARGETS[runner];
  if (!found.exists) {
    if (runner === 'jest') {
      return {
        kind: 'manual',
        file: 'jest.config.js',
        why: 'there is no jest config and no package.json to add a "jest" key to',
        snippet: target.snippet,
      };
    }
    const pkg = runner === 'playwright' ? '@playwright/test' : 'vitest/config';
    const body =
      runner === 'playwright'
        ? "  reporter: [['list'], ['@casebridge/playwright']],"
        : "  test: {\n    reporters: ['default', '@casebridge/vitest'],\n  },";
    return {
      kind: 'edit',
      file,
      after: `import { defineConfig } from '${pkg}';\n\nexport default defineConfig({\n${body}\n});\n`,
      what: `created it: ${NAME[runner]}'s defaults with casebridge's reporter`,
    };
  }
  const before = readFileSync(path, 'utf8');
  if (file === 'package.json') {
    const pkg = JSON.parse(before) as Record<string, unknown>;
    if (JSON.stringify(pkg.jest ?? {}).includes(REPORTER.jest)) return { kind: 'present', file };
    return edited(file, before, editJestJson(before, true), `"jest": {\n${JSON_SNIPPET}\n}`);
  }
  if (file.endsWith('.json')) {
    if (before.includes(REPORTER[runner])) return { kind: 'present', file };
    return edited(file, before, editJestJson(before, false), `{\n${JSON_SNIPPET}\n}`);
  }
  const isVite = file.startsWith('vite.') && /\.[cm]?ts$/.test(file);
  // An ES module config gets the snippet in its own form.
  const esm = /\.m?[jt]s$/.test(file) && /^\s*export\s+default\b/m.test(before);
  const snippet = esm ? target.snippet.replace('module.exports =', 'export default') : target.snippet;
  const result = await editScript(before, runner, isVite);
  // A string in its code names the reporter (a comment naming it does not count).
  if ('present' in result) return { kind: 'present', file };
  return edited(file, before, result, snippet);
}

/** The edit of an existing file, or, when it could not be made, why and the `snippet` to add by hand. */
function edited(
  file: string,
  before: string,
  result: { after: string; what: string } | { why: string },
  snippet: string,
): Outcome {
  return 'why' in result
    ? { kind: 'manual', file, why: result.why, snippet }
    : { kind: 'edit', file, before, ...result };
}
