import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixture, ROOT, run } from './support/runner.js';

/**
 * `casebridge sync`, built, on fixture projects of the three runners (listed through the runners' own list modes),
 * against the real emulator: cases created with their steps, the mapping file, idempotence, and `--write-keys`.
 */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});
beforeEach(async () => {
  await emu.reset();
});

const sync = (dir: string, args: string[] = []) =>
  run(process.execPath, [CLI, 'sync', dir, ...args], ROOT, {
    CASEBRIDGE_URL: emu.url,
    CASEBRIDGE_TOKEN: 'casebridge-dev-token',
    CASEBRIDGE_PROJECT: 'DEMO',
  });

/** Test cases the emulator holds with their steps, by summary. */
function cases(): Record<string, { key: string; steps: string[] }> {
  const s = emu.store;
  const out: Record<string, { key: string; steps: string[] }> = {};
  for (const i of s.issues.filter((x) => x.type === 'Test Case' && x.key !== undefined && x.id > 10)) {
    out[i.summary] = {
      key: i.key,
      steps: s.caseSteps
        .filter((x) => x.tcId === i.id)
        .sort((a, b) => a.seq - b.seq)
        .map((x) => x.step),
    };
  }
  return out;
}

const PROJECTS = {
  playwright: {
    'playwright.config.mjs': `export default { testDir: 'tests', reporter: [['@casebridge/playwright', {}]] };`,
    'tests/cart.spec.ts': `
import { test } from '@playwright/test';
test.describe('cart', () => {
  test('adds an item', async () => {
    await test.step('Open the shop', async () => {});
    await test.step('Add "teapot" to the cart', async () => {});
  });
  test('DEMO-3 is keyed already', async () => {});
});
test('empties the cart', { tag: '@smoke' }, async () => {});
`,
  },
  vitest: {
    'vitest.config.mjs': `export default { test: { include: ['tests/**/*.test.ts'] } };`,
    'tests/cart.test.ts': `
import { describe, expect, test } from 'vitest';
describe('cart', () => {
  test('adds an item', async () => {
    expect(1).toBe(1);
  });
  test('DEMO-3 is keyed already', () => {});
});
test('empties the cart', () => {});
`,
  },
  jest: {
    'jest.config.cjs': `module.exports = { testMatch: ['**/tests/**/*.test.js'] };`,
    'tests/cart.test.js': `
describe('cart', () => {
  test('adds an item', async () => {
    await step('Open the shop', async () => {});
  });
  test('DEMO-3 is keyed already', () => {});
});
test('empties the cart', () => {});
async function step(title, body) { return body(); }
`,
  },
} as const;

describe.each(Object.keys(PROJECTS) as Array<keyof typeof PROJECTS>)('casebridge sync on a %s project', (runner) => {
  it('creates a case per unkeyed test, writes the mapping file, and changes nothing the second time', async () => {
    const dir = fixture(`sync-${runner}`, PROJECTS[runner]);
    const file =
      runner === 'jest' ? 'tests/cart.test.js' : runner === 'vitest' ? 'tests/cart.test.ts' : 'tests/cart.spec.ts';

    const dry = await sync(dir, ['--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`3 test(s) found by ${runner}, 1 with a key`);
    expect(Object.keys(cases())).toEqual([]);

    const first = await sync(dir, ['--json']);
    expect(first.code, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout) as { created: Array<{ test: string; key: string }> };
    expect(report.created.map((c) => c.test)).toEqual([`${file} > cart > adds an item`, `${file} > empties the cart`]);
    const made = cases();
    expect(Object.keys(made).sort()).toEqual(['adds an item', 'empties the cart']);
    if (runner === 'playwright')
      expect(made['adds an item']?.steps).toEqual(['Open the shop', 'Add "teapot" to the cart']);
    if (runner === 'jest') expect(made['adds an item']?.steps).toEqual(['Open the shop']);
    const mapping = JSON.parse(readFileSync(join(dir, 'casebridge.keys.json'), 'utf8')) as Record<string, string>;
    expect(mapping).toEqual(Object.fromEntries(report.created.map((c) => [c.test, c.key])));

    const again = await sync(dir);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('3 with a key');
    expect(again.stdout).toContain('nothing to do');
    expect(Object.keys(cases())).toHaveLength(2);
  });
});

describe('casebridge sync --write-keys', () => {
  it('puts the keys into the titles (escaping quotes), needs no mapping file, and is idempotent', async () => {
    const dir = fixture('sync-write-keys', {
      'jest.config.cjs': `module.exports = {};`,
      'a.test.js': `test("says \\"hi\\"", () => {});\ndescribe('x', () => { test('DEMO-3 keyed', () => {}); test('plain', () => {}); });\n`,
    });
    const out = await sync(dir, ['--write-keys']);
    expect(out.code, out.stderr).toBe(0);
    const source = readFileSync(join(dir, 'a.test.js'), 'utf8');
    const made = cases();
    expect(source).toContain(`test("${made['says "hi"']?.key} says \\"hi\\"", () => {});`);
    expect(source).toContain(`test('${made.plain?.key} plain', () => {});`);
    expect(source).toContain(`test('DEMO-3 keyed'`);
    // The keys live in the titles: no mapping file is needed.
    expect(existsSync(join(dir, 'casebridge.keys.json'))).toBe(false);
    const again = await sync(dir, ['--write-keys']);
    expect(again.stdout).toContain('nothing to do');
    expect(readFileSync(join(dir, 'a.test.js'), 'utf8')).toBe(source);
    expect(Object.keys(cases())).toHaveLength(2);
  });

  it('a folder without a runner is a usage error naming --runner', async () => {
    const dir = fixture('sync-nothing', { 'README.md': 'no tests here' });
    const out = await sync(dir);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('name the runner with --runner');
  });
});
