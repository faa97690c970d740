import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, run } from './runner.js';

/**
 * Jest fixtures: a CommonJS project (the repository's package.json says `type: module`) whose config lists the
 * reporter by package name, as a user's does. Jest's timing cache lives inside the fixture: with timings from an
 * earlier run, Jest runs a few fast files in band however many workers are asked for. The fixtures' tests are plain
 * CommonJS, so they go untransformed (`transform: {}`): Babel would cost each Jest process about 0.3 s of CPU to
 * load, with a cache that is new in every fixture. The reporter runs the same either way (it sees results, not
 * sources); the version matrix (Babel and ts-jest projects among them) and the example keep Jest's default.
 */
export function jestConfig(options: Record<string, unknown> = {}, extra = ''): string {
  return `module.exports = {
  testEnvironment: 'node',
  cacheDirectory: '<rootDir>/.jest-cache',
  transform: {},
  reporters: ['default', ['@casebridge/jest', ${JSON.stringify(options)}]],
  ${extra}
};
`;
}

export const JEST_PACKAGE = `${JSON.stringify({ name: 'casebridge-jest-fixture', private: true, type: 'commonjs' })}\n`;

/** `npx jest` in a fixture, with the repository's Jest (30.x). */
export function jest(cwd: string, args: string[], env: Record<string, string | undefined> = {}) {
  return run(join(ROOT, 'node_modules', '.bin', 'jest'), ['--ci', ...args], cwd, env);
}

/**
 * `jest --watchAll` in a fixture until its output matches `until` (then a grace period, for what follows the
 * match), then stopped: watch mode never exits on its own.
 */
export function jestWatch(
  cwd: string,
  env: Record<string, string | undefined>,
  until: RegExp,
  graceMs = 1500,
  timeoutMs = 60_000,
): Promise<{ output: string; matched: boolean }> {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('CASEBRIDGE_') && !k.startsWith('GITHUB_') && k !== 'CI' && k !== 'VITEST') base[k] = v;
  }
  return new Promise((resolve) => {
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'jest'), ['--watchAll'], {
      cwd,
      env: { ...base, FORCE_COLOR: '0', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let matched = false;
    const stop = () => {
      clearTimeout(timer);
      child.kill('SIGTERM');
    };
    const timer = setTimeout(stop, timeoutMs);
    const onData = (d: Buffer) => {
      output += d.toString();
      if (!matched && until.test(output)) {
        matched = true;
        setTimeout(stop, graceMs);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', () => resolve({ output, matched }));
  });
}
