import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The three reporters' built entries (what a user installs) against the boundary biome.json holds on their sources:
 * they import Node built-ins, their runner, and @casebridge/core's public, adapter and runtime entries only — no
 * other entry, no deep path into the core, no HTTP stack of their own. Checked on dist, since our suite aliases
 * @casebridge/core to its sources; run `npm run build -w packages/<name>` first. That the Vitest and Jest entries load
 * the engine only when the reporter starts is their own test/entry.test.ts; the core's adapter entry is
 * packages/core/test/entries/adapter-entry.test.ts.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CORE_ENTRIES = ['@casebridge/core', '@casebridge/core/adapter', '@casebridge/core/runtime'];

const REPORTERS = [
  // Playwright loads its reporter in the main process only, so its entry may load the engine at once.
  { name: 'playwright', runner: /^@playwright\/test(\/|$)/, engineAtImport: true },
  // Test files import the Vitest and Jest entries for the runtime API: the engine loads when the reporter starts.
  { name: 'vitest', runner: /^vitest(\/|$)/, engineAtImport: false },
  { name: 'jest', runner: /^(jest|@jest\/[^/]+)(\/|$)/, engineAtImport: false },
];

/** What a built file and the chunks it loads by relative path import, by `import`, `require` or `import()`. */
function specifiersOf(entry: string): { file: string; spec: string }[] {
  const found: { file: string; spec: string }[] = [];
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const { fileName: spec } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else found.push({ file: relative(ROOT, file), spec });
    }
  };
  visit(entry);
  return found;
}

describe.each(REPORTERS)('the $name reporter as built', ({ name, runner, engineAtImport }) => {
  const dist = join(ROOT, 'packages', name, 'dist');
  const builds = ['index.js', 'index.cjs'].map((f) => join(dist, f));

  it('is built', () => {
    expect(
      builds.filter((f) => !existsSync(f)),
      `missing: run npm run build -w packages/${name}`,
    ).toEqual([]);
  });

  it.each(['index.js', 'index.cjs'])('%s imports Node built-ins, its runner and the three core entries only', (f) => {
    const specs = specifiersOf(join(dist, f));
    expect(specs.map((s) => s.spec)).toEqual(expect.arrayContaining(['@casebridge/core/runtime']));
    const foreign = specs.filter(({ spec }) => !isBuiltin(spec) && !runner.test(spec) && !CORE_ENTRIES.includes(spec));
    expect(foreign, `allowed: Node built-ins, ${runner}, ${CORE_ENTRIES.join(', ')}`).toEqual([]);
  });

  it('requiring the CommonJS build loads the core only through its entries', () => {
    const script = `
      const before = new Set(Object.keys(require.cache));
      require(${JSON.stringify(join(dist, 'index.cjs'))});
      console.log(JSON.stringify(Object.keys(require.cache).filter((f) => !before.has(f))));`;
    const loaded = (JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as string[]).map(
      (f) => relative(ROOT, f).split('\\').join('/'),
    );
    const core = ['adapter.cjs', 'runtime.cjs', ...(engineAtImport ? ['index.cjs'] : [])];
    const allowed = [`packages/${name}/dist/index.cjs`, ...core.map((c) => `packages/core/dist/${c}`)];
    // Whatever the core's public entry loads in turn (its chunks, its dependencies) is the core's business.
    const outside = loaded.filter((f) => !allowed.includes(f) && !(engineAtImport && f.startsWith('node_modules/')));
    expect(outside).toEqual([]);
    expect(loaded).toEqual(expect.arrayContaining(allowed));
  });
});
