import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', contract: 'src/contract/index.ts', runtime: 'src/runtime/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'node20',
  sourcemap: true,
  // import.meta.url in the CommonJS build (undici is required on first use, for a proxy only).
  shims: true,
  // p-queue (and its p-timeout) ship ESM only: bundle them so `require('@casebridge/core')` (Jest loads reporters
  // with require) does not depend on Node's require(esm). zod is bundled too, tree-shaken to what the contract uses
  // (`import * as z`; the named `z` would keep its 40 locales): a reporter costs the runner 3 MB of it, not 13.
  // zod stays a dependency for the declaration files.
  noExternal: ['p-queue', 'p-timeout', 'zod'],
  // Without comments and blank space, but with every name kept (stack traces stay readable; source maps map back).
  // The bundle's comments held a few non-Latin-1 characters (zod's, p-queue's), which made V8 keep the whole 500 kB
  // source as a two-byte string: 1 MB of heap in every runner process.
  minifyWhitespace: true,
  minifySyntax: true,
});
