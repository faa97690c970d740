import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Reporters' entry modules load `@casebridge/core/adapter` with the runtime API, and test files import those entry
// modules: the adapter entry must not load the engine (zod, undici, p-queue). Checked on the build (dist), in a
// child Node process, since our own suite aliases @casebridge/core to its sources.

const dist = (f: string) => fileURLToPath(new URL(`../../dist/${f}`, import.meta.url));

describe('the adapter entry stays light', () => {
  it('CommonJS: requiring it loads only itself', () => {
    const script = `
      const before = new Set(Object.keys(require.cache));
      const entry = require(${JSON.stringify(dist('adapter.cjs'))});
      const loaded = Object.keys(require.cache).filter((f) => !before.has(f));
      console.log(JSON.stringify({ exports: Object.keys(entry).sort(), loaded }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as {
      exports: string[];
      loaded: string[];
    };
    expect(out.exports).toEqual(
      expect.arrayContaining(['problemPrinter', 'relativeFile', 'stableId', 'stripAnsi', 'outputExcerpt']),
    );
    expect(out.loaded.map((f) => f.replace(/\\/g, '/'))).toEqual([dist('adapter.cjs').replace(/\\/g, '/')]);
  });

  it('ESM: it and what it imports hold Node built-ins only, no zod, undici or p-queue', () => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const code = readFileSync(dist(file), 'utf8');
      expect(code).not.toMatch(/zod|undici|p-queue|eventemitter3/);
      for (const m of code.matchAll(/(?:^|[;\s])import\s*(?:[^'"]*from\s*)?['"]([^'"]+)['"]/g)) {
        const spec = m[1] as string;
        if (spec.startsWith('./')) visit(spec.slice(2));
        else expect(isBuiltin(spec), spec).toBe(true);
      }
    };
    visit('adapter.js');
    expect(seen.has('adapter.js')).toBe(true);
  });
});
