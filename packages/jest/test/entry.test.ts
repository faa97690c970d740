import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

// The built package, as Jest loads it: `require` from the reporters list, and again from every test file that uses
// the runtime API (Jest evaluates node_modules once per test file). Needs `npm run build` (this package and the core's
// runtime and adapter entries): without it the tests fail saying so, rather than skip and pass on a fresh clone.

const PKG = join(dirname(fileURLToPath(import.meta.url)), '..');
const BUILT = ['jest/dist/index.cjs', 'core/dist/runtime.cjs', 'core/dist/adapter.cjs'];

function node(script: string) {
  const out = spawnSync(process.execPath, ['-e', script], { cwd: PKG, encoding: 'utf8', env: { ...process.env } });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout) as Record<string, unknown>;
}

describe('the CommonJS entry', () => {
  beforeAll(() => {
    const missing = BUILT.filter((f) => !existsSync(join(PKG, '..', f)));
    if (missing.length > 0)
      throw new Error(`missing ${missing.map((f) => `packages/${f}`).join(', ')}: run npm run build`);
  });

  it('gives Jest the reporter class through `default` (with __esModule, as Jest 29 and 30 interop reads it)', () => {
    const r = node(`
      const m = require('./dist/index.cjs');
      const Reporter = m.__esModule ? m.default : m;
      const rep = new Reporter({ rootDir: process.cwd() }, {}, {});
      console.log(JSON.stringify({
        esModule: m.__esModule === true,
        hooks: ['onRunStart', 'onTestCaseResult', 'onTestFileResult', 'onRunComplete', 'getLastError']
          .filter((h) => typeof rep[h] === 'function'),
        api: ['caseKey', 'step', 'attach', 'param'].filter((k) => typeof m[k] === 'function'),
      }));`);
    expect(r).toEqual({
      esModule: true,
      hooks: ['onRunStart', 'onTestCaseResult', 'onTestFileResult', 'onRunComplete', 'getLastError'],
      api: ['caseKey', 'step', 'attach', 'param'],
    });
  });

  it('loads only the runtime and adapter entries of the core, not the engine, its HTTP client or zod', () => {
    const r = node(`
      const before = new Set(Object.keys(require.cache));
      const t = process.hrtime.bigint();
      require('./dist/index.cjs');
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      console.log(JSON.stringify({ ms, loaded: Object.keys(require.cache).filter((f) => !before.has(f)) }));`);
    const loaded = (r.loaded as string[]).map((f) => f.replace(/\\\\/g, '/'));
    const light = ['/jest/dist/index.cjs', '/core/dist/runtime.cjs', '/core/dist/adapter.cjs'];
    expect(loaded.filter((f) => !light.some((end) => f.endsWith(end)))).toEqual([]);
    expect(r.ms).toBeLessThan(200);
  });

  it('without the reporter the runtime API is a no-op: step runs its body, the others do nothing', () => {
    const r = node(`
      delete process.env.CASEBRIDGE_RUNTIME_DIR;
      const { caseKey, step, attach } = require('./dist/index.cjs');
      caseKey('DEMO-1');
      attach('x.txt', { body: 'x' });
      step('a step', () => 42).then((v) => console.log(JSON.stringify({ v })));`);
    expect(r).toEqual({ v: 42 });
  });
});
