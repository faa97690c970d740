import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, redact, type TestResult, withDryRun } from '@casebridge/core';
import {
  CaseRegistry,
  caseSummary,
  clientsFor,
  keyPattern,
  type MappingFile,
  mappingKey,
  RequirementLinks,
  readMappingFile,
  resolveKeys,
  titleWithoutKeys,
  writeMapping,
} from '@casebridge/core/internal';
import type { Io } from '../output.js';
import { detectRunner, ListError, type ListedTest, listTests, type Runner } from './list.js';
import { type KeyEdit, stepsInSource, stepsOfTest, writeKeys } from './source.js';
import {
  applyUpdates,
  type KeyedTest,
  planUpdates,
  targetsOf,
  type UpdatePlan,
  updateLines,
  updateReport,
} from './update.js';

/**
 * `casebridge sync [dir]`: lists the project's tests through its runner, creates a test case for each test without
 * a key (its steps from the `step(...)` titles in its source, filed in the suite of its file path), and writes the
 * keys into the mapping file — or, with `--write-keys`, into the test titles in the source. Running it again
 * changes nothing: every test has a key by then, and a case the service already holds for a test is found by the
 * `casebridge-id:` mark in its description instead of being created again. The cost is the reporter's: one read of
 * the project's casebridge cases, then one request per new case.
 *
 * `--update` also compares every case a test was keyed to before this run with the code (summary and steps) and
 * shows the differences; `--update --yes` applies the step changes (see update.ts). Without `--yes`, `--update` is a
 * dry run of the whole command: it creates nothing either, so what it prints is all that the `--yes` run will do.
 */

const RUNNERS: readonly Runner[] = ['playwright', 'vitest', 'jest'];

function asResult(t: ListedTest, steps: string[] = []): TestResult {
  return {
    id: mappingKey(t),
    file: t.file,
    titlePath: t.titlePath,
    ...(t.line ? { line: t.line } : {}),
    tags: t.tags,
    annotations: t.annotations,
    attempts: [
      {
        retry: 0,
        status: 'passed',
        durationMs: 0,
        errors: [],
        steps: steps.map((title) => ({ title, status: 'passed', durationMs: 0, steps: [], attachments: [] })),
        attachments: [],
      },
    ],
  };
}

/** The options of `casebridge sync`, parsed by its table in commands/sync.ts. */
export interface SyncOptions {
  runner?: string;
  'write-keys': boolean;
  'dry-run': boolean;
  update: boolean;
  yes: boolean;
  json: boolean;
}

export async function syncCommand(values: SyncOptions, positionals: string[], io: Io): Promise<number> {
  const dir = resolve(io.cwd, positionals[0] ?? '.');
  const runner = (values.runner as Runner | undefined) ?? detectRunner(dir);
  if (!runner || !RUNNERS.includes(runner)) {
    io.err(
      values.runner
        ? `casebridge sync: --runner expects playwright, vitest or jest, got "${values.runner}"`
        : `casebridge sync: no Playwright, Vitest or Jest config in ${dir}; name the runner with --runner`,
    );
    return 2;
  }
  const update = values.update === true;
  if (values.yes && !update) {
    io.err('casebridge sync: --yes confirms the changes of --update; add --update (creating cases needs no --yes)');
    return 2;
  }
  // `--update` shows its changes first: without `--yes` (or with `--dry-run`) nothing is created or changed.
  const dryRun = values['dry-run'] === true || (update && values.yes !== true);
  const loaded = loadConfig(dryRun ? { dryRun: true } : {}, { env: io.env, cwd: dir });
  if (!loaded.ok) {
    io.err(`casebridge sync: the configuration has problems:\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}`);
    return 2;
  }
  const c = loaded.config;
  const re = keyPattern(c.keyPattern ? { pattern: c.keyPattern } : { projectKeys: [c.projectKey] });
  const mappingPath = resolve(dir, c.mappingFile);
  const read = readMappingFile(mappingPath, re);
  if (read.problems.length) {
    io.err(`casebridge sync: ${c.mappingFile}: ${read.problems.join('; ')}`);
    return 2;
  }
  const mapping: MappingFile = read.mapping;

  let tests: ListedTest[];
  try {
    tests = await listTests(dir, runner, io.env);
  } catch (err) {
    io.err(`casebridge sync: ${err instanceof ListError ? err.message : redact(String(err))}`);
    return 2;
  }
  const own = (t: ListedTest) => resolveKeys(asResult(t), re);
  const unmapped = tests.filter((t) => resolveKeys(asResult(t), re, mapping).length === 0);
  const clients = clientsFor(c);
  const { repo } = clients;
  // A dry run records the creates and answers them with a made-up key (`<project>-NEW`); nothing is sent.
  const tm = dryRun ? withDryRun(clients).tm : clients.tm;
  const created: Array<{ test: ListedTest; key: string }> = [];
  const failed: string[] = [];
  const progress = progressBar(io, unmapped.length);
  const summaryOf = (r: TestResult) => caseSummary(r, titleWithoutKeys(r.titlePath[r.titlePath.length - 1] ?? '', re));
  let plan: UpdatePlan | undefined;
  let requirements: { missing: Map<string, string[]>; problems: string[] } | undefined;
  const updateFailed: string[] = [];
  try {
    const registry = new CaseRegistry({ tm, dryRun, project: c.projectKey, summaryOf });
    // The transport runs `concurrency` requests at a time; the registry reads the project's cases once.
    await Promise.all(
      unmapped.map(async (test) => {
        try {
          const key = await registry.keyOf(asResult(test, stepsInSource(test, tests)));
          created.push({ test, key });
        } catch (err) {
          failed.push(`${mappingKey(test)}: ${redact(err instanceof Error ? err.message : String(err))}`);
        }
        progress();
      }),
    );
    // The requirements the tests name (Playwright's annotations; a runtime `requirement()` call shows only in a run):
    // the links the reporters would make, read even in a dry run; sync makes none itself.
    const links = new RequirementLinks();
    for (const t of tests) {
      const made = created.find((x) => x.test === t)?.key;
      for (const key of made ? [made] : resolveKeys(asResult(t), re, mapping)) links.saw(key, asResult(t));
    }
    if (links.size > 0) requirements = await links.missing(clients.tm);
    if (update) {
      // Only cases keyed before this run: a case created now already matches the code. Reads go to the service
      // even in a dry run (the dry-run client answers writes only); writes only with --yes.
      const fresh = new Set(unmapped);
      const keyed = tests.filter((t) => !fresh.has(t)).map((t) => keyedTest(t, tests, re, mapping, summaryOf));
      const { targets, skipped } = targetsOf(keyed);
      plan = await planUpdates(clients.tm, c.projectKey, targets);
      plan.skipped.push(...skipped);
      if (!dryRun) updateFailed.push(...(await applyUpdates(clients.tm, plan)));
    }
  } finally {
    await tm.close();
    await repo?.close();
  }
  created.sort((a, b) => mappingKey(a.test).localeCompare(mappingKey(b.test)));

  let edits: KeyEdit[] = [];
  if (values['write-keys']) {
    // Every test whose own title, tags and annotations carry no key: new cases and those keyed only by the file.
    const fromFile = tests
      .filter((t) => own(t).length === 0 && !created.some((x) => x.test === t))
      .flatMap((t) => {
        const keys = mapping[mappingKey(t)];
        const key = Array.isArray(keys) ? keys.join(' ') : keys;
        return key ? [{ test: t, key }] : [];
      });
    edits = writeKeys([...created, ...fromFile], dryRun);
    if (!dryRun) {
      // The mapping names of retitled tests are stale now: drop them.
      const rest = { ...mapping };
      for (const e of edits) if (!e.skipped) delete rest[mappingKey(e.test)];
      for (const e of edits) if (e.skipped) rest[mappingKey(e.test)] = e.key;
      if (existsSync(mappingPath) || Object.keys(rest).length > 0) {
        writeFileSync(mappingPath, `${JSON.stringify(rest, null, 2)}\n`);
      }
    }
  } else if (!dryRun && created.length > 0) {
    writeMapping(mappingPath, Object.fromEntries(created.map((x) => [mappingKey(x.test), x.key])));
  }

  const report = {
    runner,
    tests: tests.length,
    withKeys: tests.length - unmapped.length,
    created: created.map((x) => ({ test: mappingKey(x.test), key: x.key })),
    mappingFile: values['write-keys'] ? undefined : c.mappingFile,
    edits: edits.map((e) => ({
      file: e.test.file,
      line: e.line,
      before: e.before,
      after: e.after,
      key: e.key,
      ...(e.skipped ? { skipped: e.skipped } : {}),
    })),
    failed,
    dryRun,
    ...(plan ? { update: updateReport(plan, !dryRun, updateFailed) } : {}),
    ...(requirements
      ? {
          requirementLinks: Object.fromEntries(requirements.missing),
          requirementProblems: requirements.problems,
        }
      : {}),
  };
  if (values.json) io.out(JSON.stringify(report, null, 2));
  else {
    const head = dryRun ? 'casebridge sync (dry run: nothing created or written)' : 'casebridge sync';
    io.out(`${head}: ${tests.length} test(s) found by ${runner}, ${report.withKeys} with a key`);
    for (const x of created) io.out(`  ${x.key}  ${mappingKey(x.test)}`);
    if (created.length && !values['write-keys']) {
      io.out(`  ${created.length} key(s) ${dryRun ? 'would be written' : 'written'} to ${c.mappingFile}`);
    }
    for (const e of edits) {
      io.out(
        e.skipped
          ? `  not changed: ${e.test.file} > ${e.test.titlePath.join(' > ')} (${e.key}): ${e.skipped}`
          : `  ${e.test.file}:${e.line}: "${e.before}" -> "${e.after}"`,
      );
    }
    for (const f of failed) io.err(`  could not create a case for ${f}`);
    if (!created.length && !edits.some((e) => !e.skipped)) {
      io.out(plan ? '  nothing to create: every test has a key' : '  nothing to do: every test has a key');
    }
    for (const [req, keys] of requirements?.missing ?? []) {
      io.out(`  ${req}: the reporters will link ${keys.join(', ')} (named by the tests, not linked yet)`);
    }
    for (const p of requirements?.problems ?? []) io.err(`  ${p}`);
    if (plan) {
      for (const line of updateLines(plan, !dryRun)) io.out(line);
      for (const f of [...plan.failed, ...updateFailed]) io.err(`  could not update ${f}`);
    }
  }
  const updateFailures = (plan?.failed.length ?? 0) + updateFailed.length;
  return failed.length > 0 || updateFailures > 0 ? 1 : 0;
}

/** What a keyed test says about its case: its keys, its summary as sync creates it, and its steps when known. */
function keyedTest(
  t: ListedTest,
  all: readonly ListedTest[],
  re: RegExp,
  mapping: MappingFile,
  summaryOf: (r: TestResult) => string,
): KeyedTest {
  const r = asResult(t);
  const found = stepsOfTest(t, all);
  const stepsUnknown = !found.found
    ? 'the title is not a plain string literal in the source'
    : found.dynamic
      ? 'step titles built at run time'
      : found.steps.length === 0
        ? 'no step calls in the test body'
        : undefined;
  return {
    name: mappingKey(t),
    keys: resolveKeys(r, re, mapping),
    code: { summary: summaryOf(r), ...(stepsUnknown ? {} : { steps: found.steps }) },
    ...(stepsUnknown ? { stepsUnknown } : {}),
  };
}

/** A progress line on stderr while cases are made: redrawn in place on a terminal, every 10% otherwise. */
function progressBar(io: Io, total: number): () => void {
  let done = 0;
  let shown = -1;
  const tty = io.errTty;
  return () => {
    done += 1;
    if (total < 20) return;
    const tenth = Math.floor((done * 10) / total);
    if (!tty && tenth === shown) return;
    shown = tenth;
    const width = 20;
    const filled = Math.round((done / total) * width);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} test case(s)`;
    if (tty) io.progress(`\r${bar}${done === total ? '\n' : ''}`);
    else io.err(`casebridge sync: ${bar}`);
  };
}
