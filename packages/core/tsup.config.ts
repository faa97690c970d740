import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', contract: 'src/contract/index.ts', runtime: 'src/runtime/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'node20',
  sourcemap: true,
  // Maps without the sources' text: stack traces still map to file and line, at a fifth of the size.
  esbuildOptions: (o) => {
    o.sourcesContent = false;
  },
  // import.meta.url in the CommonJS build (undici is required on first use, for a proxy only).
  shims: true,
  // p-queue (with p-timeout and eventemitter3) ships ESM only: bundled, so `require('@casebridge/core')` (Jest loads
  // reporters with require) does not depend on Node's require(esm); they are not dependencies then. zod stays an
  // external dependency: the public types refer to it (schemas, options), and a package must not both bundle a
  // library and depend on it.
  noExternal: ['p-queue', 'p-timeout', 'eventemitter3'],
  // Without comments and blank space, but with every name kept (stack traces stay readable; source maps map back).
  // The bundle's comments held a few non-Latin-1 characters (zod's, p-queue's), which made V8 keep the whole 500 kB
  // source as a two-byte string: 1 MB of heap in every runner process.
  minifyWhitespace: true,
  minifySyntax: true,
});
