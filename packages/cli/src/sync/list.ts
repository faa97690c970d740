import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { CasebridgeError } from '@casebridge/core';
import { type Exit, runNode } from '../node-process.js';

/**
 * Lists a project's tests through its runner's own list mode, without running them:
 * - Playwright: `playwright test --list --reporter=json` (file, describe path, title, line, tags, annotations);
 * - Vitest: `vitest list --json` (file and the full name; skipped tests are not listed by Vitest);
 * - Jest: `jest --json --testLocationInResults` with a test name pattern that matches nothing, so every test is
 *   reported as pending with its describe path and line, and none runs (Jest has no list mode for test names).
 * Files are named relative to the project folder with forward slashes, titles as the reporters name them, so the
 * mapping file written from this list is the one the reporters read.
 */

export type Runner = 'playwright' | 'vitest' | 'jest';

export interface ListedTest {
  /** Relative to the project folder, forward slashes. */
  file: string;
  absFile: string;
  /** Describe titles and the test title. */
  titlePath: string[];
  line?: number;
  tags: string[];
  annotations: Array<{ type: string; description?: string }>;
}

export class ListError extends CasebridgeError {
  constructor(message: string) {
    super('list', message);
  }
}

const CONFIGS: Array<[Runner, RegExp]> = [
  ['playwright', /^playwright\.config\.[cm]?[jt]s$/],
  ['vitest', /^vitest\.config\.[cm]?[jt]s$/],
  ['jest', /^jest\.config\.[cm]?[jt]s$|^jest\.config\.json$/],
  ['vitest', /^vite\.config\.[cm]?[jt]s$/],
];

/** The runner of a project: its config file, else a `jest` key or a runner in package.json. */
export function detectRunner(dir: string): Runner | undefined {
  const files = existsSync(dir) ? readdirSync(dir) : [];
  for (const [runner, re] of CONFIGS) if (files.some((f) => re.test(f))) return runner;
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    if (pkg.jest) return 'jest';
    const deps = { ...pkg.dependencies, ...pkg.devDependencies };
    if (deps['@playwright/test']) return 'playwright';
    if (deps.vitest) return 'vitest';
    if (deps.jest) return 'jest';
  } catch {
    // No package.json: nothing more to go on.
  }
  return undefined;
}

const BINS: Record<Runner, [string, string]> = {
  playwright: ['@playwright/test', 'cli.js'],
  vitest: ['vitest', 'vitest.mjs'],
  jest: ['jest', 'bin/jest.js'],
};

function runnerBin(dir: string, runner: Runner): string {
  const [pkg, file] = BINS[runner];
  try {
    return join(dirname(createRequire(join(dir, 'package.json')).resolve(`${pkg}/package.json`)), file);
  } catch {
    throw new ListError(`${pkg} is not installed in ${dir}: install the project's dependencies first`);
  }
}

function exec(dir: string, args: string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  // The reporters stay quiet while listing: nothing is reported.
  return runNode(dir, args, { ...env, CASEBRIDGE_ENABLED: 'false', FORCE_COLOR: '0' });
}

/** The JSON document in a runner's output (some print lines before it). */
function json<T>(text: string, what: string): T {
  const start = text.search(/^[[{]/m);
  try {
    return JSON.parse(start >= 0 ? text.slice(start) : text) as T;
  } catch {
    throw new ListError(`${what} did not print the expected JSON list:\n${text.slice(0, 500)}`);
  }
}

const rel = (dir: string, file: string) => relative(dir, file).replace(/\\/g, '/');

interface PwSuite {
  title: string;
  file?: string;
  specs?: Array<{
    title: string;
    file: string;
    line: number;
    tags?: string[];
    tests: Array<{ annotations?: Array<{ type: string; description?: string }> }>;
  }>;
  suites?: PwSuite[];
}

export async function listTests(dir: string, runner: Runner, env: NodeJS.ProcessEnv): Promise<ListedTest[]> {
  const bin = runnerBin(dir, runner);
  if (runner === 'playwright') {
    const r = await exec(dir, [bin, 'test', '--list', '--reporter=json'], env);
    const doc = json<{ config: { rootDir: string }; suites: PwSuite[]; errors?: Array<{ message: string }> }>(
      r.out,
      'playwright test --list',
    );
    if (doc.errors?.length) throw new ListError(`playwright could not list the tests: ${doc.errors[0]?.message}`);
    const found = new Map<string, ListedTest>();
    const walk = (s: PwSuite, path: string[]) => {
      for (const spec of s.specs ?? []) {
        const absFile = resolve(doc.config.rootDir, spec.file);
        const t: ListedTest = {
          file: rel(dir, absFile),
          absFile,
          titlePath: [...path, spec.title],
          line: spec.line,
          tags: (spec.tags ?? []).map((x) => x.replace(/^@/, '')),
          annotations: spec.tests.flatMap((x) => x.annotations ?? []),
        };
        // One entry per test, not per project: a case is the same in every browser.
        found.set(`${t.file}\u0000${t.titlePath.join('\u0000')}`, t);
      }
      for (const child of s.suites ?? []) walk(child, [...path, child.title]);
    };
    for (const file of doc.suites) walk(file, []);
    return [...found.values()];
  }
  if (runner === 'vitest') {
    const r = await exec(dir, [bin, 'list', '--json'], env);
    if (r.code !== 0 && !r.out.trim().startsWith('['))
      throw new ListError(`vitest list failed:\n${r.err.slice(0, 500)}`);
    const list = json<Array<{ name: string; file: string; projectName?: string }>>(r.out, 'vitest list');
    const seen = new Set<string>();
    return list
      .map((x) => {
        const absFile = isAbsolute(x.file) ? x.file : resolve(dir, x.file);
        return { file: rel(dir, absFile), absFile, titlePath: x.name.split(' > '), tags: [], annotations: [] };
      })
      .filter((t) => {
        const k = `${t.file}\u0000${t.titlePath.join('\u0000')}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
  }
  const r = await exec(
    dir,
    [bin, '--json', '--testLocationInResults', '--testNamePattern', '^\\b\\B$', '--silent'],
    env,
  );
  const doc = json<{
    testResults: Array<{
      name: string;
      message?: string;
      assertionResults: Array<{ ancestorTitles: string[]; title: string; location?: { line: number } | null }>;
    }>;
  }>(r.out, 'jest --json');
  const broken = doc.testResults.find((f) => f.assertionResults.length === 0 && f.message);
  if (broken) throw new ListError(`jest could not load ${rel(dir, broken.name)}: ${broken.message?.slice(0, 300)}`);
  return doc.testResults.flatMap((f) =>
    f.assertionResults.map((a) => ({
      file: rel(dir, f.name),
      absFile: f.name,
      titlePath: [...a.ancestorTitles, a.title],
      ...(a.location?.line ? { line: a.location.line } : {}),
      tags: [],
      annotations: [],
    })),
  );
}
