import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Helpers for tests that run the BUILT command line (`packages/emulator/dist/cli.js`) as a child process: the CLI
 * itself, and a crash (kill -9) of a real emulator process. Tests build nothing unless dist is missing.
 */

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const CLI = join(ROOT, 'packages', 'emulator', 'dist', 'cli.js');
const CORE = join(ROOT, 'packages', 'core', 'dist', 'contract.js');
const LOCK = join(ROOT, 'node_modules', '.casebridge-test-build-lock');

/**
 * Builds core and the emulator once when their dist is missing. Test files run in parallel processes: a lock
 * folder (mkdir is atomic) makes one build and the others wait for it.
 */
export async function ensureBuilt(): Promise<void> {
  if (existsSync(CLI) && existsSync(CORE)) return;
  let owner = false;
  try {
    mkdirSync(LOCK);
    owner = true;
  } catch {
    // Someone else builds: wait for the lock to go.
  }
  if (owner) {
    try {
      execFileSync('npm', ['run', 'build', '-w', '@casebridge/core', '-w', '@casebridge/emulator'], {
        cwd: ROOT,
        stdio: 'pipe',
        timeout: 180_000,
      });
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  } else {
    const deadline = Date.now() + 180_000;
    while (existsSync(LOCK) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  }
  if (!existsSync(CLI)) throw new Error(`${CLI} is still missing after the build`);
}

export interface CliProcess {
  proc: ChildProcess;
  /** Base URL from the "listening on" line. */
  url: string;
  port: number;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or the signal name) once the process has ended. */
  exited: Promise<number | string>;
}

/** Starts the CLI and resolves once it prints the URL it listens on. */
export function startCli(args: readonly string[], timeoutMs = 20_000): Promise<CliProcess> {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exited = new Promise<number | string>((resolve) =>
    proc.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the emulator did not print its URL within ${timeoutMs} ms:\n${out}\n${err}`));
    }, timeoutMs);
    proc.stdout?.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        const url = m[1];
        resolve({ proc, url, port: Number(new URL(url).port), stdout: () => out, stderr: () => err, exited });
      }
    });
    proc.stderr?.on('data', (d) => {
      err += d;
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the emulator exited (${code}) before listening:\n${out}\n${err}`));
    });
  });
}

/** Stops a started CLI with a signal and waits for it to end. */
export async function stopCli(cli: CliProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | string> {
  if (cli.proc.exitCode === null && cli.proc.signalCode === null) cli.proc.kill(signal);
  return cli.exited;
}

/** Runs the CLI to its end (for --help and argument errors); kills it after `timeoutMs`. */
export function runCli(
  args: readonly string[],
  timeoutMs = 15_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => {
    stdout += d;
  });
  proc.stderr.on('data', (d) => {
    stderr += d;
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
