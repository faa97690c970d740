import { relative, resolve } from 'node:path';
import { type CasebridgeConfig, loadConfig } from '@casebridge/core';
import {
  type CycleRef,
  clientsFor,
  findCycleRef,
  keyPattern,
  type MappingFile,
  matchStatuses,
  readCycleCases,
  readMappingFile,
  SelectionError,
} from '@casebridge/core/internal';
import { CycleError } from './cycle.js';
import { grepPattern, type MappedTest, mappedTests, type Runner } from './grep-pattern.js';
import { readRunnerOptions } from './runner-options.js';

/**
 * `casebridge cycle keys`: the test-case keys a test plan or one of its cycles asks for, to feed the runner's
 * filter. Without a cycle: the plan's members. With a cycle: the cases of its runs, filtered by run status and
 * tester. Costs one request for the plan's members, or two for a cycle (its plan's cycle list, then its runs by
 * id), plus one (`myself`) for `--tester me`, whatever the number of runs: at 10,000 runs it is still three.
 */

export type KeysFormat = 'grep' | 'json' | 'lines';
export const KEYS_FORMATS: readonly KeysFormat[] = ['grep', 'json', 'lines'];
export const RUNNERS: readonly Runner[] = ['playwright', 'vitest', 'jest'];

export interface KeysQuery {
  /** Test plan key; default: `testPlan` of the configuration. */
  plan?: string;
  /** Cycle name, `#<id>` or an id. */
  cycle?: string;
  /** Run statuses, as typed (any case); empty: every status. */
  statuses?: string[];
  /** `me` (the user the credentials belong to) or a user name. */
  tester?: string;
  /** Read the casebridge reporter's options from this runner's config too; shapes the title pattern. */
  runner?: Runner;
}

export interface KeysResult {
  plan: string;
  cycle?: { id: number; name: string; status: string };
  /** The selected keys, each once, in the service's order (members' or runs'). */
  keys: string[];
  /** Mapping-file tests of those keys. */
  tests: MappedTest[];
  /** Lines for stderr: where the options and the mapping came from, what was filtered. */
  notes: string[];
}

/** Splits `Failed,"Not Tested"` (the shell leaves `Failed,Not Tested`), and repeated `--status`, into statuses. */
export function splitStatuses(values: readonly string[]): string[] {
  return values
    .flatMap((v) => v.split(','))
    .map((s) => s.trim().replace(/^["']|["']$/g, ''))
    .filter((s) => s.length > 0);
}

/**
 * The statuses asked for, in canonical form; a usage error naming the valid ones when one is unknown. Valid: the
 * five built-in statuses and whatever status the cycle's runs show (custom statuses of the instance). The matching
 * is core's (cases/select.ts), shared with the reporters' option `select`.
 */
export function resolveStatuses(asked: readonly string[], seen: readonly string[]): Set<string> {
  return asCycleError(() => matchStatuses(asked, seen, '--status'));
}

/**
 * The cycle `ref` names among the plan's: `#12` is the id 12; digits are a cycle of that name when there is one,
 * else the id; anything else is a name (exact, then case-insensitive when only one cycle matches that way).
 */
export function resolveCycle(cycles: readonly CycleRef[], ref: string, plan: string): CycleRef {
  return asCycleError(() => findCycleRef(cycles, ref, plan));
}

function asCycleError<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw cycleError(err);
  }
}

/** Core's SelectionError as the CLI's CycleError: exit code 2 for wrong usage, 1 for a cycle that is not there. */
function cycleError(err: unknown): unknown {
  return err instanceof SelectionError ? new CycleError(err.message, err.usage ? 2 : 1) : err;
}

/**
 * The configuration: casebridge.config.* and CASEBRIDGE_*, below them the runner config's reporter options, above
 * them `inline` (what the command line sets).
 */
export async function configFor(
  runner: Runner | undefined,
  inline: Record<string, unknown>,
  cwd: string,
  env: NodeJS.ProcessEnv,
  notes: string[],
) {
  let base: { options: Record<string, unknown>; source: string } | undefined;
  if (runner) {
    const found = (await readRunnerOptions(cwd, env)).find((r) => r.runner === runner);
    if (found?.problem) notes.push(`${runner}: ${found.problem}`);
    if (found?.options && Object.keys(found.options).length > 0) {
      base = { options: found.options, source: `reporter options in ${relative(cwd, found.configFile)}` };
    }
  }
  const loaded = loadConfig(inline, { env, cwd, inlineSource: 'the command line', ...(base ? { base } : {}) });
  if (!loaded.ok) {
    throw new CycleError(`the configuration has problems:\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}`, 2);
  }
  return loaded.config;
}

/** The mapping file (mappingFile, default casebridge.keys.json), or `{}` with a note when it is missing or wrong. */
export function readMapping(c: CasebridgeConfig, cwd: string, notes: string[]): MappingFile {
  const re = keyPattern({ pattern: c.keyPattern, projectKeys: [c.projectKey] });
  const { mapping, problems } = readMappingFile(resolve(cwd, c.mappingFile), re);
  if (problems.length) {
    notes.push(`${c.mappingFile} not used: ${problems[0]}${problems.length > 1 ? ` (+${problems.length - 1})` : ''}`);
  }
  return mapping;
}

/** Runs the query against the service (see the module comment for what it costs). */
export async function cycleKeys(query: KeysQuery, cwd: string, env: NodeJS.ProcessEnv): Promise<KeysResult> {
  const asked = query.statuses ?? [];
  if (!query.cycle && (asked.length > 0 || query.tester)) {
    // Deliberately not "the plan's latest cycle": in CI the latest is often the cycle this very pipeline just made.
    throw new CycleError(
      `${asked.length > 0 ? '--status' : '--tester'} filters the runs of a cycle: name one with --cycle NAME (or #ID); without --cycle the command lists the test plan's cases`,
      2,
    );
  }
  const notes: string[] = [];
  const c = await configFor(
    query.runner,
    { mode: 'cycle', ...(query.plan ? { testPlan: query.plan } : {}) },
    cwd,
    env,
    notes,
  );
  const plan = c.testPlan as string;
  const { tm, repo } = clientsFor(c);
  try {
    let keys: string[];
    let cycle: KeysResult['cycle'];
    if (!query.cycle) {
      const members = await tm.plans.members({ testPlanIssueKey: plan });
      keys = members.map((m) => m.testCaseKey);
      notes.push(`test plan ${plan}: ${keys.length} test case(s)`);
    } else {
      // A case with several runs (an advanced cycle: one per attribute set) is selected when any run matches.
      const read = await readCycleCases(tm, {
        plan,
        cycle: query.cycle,
        statuses: asked,
        tester: query.tester,
        statusOption: '--status',
      }).catch((err: unknown) => {
        throw cycleError(err);
      });
      cycle = read.cycle;
      keys = read.keys;
      notes.push(
        `cycle "${read.cycle.name}" (#${read.cycle.id}) of ${plan}: ${keys.length} of ${read.runs} run(s)'s case(s)${
          read.filters.length > 0 ? ` with ${read.filters.join(' and ')}` : ''
        }`,
      );
    }
    const unique = [...new Set(keys)];
    const tests = mappedTests(readMapping(c, cwd, notes), unique);
    if (tests.length > 0) notes.push(`${c.mappingFile}: ${tests.length} test(s) mapped to these keys`);
    return { plan, ...(cycle ? { cycle } : {}), keys: unique, tests, notes };
  } finally {
    await tm.close();
    await repo?.close();
  }
}

/** What is printed on stdout for `format`; empty when nothing was selected. */
export function formatKeys(r: KeysResult, format: KeysFormat, runner?: Runner): string {
  if (r.keys.length === 0) return '';
  if (format === 'lines') return r.keys.join('\n');
  if (format === 'json') {
    return JSON.stringify({
      plan: r.plan,
      ...(r.cycle ? { cycle: r.cycle } : {}),
      keys: r.keys,
      titles: r.tests.map((t) => t.name),
      grep: grepPattern(
        r.keys,
        r.tests.map((t) => t.titlePath),
        runner,
      ),
    });
  }
  return grepPattern(
    r.keys,
    r.tests.map((t) => t.titlePath),
    runner,
  );
}
