import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Runner } from '../sync/list.js';
import { isObject } from './edit-json.js';
import { CONFIG_NAMES, NAME, RUNNER_PACKAGE, RUNNERS, VITE_CONFIGS } from './runners.js';

/**
 * What the project folder says about itself: its runners and their config files, its package.json and scripts, its
 * package manager, whether a reporter package is installed, whether it runs on GitHub Actions.
 */

export interface Found {
  runner: Runner;
  /** The config file to edit or create, relative to the project folder; package.json for Jest's "jest" key. */
  file: string;
  /** Whether the file exists (a runner found only in package.json gets a new config). */
  exists: boolean;
}

/** The project's package.json, undefined when it is missing or not a JSON object. */
export function readPackage(dir: string): Record<string, unknown> | undefined {
  try {
    const pkg: unknown = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    return isObject(pkg) ? pkg : undefined;
  } catch {
    return undefined;
  }
}

function dependencies(pkg: Record<string, unknown> | undefined): Record<string, unknown> {
  return {
    ...(isObject(pkg?.dependencies) ? pkg.dependencies : {}),
    ...(isObject(pkg?.devDependencies) ? pkg.devDependencies : {}),
  };
}

/** A config of the runner in a folder below dir (a monorepo whose root lists the runners), within a few levels. */
export function configBelow(dir: string, runner: Runner): string | undefined {
  const names = new Set([...CONFIG_NAMES[runner], ...(runner === 'vitest' ? VITE_CONFIGS : [])]);
  let budget = 2_000;
  const walk = (folder: string, depth: number): string | undefined => {
    let entries: string[];
    try {
      entries = readdirSync(folder).sort();
    } catch {
      return undefined;
    }
    for (const name of entries) {
      if (--budget < 0) return undefined;
      const path = join(folder, name);
      if (depth > 0 && names.has(name)) return path;
      if (depth < 3 && !name.startsWith('.') && name !== 'node_modules' && isDir(path)) {
        const hit = walk(path, depth + 1);
        if (hit) return hit;
      }
    }
    return undefined;
  };
  return walk(dir, 0);
}

export function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The config of one runner in dir, found or to be made. */
export function configOf(runner: Runner, files: string[], pkg: Record<string, unknown> | undefined): Found {
  const own = CONFIG_NAMES[runner].find((f) => files.includes(f));
  if (own) return { runner, file: own, exists: true };
  if (runner === 'vitest') {
    const vite = VITE_CONFIGS.find((f) => files.includes(f));
    if (vite) return { runner, file: vite, exists: true };
  }
  if (runner === 'jest') return { runner, file: 'package.json', exists: pkg !== undefined };
  const typescript = files.includes('tsconfig.json') || 'typescript' in dependencies(pkg);
  return { runner, file: `${runner}.config.${typescript ? 'ts' : 'mjs'}`, exists: false };
}

/** Every runner of the project in dir: by its config file, else by package.json (a "jest" key, a dependency). */
export function detectRunners(dir: string): Runner[] {
  const files = readdirSync(dir);
  const pkg = readPackage(dir);
  const deps = dependencies(pkg);
  const has = (names: string[]) => names.some((f) => files.includes(f));
  const viteWithTests = VITE_CONFIGS.some((f) => {
    if (!files.includes(f)) return false;
    return /\btest\s*:/.test(readFileSync(join(dir, f), 'utf8'));
  });
  return RUNNERS.filter((r) => {
    if (has(CONFIG_NAMES[r]) || RUNNER_PACKAGE[r] in deps) return true;
    if (r === 'vitest') return viteWithTests;
    return r === 'jest' && pkg?.jest !== undefined;
  });
}

/** The package manager's add-a-dev-dependency command, by the lockfile of the project or a folder above it. */
export function installCommand(dir: string): string {
  const locks: Array<[string, string]> = [
    ['pnpm-lock.yaml', 'pnpm add -D'],
    ['yarn.lock', 'yarn add -D'],
    ['bun.lock', 'bun add -d'],
    ['bun.lockb', 'bun add -d'],
    ['package-lock.json', 'npm i -D'],
  ];
  // The lockfile may be a workspace root's, above the project.
  for (let d = dir; ; d = dirname(d)) {
    const hit = locks.find(([f]) => existsSync(join(d, f)));
    if (hit) return hit[1];
    if (dirname(d) === d) return 'npm i -D';
  }
}

/** Whether `pkg` resolves from the project folder. */
export function installed(dir: string, pkg: string): boolean {
  try {
    createRequire(join(dir, 'package.json')).resolve(`${pkg}/package.json`);
    return true;
  } catch (err) {
    // Installed, only its package.json is not exported.
    return (err as { code?: string }).code === 'ERR_PACKAGE_PATH_NOT_EXPORTED';
  }
}

/** Scripts that replace the config's reporters or name another config, which the edit would not reach. */
export function scriptWarnings(pkg: Record<string, unknown> | undefined, runners: Runner[]): string[] {
  const scripts = isObject(pkg?.scripts) ? pkg.scripts : {};
  const bins: Record<Runner, RegExp> = { playwright: /\bplaywright\s+test\b/, vitest: /\bvitest\b/, jest: /\bjest\b/ };
  const flags: Record<Runner, [RegExp, string]> = {
    playwright: [/--reporter\b/, '--reporter=list,@casebridge/playwright'],
    vitest: [/--reporter\b/, '--reporter=default --reporter=@casebridge/vitest'],
    jest: [/--reporters\b/, '--reporters=default --reporters=@casebridge/jest'],
  };
  const out: string[] = [];
  for (const [name, command] of Object.entries(scripts)) {
    if (typeof command !== 'string') continue;
    for (const r of runners) {
      if (!bins[r].test(command)) continue;
      const [flag, fix] = flags[r];
      if (flag.test(command)) {
        out.push(
          `package.json script "${name}" gives ${NAME[r]} reporters on the command line, which replace the config's: add ${fix} there`,
        );
      }
      if (/(^|\s)(--config|-c)(\s|=)/.test(command)) {
        out.push(
          `package.json script "${name}" runs ${NAME[r]} with another config file: add the reporter there as well (npx @casebridge/cli init prints the lines with --dry-run when it is the folder's config)`,
        );
      }
    }
  }
  return out;
}

/** Whether the project, or a folder above it up to the repository's root, has GitHub Actions workflows. */
export function hasGithubWorkflows(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, '.github', 'workflows'))) return true;
    if (existsSync(join(d, '.git')) || dirname(d) === d) return false;
  }
}
