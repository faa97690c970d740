import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The main entry is what test files import for the runtime API: it must not load the engine (zod, undici, p-queue),
// only the core's light `runtime` and `adapter` entries.
// Checked on the build (dist), in a child Node process, since our own suite aliases @casebridge/core to its sources.

const dist = (f: string) => fileURLToPath(new URL(`../dist/${f}`, import.meta.url));

describe('the main entry stays light', () => {
  it('CommonJS: requiring it loads the small runtime and adapter entries of @casebridge/core, not the engine', () => {
    const script = `
      const entry = require(${JSON.stringify(dist('index.cjs'))});
      const loaded = Object.keys(require.cache);
      console.log(JSON.stringify({ exports: Object.keys(entry).sort(), loaded }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as {
      exports: string[];
      loaded: string[];
    };
    expect(out.exports).toEqual([
      'attach',
      'caseKey',
      'default',
      'defineCasebridgeConfig',
      'param',
      'requirement',
      'step',
    ]);
    expect(out.loaded.some((p) => /[\\/]core[\\/]dist[\\/]runtime\.cjs$/.test(p))).toBe(true);
    expect(out.loaded.some((p) => /[\\/]core[\\/]dist[\\/]adapter\.cjs$/.test(p))).toBe(true);
    expect(out.loaded.filter((p) => /undici|zod|p-queue|[\\/]core[\\/]dist[\\/]index\.cjs$/.test(p))).toEqual([]);
  });

  it('ESM: its static imports are Node built-ins and the light core entries; the engine is a dynamic import', () => {
    const code = readFileSync(dist('index.js'), 'utf8');
    const imports = [...code.matchAll(/^import\s[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]?.replace(/^node:/, ''));
    expect([...new Set(imports)].sort()).toEqual(['@casebridge/core/adapter', '@casebridge/core/runtime', 'path']);
    expect(code).toContain('await import("@casebridge/core")');
  });
});
