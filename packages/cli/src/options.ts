import { readdir } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { Journal } from '@casebridge/core/internal';
import { readRunnerOptions } from './runner-options.js';

/**
 * One configuration for the reporters and the CLI. The CLI reads `casebridge.config.*` and `CASEBRIDGE_*` as the
 * reporters do (through `loadConfig`); what it adds here is the third source a reporter has, the options written in
 * the runner's config:
 * - `replay` first takes the options recorded beside the journal by the run that left the results there (they
 *   name the same service, project and plan; credentials are never recorded), and reads the runner configs only
 *   when there are none;
 * - `doctor` reads the runner configs (Playwright, Vitest, Jest) through the runners themselves.
 * `notes` say where it looked and what it found, one line each, for the command to print.
 */

export interface CliOptions {
  options: Record<string, unknown>;
  /** Recorded by a run: they rank below `CASEBRIDGE_*` (what the user sets for the replay wins). */
  recorded?: boolean;
  /** The source of `options`, as a message names it (e.g. `reporter options in playwright.config.ts`). */
  source?: string;
  notes: string[];
  /** Runner configs that could not be read, one line each. */
  warnings?: string[];
}

function journalDirOf(dir: string, env: NodeJS.ProcessEnv): string {
  return resolve(dir, env.CASEBRIDGE_JOURNAL_DIR || '.casebridge/journal');
}

/** The options a run recorded beside the journal, if any (read only while results wait there). */
async function recordedOptions(dir: string, journal: Journal): Promise<CliOptions | undefined> {
  const recorded = await journal.readRunOptions();
  if (!recorded || Object.keys(recorded.options).length === 0) return undefined;
  const where = relative(dir, journal.dir) || '.';
  return {
    options: recorded.options,
    recorded: true,
    source: `the ${recorded.runner} run's options recorded in ${where} (${recorded.savedAt})`,
    notes: [`using the options the ${recorded.runner} reporter had in its run of ${recorded.savedAt} (${where})`],
  };
}

/** The casebridge reporter's options from the runner configs in `dir`; the first config that gives some wins. */
export async function runnerConfigOptions(dir: string, env: NodeJS.ProcessEnv): Promise<CliOptions> {
  const found = await readRunnerOptions(dir, env);
  const notes: string[] = [];
  const warnings: string[] = [];
  let chosen: CliOptions | undefined;
  for (const r of found) {
    const file = relative(dir, r.configFile) || r.configFile;
    if (r.problem) {
      warnings.push(`${r.runner}: ${r.problem}`);
      continue;
    }
    const options = r.options ?? {};
    const names = Object.keys(options);
    if (!chosen && names.length > 0) {
      chosen = { options, source: `reporter options in ${file}`, notes: [] };
      notes.push(`read the casebridge reporter's options in ${file} (${names.sort().join(', ')})`);
    } else if (names.length > 0) {
      notes.push(
        `${file} gives casebridge options too; checked with those of ${chosen?.source?.replace(/^reporter options in /, '')}`,
      );
    } else {
      notes.push(`${file} lists the casebridge reporter without options`);
    }
  }
  if (found.length === 0) notes.push('no runner config in this folder names a casebridge reporter');
  return {
    options: chosen?.options ?? {},
    source: chosen?.source ?? 'the reporter entry of a runner config',
    notes,
    warnings,
  };
}

/**
 * For `replay`: the options recorded beside the waiting results, else the runner configs'. When no result waits,
 * nothing is read (the replay has nothing to do); the recorded file stays after a replay emptied the journal.
 */
export async function replayOptions(dir: string, env: NodeJS.ProcessEnv): Promise<CliOptions> {
  const journal = new Journal(journalDirOf(dir, env));
  const names = await readdir(journal.dir).catch(() => [] as string[]);
  if (names.some((name) => name.endsWith('.json'))) {
    const recorded = await recordedOptions(dir, journal);
    if (recorded) return recorded;
  } else if (!names.some((name) => name.startsWith('wal-'))) {
    return { options: {}, notes: [] };
  }
  return runnerConfigOptions(dir, env);
}
