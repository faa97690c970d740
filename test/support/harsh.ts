import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { JEST_PACKAGE, jestConfig } from './jest.js';
import { mappingName, type Outcome, type RealSuite } from './realsuite.js';
import { fixture, ROOT, type RunOutput, run } from './runner.js';
import { serviceRequests } from './state.js';

/**
 * Helpers of the harsh-service end-to-end test (issue 23, test/harsh.e2e.test.ts): small fixtures with case keys,
 * casebridge-made cases written straight into the emulator's store (a project that outgrew the search window costs
 * no create requests to build), what a run left (journal, output), the CLI's `replay`, and the table of rows written
 * to bench-results/harsh.md and harsh.json.
 */

export const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');

/** The run status of each outcome, as the Jest adapter reports it (a skipped test keeps its run Not Tested). */
export const STATUS: Record<Outcome, string> = { passed: 'Passed', failed: 'Failed', skipped: 'Not Tested' };

// ---- fixtures -----------------------------------------------------------------------------------------------------

/** Case keys `<project>-<first>`, `<project>-<first + 1>`, ... */
export const keys = (project: string, first: number, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `${project}-${first + i}`);

/**
 * A Jest project whose tests carry their case keys: `passing` keys pass (two files), `failing` keys fail each with
 * its own assertion on its own line (distinct failures: one defect each).
 */
export function mappedProject(
  name: string,
  { passing, failing = [] }: { passing: string[]; failing?: string[] },
  options: Record<string, unknown>,
): string {
  const half = Math.ceil(passing.length / 2);
  const file = (ks: string[], from: number) =>
    ks.map((k, i) => `test('${k} keeps record ${from + i}', () => {});`).join('\n');
  const files: Record<string, string> = {
    'package.json': JEST_PACKAGE,
    'jest.config.js': jestConfig(options),
    'tests/records-a.test.js': `${file(passing.slice(0, half), 0)}\n`,
    'tests/records-b.test.js': `${file(passing.slice(half), half)}\n`,
  };
  if (failing.length) {
    files['tests/fields.test.js'] = `${failing
      .map(
        (k, i) =>
          `test('${k} checks field ${i}', () => { expect({ field${i}: 'wrong ${i}' }).toEqual({ field${i}: 'right ${i}' }); });`,
      )
      .join('\n')}\n`;
  }
  return fixture(name, files);
}

/** Distinct mapping names of the suite's tests with their outcome (the Jest adapter reports skipped tests too). */
export function distinct(suite: RealSuite): Map<string, Outcome> {
  const out = new Map<string, Outcome>();
  for (const t of suite.tests) out.set(mappingName(t), t.outcome);
  return out;
}

/**
 * Writes `count` test cases into the project as casebridge makes them (summary, `casebridge-test:` and
 * `casebridge-id:` lines in the description; see packages/core/src/engine/cases/registry.ts), for tests of another suite of
 * the same project, created before this run. Straight into the store: 600 cases in a few milliseconds.
 */
export function seedCasebridgeCases(emu: RunningEmulator, projectKey: string, count: number): void {
  const project = emu.store.projects.find((p) => p.key === projectKey);
  if (!project) throw new Error(`seedCasebridgeCases: the emulator has no project ${projectKey}`);
  const start = Date.now() - count * 1000;
  for (let i = 0; i < count; i++) {
    const name = `legacy/other-suite.test.js > keeps legacy record ${i}`;
    const id = createHash('sha256').update(name).digest('hex').slice(0, 20);
    project.issueCounter += 1;
    emu.store.issues.insert({
      key: `${project.key}-${project.issueCounter}`,
      projectId: project.id,
      type: 'Test Case',
      summary: `keeps legacy record ${i}`,
      description: [
        'Created by casebridge for legacy/other-suite.test.js',
        `casebridge-test: ${name}`,
        `casebridge-id: ${id}`,
      ].join('\n'),
      status: 'Open',
      resolution: null,
      labels: [],
      reporter: 'ci',
      created: start + i * 1000,
      updated: start + i * 1000,
      automationReference: null,
    });
  }
  emu.store.projects.update(project);
}

/** A fresh CI checkout of the project: no mapping file (nobody committed it), no journal, no runner cache. */
export function freshCheckout(dir: string): void {
  for (const path of ['casebridge.keys.json', '.casebridge', '.jest-cache']) {
    rmSync(join(dir, path), { recursive: true, force: true });
  }
}

// ---- what a run left ----------------------------------------------------------------------------------------------

/** Result entries (and write-ahead logs) left in the project's journal: each entry is one undelivered result. */
export function journalLeft(dir: string): string[] {
  const journal = join(dir, '.casebridge', 'journal');
  if (!existsSync(journal)) return [];
  return readdirSync(journal).filter((n) => /\.json(\.claimed-\d+)?$|^wal-.*\.jsonl$/.test(n));
}

export type Mapping = Record<string, unknown>;

export function mappingOf(dir: string): Mapping {
  const path = join(dir, 'casebridge.keys.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Mapping) : {};
}

/**
 * What the reporter said: its `casebridge:` lines and the lines of its summary (indented by two spaces under
 * `casebridge: N test result(s)`: cases created, duplicates, problems, what was not delivered), without progress.
 */
export function reporterSaid(out: RunOutput): string[] {
  const said: string[] = [];
  let inSummary = false;
  for (const line of `${out.stderr}\n${out.stdout}`.split('\n')) {
    if (/^casebridge: \d+ test result/.test(line)) inSummary = true;
    else if (!/^ {2}\S/.test(line)) inSummary = false;
    if ((inSummary || /casebridge/.test(line)) && !/casebridge: delivering\.\.\./.test(line)) said.push(line.trim());
  }
  return said;
}

/** The number in "N test(s) without a case key" of the reporter's summary (0 when it says nothing). */
export function unmappedSaid(out: RunOutput): number {
  const m = /(\d+) test\(s\) without a case key/.exec(`${out.stderr}\n${out.stdout}`);
  return m ? Number(m[1]) : 0;
}

/** `casebridge replay` in the project folder, as a user runs it in the same CI job. */
export function replayCli(dir: string, env: Record<string, string>): Promise<RunOutput> {
  return run(process.execPath, [CLI, 'replay'], dir, env);
}

/** Service requests, and those that met an injected fault. */
export function requestCounts(emu: RunningEmulator): { requests: number; faulted: number } {
  const all = serviceRequests(emu);
  return { requests: all.length, faulted: all.filter((r) => r.fault !== null).length };
}

export function byOperation(emu: RunningEmulator): string {
  const counts = new Map<string, number>();
  for (const r of serviceRequests(emu)) counts.set(r.op ?? r.path, (counts.get(r.op ?? r.path) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([op, n]) => `${op} ${n}`)
    .join(', ');
}

// ---- findings and the table ---------------------------------------------------------------------------------------

const short = (s: string) => (s.length > 140 ? `${s.slice(0, 139)}…` : s);

/** Problems as one line each: how many, and the first 8 names. */
export class Findings {
  readonly lines: string[] = [];
  add(what: string, items: string[]): void {
    if (items.length === 0) return;
    const more = items.length > 8 ? `\n      … and ${items.length - 8} more` : '';
    this.lines.push(`${items.length} ${what}:\n      ${items.slice(0, 8).map(short).join('\n      ')}${more}`);
  }
  say(line: string): void {
    this.lines.push(line);
  }
}

export interface HarshRow {
  /** The issue's row: what the real service does. */
  behaviour: string;
  /** What casebridge did before the fix (the issue's figures). */
  before: string;
  /** Results the run should deliver. */
  expected: number;
  /** Results delivered in the end (runs of the right status, in the run or by the recovery the row allows). */
  delivered: number;
  /** Results left in the journal at the end. */
  journaled: number;
  /** Test cases (open ones, for the two-machine row; defects, for the defect row) the row ends with. */
  cases: number;
  /** Cases (open, or closed as duplicates by a later read), runs or defects made twice. */
  duplicates: number;
  /** Service requests of the row (all runs), and those that met an injected fault. */
  requests: number;
  faulted: number;
  seconds: number;
  passed: boolean;
  notes: string;
}

export function writeHarshTables(rows: HarshRow[]): void {
  if (rows.length === 0) return;
  const out = join(ROOT, 'bench-results');
  mkdirSync(out, { recursive: true });
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
  const lines = [
    '| behaviour | before (issue 23) | expected | delivered | journaled | cases | duplicates | requests (faulted) | s | result | notes |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${cell(r.behaviour)} | ${cell(r.before)} | ${r.expected} | ${r.delivered} | ${r.journaled} | ${r.cases} | ${r.duplicates} | ${r.requests} (${r.faulted}) | ${r.seconds} | ${r.passed ? 'pass' : '**FAIL**'} | ${cell(r.notes)} |`,
    ),
  ];
  writeFileSync(join(out, 'harsh.md'), `${lines.join('\n')}\n`);
  writeFileSync(join(out, 'harsh.json'), JSON.stringify(rows, null, 2));
}
