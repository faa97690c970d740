import { defineConfig } from 'tsup';

// Maps without the sources' text: stack traces still map to file and line, at a fifth of the size.
const noSourcesContent = (o: { sourcesContent?: boolean }) => {
  o.sourcesContent = false;
};

export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    // Without the workspace's paths: the core is read from its built declarations, not type-checked again from source.
    tsconfig: '../../tsconfig.build.json',
    clean: true,
    target: 'node20',
    sourcemap: true,
    esbuildOptions: noSourcesContent,
    shims: true,
  },
  {
    entry: { cli: 'src/cli.ts' },
    format: ['esm'],
    target: 'node20',
    sourcemap: true,
    esbuildOptions: noSourcesContent,
    banner: { js: '#!/usr/bin/env node' },
  },
]);
