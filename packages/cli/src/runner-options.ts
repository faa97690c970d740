import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stripAnsi } from '@casebridge/core/adapter';
import { type Exit, runNode } from './node-process.js';
import type { Runner } from './sync/list.js';

/**
 * The casebridge reporter's options as a project's runner configs give them, so `doctor` and `replay` see the
 * settings a working reporter sees. Each config is read by its runner, loaded from the project, so TypeScript
 * configs, `defineConfig(...)`, conditionals on the environment and imports all work as in a real run:
 * - Playwright: `playwright test --list --reporter=<probe> <a filter that matches no file>`; Playwright loads the
 *   config and creates only our probe reporter, which reads the config's own `reporter` list from the module
 *   Playwright loaded (the JSON report's `config.reporter` is the `--reporter` override, not the config's list).
 *   List mode starts no web server and no global setup; the filter keeps test files from being loaded.
 * - Vitest: `resolveConfig({ root })` from the project's `vitest/node`, in a child Node process.
 * - Jest: `jest --showConfig` (JSON on stdout; `globalConfig.reporters` holds resolved paths).
 * A config is evaluated in a child process only: its side effects never reach the caller. The runners are asked
 * in parallel, each bounded by a timeout; a runner is asked only when its config file names casebridge.
 */

export interface RunnerOptions {
  runner: Runner;
  /** Absolute path of the config file (of package.json for a `jest` key there). */
  configFile: string;
  /**
   * The casebridge reporter's options as the config gives them (`{}` when listed without options), as JSON:
   * functions and RegExps are dropped. They may hold credentials: keep them in memory, never print them.
   */
  options?: Record<string, unknown>;
  /** Why the config could not be read, one line. Set exactly when `options` is not. */
  problem?: string;
}

export interface ReadRunnerOptionsOptions {
  /** Per runner; 60 s by default (a cold TypeScript transform on a loaded machine takes seconds). */
  timeoutMs?: number;
}

/** Prefix of the line a child prints its answer on: a config may print to stdout too. */
const MARK = 'casebridge-runner-options:';

export const INSTANCE_NOT_READABLE = 'reporter instance: options not readable; put them in casebridge.config.json';

/** In each runner's own lookup order. */
const CONFIG_FILES: Record<Runner, string[]> = {
  playwright: ['ts', 'js', 'mts', 'mjs', 'cts', 'cjs'].map((x) => `playwright.config.${x}`),
  vitest: ['vitest', 'vite'].flatMap((n) => ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs'].map((x) => `${n}.config.${x}`)),
  jest: ['js', 'ts', 'mjs', 'cjs', 'cts', 'json'].map((x) => `jest.config.${x}`),
};

/**
 * Reads the casebridge reporter's options from every runner config in `dir` that names casebridge: one element
 * per such config, with `options`, or with a `problem` when the runner could not load it (not installed, syntax
 * error, timeout). Configs that list no casebridge reporter are left out. Never throws for a project's fault.
 * Costs one child process per runner whose config names casebridge, run in parallel (on 2 cores, small projects:
 * Playwright ~1.5 s, Vitest ~0.7 s, Jest ~0.25 s; Playwright globs the test folders but loads no test file).
 */
export async function readRunnerOptions(
  dir: string,
  env: NodeJS.ProcessEnv,
  opts: ReadRunnerOptionsOptions = {},
): Promise<RunnerOptions[]> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const found = (['playwright', 'vitest', 'jest'] as const).flatMap((runner) => {
    const config = findConfig(dir, runner);
    return config && /casebridge/i.test(config.text) ? [{ runner, configFile: config.file }] : [];
  });
  if (found.length === 0) return [];
  const tmp = mkdtempSync(join(tmpdir(), 'casebridge-runner-options-'));
  try {
    const read = await Promise.all(
      found.map(async (c): Promise<RunnerOptions | undefined> => {
        const r = await ask(dir, c.runner, env, tmp, timeoutMs);
        if ('problem' in r) return { ...c, problem: `could not read ${basename(c.configFile)}: ${r.problem}` };
        const picked = pick(r.entries);
        return picked && { ...c, ...picked };
      }),
    );
    return read.filter((x) => x !== undefined);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function findConfig(dir: string, runner: Runner): { file: string; text: string } | undefined {
  for (const name of CONFIG_FILES[runner]) {
    const file = join(dir, name);
    if (existsSync(file)) return { file, text: readFileSync(file, 'utf8') };
  }
  if (runner !== 'jest') return undefined;
  const file = join(dir, 'package.json');
  try {
    const jest = (JSON.parse(readFileSync(file, 'utf8')) as { jest?: unknown }).jest;
    return jest === undefined ? undefined : { file, text: JSON.stringify(jest) };
  } catch {
    return undefined;
  }
}

/** A reporter as a child reports it: a name (or path) with options, or a Vitest reporter instance. */
interface Entry {
  name?: string;
  /** Class names of an instance, from its own class up (a subclass of ours still counts). */
  instance?: string;
  options?: unknown;
  /** The options could not be copied as JSON (a cycle, a BigInt inside an array...). */
  unreadable?: boolean;
}

type Answer = { entries: Entry[] } | { problem: string };

async function ask(dir: string, runner: Runner, env: NodeJS.ProcessEnv, tmp: string, ms: number): Promise<Answer> {
  const req = createRequire(join(dir, 'package.json'));
  const resolve = (spec: string) => {
    try {
      return req.resolve(spec);
    } catch {
      return undefined;
    }
  };
  if (runner === 'playwright') {
    const pkg = resolve('@playwright/test/package.json') ?? resolve('playwright/package.json');
    if (!pkg) return { problem: notInstalled('@playwright/test', dir) };
    const probe = join(tmp, 'playwright-probe.cjs');
    writeFileSync(probe, PLAYWRIGHT_PROBE);
    // A regex no path matches: Playwright loads the config, creates the reporters, and loads no test file.
    const args = [join(dirname(pkg), 'cli.js'), 'test', '--list', `--reporter=${probe}`, '^\\b\\B$'];
    return answer(await exec(dir, args, env, ms), 'playwright test --list', ms);
  }
  if (runner === 'vitest') {
    const node = resolve('vitest/node');
    if (!node) return { problem: notInstalled('vitest', dir) };
    const args = ['--input-type=module', '-e', VITEST_SCRIPT, pathToFileURL(node).href, dir, MARK];
    return answer(await exec(dir, args, env, ms), 'vitest resolveConfig', ms);
  }
  const pkg = resolve('jest/package.json');
  if (!pkg) return { problem: notInstalled('jest', dir) };
  const r = await exec(dir, [join(dirname(pkg), 'bin', 'jest.js'), '--showConfig'], env, ms);
  if (r.timedOut || r.code !== 0) return { problem: failure(r, 'jest --showConfig', ms) };
  try {
    const doc = JSON.parse(r.out.slice(Math.max(0, r.out.search(/^\{/m)))) as {
      globalConfig?: { reporters?: Array<[string, unknown] | string> };
    };
    const entries = (doc.globalConfig?.reporters ?? []).map((x) =>
      typeof x === 'string' ? { name: x } : { name: String(x[0]), options: x[1] },
    );
    return { entries };
  } catch {
    // Not quoted: what it printed is the config, options and credentials included.
    return { problem: 'jest --showConfig did not print its config as JSON' };
  }
}

const notInstalled = (pkg: string, dir: string) =>
  `${pkg} is not installed in ${dir}: install the project's dependencies first`;

/** The answer line of a probe or script, else why there is none. */
function answer(r: Exit, what: string, ms: number): Answer {
  const line = r.out.split('\n').findLast((l) => l.startsWith(MARK));
  if (!line) return { problem: failure(r, what, ms) };
  try {
    const a = JSON.parse(line.slice(MARK.length)) as { entries: Entry[] } | { error: string };
    return 'error' in a ? { problem: oneLine(a.error) } : a;
  } catch {
    return { problem: `${what} printed a broken answer line` };
  }
}

function failure(r: Exit, what: string, ms: number): string {
  if (r.timedOut) return `${what} did not finish in ${Math.round(ms / 1000)} s (does the config wait on something?)`;
  const text = oneLine(r.err) || oneLine(r.out);
  return text || `${what} exited with ${r.signal ? `signal ${r.signal}` : `code ${r.code}`} and printed nothing`;
}

/**
 * What a runner's error output says went wrong, on one line, without ANSI codes: the first error line and the error
 * lines right after it ("Failed to parse jest.config.ts" then "'ts-node' is required"), or the line after a heading.
 * Never a code frame nor a dump of the config: the lines around an error may hold a token.
 */
export function oneLine(text: string): string {
  const lines = stripAnsi(text)
    .split('\n')
    .map((l) => l.trim());
  const start = lines.findIndex((l) => /error\b|error:|\bcannot\b|\bfailed\b/i.test(l) && !l.startsWith('at '));
  if (start < 0) return (lines.find((l) => l !== '') ?? '').slice(0, 300);
  const parts = [lines[start] ?? ''];
  for (const l of lines.slice(start + 1)) {
    if (l === '') continue;
    // After a heading ("● Reporter Validation Error:") its first line; then only more error lines.
    if (!parts.at(-1)?.endsWith(':') && !/^(\w*Error\b|\[\w+\])/.test(l)) break;
    parts.push(l);
  }
  return parts
    .map((p) => p.replace(/^(● |Error: )/, '').replace(/:$/, ''))
    .join('; ')
    .slice(0, 300);
}

/** The casebridge reporter of a runner's list, if any. */
function pick(entries: Entry[]): Pick<RunnerOptions, 'options' | 'problem'> | undefined {
  for (const e of entries) {
    const ours = e.name !== undefined ? isCasebridge(e.name) : /casebridge/i.test(e.instance ?? '');
    if (!ours) continue;
    if (e.unreadable) return { problem: 'the reporter options could not be copied as JSON (a cycle or a BigInt?)' };
    if (e.name === undefined && !isRecord(e.options)) return { problem: INSTANCE_NOT_READABLE };
    return { options: isRecord(e.options) ? e.options : {} };
  }
  return undefined;
}

/**
 * A reporter name or path is ours when it says casebridge, or (Jest resolves reporter paths, and a workspace link
 * resolves outside any folder named so) when the package it lies in is named so.
 */
function isCasebridge(name: string): boolean {
  if (/casebridge/i.test(name)) return true;
  if (!isAbsolute(name)) return false;
  for (let d = dirname(name); ; d = dirname(d)) {
    let pkg: { name?: unknown } | undefined;
    try {
      pkg = JSON.parse(readFileSync(join(d, 'package.json'), 'utf8')) as { name?: unknown };
    } catch {
      // No package.json here: look further up.
    }
    // The nearest package.json with a name decides (a nameless one only sets the module type of its folder).
    if (typeof pkg?.name === 'string') return /casebridge/i.test(pkg.name);
    if (dirname(d) === d) return false;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function exec(dir: string, args: string[], env: NodeJS.ProcessEnv, ms: number): Promise<Exit> {
  return runNode(dir, args, { ...env, FORCE_COLOR: '0', NO_COLOR: '1' }, ms);
}

/**
 * Copies a value as JSON (functions and RegExps dropped, BigInts as strings); `{ unreadable: true }` when it
 * cannot be. Shared by both child scripts.
 */
const COPY = `const copy = (v) => {
  try {
    const drop = (k, x) => (typeof x === 'function' || typeof x === 'symbol' || x instanceof RegExp ? undefined : typeof x === 'bigint' ? String(x) : x);
    return { options: JSON.parse(JSON.stringify(v ?? {}, drop) ?? '{}') };
  } catch {
    return { unreadable: true };
  }
};`;

/**
 * Playwright reporter, CommonJS. The config's `reporter` list is read from the module Playwright loaded (CommonJS
 * cache, else the ES module cache: `import()` of the same URL evaluates nothing again), as Playwright reads it.
 * `onBegin` is not awaited: the work is awaited in `onEnd`, the answer flushed before Playwright exits.
 */
const PLAYWRIGHT_PROBE = `'use strict';
const { pathToFileURL } = require('node:url');
${COPY}
async function read(file) {
  const cached = require.cache[file];
  const mod = cached ? cached.exports : await import(pathToFileURL(file).href);
  const config = mod && typeof mod === 'object' && 'default' in mod ? mod.default : mod;
  const list = typeof config?.reporter === 'string' ? [[config.reporter]] : Array.isArray(config?.reporter) ? config.reporter : [];
  return { entries: list.map((e) => (Array.isArray(e) ? { name: String(e[0]), ...copy(e[1]) } : { name: String(e) })) };
}
module.exports = class CasebridgeOptionsProbe {
  printsToStdio() { return true; }
  onBegin(config) {
    this.answer = read(config.configFile).catch((e) => ({ error: String(e?.message ?? e) }));
  }
  async onEnd() {
    const a = (await this.answer) ?? { error: 'Playwright did not start the listing' };
    await new Promise((done) => process.stdout.write(${JSON.stringify(MARK)} + JSON.stringify(a) + '\\n', done));
  }
};
`;

/** Vitest, ES module run with `node -e`: argv is [vitest/node URL, root, answer mark]. */
const VITEST_SCRIPT = `const [url, root, mark] = process.argv.slice(1);
${COPY}
const classes = (o) => {
  const names = [];
  for (let p = Object.getPrototypeOf(o); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) names.push(p.constructor?.name ?? '');
  return names.join(' ');
};
const entry = (r) => {
  if (Array.isArray(r)) return { name: typeof r[0] === 'string' ? r[0] : classes(r[0]), ...copy(r[1]) };
  if (typeof r === 'string') return { name: r };
  const o = r?.options;
  return { instance: classes(r), ...(o && typeof o === 'object' ? copy(o) : {}) };
};
let answer;
try {
  const vitest = await import(url);
  if (typeof vitest.resolveConfig !== 'function') answer = { error: 'this Vitest version does not export resolveConfig from vitest/node' };
  else {
    const { vitestConfig } = await vitest.resolveConfig({ root });
    answer = { entries: (vitestConfig.reporters ?? []).map(entry) };
  }
} catch (e) {
  answer = { error: String(e?.message ?? e) };
}
// A config may leave a server or a timer running: exit once the answer is out.
process.stdout.write(mark + JSON.stringify(answer) + '\\n', () => process.exit(0));
`;
