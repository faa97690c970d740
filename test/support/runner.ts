import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

/**
 * End-to-end tests write small fixture projects and run the real runners on them as child processes. Fixtures live
 * under `test/.fixtures/` (ignored by git) so the runners resolve `@playwright/test` and our packages from the
 * repository's node_modules, exactly as a user's project resolves them from its own.
 */

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** The file in a fixture folder that names the test file writing it. */
const OWNER = '.written-by';

/**
 * Creates (or empties) a fixture folder and writes its files. A name belongs to one test file: the files run side by
 * side, and two writing one folder see each other's tests (a name another test file wrote throws).
 */
export function fixture(name: string, files: Record<string, string>): string {
  const dir = join(ROOT, 'test', '.fixtures', name);
  const me = expect.getState().testPath ?? '';
  const other = existsSync(join(dir, OWNER)) ? readFileSync(join(dir, OWNER), 'utf8') : '';
  if (me && other && other !== me && existsSync(other)) {
    throw new Error(
      `fixture "${name}" is also written by ${relative(ROOT, other)}: give each test file fixture names of its own`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  if (me) writeFileSync(join(dir, OWNER), me);
  for (const [path, text] of Object.entries(files)) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return dir;
}

export interface RunOutput {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Milliseconds from start to exit. */
  ms: number;
}

/** Runs a command in `cwd` with the environment given (added to a clean copy of ours, without CASEBRIDGE_*). */
export function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string | undefined> = {},
  timeoutMs = 180_000,
): Promise<RunOutput> {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('CASEBRIDGE_') && !k.startsWith('GITHUB_') && k !== 'CI' && k !== 'VITEST') base[k] = v;
  }
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...base, FORCE_COLOR: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** `npx playwright test` in a fixture. */
export function playwright(cwd: string, args: string[], env: Record<string, string | undefined> = {}) {
  return run(join(ROOT, 'node_modules', '.bin', 'playwright'), args, cwd, env);
}

/** A local port nothing listens on: a service that is down. */
export function closedPort(): Promise<number> {
  return new Promise((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => done(port));
    });
  });
}
