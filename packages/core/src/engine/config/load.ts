import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { redact, registerSecret } from '../../client/secrets.js';
import { ENV_OPTIONS, isPlainObject, mergeOptions, optionsFromEnv } from './env.js';
import { type CasebridgeConfig, configSchema } from './schema.js';

/**
 * The configuration from the config file, CASEBRIDGE_* variables and inline options, merged and checked (schema.ts).
 */

export const CONFIG_FILE = 'casebridge.config.json';
/** The config files looked for in the project root, in this order; at most one may exist. */
export const CONFIG_FILES = [
  'casebridge.config.json',
  'casebridge.config.mjs',
  'casebridge.config.cjs',
  'casebridge.config.js',
  'casebridge.config.ts',
  'casebridge.config.mts',
  'casebridge.config.cts',
] as const;

export type LoadedConfig =
  | { ok: true; config: CasebridgeConfig; sources: string[]; searched: string[] }
  | {
      ok: false;
      problems: string[];
      sources: string[];
      searched: string[];
      /** `failOnError` as the sources set it, valid or not: an invalid configuration fails the run when asked. */
      failOnError: boolean;
    };

/** Where `loadConfig` looked, in one line (`./casebridge.config.{json,mjs,...}`, then the other sources). */
export function describeSearched(cwd: string, searched: readonly string[]): string {
  const files = searched.filter((s) => isAbsolute(s));
  const others = searched.filter((s) => !isAbsolute(s));
  const dirs = [...new Set(files.map((f) => dirname(f)))];
  const parts = dirs.map((dir) => {
    const names = files.filter((f) => dirname(f) === dir).map((f) => basename(f));
    const where = relative(cwd, dir) || '.';
    const exts = names.map((n) => n.replace(/^casebridge\.config\./, ''));
    return names.length > 1 && names.every((n) => n.startsWith('casebridge.config.'))
      ? `${where}/casebridge.config.{${exts.join(',')}}`
      : names.map((n) => `${where}/${n}`).join(', ');
  });
  return [...parts, ...others].join(', ');
}

/**
 * Reads one config file: JSON, or a module's default export through a synchronous `require`, as the reporters start
 * synchronously (ES modules on Node 20.19+, TypeScript on Node 22.18+).
 */
function readConfigFile(file: string): { options?: Record<string, unknown>; problem?: string } {
  if (file.endsWith('.json')) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      return isPlainObject(parsed) ? { options: parsed } : { problem: `${file}: expected a JSON object of options` };
    } catch (err) {
      return { problem: `${file}: not valid JSON (${err instanceof Error ? err.message : String(err)})` };
    }
  }
  let loaded: unknown;
  try {
    loaded = createRequire(file)(file);
  } catch (err) {
    const message = redact(err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err));
    const hint = /\.[cm]?ts$/.test(file)
      ? `; TypeScript config files need Node 22.18 or later (this is ${process.version}): use casebridge.config.mjs or .json`
      : /ERR_REQUIRE_ASYNC_MODULE|top-level await/i.test(message)
        ? '; a config file cannot use top-level await'
        : '';
    return { problem: `${file}: could not be loaded (${message})${hint}` };
  }
  // An ES module's namespace (or a transpiled one's exports) holds the options as `default`.
  const esm =
    typeof loaded === 'object' &&
    loaded !== null &&
    'default' in loaded &&
    (Object.prototype.toString.call(loaded) === '[object Module]' || '__esModule' in loaded);
  const value = esm ? (loaded as { default: unknown }).default : loaded;
  return isPlainObject(value)
    ? { options: value }
    : { problem: `${file}: expected its default export to be an object of options (defineCasebridgeConfig({...}))` };
}

/**
 * Loads file, then environment, then inline options (highest). Never throws: problems come back as lines naming the
 * option and what was expected; `searched` lists every place looked at.
 */
export function loadConfig(
  inline: Record<string, unknown> = {},
  {
    env = process.env,
    cwd = process.cwd(),
    configFile,
    inlineSource = 'reporter options',
    base,
  }: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    configFile?: string;
    inlineSource?: string;
    /** Options ranked above the config file and below the environment (replay: those a run recorded). */
    base?: { options: Record<string, unknown>; source: string };
  } = {},
): LoadedConfig {
  const sources: string[] = [];
  const problems: string[] = [];
  let fromFile: Record<string, unknown> = {};
  const candidates = configFile ? [resolve(cwd, configFile)] : CONFIG_FILES.map((name) => resolve(cwd, name));
  const searched = [...candidates];
  const found = candidates.filter((file) => existsSync(file));
  if (found.length > 1) {
    problems.push(`more than one config file: ${found.join(', ')}; keep one`);
  } else if (found[0]) {
    const file = found[0];
    sources.push(file);
    const read = readConfigFile(file);
    if (read.problem) problems.push(read.problem);
    else fromFile = read.options ?? {};
  } else if (configFile) {
    problems.push(`config file ${candidates[0]} does not exist`);
  }
  if (base) {
    searched.push(base.source);
    if (Object.keys(base.options).length > 0) sources.push(base.source);
  }
  searched.push('CASEBRIDGE_* environment variables');
  const fromEnv = optionsFromEnv(env);
  if (Object.keys(fromEnv.options).length > 0) sources.push('CASEBRIDGE_* environment variables');
  problems.push(...fromEnv.problems);
  if (Object.keys(inline).length > 0) sources.push(inlineSource);
  searched.push(inlineSource);
  const merged = mergeOptions(mergeOptions(mergeOptions(fromFile, base?.options ?? {}), fromEnv.options), inline);
  for (const k of ['token', 'password']) if (typeof merged[k] === 'string') registerSecret(merged[k] as string);
  for (const where of ['repository', 'bitbucket', 'gitlab', 'github']) {
    const part = merged[where];
    if (!isPlainObject(part)) continue;
    for (const k of ['token', 'password', 'ticket']) {
      const v = (part as Record<string, unknown>)[k];
      if (typeof v === 'string') registerSecret(v);
    }
  }
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = issue.path.join('.');
      const envName = Object.entries(ENV_OPTIONS).find(
        ([, s]) => s.path.join('.') === path || (s.type === 'statusMap' && path.startsWith(`${s.path.join('.')}.`)),
      )?.[0];
      const where = path === '' ? '(options)' : envName ? `${path} (${envName})` : path;
      if (issue.code === 'unrecognized_keys') {
        problems.push(`${where}: unknown option(s) ${issue.keys.join(', ')}; check the spelling against the README`);
      } else if (issue.code === 'invalid_type' && issue.input === undefined) {
        problems.push(`${where}: required`);
      } else {
        problems.push(`${where}: ${issue.message}`);
      }
    }
  }
  if (problems.length > 0 || !parsed.success) {
    const failOnError = merged.failOnError === true && merged.enabled !== false;
    return { ok: false, problems, sources, searched, failOnError };
  }
  return { ok: true, config: parsed.data, sources, searched };
}
