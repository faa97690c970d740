import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    contract: 'src/contract/index.ts',
    runtime: 'src/runtime/channel.ts',
    adapter: 'src/adapter/index.ts',
    internal: 'src/internal.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'node20',
  sourcemap: true,
  // Maps without the sources' text: stack traces still map to file and line, at a fifth of the size.
  esbuildOptions: (o) => {
    o.sourcesContent = false;
  },
  // import.meta.url in the CommonJS build (undici is required on first use: a request, a proxy, an upload).
  shims: true,
  // Bundled, so none is installed beside the core: p-queue (with p-timeout and eventemitter3) ships ESM only, and
  // Jest loads reporters with `require`; zod is tree-shaken to what the contract uses (`import * as z`; the named
  // `z` would keep its 40 locales), 2.7 MB of heap in the runner's process instead of 5.6 MB, and no 8 MB install.
  // The reporters' declaration files need none of them (`CasebridgeOptions` is a plain type in the runtime entry).
  // The core's own contract and client types refer to zod: a TypeScript user of those installs zod 4 (no peer
  // dependency: an optional peer would make npm refuse a project that has zod 3). dataloader (keyed reads batched:
  // defects/search.ts, the history's bug states) is 15 kB of CommonJS with no dependency. tough-cookie (session
  // auth's cookies) is 190 kB with its public-suffix list (tldts), against 4.8 MB installed (tldts ships three builds
  // and their maps); client/auth.ts imports it on the first session login, so the ESM build keeps it in a chunk of
  // its own and the CommonJS build runs none of it for the other kinds of auth.
  noExternal: ['p-queue', 'p-timeout', 'eventemitter3', 'zod', 'dataloader', 'tough-cookie', 'tldts', 'tldts-core'],
  // Without comments and blank space, but with every name kept (stack traces stay readable; source maps map back).
  // The bundle's comments held a few non-Latin-1 characters (zod's, p-queue's), which made V8 keep the whole 500 kB
  // source as a two-byte string: 1 MB of heap in every runner process.
  minifyWhitespace: true,
  minifySyntax: true,
});
