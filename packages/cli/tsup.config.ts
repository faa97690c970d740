import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { cli: 'src/cli.ts' },
  format: ['esm'],
  target: 'node20',
  sourcemap: true,
  // Maps without the sources' text: stack traces still map to file and line, at a fifth of the size.
  esbuildOptions: (o) => {
    o.sourcesContent = false;
  },
  clean: true,
  banner: { js: '#!/usr/bin/env node' },
});
