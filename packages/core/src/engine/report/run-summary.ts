import { appendFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { redact } from '../../client/secrets.js';
import type { CaseRegistry } from '../cases/registry.js';
import type { DeliveryStats } from '../delivery/delivery.js';
import type { Problem } from '../kernel/problems.js';
import type { EngineContext, RunSummary } from '../kernel/types.js';
import { appendTo, type WorkItem } from '../kernel/work.js';
import { cycleUrl, failuresOf } from './links.js';
import { ciAnnotations, ciWarning, formatSummary, markdownSummary, REPLAY } from './summary.js';

/** What the summary of a run is made of: the engine's counts and what its session's parts report. */
export interface SummaryParts {
  enabled: boolean;
  mode?: 'adhoc' | 'cycle';
  shard?: RunSummary['shard'];
  /** The run's problems, in the order they happened (see Problems). */
  problems: readonly Problem[];
  delivery?: DeliveryStats;
  /** The test plan of the run (cycle mode). */
  plan?: string;
  byStatus: Record<string, number>;
  results: number;
  /** The results kept to the end: the undelivered, the dropped and the failed ones (see Ledger). */
  items: readonly WorkItem[];
  /** Results delivered, those let go included. */
  delivered: number;
  unmapped: readonly string[];
  cases?: CaseRegistry;
  mappingFile?: string;
  journaled: number;
  journalDir?: string;
  /** A dry run: the calls it would have made. */
  calls?: readonly string[];
  replayed: number;
  down?: string;
  /** The Jira base URL (links in the summary). */
  url?: string;
}

/** The summary of a run, as `end` returns it and prints it. */
export function assembleSummary(p: SummaryParts): RunSummary {
  const d = p.delivery;
  const problems = problemLines(p.problems);
  // Keys the service refused in a bulk of status-only results: name each once, as a result with details would.
  for (const key of d?.badKeys ?? []) {
    if (problems.some((line) => line.startsWith(`${key}:`))) continue;
    problems.push(
      `${key}: not a test case${p.plan ? ` that can be added to test plan ${p.plan}` : ''}: check the key in the test's title or the mapping file`,
    );
  }
  // Steps or suites that did not go to new cases: the cases and their results are there, a person can add them.
  const unfinished = (p.cases?.unfinished ?? []).map((what) => `new test case incomplete: ${what}`);
  for (const line of [...(d?.repoProblems ?? []), ...(d?.defectProblems ?? []), ...unfinished]) {
    if (!problems.includes(line)) problems.push(line);
  }
  const base = p.url && p.calls === undefined ? p.url : undefined;
  const cycle = d?.cycle && base ? { ...d.cycle, url: cycleUrl(base, d.cycle.plan, d.cycle.id) } : d?.cycle;
  const { failures, omitted } = failuresOf(p.items, base, cycle, d?.classifications);
  return {
    enabled: p.enabled,
    mode: p.mode ?? 'adhoc',
    dryRun: p.calls !== undefined,
    ...(p.shard ? { shard: p.shard } : {}),
    byStatus: { ...p.byStatus },
    results: p.results,
    delivered: p.delivered,
    ...(base ? { url: base } : {}),
    ...(cycle ? { cycle } : {}),
    defects: d?.defects ?? { created: [], linked: [] },
    ...(failures.length ? { failures } : {}),
    ...(omitted ? { failuresOmitted: omitted } : {}),
    ...(d?.quarantine ? { quarantine: d.quarantine } : {}),
    attachments: d?.attachments ?? { uploaded: 0, skipped: [], stored: [] },
    unmapped: [...p.unmapped],
    createdCases: [...(p.cases?.created ?? [])],
    ...(p.cases?.duplicates.length ? { duplicateCases: [...p.cases.duplicates] } : {}),
    ...(p.mappingFile ? { mappingFile: p.mappingFile } : {}),
    problems: [...new Set(problems)],
    journaled: p.journaled,
    ...(d?.undecided ? { undecided: d.undecided } : {}),
    ...(p.journalDir ? { journalDir: p.journalDir } : {}),
    ...(p.calls ? { calls: [...p.calls] } : {}),
    ...(p.replayed ? { replayed: p.replayed } : {}),
    ...(p.down ? { serviceDown: p.down } : {}),
  };
}

/**
 * Prints the summary: console, a CI annotation when results stay behind, $GITHUB_STEP_SUMMARY, and a dry run's calls.
 */
export function printSummary(
  summary: RunSummary,
  o: { out: (text: string) => void; env: NodeJS.ProcessEnv; cwd: string; dryRunFile?: string; annotations?: boolean },
): void {
  o.out(formatSummary(summary));
  if (o.annotations) for (const line of ciAnnotations(summary, o.env)) o.out(line);
  const warning = ciWarning(summary, o.env);
  if (warning) o.out(warning);
  const stepSummary = o.env.GITHUB_STEP_SUMMARY;
  if (stepSummary) {
    try {
      appendFileSync(stepSummary, `${markdownSummary(summary)}\n`);
    } catch {
      // The step summary is a convenience; the console summary above has the same content.
    }
  }
  if (o.dryRunFile && summary.calls) {
    try {
      writeFileSync(resolve(o.cwd, o.dryRunFile), `${JSON.stringify({ calls: summary.calls }, null, 2)}\n`);
    } catch (err) {
      o.out(`casebridge: could not write the dry-run file: ${redact(String(err))}`);
    }
  }
}

/** The line an invalid configuration prints: its problems, where casebridge looked, and what happens now. */
export function invalidConfigLine(
  ctx: EngineContext,
  failOnError: boolean,
  problems: readonly string[],
  searched: string,
): string {
  // `junit` is the CLI (replay, JUnit import): no tests run there.
  const then =
    ctx.runner.name === 'junit'
      ? 'nothing is sent'
      : failOnError
        ? 'the tests still run; failOnError fails the run at its end'
        : 'the tests still run';
  return `casebridge: reporting is off for this run: the configuration has problems (${then}):\n${problems
    .map((p) => `  - ${p}`)
    .join('\n')}\n  (looked in: ${searched})`;
}

/** Why `failOnError` fails the run, in one line. */
export function failReason(journaled: number, summary: RunSummary): string {
  return journaled > 0
    ? `casebridge: ${journaled} result(s) were not delivered (kept in the journal; \`${REPLAY}\` delivers them), and failOnError fails the run`
    : `casebridge: ${summary.problems.length} problem(s) while reporting (listed above), and failOnError fails the run`;
}

/** The problem lines in order, then one line per refusal answer (not one per test refused it). */
export function problemLines(records: readonly Problem[]): string[] {
  const lines: string[] = [];
  const byAnswer = new Map<string, Array<{ key: string; test: string }>>();
  for (const r of records) {
    if (r.kind !== 'refused') lines.push(r.message);
    else appendTo(byAnswer, r.answer, { key: r.key, test: r.test });
  }
  const fix = `kept in the journal, marked: \`${REPLAY}\` tries again once the cause is fixed`;
  for (const [answer, items] of byAnswer) {
    const first = items[0] as { key: string; test: string };
    if (items.length === 1) {
      lines.push(
        `${first.key} (${first.test}): the service refused its result on its own, repeatedly, while it took others (${answer}); ${fix}`,
      );
      continue;
    }
    const keys = [...new Set(items.map((i) => i.key))].sort();
    const shown = keys.slice(0, 3).join(', ') + (keys.length > 3 ? `, ${keys.length - 3} more` : '');
    lines.push(
      `${items.length} results (${shown}): the service refused each on its own, repeatedly, while it took others (${answer}); ${fix}`,
    );
  }
  return lines;
}
