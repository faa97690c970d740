import { relative, resolve } from 'node:path';
import { type CasebridgeConfig, loadConfig, type TestManagementClient } from '@casebridge/core';
import { clientsFor, keyPattern, type MappingFile, RUN_STATUSES, readMappingFile } from '@casebridge/core/internal';
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

/** Canonical form of a status for comparison: case and inner spaces do not matter (`not  tested` = `Not Tested`). */
const norm = (s: string) => s.trim().replace(/\s+/g, ' ').toLowerCase();

/**
 * The statuses asked for, in the service's spelling; a usage error naming the valid ones when one is unknown. Valid:
 * the five built-in statuses and whatever status the cycle's runs show (custom statuses of the instance).
 */
export function resolveStatuses(asked: readonly string[], seen: readonly string[]): Set<string> {
  const known = new Map<string, string>();
  for (const s of [...RUN_STATUSES, ...seen]) if (!known.has(norm(s))) known.set(norm(s), s);
  const out = new Set<string>();
  const unknown: string[] = [];
  for (const a of asked) {
    const hit = known.get(norm(a));
    if (hit) out.add(norm(hit));
    else unknown.push(a);
  }
  if (unknown.length > 0) {
    throw new CycleError(
      `--status: ${unknown.map((u) => `"${u}"`).join(', ')} is not a run status; expected one or more of ${[
        ...known.values(),
      ]
        .map((s) => `"${s}"`)
        .join(', ')}, comma-separated (case does not matter)`,
      2,
    );
  }
  return out;
}

interface CycleRef {
  id: number;
  name: string;
  status?: string;
}

/**
 * The cycle `ref` names among the plan's: `#12` is the id 12; digits are a cycle of that name when there is one,
 * else the id; anything else is a name (exact, then case-insensitive when only one cycle matches that way).
 */
export function resolveCycle(cycles: readonly CycleRef[], ref: string, plan: string): CycleRef {
  const byId = (id: number) => cycles.find((c) => c.id === id);
  const hash = /^#(\d+)$/.exec(ref.trim());
  const found = hash
    ? byId(Number(hash[1]))
    : (cycles.find((c) => c.name === ref) ??
      (/^\d+$/.test(ref.trim()) ? byId(Number(ref)) : undefined) ??
      single(cycles.filter((c) => norm(c.name) === norm(ref))));
  if (found) return found;
  const names = cycles.map((c) => `"${c.name}" (#${c.id})`);
  const list =
    names.length === 0
      ? 'it has none'
      : `it has ${names.slice(0, 10).join(', ')}${names.length > 10 ? `, and ${names.length - 10} more` : ''}`;
  throw new CycleError(`test plan ${plan} has no cycle ${hash ? `with id ${hash[1]}` : `"${ref}"`}: ${list}`);
}

function single<T>(list: T[]): T | undefined {
  return list.length === 1 ? list[0] : undefined;
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

/** The user `--tester` names: `me` is the user the credentials belong to (Jira's `myself`). */
async function testerName(tm: TestManagementClient, tester: string): Promise<string> {
  if (tester.toLowerCase() !== 'me') return tester;
  const me = await tm.jira.myself({});
  return me.name;
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
      const cycles = await tm.plans.cycles({ testPlanIssueKey: plan });
      const ref = resolveCycle(cycles, query.cycle, plan);
      cycle = { id: ref.id, name: ref.name, status: ref.status ?? 'Draft' };
      const runs = await tm.cycles.testRunsByCycleId({ testPlanIssueKey: plan, cycleId: String(ref.id) });
      const statuses =
        asked.length > 0
          ? resolveStatuses(
              asked,
              runs.map((r) => r.status),
            )
          : undefined;
      const tester = query.tester ? norm(await testerName(tm, query.tester)) : undefined;
      // A case with several runs (an advanced cycle: one per attribute set) is selected when any run matches.
      const chosen = runs.filter(
        (r) => (!statuses || statuses.has(norm(r.status))) && (!tester || norm(r.testerName ?? '') === tester),
      );
      keys = chosen.map((r) => r.testCaseKey);
      const filters = [
        ...(statuses ? [`status ${[...statuses].join(' or ')}`] : []),
        ...(tester ? [`tester ${tester}`] : []),
      ];
      notes.push(
        `cycle "${ref.name}" (#${ref.id}) of ${plan}: ${new Set(keys).size} of ${runs.length} run(s)'s case(s)${
          filters.length > 0 ? ` with ${filters.join(' and ')}` : ''
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
