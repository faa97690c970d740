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
});
