import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    reporters: [
      'default',
      [
        '@casebridge/vitest',
        {
          // Credentials come from CASEBRIDGE_TOKEN (or CASEBRIDGE_USER / CASEBRIDGE_PASSWORD), which the reporter reads
          // itself; any other option can come from CASEBRIDGE_* as well (CASEBRIDGE_MODE=cycle, CASEBRIDGE_DRY_RUN=1).
          url: process.env.CASEBRIDGE_URL ?? 'http://127.0.0.1:8990',
          projectKey: process.env.CASEBRIDGE_PROJECT ?? 'DEMO',
          testPlan: process.env.CASEBRIDGE_TEST_PLAN ?? 'DEMO-1',
          // The receipt attached by the checkout test is a JSON file: send such files too, not only screenshots.
          attachments: { others: true },
        },
      ],
    ],
  },
});
