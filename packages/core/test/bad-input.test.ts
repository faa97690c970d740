import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine, type EngineContext, loadConfig, TestManagementClient, type TestResult } from '../src/index.js';
import { clearFaults, setFaults, useEmulator } from './support/emulator.js';

/**
 * Bad input of every kind gets a clear message and the rest of the run is reported: fuzzed configuration,
 * malformed answers from the server (or a proxy in front of it), unusual titles and names, huge error messages.
 * And two transport guarantees: credentials never follow a redirect to another origin, and TLS verification is
 * never turned off silently.
 */

const emulator = useEmulator();
afterEach(async () => {
  await clearFaults(emulator());
});

function ctx(lines: string[] = []): EngineContext {
  return {
    cwd: mkdtempSync(join(tmpdir(), 'cb-bad-')),
    runner: { name: 'playwright' },
    env: {},
    out: (t) => lines.push(t),
    // The engine's waits (tries again after 1, 3, 6 s; the probe) 20 times shorter: the same path, not the same wait.
    timeScale: 20,
  };
}

function result(title: string, failed = false, message = 'boom', file = 't.spec.ts'): TestResult {
  return {
    id: `${file}>${title}`,
    file,
    titlePath: [title],
    tags: [],
    annotations: [],
    attempts: [
      {
        retry: 0,
        status: failed ? 'failed' : 'passed',
        durationMs: 3,
        errors: failed ? [{ message, stack: `Error: ${message.slice(0, 100)}\n    at ${file}:3:7` }] : [],
        steps: [],
        attachments: [],
      },
    ],
  };
}

const options = (extra: Record<string, unknown> = {}) => ({
  url: emulator().url,
  token: 'casebridge-dev-token',
  projectKey: 'DEMO',
  flushTimeoutMs: 15_000,
  ...extra,
});

describe('fuzzed configuration', () => {
  const KEYS = [
    'url',
    'token',
    'projectKey',
    'mode',
    'testPlan',
    'cycle',
    'attachments',
    'defects',
    'concurrency',
    'dryRun',
  ];

  it('loadConfig and Engine.create never throw; an invalid config names each field and disables reporting', () => {
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.object({ maxDepth: 2 }),
      fc.array(fc.string()),
    );
    const inline = fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 12 })), value, {
      maxKeys: 6,
    });
    const env = fc.dictionary(
      fc.constantFrom(
        'CASEBRIDGE_URL',
        'CASEBRIDGE_MODE',
        'CASEBRIDGE_CONCURRENCY',
        'CASEBRIDGE_DRY_RUN',
        'CASEBRIDGE_DEFECTS',
        'CASEBRIDGE_FLUSH_TIMEOUT_MS',
      ),
      fc.string({ maxLength: 20 }),
      { maxKeys: 4 },
    );
    fc.assert(
      fc.property(inline, env, (o, e) => {
        const loaded = loadConfig(o, { env: e, cwd: tmpdir() });
        if (!loaded.ok) {
          expect(loaded.problems.length).toBeGreaterThan(0);
          for (const p of loaded.problems) expect(typeof p === 'string' && p.length > 5).toBe(true);
        }
        const lines: string[] = [];
        const engine = Engine.create(o, { ...ctx(lines), env: e });
        expect(engine.enabled).toBe(loaded.ok && loaded.config.enabled);
        if (!loaded.ok) expect(lines.join('\n')).toContain('reporting is off for this run');
      }),
      { numRuns: 300, seed: 20261124 },
    );
  });

  it('a secret in an invalid configuration never appears in its problems', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 12, maxLength: 40 }).filter((s) => /^[\x21-\x7e]+$/.test(s)),
        (secret) => {
          const loaded = loadConfig(
            { url: 'not a url', token: secret, password: secret, projectKey: 7 },
            { env: {}, cwd: tmpdir() },
          );
          expect(loaded.ok).toBe(false);
          if (!loaded.ok) expect(loaded.problems.join('\n')).not.toContain(secret);
        },
      ),
      { numRuns: 100, seed: 7 },
    );
  });
});

describe('malformed answers', () => {
  it.each(['html', 'truncated', 'empty', 'wrong-types'] as const)(
    'a %s body from the service or a proxy: a clear line, the run goes on, results wait in the journal, a replay delivers them',
    async (kind) => {
      const emu = emulator();
      await setFaults(emu, [{ route: '/rest/synapse/**', malformedRate: 1, malformedKind: kind }]);
      const c = ctx();
      const lines: string[] = [];
      const cycle = `CI malformed ${kind}`;
      const run = Engine.create(options({ mode: 'cycle', testPlan: 'DEMO-1', cycle }), {
        ...c,
        out: (t) => lines.push(t),
      });
      run.begin({ tests: [result('DEMO-2 logs in')] });
      run.add(result('DEMO-2 logs in'));
      run.add(result('DEMO-5 pays', true));
      const end = await run.end();
      const text = lines.join('\n');
      expect(end.summary.journaled, text).toBe(2);
      expect(text).toMatch(/the service is not answering as it should \(.+\)/);
      expect(text).not.toMatch(/TypeError|SyntaxError|at .*\.ts:\d+/);
      await clearFaults(emu);
      const replay = Engine.create(options({ mode: 'cycle', testPlan: 'DEMO-1' }), { ...c, out: () => undefined });
      replay.begin();
      expect((await replay.end()).summary.journaled).toBe(0);
      const cy = emu.store.cycles.find((x) => x.name === cycle);
      const statuses = emu.store.runs
        .filter((r) => r.cycleId === cy?.id)
        .map((r) => [emu.store.issues.get(r.tcId)?.key, r.status])
        .sort();
      expect(statuses).toEqual([
        ['DEMO-2', 'Passed'],
        ['DEMO-5', 'Failed'],
      ]);
    },
  );
});

describe('unusual titles and names', () => {
  it('emoji, right-to-left text, a 10 kB title, `/ % # ?` in the cycle and suite names, a 5 MB error: all reported', async () => {
    const emu = emulator();
    const cycle = 'CI /%#? ☃ שלום 🚀';
    const long = `${'🚀 בדיקה mixed RTL '.repeat(500)}`.slice(0, 10_000);
    const huge = `expected ✓ but got ✗ ${'x'.repeat(5 * 1024 * 1024)}`;
    const lines: string[] = [];
    // On the real clock: the new case's read-back waits for Jira's index, which the emulator keeps in real time.
    const run = Engine.create(options({ mode: 'cycle', testPlan: 'DEMO-1', cycle, autoCreate: true }), {
      ...ctx(lines),
      timeScale: 1,
    });
    run.begin();
    run.add(result('DEMO-2 logs in 🔐 ✓'));
    run.add(result('DEMO-5 pays — مرحبا', true, huge));
    run.add(result(long, false, 'boom', 'tests/a%b#c?d/é 🚀.spec.ts'));
    const end = await run.end();
    expect(end.summary.problems, lines.join('\n')).toEqual([]);
    expect(end.summary.journaled).toBe(0);
    expect(end.summary.createdCases).toHaveLength(1);
    const cy = emu.store.cycles.find((x) => x.name === cycle);
    expect(cy, 'the cycle keeps its name').toBeDefined();
    const runs = emu.store.runs.filter((r) => r.cycleId === cy?.id);
    expect(runs).toHaveLength(3);
    const failed = runs.find((r) => emu.store.issues.get(r.tcId)?.key === 'DEMO-5');
    expect(failed?.status).toBe('Failed');
    expect(failed?.comment?.length ?? 0).toBeLessThan(10_000);
    const created = emu.store.issues.find((i) => i.key === end.summary.createdCases[0]);
    expect(created?.summary.length).toBeLessThanOrEqual(255);
    expect(created?.summary.startsWith('🚀 בדיקה')).toBe(true);
    // The defect keeps the Arabic title and the start of the 5 MB message, cut to a size Jira takes.
    const bug = emu.store.issues.find((i) => i.type === 'Bug' && i.summary.includes('مرحبا'));
    expect(bug?.summary).toContain('expected ✓ but got ✗');
    expect((bug?.description ?? '').length).toBeLessThan(20_000);
  });
});

describe('transport guarantees', () => {
  it('credentials never follow a redirect to another origin', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const other = createServer((req, res) => {
      seen.push(req.headers);
      res.end('{}');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const redirecting = createServer((_req, res) => {
      res.writeHead(302, { location: `${otherUrl}/rest/api/2/myself` });
      res.end();
    });
    await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', r));
    const tm = new TestManagementClient({
      baseUrl: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`,
      auth: { type: 'bearer', token: 'redirect-secret-token' },
      retry: { retries: 0 },
    });
    try {
      const err = await tm.jira.myself({}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(String((err as Error).message)).toMatch(/302/);
      expect(String((err as Error).message)).not.toContain('redirect-secret-token');
      expect(seen, 'the other origin was never contacted').toEqual([]);
    } finally {
      await tm.close();
      other.close();
      redirecting.close();
    }
  });

  it('TLS verification is on unless turned off explicitly, and then a warning says so', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    const logged: string[] = [];
    try {
      const on = new TestManagementClient({
        baseUrl: 'https://jira.example.test',
        auth: { type: 'bearer', token: 't0ken-aaaa' },
      });
      await on.close();
      const off = new TestManagementClient({
        baseUrl: 'https://jira.example.test',
        auth: { type: 'bearer', token: 't0ken-aaaa' },
        rejectUnauthorized: false,
        logger: (level, message) => logged.push(`${level} ${message}`),
      });
      await off.close();
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([
      'casebridge: TLS certificate verification is OFF for https://jira.example.test/ (rejectUnauthorized: false); give the CA with caFile instead',
    ]);
    expect(logged.some((l) => l.startsWith('warn casebridge: TLS certificate verification is OFF'))).toBe(true);
  });
});
