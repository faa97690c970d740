import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  // Without the workspace's paths: the core is read from its built declarations, not type-checked again from source.
  tsconfig: '../../tsconfig.build.json',
  clean: true,
  target: 'node20',
  sourcemap: true,
  // Maps without the sources' text: stack traces still map to file and line, at a fifth of the size.
  esbuildOptions: (o) => {
    o.sourcesContent = false;
  },
  // The core and the runner stay external: the core is our dependency, jest the peer the user has.
  external: ['@casebridge/core', 'jest'],
});
