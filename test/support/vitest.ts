import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ROOT, run } from './runner.js';
import type { RunState } from './state.js';

/**
 * Running the real Vitest on fixture projects, in child processes: never the adapter inside the Vitest process
 * that runs our suite.
 */

/** `npx vitest <args>` in a fixture, with the repository's Vitest. */
export function vitest(cwd: string, args: string[], env: Record<string, string | undefined> = {}) {
  return run(join(ROOT, 'node_modules', '.bin', 'vitest'), args, cwd, env);
}

/** The environment of a child runner: ours without CASEBRIDGE_* and Vitest's own markers, plus `env`. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('CASEBRIDGE_') && !k.startsWith('VITEST') && k !== 'CI' && k !== 'NODE_ENV') base[k] = v;
  }
  return { ...base, FORCE_COLOR: '0', ...env };
}

/** A long-running `vitest --watch` whose output can be awaited line by line, then stopped. */
export class WatchedVitest {
  private readonly child: ChildProcess;
  output = '';

  constructor(cwd: string, args: string[], env: Record<string, string | undefined>) {
    this.child = spawn(join(ROOT, 'node_modules', '.bin', 'vitest'), ['--watch', ...args], {
      cwd,
      env: childEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const add = (d: Buffer) => {
      this.output += d.toString();
    };
    this.child.stdout?.on('data', add);
    this.child.stderr?.on('data', add);
  }

  /** Waits until `pattern` has matched `count` times in the output so far. */
  async waitFor(pattern: RegExp, count = 1, timeoutMs = 60_000): Promise<void> {
    const global = new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`);
    const deadline = Date.now() + timeoutMs;
    while ((this.output.match(global)?.length ?? 0) < count) {
      if (Date.now() > deadline || this.child.exitCode !== null) {
        throw new Error(`waited for ${count} × ${pattern} in vitest --watch output:\n${this.output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops the watcher (the child's own pid only) and waits for it to exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin?.write('q');
    this.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** A 1×1 PNG: the failing test attaches it inside a step. */
export const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d1a30000000049454e44ae426082',
  'hex',
);
export const LOG_TEXT = 'profile rendered for Dana Demo\n';

/**
 * The fixture project: two files, so two workers run at once. Keys in a title, a bracketed title, an annotation
 * (`annotate(key, 'testCase')`), the runtime's `caseKey` and `task.meta`; runtime steps (one failing), a PNG attached
 * inside a step, a text file attached from a worker, a test that passes on its retry (its steps
 * must come from the last try), and one without a key.
 * Works with Vitest 3.2 and later (`annotate` came in 3.2).
 */
export const VITEST_FILES: Record<string, string> = {
  'vitest.config.mjs': `
import { defineConfig } from 'vitest/config';
export default defineConfig({
  test: {
    include: ['tests/**/*.spec.ts'],
    reporters: process.env.VT_BLOB
      ? ['blob']
      : ['default', ['@casebridge/vitest', { attachments: { others: true } }]],
  },
});
`,
  'tests/account.spec.ts': `
import { expect, test } from 'vitest';
import { attach, step } from '@casebridge/vitest';

test('DEMO-2 logs in', async () => {
  await step('Open the login page', async () => {});
  await step('Enter user name and password', async () => {});
  await step('Press "Log in"', async () => {});
});

let tries = 0;
test('logs out', { retry: 1 }, async ({ annotate }) => {
  await annotate('DEMO-3', 'testCase');
  tries += 1;
  await step('Open the user menu', async () => {});
  await step('Choose "Log out"', async () => {
    expect(tries, 'passes on the second attempt').toBe(2);
  });
});

test('profile page shows the user name', ({ task }) => {
  (task.meta as Record<string, unknown>).testCase = 'DEMO-6';
  attach('render.log', { body: ${JSON.stringify(LOG_TEXT)}, contentType: 'text/plain' });
});
`,
  'tests/shop.spec.ts': `
import { describe, expect, test } from 'vitest';
import { attach, caseKey, step } from '@casebridge/vitest';

const PNG = Buffer.from('${PNG.toString('hex')}', 'hex');

describe('checkout', () => {
  test('pays with the saved card', async () => {
    caseKey('DEMO-5');
    await step('Add a product to the cart', async () => {});
    await step('Open checkout', async () => {
      attach('screenshot', { body: PNG, contentType: 'image/png' });
      expect(2, 'the saved card is preselected').toBe(1);
    });
    await step('Place the order', async () => {});
  });
});

test('[DEMO-4] search finds the teapot', () => {});

test('has no key', () => {});
`,
};

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
export const PNG_SHA = sha(PNG);
export const LOG_SHA = sha(LOG_TEXT);

/** The emulator state a fault-free cycle-mode run of VITEST_FILES leaves. */
export function expected(state: RunState[]): void {
  const by = Object.fromEntries(state.map((r) => [r.key, r]));
  expect(by['DEMO-2']).toMatchObject({ status: 'Passed', steps: ['Passed', 'Passed', 'Passed'], comment: false });
  expect(by['DEMO-3'], 'flaky: passed, the steps of the last try, a comment naming the failed try').toMatchObject({
    status: 'Passed',
    steps: ['Passed', 'Passed'],
    comment: true,
  });
  expect(by['DEMO-4']).toMatchObject({ status: 'Passed', files: [] });
  expect(by['DEMO-5']).toMatchObject({
    status: 'Failed',
    steps: ['Passed', 'Failed', 'Not Tested'],
    comment: true,
    files: [PNG_SHA],
  });
  expect(by['DEMO-5']?.bugs).toHaveLength(1);
  expect(by['DEMO-6']).toMatchObject({ status: 'Passed', files: [LOG_SHA] });
  expect(new Set(state.map((r) => r.key)).size, 'one run per case').toBe(state.length);
}
