import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coreDeps, drift } from '../walls.mjs';

/**
 * The walls between folders, like Playwright's DEPS.list. Biome holds them: the root biome.json fails any import
 * cycle (type imports counted) and walls the adapters and the CLI; packages/core/biome.json and
 * packages/emulator/biome.json (nested, `"extends": "//"`) wall each folder with `noRestrictedImports` in
 * `overrides`, generated from the one table in walls.mjs (this file fails when they drift from it, and reads its
 * layer order from it). This file proves that a bad import is refused,
 * and checks what Biome cannot say: that every engine room has a wall, and the core's layer order over resolved
 * paths (a glob sees the specifier, not the file it lands on).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CORE_SRC = join(ROOT, 'packages/core/src');

/** What each place in packages/core/src may import besides itself: from walls.mjs, the one table of the walls. */
const DEPS: Record<string, string[]> = coreDeps();

/** The place of a file under packages/core/src, or undefined for a folder the table does not know. */
function placeOf(file: string): string | undefined {
  const rel = relative(CORE_SRC, file).split(/[\\/]/);
  if (rel.length === 1) return ['index.ts', 'internal.ts'].includes(rel[0] as string) ? 'entries' : undefined;
  if (rel[0] === 'adapter' && rel[1] === 'text.ts') return 'adapter/text';
  if (rel[0] !== 'engine') return rel[0] && rel[0] in DEPS ? rel[0] : undefined;
  const room = rel.length === 2 ? 'engine' : `engine/${rel[1]}`;
  return room in DEPS ? room : undefined;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every specifier a file imports or re-exports, type-only and dynamic ones included; comments are not imports. */
function specifiers(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

describe('the walls are written once', () => {
  it('packages/core/biome.json and packages/emulator/biome.json are what walls.mjs makes (edit walls.mjs, then node walls.mjs --write)', () => {
    expect(drift()).toEqual([]);
  });
});

describe('the core keeps its layer order', () => {
  it('every folder of packages/core/src and every engine room has a place in the table and a wall in biome.json', () => {
    const folders = readdirSync(CORE_SRC).filter((n) => statSync(join(CORE_SRC, n)).isDirectory());
    const rooms = readdirSync(join(CORE_SRC, 'engine')).filter((n) =>
      statSync(join(CORE_SRC, 'engine', n)).isDirectory(),
    );
    expect(
      folders.filter((f) => f !== 'engine' && !(f in DEPS)),
      'folders the DEPS table lacks',
    ).toEqual([]);
    expect(
      rooms.filter((r) => !(`engine/${r}` in DEPS)),
      'engine rooms the DEPS table lacks',
    ).toEqual([]);
    // packages/core/biome.json holds the core's walls (globs relative to packages/core); JSON without comments.
    const overrides = (JSON.parse(readFileSync(join(ROOT, 'packages/core/biome.json'), 'utf8')).overrides ?? []) as {
      includes: string[];
    }[];
    const walled = new Set(overrides.flatMap((o) => o.includes));
    const unwalled = rooms.filter((r) => !walled.has(`src/engine/${r}/**`));
    expect(unwalled, 'engine rooms without a noRestrictedImports override in packages/core/biome.json').toEqual([]);
    for (const folder of ['client', 'contract', 'adapter', 'runtime']) {
      expect(walled.has(`src/${folder}/**`), `packages/core/biome.json walls src/${folder}/`).toBe(true);
    }
  });

  it('every relative import lands on a place the importing place may import', () => {
    const broken: string[] = [];
    for (const file of sourceFiles(CORE_SRC)) {
      const from = placeOf(file);
      if (!from) {
        broken.push(`${relative(ROOT, file)}: a folder the DEPS table does not know`);
        continue;
      }
      for (const spec of specifiers(file)) {
        if (!spec.startsWith('.')) continue;
        const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
        const to = placeOf(target);
        if (to === from) continue;
        if (!to || !DEPS[from]?.includes(to)) {
          broken.push(`${relative(ROOT, file)} (${from}) imports '${spec}' (${to ?? 'outside the table'})`);
        }
      }
    }
    expect(broken, `allowed: ${JSON.stringify(DEPS, null, 1)}`).toEqual([]);
  });
});

/**
 * A bad import is refused: probe files in a scratch copy of the repository's layout outside the repository, with the
 * repository's Biome configs (the root one is a root, so Biome looks no higher). The real tree is never written to, so this test
 * races with nothing and leaves nothing behind.
 */
describe('Biome refuses what crosses a wall', () => {
  type Rule = 'noRestrictedImports' | 'noImportCycles' | null;
  /** file → one import per line, with the rule that must refuse it (null: allowed). */
  const PROBES: Record<string, [string, Rule][]> = {
    'packages/core/src/engine/kernel/wall-probe.ts': [
      ['../delivery/cycles.js', 'noRestrictedImports'],
      ['../config/schema.js', 'noRestrictedImports'],
      ['../engine.js', 'noRestrictedImports'],
      ['../../adapter/index.js', 'noRestrictedImports'],
      ['../../runtime/index.js', 'noRestrictedImports'],
      ['../../adapter/text.js', null],
      ['../../client/errors.js', null],
      ['./model.js', null],
    ],
    'packages/core/src/engine/config/wall-probe.ts': [
      ['../delivery/delivery.js', 'noRestrictedImports'],
      ['../report/summary.js', 'noRestrictedImports'],
      ['../kernel/work.js', null],
    ],
    'packages/core/src/engine/defects/wall-probe.ts': [
      ['../delivery/cycles.js', 'noRestrictedImports'],
      ['../report/run-summary.js', 'noRestrictedImports'],
      ['../session.js', 'noRestrictedImports'],
      ['../config/schema.js', null],
      ['../jira/keyset.js', null],
    ],
    'packages/core/src/engine/cases/wall-probe.ts': [
      ['../journal/store.js', 'noRestrictedImports'],
      ['../defects/defects.js', 'noRestrictedImports'],
      ['../jira/duplicate.js', null],
    ],
    'packages/core/src/engine/journal/wall-probe.ts': [
      ['../cases/registry.js', 'noRestrictedImports'],
      ['../delivery/delivery.js', 'noRestrictedImports'],
      ['../kernel/model.js', null],
    ],
    'packages/core/src/engine/delivery/wall-probe.ts': [
      ['../report/links.js', 'noRestrictedImports'],
      ['../drain.js', 'noRestrictedImports'],
      ['../defects/cap.js', null],
    ],
    'packages/core/src/engine/wall-probe.ts': [
      ['../runtime/index.js', 'noRestrictedImports'],
      ['./report/run-summary.js', null],
    ],
    'packages/core/src/client/wall-probe.ts': [
      ['../engine/kernel/model.js', 'noRestrictedImports'],
      ['../contract/index.js', null],
    ],
    'packages/core/src/adapter/wall-probe.ts': [
      ['../engine/kernel/work.js', 'noRestrictedImports'],
      ['undici', 'noRestrictedImports'],
      ['../engine/kernel/model.js', null],
    ],
    'packages/vitest/src/wall-probe.ts': [
      ['@casebridge/core/contract', 'noRestrictedImports'],
      ['@casebridge/core/internal', 'noRestrictedImports'],
      ['@casebridge/core/dist/index.js', 'noRestrictedImports'],
      ['../../core/src/engine/engine.js', 'noRestrictedImports'],
      ['undici', 'noRestrictedImports'],
      ['@casebridge/core', null],
      ['@casebridge/core/adapter', null],
      ['@casebridge/core/runtime', null],
      ['./translate.js', null],
    ],
    'packages/playwright/src/wall-probe.ts': [
      ['@casebridge/core/contract', 'noRestrictedImports'],
      ['@playwright/test/reporter', null],
    ],
    'packages/jest/src/wall-probe.ts': [['undici/lib/fetch.js', 'noRestrictedImports']],
    // The emulator: built from the contract only, and its code map (packages/emulator/README.md) layer by layer.
    'packages/emulator/src/wall-probe.ts': [
      ['@casebridge/core', 'noRestrictedImports'],
      ['@casebridge/core/internal', 'noRestrictedImports'],
      ['../../core/src/engine/engine.js', 'noRestrictedImports'],
      ['./kernel/send.js', 'noRestrictedImports'],
      ['./server.js', 'noRestrictedImports'],
      ['@casebridge/core/contract', null],
      ['./store.js', null],
    ],
    'packages/emulator/src/kernel/wall-probe.ts': [
      ['../pipeline/reply.js', 'noRestrictedImports'],
      ['../handlers/cases.js', 'noRestrictedImports'],
      ['../admin.js', 'noRestrictedImports'],
      ['@casebridge/core', 'noRestrictedImports'],
      ['../store.js', null],
      ['./exchange.js', null],
    ],
    'packages/emulator/src/handlers/wall-probe.ts': [
      ['../ui/view.js', 'noRestrictedImports'],
      ['../openapi/document.js', 'noRestrictedImports'],
      ['../kernel/send.js', null],
      ['./cases.js', null],
    ],
    'packages/emulator/src/openapi/wall-probe.ts': [
      ['../kernel/exchange.js', 'noRestrictedImports'],
      ['../router.js', null],
    ],
    'packages/emulator/src/pipeline/wall-probe.ts': [
      ['./index.js', 'noRestrictedImports'],
      ['../ui/index.js', 'noRestrictedImports'],
      ['../admin.js', 'noRestrictedImports'],
      ['../handlers/index.js', null],
      ['./reply.js', null],
    ],
    'packages/emulator/src/pipeline/index.ts': [
      ['../server.js', 'noRestrictedImports'],
      ['../admin.js', null],
      ['../ui/index.js', null],
    ],
    'packages/emulator/src/ui/wall-probe.ts': [
      ['../pipeline/index.js', 'noRestrictedImports'],
      ['../handlers/cases.js', 'noRestrictedImports'],
      ['../docs.js', 'noRestrictedImports'],
      ['../kernel/send.js', null],
    ],
    'packages/emulator/src/admin.ts': [
      ['./ui/index.js', 'noRestrictedImports'],
      ['./docs.js', 'noRestrictedImports'],
      ['./openapi/document.js', null],
    ],
    'packages/emulator/src/server.ts': [
      ['./index.js', 'noRestrictedImports'],
      ['./ui/index.js', null],
    ],
    'packages/cli/src/commands/wall-probe.ts': [
      ['@casebridge/core/dist/internal.js', 'noRestrictedImports'],
      ['../../../core/src/engine/cases/registry.js', 'noRestrictedImports'],
      ['@casebridge/emulator/dist/index.js', 'noRestrictedImports'],
      ['@casebridge/core/internal', null],
      ['@casebridge/emulator', null],
      ['../output.js', null],
    ],
    // A cycle held together by `import type` alone still fails.
    'packages/emulator/src/probe/wall-cycle-a.ts': [['./wall-cycle-b.js', 'noImportCycles']],
    'packages/emulator/src/probe/wall-cycle-b.ts': [['./wall-cycle-a.js', 'noImportCycles']],
  };

  let scratch: string;
  let found: { path: string; line: number; rule: string; message: string }[];

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'cb-walls-'));
    // The root config and the packages' nested ones (`"extends": "//"`), at the same places.
    const configs = ['biome.json', ...readdirSync(join(ROOT, 'packages')).map((p) => `packages/${p}/biome.json`)];
    for (const config of configs.filter((c) => existsSync(join(ROOT, c)))) {
      mkdirSync(dirname(join(scratch, config)), { recursive: true });
      copyFileSync(join(ROOT, config), join(scratch, config));
    }
    for (const [file, imports] of Object.entries(PROBES)) {
      mkdirSync(join(scratch, dirname(file)), { recursive: true });
      // Type-only re-exports: nothing is unused, and a wall must hold for types too.
      const lines = imports.map(([spec], i) => `export type { T${i} } from '${spec}';`);
      writeFileSync(join(scratch, file), `${lines.join('\n')}\n`);
    }
    const biome = createRequire(join(ROOT, 'package.json')).resolve('@biomejs/biome/bin/biome');
    const out = spawnSync(process.execPath, [biome, 'lint', '--reporter=json', '--max-diagnostics=none', '.'], {
      cwd: scratch,
      encoding: 'utf8',
    });
    const report = JSON.parse(out.stdout) as {
      diagnostics: { category: string; message: string; location: { path: string; start: { line: number } } }[];
    };
    found = report.diagnostics.map((d) => ({
      path: d.location.path.split('\\').join(posix.sep),
      line: d.location.start.line,
      rule: d.category.split('/').pop() as string,
      message: d.message,
    }));
  }, 60_000);

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  for (const [file, imports] of Object.entries(PROBES)) {
    it(`${file}: ${imports.map(([spec, rule]) => `${spec} ${rule ? 'refused' : 'allowed'}`).join(', ')}`, () => {
      const got = imports.map((_, i) =>
        [...new Set(found.filter((d) => d.path === file && d.line === i + 1).map((d) => d.rule))].join(','),
      );
      expect(got).toEqual(imports.map(([, rule]) => rule ?? ''));
    });
  }

  it('a refusal says which wall and how to mend it', () => {
    const kernel = found.find((d) => d.path === 'packages/core/src/engine/kernel/wall-probe.ts' && d.line === 1);
    expect(kernel?.message).toMatch(/engine\/kernel\/ imports no room above it.*Move the shared code down/);
    const adapter = found.find((d) => d.path === 'packages/vitest/src/wall-probe.ts' && d.line === 1);
    expect(adapter?.message).toMatch(/An adapter imports only @casebridge\/core, @casebridge\/core\/adapter/);
  });
});
