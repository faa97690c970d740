import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixture } from './support/runner.js';
import { adhocState } from './support/state.js';
import { vitest } from './support/vitest.js';

/**
 * Vitest 4.1's native test tags (issue 27, point 3) key tests as Playwright's tags do: `{ tags: ['DEMO-4'] }` maps
 * the test to DEMO-4 (a leading `@` would be dropped), with the real `vitest run`, the real emulator and real HTTP.
 * Vitest refuses a tag its config does not declare (`strictTags`, on by default): the fixture declares them, as a
 * team keying by tags would (or sets `strictTags: false`).
 */

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

it('a test tagged with a case key (Vitest 4.1 native tags) is reported to that case', async () => {
  const dir = fixture('vitest-native-tags', {
    'vitest.config.mjs': `
import { defineConfig } from 'vitest/config';
export default defineConfig({
  test: {
    include: ['tests/**/*.spec.ts'],
    tags: [{ name: 'DEMO-4' }, { name: 'smoke' }],
    reporters: ['default', ['@casebridge/vitest', {}]],
  },
});
`,
    'tests/tags.spec.ts': `
import { expect, test } from 'vitest';
test('searches the catalogue', { tags: ['DEMO-4', 'smoke'] }, () => {});
test('pays by card', { tags: ['smoke'] }, () => { expect(1).toBe(2); });
`,
  });
  const out = await vitest(dir, ['run'], {
    CASEBRIDGE_URL: emu.url,
    CASEBRIDGE_TOKEN: 'casebridge-dev-token',
    CASEBRIDGE_PROJECT: 'DEMO',
    CASEBRIDGE_DEFECTS: 'false',
    CASEBRIDGE_FLUSH_TIMEOUT_MS: '30000',
  });
  const text = out.stdout + out.stderr;
  expect(out.code, text).toBe(1);
  const state = adhocState(emu);
  expect(state.map((r) => [r.key, r.status])).toEqual([['DEMO-4', 'Passed']]);
  // The untagged failure has no key: named as such, not guessed from the `smoke` tag.
  expect(text).toContain('1 test(s) without a case key');
  expect(text).toContain('tests/tags.spec.ts > pays by card');
}, 120_000);
