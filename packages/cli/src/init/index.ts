import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { type Check, doctor } from '../doctor.js';
import { type Io, paint } from '../output.js';
import type { Runner } from '../sync/list.js';
import { CONFIG_FILE, configFile, MODULE_CONFIGS, values } from './config-file.js';
import {
  configBelow,
  configOf,
  detectRunners,
  hasGithubWorkflows,
  installCommand,
  installed,
  isDir,
  readPackage,
  scriptWarnings,
} from './detect.js';
import { lines, unifiedDiff } from './diff.js';
import { isObject } from './edit-json.js';
import { NAME, REPORTER, RUNNERS, TARGETS, TEST_COMMAND } from './runners.js';
import { setUp } from './setup.js';

export { detectRunners } from './detect.js';
export { unifiedDiff } from './diff.js';

/**
 * `casebridge init [dir]`: from a folder with a test suite to results in the service in three commands (init, the
 * install it prints, the test run). It finds the project's runners, adds casebridge's reporter to each runner's
 * config next to the reporters already there, writes casebridge.config.json (never a credential), keeps the
 * journal out of git, names the packages to install and, with credentials at hand, runs the doctor.
 *
 * Config files are edited as text, not rewritten: a real parser (`@babel/parser`, see parse.ts for why) finds the
 * config object and the reporter option, and an edit is one insertion or one replaced literal spliced in at the
 * offsets it gives, so the user's formatting and comments stay. What it cannot edit for certain (a computed
 * reporter, a config built by a function, a spread that may hold reporters) is left alone and the lines to add are
 * printed instead.
 * Every edit is parsed again after it is made and must still be valid and name the reporter, else it is not written.
 */

/** The .gitignore lines that already keep the journal folder out of git. */
const GITIGNORED = new Set(
  ['.casebridge', '/.casebridge', '**/.casebridge'].flatMap((p) => [p, `${p}/`, `${p}/*`, `${p}/**`]),
);

/** The options of `casebridge init`, parsed by its table in commands/init.ts. */
export interface InitOptions {
  url?: string;
  project?: string;
  plan?: string;
  runner?: string;
  'dry-run': boolean;
}

/**
 * `casebridge init`: resolves to the exit code (0 set up, 1 something could not be done, 2 wrong usage); never
 * rejects on bad input. Results (diffs, the lines to add by hand, the doctor's checks, the next commands) go to
 * `io.out`, what it did and why to `io.err`.
 */
export async function initCommand(opts: InitOptions, positionals: string[], io: Io): Promise<number> {
  const say = (line: string) => io.err(`casebridge init: ${line}`);
  const usage = (line: string) => {
    // The same hint as for a parse error (see commands/init.ts).
    say(`${line}; try npx @casebridge/cli init --help`);
    return 2;
  };
  if (positionals.length > 1) return usage(`expected at most one folder, got ${positionals.join(' ')}`);
  if (opts.runner !== undefined && !RUNNERS.includes(opts.runner as Runner)) {
    return usage(`--runner: expected playwright, vitest or jest, got "${opts.runner}"`);
  }
  const given = values(opts, io.env);
  if (given.errors.length > 0) {
    for (const e of given.errors) say(e);
    return 2;
  }
  const dir = resolve(io.cwd, positionals[0] ?? '.');
  if (!isDir(dir)) return usage(`${positionals[0] ?? dir}: no such folder`);

  const dryRun = opts['dry-run'] === true;
  const p = paint(io);
  const shown = (file: string) => relative(io.cwd, join(dir, file)).replace(/\\/g, '/') || basename(file);
  let failed = false;
  /** Prints the change as a diff and makes it (not in a dry run). */
  const change = (file: string, before: string | undefined, after: string): boolean => {
    unifiedDiff(shown(file), before, after).forEach((l, k) => {
      if (k < 2) io.out(p.bold(l));
      else if (l.startsWith('@@')) io.out(p.dim(l));
      else io.out(l.startsWith('+') ? p.green(l) : l.startsWith('-') ? p.red(l) : l);
    });
    if (dryRun) return true;
    try {
      writeFileSync(join(dir, file), after);
      return true;
    } catch (err) {
      say(`${shown(file)}: could not be written (${(err as Error).message})`);
      failed = true;
      return false;
    }
  };
  const would = (done: string, planned: string) => (dryRun ? planned : done);

  // 1. The runners.
  const files = readdirSync(dir);
  const pkg = readPackage(dir);
  const runners = opts.runner ? [opts.runner as Runner] : detectRunners(dir);
  if (runners.length === 0) {
    say(
      `no Playwright, Vitest or Jest found in ${dir} (no config file, none of @playwright/test, vitest or jest in package.json); run init in the folder of the test suite, or name the runner with --runner. Nothing was changed.`,
    );
    return 1;
  }
  say(`${dryRun ? 'dry run: nothing is changed; ' : ''}setting up ${runners.map((r) => NAME[r]).join(', ')} in ${dir}`);

  // 2. The reporter in each runner's config. `byHand`: the config the user still has to edit.
  const ready: Runner[] = [];
  const byHand = new Map<Runner, string>();
  for (const runner of runners) {
    const found = configOf(runner, files, pkg);
    if (!found.exists || (found.file === 'package.json' && pkg?.jest === undefined)) {
      // Only a dependency says the runner is here: a config in a subfolder means the suite lives there.
      const below = configBelow(dir, runner);
      if (below) {
        say(
          `${NAME[runner]}: no config in this folder, but ${relative(io.cwd, below)}: run npx @casebridge/cli init ${relative(io.cwd, dirname(below)) || '.'}`,
        );
        failed = true;
        continue;
      }
    }
    const outcome = await setUp(dir, found);
    if (outcome.kind === 'present') {
      say(`${shown(outcome.file)}: already set up (it names ${REPORTER[runner]})`);
      ready.push(runner);
    } else if (outcome.kind === 'edit') {
      if (change(outcome.file, outcome.before, outcome.after)) {
        say(`${shown(outcome.file)}${dryRun ? ' (dry run, not written)' : ''}: ${outcome.what}`);
        ready.push(runner);
      }
    } else {
      failed = true;
      ready.push(runner);
      byHand.set(runner, shown(outcome.file));
      say(
        `${shown(outcome.file)}: not edited: ${outcome.why}. Add ${TARGETS[runner].item("'")} to its reporters by hand, as in:`,
      );
      io.out(`// ${shown(outcome.file)}: keep your reporters and add casebridge's`);
      for (const l of outcome.snippet.split('\n')) io.out(l);
    }
  }
  for (const w of scriptWarnings(pkg, runners)) say(w);
  if (ready.includes('vitest') && !byHand.has('vitest') && hasGithubWorkflows(dir)) {
    say(
      "on GitHub Actions Vitest adds its github-actions reporter only when no reporters are set: add 'github-actions' to test.reporters if you want its annotations",
    );
  }

  // 3. casebridge.config.json: never a credential. A project may instead hold a module config
  // (casebridge.config.mjs, ...), and only one config file may exist: that one is not edited (it is code).
  const configPath = join(dir, CONFIG_FILE);
  const configBefore = existsSync(configPath) ? readFileSync(configPath, 'utf8') : undefined;
  const moduleConfig = configBefore === undefined ? MODULE_CONFIGS.find((f) => existsSync(join(dir, f))) : undefined;
  let doc: Record<string, unknown>;
  if (moduleConfig) {
    doc = configFile(undefined, given.values).doc;
    const entries = Object.entries(doc);
    if (entries.length > 0) {
      failed = true;
      say(
        `${shown(moduleConfig)} is the project's casebridge config (only one casebridge.config.* may exist), so ${CONFIG_FILE} is not written; set these options in it by hand:`,
      );
      io.out(`// ${shown(moduleConfig)}: options to set`);
      for (const [k, v] of entries) io.out(`  ${k}: ${JSON.stringify(v)},`);
    } else {
      say(`${shown(moduleConfig)}: the project's casebridge config, left as it is`);
    }
  } else {
    const config = configFile(configBefore, given.values);
    doc = config.doc;
    if (config.why) {
      failed = true;
      say(`${shown(CONFIG_FILE)}: not changed: ${config.why}; correct it, then run init again`);
    } else if (config.after !== undefined) {
      change(CONFIG_FILE, configBefore, config.after);
      say(
        `${shown(CONFIG_FILE)}: ${would(configBefore ? 'updated' : 'written', configBefore ? 'would be updated' : 'would be written')}`,
      );
    } else if (configBefore !== undefined) {
      say(`${shown(CONFIG_FILE)}: up to date`);
    }
    if (doc.url === undefined)
      say('missing: the Jira URL: pass --url https://jira.example.com (or set CASEBRIDGE_URL)');
    if (doc.projectKey === undefined) say('missing: the project key: pass --project PROJ (or set CASEBRIDGE_PROJECT)');
    if (doc.mode === 'cycle' && doc.testPlan === undefined) {
      say('missing: the test plan of cycle mode: pass --plan PROJ-1 (or set CASEBRIDGE_TEST_PLAN)');
    }
  }
  const secrets = ['token', 'user', 'password'].filter((k) => doc[k] !== undefined);
  if (isObject(doc.repository)) {
    const repo = doc.repository;
    secrets.push(...['token', 'password', 'ticket'].filter((k) => repo[k] !== undefined).map((k) => `repository.${k}`));
  }
  if (secrets.length > 0) {
    say(
      `${shown(CONFIG_FILE)} holds ${secrets.join(', ')}: anyone who can read the repository can use them; move them to CASEBRIDGE_TOKEN (or CASEBRIDGE_USER / CASEBRIDGE_PASSWORD) in the CI's secrets and delete them from the file`,
    );
  }
  const hasCredentials = Boolean(io.env.CASEBRIDGE_TOKEN?.trim() || io.env.CASEBRIDGE_USER?.trim());
  if (hasCredentials) {
    say(
      'the credentials in CASEBRIDGE_* are not written to any file: the reporters read them from the environment (in CI, from its secrets)',
    );
  }

  // 4. The journal stays out of git.
  const gitignore = join(dir, '.gitignore');
  if (existsSync(gitignore)) {
    const text = readFileSync(gitignore, 'utf8');
    if (!lines(text).some((l) => GITIGNORED.has(l.trim()))) {
      const eol = text.includes('\r\n') ? '\r\n' : '\n';
      const sep = text === '' || text.endsWith('\n') ? '' : eol;
      if (change('.gitignore', text, `${text}${sep}.casebridge/${eol}`)) {
        say(
          `${shown('.gitignore')}: ${would('added', 'would add')} .casebridge/ (where results that could not be delivered wait)`,
        );
      }
    }
  } else {
    say(
      'no .gitignore here: keep .casebridge/ (where results that could not be delivered wait) out of version control',
    );
  }

  // 5. The reporter packages.
  const missing = ready.map((r) => REPORTER[r]).filter((name) => !installed(dir, name));
  const install = missing.length > 0 ? `${installCommand(dir)} ${missing.join(' ')}` : undefined;
  if (install) say(`not installed: ${missing.join(', ')}; install with: ${install}`);

  // 6. The doctor, when it can sign in.
  if (!hasCredentials) {
    say(
      'no credentials yet (they are never written to a file): set CASEBRIDGE_TOKEN, then run `npx @casebridge/cli doctor`; in CI, give CASEBRIDGE_TOKEN from its secrets',
    );
  } else if (dryRun) say('dry run: the doctor was not run');
  else {
    let checks: Check[];
    try {
      checks = await doctor(dir, io.env);
    } catch (err) {
      checks = [{ name: 'doctor', ok: false, detail: (err as Error).message }];
    }
    const width = Math.max(...checks.map((c) => c.name.length));
    for (const c of checks) {
      const mark = !c.ok ? p.red('✗') : c.warning ? p.yellow('!') : p.green('✓');
      io.out(`${mark} ${c.name.padEnd(width)}  ${c.detail}`);
      if (!c.ok && c.fix) io.out(`  ${' '.repeat(width)}  ${p.dim('fix:')} ${c.fix}`);
    }
    const bad = checks.filter((c) => !c.ok).length;
    if (bad > 0) {
      failed = true;
      say(`${bad} doctor check(s) failed: fix them, then run \`npx @casebridge/cli doctor\``);
    }
  }

  // 7. What to run next.
  if (ready.length > 0) {
    io.out('');
    io.out(p.bold(dryRun ? 'Next, after init without --dry-run:' : 'Next:'));
    const rel = relative(io.cwd, dir);
    if (rel) io.out(`  cd ${rel}`);
    if (install) io.out(`  ${install}`);
    if (!hasCredentials) io.out('  export CASEBRIDGE_TOKEN=...   # a personal access token; in CI from its secrets');
    for (const r of ready) {
      const note = byHand.get(r);
      io.out(`  ${TEST_COMMAND[r]}${note ? `   # once ${note} names ${REPORTER[r]}` : ''}`);
    }
    const plan = typeof doc.testPlan === 'string' ? doc.testPlan : undefined;
    io.out(
      doc.mode === 'cycle' && plan
        ? `Results appear in test plan ${plan}, in a cycle per run (named by the cycle option, "CI <date>" by default).`
        : `Results appear as ad hoc runs of the test cases${typeof doc.projectKey === 'string' ? ` in ${doc.projectKey}` : ''}; pass --plan PROJ-1 to put them in a test plan instead.`,
    );
  }
  return failed ? 1 : 0;
}
