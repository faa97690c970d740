import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { CampaignFirst } from './test/setup/sequencer.js';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));
/** Files at a time: CASEBRIDGE_TEST_WORKERS when set, else the project's default. */
const EXCLUDE = ['**/node_modules/**', 'test/.fixtures/**', 'test/fixtures/**'];
const workers = (fallback: number) => Number(process.env.CASEBRIDGE_TEST_WORKERS ?? fallback);

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@casebridge\/core\/contract$/, replacement: src('./packages/core/src/contract/index.ts') },
      { find: /^@casebridge\/core\/runtime$/, replacement: src('./packages/core/src/runtime/channel.ts') },
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
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts'],
          // Five unit files at a time when the project runs alone (`npm run test:unit`): a unit file mostly waits (the
          // client's retries and timeouts on the real clock, the emulator's latency and index lag). Four at a time
          // kept the 2 cores about 60% busy (62 to 66 s here), five 55 to 57 s, six 52 to 58 s but with the
          // load-sensitive counts (history-cost) failing now and then (2026-12-07). Beside the end-to-end project
          // `.ci/test` sets two (CASEBRIDGE_UNIT_WORKERS).
          maxWorkers: workers(5),
          // Projects with a worker count of their own run as groups of their own: in one Vitest (`npx vitest run`)
          // the unit files first, then the end-to-end ones.
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          // .ci/test runs one file apart (CASEBRIDGE_E2E_EXCLUDE): the CLI's --exclude does not reach a project.
          exclude: [...EXCLUDE, ...(process.env.CASEBRIDGE_E2E_EXCLUDE ? [process.env.CASEBRIDGE_E2E_EXCLUDE] : [])],
          sequence: { groupOrder: 1 },
        },
      },
    ],
    // Fixture projects (written by the tests, and the committed JUnit samples) hold test files of their own.
    exclude: EXCLUDE,
    // End-to-end tests spawn real runners; on a loaded 2-core machine one can take a minute.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A worker's files share its modules (the core and the emulator are imported once per worker, not once per
    // file); what they keep per process is reset before each file (test/setup/each-file.ts).
    isolate: false,
    setupFiles: ['./test/setup/each-file.ts'],
    sequence: { sequencer: CampaignFirst },
    // Four files at a time on the 2-core CI machine. About half of a file's time is waiting (latency, index lag,
    // Retry-After, runners starting), so files overlap well: a clean clone's Vitest took 792 s two at a time and 497 s
    // four at a time (2026-11-29; six: 430 s, but two Jest "machines" adopting one suite then race past each other).
    // The CLI's --maxWorkers does not reach the projects (they extend this config): set CASEBRIDGE_TEST_WORKERS.
    // `npm test` runs the two projects side by side, each in a Vitest of its own, the unit one two at a time (.ci/test).
    // Files share nothing mutable: each starts its own emulator on port 0 and writes its own fixture folder; tarballs
    // are packed into a private folder first (test/support/matrix.ts).
    maxWorkers: workers(4),
    reporters: ['default'],
  },
});
