import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCli } from '../src/cli-options.js';
import type { RunningEmulator } from '../src/index.js';
import { allKeys, call, REPO, TM } from './helpers.js';
import { type CliProcess, ensureBuilt, runCli, startCli, stopCli } from './spawn.js';

/**
 * The built command line, run as a child process: options, errors (exit code 2) and fault flags. Its checks of the
 * arguments run in process (parseCli, what the command calls first): a spawn each cost about 0.4 CPU-s.
 */

const PLAN = `${TM}/testPlan/DEMO-1`;
const dir = mkdtempSync(join(tmpdir(), 'casebridge-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(ensureBuilt, 240_000);

/** `call` needs only the URL. */
const at = (cli: CliProcess) => ({ url: cli.url }) as RunningEmulator;

/** Starts the CLI with `args`, runs `body`, and always stops it. */
async function withCli(args: string[], body: (cli: CliProcess) => Promise<void>): Promise<void> {
  const cli = await startCli(['--port', '0', ...args]);
  try {
    await body(cli);
  } finally {
    await stopCli(cli);
  }
}

const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};

describe('help and argument errors', () => {
  it('--help and -h print the usage and exit 0', async () => {
    for (const flag of ['--help', '-h']) {
      const r = await runCli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^casebridge-emulator:/);
      expect(r.stdout).toContain('Usage: casebridge-emulator [options]');
      for (const option of ['--port', '--seed', '--variant', '--data', '--error-rate', '--fault-seed']) {
        expect(r.stdout).toContain(option);
      }
      expect(r.stderr).toBe('');
    }
  });

  it('exits 2 with the message and a pointer to --help on a bad argument', async () => {
    const r = await runCli(['--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^casebridge-emulator: Unknown option '--bogus'/);
    expect(r.stderr).toContain('--help');
    expect(r.stdout).toBe('');
    const value = await runCli(['--port', 'eighty']);
    expect(value.code).toBe(2);
    expect(value.stderr).toBe('casebridge-emulator: --port expects a number, got "eighty"\n');
  });

  it('refuses a bad flag, a missing value or a stray argument (parsed in process: the command prints the message)', () => {
    const cases: [string[], RegExp][] = [
      [['--bogus'], /Unknown option '--bogus'/],
      [['--port'], /--port.*argument missing/],
      [['stray'], /Unexpected argument 'stray'/],
    ];
    for (const [args, message] of cases) expect(() => parseCli(args), args.join(' ')).toThrow(message);
  });

  it('names the option and the value it got', () => {
    const cases: [string[], RegExp][] = [
      [['--port', 'eighty'], /--port expects a number, got "eighty"/],
      [['--variant', 'x'], /--variant expects id or ID, got "x"/],
      [['--timestamps', 'unix'], /--timestamps expects iso, legacy or epoch, got "unix"/],
      [['--error-rate', '503'], /--error-rate expects STATUS=PROBABILITY pairs .*got "503"/],
      [['--error-rate', '418=1'], /--error-rate: status 418 cannot be injected; use 429, 500, 502, 503, 504/],
      [['--error-rate', '503=2'], /--error-rate: Too big: expected number to be <=1/],
      [['--reset-rate=-1'], /--reset-rate: Too small/],
      [['--hang-rate', '1.5'], /--hang-rate: Too big/],
      [['--latency', 'slow'], /--latency expects a number, got "slow"/],
      [['--rate-limit', '0'], /--rate-limit expects requests per second above 0, got "0"/],
    ];
    for (const [args, message] of cases) expect(() => parseCli(args), args.join(' ')).toThrow(message);
  });

  it('exits 2 when the port is taken', async () => {
    await withCli([], async (cli) => {
      const r = await runCli(['--port', String(cli.port)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/EADDRINUSE/);
    });
  });
});

describe('starting', () => {
  it('--port 0 prints the URL it listens on and serves; SIGTERM and SIGINT stop it cleanly', async () => {
    const cli = await startCli(['--port', '0']);
    expect(cli.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(cli.port).toBeGreaterThan(0);
    expect(cli.stdout()).toContain(`${cli.url}/rest/synapse/latest/public`);
    expect(cli.stdout()).toContain('variant id, timestamps iso, state in memory');
    expect((await call(at(cli), 'GET', '/__emulator/health')).json.ok).toBe(true);
    expect((await call(at(cli), 'GET', `${PLAN}/members`)).json).toHaveLength(6);
    expect(await stopCli(cli, 'SIGTERM')).toBe(0);
    const again = await startCli(['--port', '0']);
    expect(await stopCli(again, 'SIGINT')).toBe(0);
  });

  it('--demo describes the demo data', async () => {
    await withCli(['--demo'], async (cli) => {
      expect(cli.stdout()).toContain('Demo data: project DEMO, test plan DEMO-1');
      expect(cli.stdout()).toContain(`curl -u admin:admin ${cli.url}${PLAN}/members`);
    });
  });

  it('--variant ID spells identifiers ID', async () => {
    await withCli(['--variant', 'ID'], async (cli) => {
      expect(cli.stdout()).toContain('variant ID, timestamps legacy');
      const members = await call(at(cli), 'GET', `${PLAN}/members`);
      expect(members.status).toBe(200);
      const keys = allKeys(members.json);
      expect(keys.has('ID')).toBe(true);
      expect(keys.has('id')).toBe(false);
    });
  });
});

describe('--seed', () => {
  it('loads a valid custom seed file', async () => {
    const seed = file('seed.json', {
      users: [{ name: 'qa', password: 'secret', tokens: ['qa-token'] }],
      projects: [
        {
          key: 'ACME',
          name: 'Acme',
          issues: [
            { type: 'Test Plan', summary: 'Acme plan', members: ['ACME-2'] },
            { type: 'Test Case', summary: 'Acme case', steps: [{ step: 'do', expectedResult: 'done' }] },
          ],
        },
      ],
    });
    await withCli(['--seed', seed], async (cli) => {
      const members = await call(at(cli), 'GET', `${TM}/testPlan/ACME-1/members`, { auth: 'Bearer qa-token' });
      expect(members.status).toBe(200);
      expect(members.json).toMatchObject([{ testCaseKey: 'ACME-2', testCaseSummary: 'Acme case' }]);
      expect((await call(at(cli), 'GET', `${PLAN}/members`, { auth: 'Bearer qa-token' })).status).toBe(404);
      // The demo users are not there.
      expect((await call(at(cli), 'GET', `${TM}/testPlan/ACME-1/members`)).status).toBe(401);
    });
  });

  it('--seed empty starts with the users only', async () => {
    await withCli(['--seed', 'empty'], async (cli) => {
      expect((await call(at(cli), 'GET', `${PLAN}/members`)).status).toBe(404);
    });
  });

  it('refuses an invalid seed file, listing every bad field', async () => {
    const seed = file('bad-seed.json', {
      users: [],
      projects: [{ key: 'acme', name: '', issues: [{ type: 'Test Case' }] }],
      colour: 'red',
    });
    const r = await runCli(['--port', '0', '--seed', seed]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`seed file ${seed} is invalid`);
    for (const field of ['users', 'projects.0.key', 'projects.0.name', 'projects.0.issues.0.summary']) {
      expect(r.stderr).toMatch(new RegExp(`^\\s+${field.replace(/\./g, '\\.')}: `, 'm'));
    }
    expect(r.stderr).toMatch(/colour/);
  });

  it('refuses a missing or unreadable seed file', async () => {
    const missing = await runCli(['--port', '0', '--seed', join(dir, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read seed file .*nope\.json/);
    const broken = await runCli(['--port', '0', '--seed', file('broken.json', '{"users": [')]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/cannot read seed file .*broken\.json/);
  });
});

describe('fault flags', () => {
  it('--error-rate 503=1 makes every service request 503 (the admin endpoints still answer)', async () => {
    await withCli(['--error-rate', '503=1'], async (cli) => {
      expect(cli.stdout()).toContain('1 fault rule(s)');
      for (const [method, path] of [
        ['GET', `${PLAN}/members`],
        ['POST', `${PLAN}/addCycle`],
        ['GET', `${TM}/no/such/thing`],
        ['GET', '/rest/api/2/myself'],
        ['GET', `${REPO}/authentication/v1/validateSession`],
      ] as const) {
        const r = await call(at(cli), method, path, method === 'POST' ? { body: { name: 'x' } } : {});
        expect(r.status, path).toBe(503);
        expect(r.headers.get('retry-after')).toBe('1');
      }
      expect((await call(at(cli), 'GET', '/__emulator/health')).status).toBe(200);
    });
  });

  it('--latency with --fault-route slows only the matching paths', async () => {
    await withCli(['--latency', '200', '--fault-route', '**/members'], async (cli) => {
      const started = performance.now();
      expect((await call(at(cli), 'GET', `${PLAN}/members`)).status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(195);
      const rules = (await call(at(cli), 'GET', '/__emulator/faults')).json.rules;
      expect(rules).toMatchObject([{ route: '**/members', latencyMs: 200 }]);
    });
  });

  it('--fault-seed makes the dice repeatable', async () => {
    const sequence = async () => {
      const out: number[] = [];
      await withCli(['--error-rate', '503=0.5', '--fault-seed', '11'], async (cli) => {
        for (let i = 0; i < 30; i++) out.push((await call(at(cli), 'GET', `${PLAN}/members`)).status);
      });
      return out;
    };
    const a = await sequence();
    expect(await sequence()).toEqual(a);
    expect(new Set(a)).toEqual(new Set([200, 503]));
  });

  it('--faults FILE loads rules; a bad file is refused naming the file, rule and field', async () => {
    const rules = file('faults.json', [
      { route: '**/cycles', errors: { '502': 1 } },
      { methods: ['POST'], resetRate: 1 },
    ]);
    await withCli(['--faults', rules], async (cli) => {
      expect(cli.stdout()).toContain('2 fault rule(s)');
      expect((await call(at(cli), 'GET', `${PLAN}/cycles`)).status).toBe(502);
      expect((await call(at(cli), 'GET', `${PLAN}/members`)).status).toBe(200);
      await expect(call(at(cli), 'POST', `${PLAN}/addCycle`, { body: { name: 'x' } })).rejects.toThrow();
    });
    const bad = file('bad-faults.json', [{ route: '**' }, { hangRate: 2 }]);
    expect(() => parseCli(['--faults', bad])).toThrow(`invalid fault rules in ${bad}: rule 1, field hangRate: Too big`);
    expect(() => parseCli(['--faults', file('object.json', { route: '**' })])).toThrow(/must hold a JSON array/);
    expect(() => parseCli(['--faults', file('broken-faults.json', '[{')])).toThrow(
      /--faults: cannot read .*broken-faults\.json/,
    );
  });

  it('--rate-limit answers 429 above the rate', async () => {
    await withCli(['--rate-limit', '3'], async (cli) => {
      const statuses = await Promise.all(
        Array.from({ length: 15 }, () => call(at(cli), 'GET', `${PLAN}/members`).then((r) => r.status)),
      );
      expect(statuses).toContain(200);
      expect(statuses).toContain(429);
    });
  });
});
