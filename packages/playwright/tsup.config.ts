import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'node20',
  sourcemap: true,
  // import.meta.url in the CommonJS build (the runtime loads @playwright/test beside this package).
  shims: true,
  // The core and the runner stay external: the core is our dependency, @playwright/test the peer the user has.
  external: ['@casebridge/core', '@playwright/test'],
});
