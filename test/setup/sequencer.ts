import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take a minute or more (measured on the 2-core machine, clean clone, 2026-11-29), longest first: the
 * fault campaign, the 1,000-test adoption, the runners' own suites, the tarballs, the version matrix (whose first run
 * installs each runner version from the registry). Vitest orders by the timings of the last run; a clean clone has
 * none, and Vitest then orders by size: these small files would start last and run on alone after every other one.
 * A file missing here only starts later.
 */
export const LONG = [
  'test/adoption.e2e.test.ts',
  'test/chaos/chaos-playwright.test.ts',
  'test/chaos/chaos-vitest.test.ts',
  'test/playwright.e2e.test.ts',
  'test/harsh.e2e.test.ts',
  'test/vitest.e2e.test.ts',
  'test/install.e2e.test.ts',
  'test/live-results.e2e.test.ts',
  'test/jest.e2e.test.ts',
  'test/select.e2e.test.ts',
  'test/vitest.matrix.test.ts',
  'test/jest.matrix.test.ts',
  'test/playwright.matrix.test.ts',
];

/** Vitest's order, with the long files of LONG ahead, in its order (see LONG). */
export class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => LONG.findIndex((l) => f.moduleId.endsWith(`/${l}`));
    const long = sorted.filter((f) => rank(f) >= 0).sort((a, b) => rank(a) - rank(b));
    return [...long, ...sorted.filter((f) => rank(f) < 0)];
  }
}
