import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@casebridge\/core\/contract$/, replacement: src('./packages/core/src/contract/index.ts') },
      { find: /^@casebridge\/core\/runtime$/, replacement: src('./packages/core/src/runtime/index.ts') },
      { find: /^@casebridge\/core\/adapter$/, replacement: src('./packages/core/src/adapter/index.ts') },
      { find: /^@casebridge\/core\/internal$/, replacement: src('./packages/core/src/internal.ts') },
      { find: /^@casebridge\/core$/, replacement: src('./packages/core/src/index.ts') },
      { find: /^@casebridge\/emulator$/, replacement: src('./packages/emulator/src/index.ts') },
    ],
  },
  test: {
    // Two projects: `unit` (packages/*/test: pure logic, and the engine and clients against the emulator in
    // process, over real HTTP) and `e2e` (test/: the real runners, the CLI, npm pack tarballs, the version matrix,
    // the fault campaign). `npm test` runs both; `npm run test:unit` or `npm run test:e2e` one (README, "Tests").
    projects: [
      { extends: true, test: { name: 'unit', include: ['packages/*/test/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts'] } },
    ],
    // Fixture projects (written by the tests, and the committed JUnit samples) hold test files of their own.
    exclude: ['**/node_modules/**', 'test/.fixtures/**', 'test/fixtures/**'],
    // End-to-end tests spawn real runners; on a loaded 2-core machine one can take a minute.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time on the 2-core CI machine (Vitest's default there is one: cores - 1). Most of a file's time
    // is waiting (latency, index lag, runners starting), so two overlap well: a clean clone's Vitest took 978 s
    // against 1,496 s one at a time, and a trial with the machine loaded three times over passed every file. Files
    // share nothing mutable: each starts its own emulator on port 0 and writes its own fixture folder; tarballs are
    // packed into a private folder first (test/support/matrix.ts). Three at a time gained nothing (792 s against 793 s
    // on 2026-11-29): what is left is CPU, the runners' and the emulator's.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
