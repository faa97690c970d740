import { NotFoundError } from '../../client/errors.js';
import { redact } from '../../client/secrets.js';
import type { TestManagementClient } from '../../client/tm.js';
import { identityInDescription } from '../cases/identity.js';
import { isDone } from '../jira/duplicate.js';
import { keysetSearch } from '../jira/keyset.js';
import type { RunSummary } from '../kernel/types.js';

/**
 * The quarantined cases of a project, read from Jira once per run (option `quarantine`).
 *
 * A case is quarantined while it carries the label (`casebridge-quarantine` by default), or while an open issue that
 * carries it is linked to one of the case's runs: a person marks a known bug "quarantine" and every case whose failed
 * run it is linked to is quarantined until the bug is closed or the label removed. Only open issues count (a closed
 * case or bug quarantines nothing).
 *
 * Cost: one Jira search (`project = P AND labels = L`, keyset pages of 1,000: one request for any usual set), plus
 * one read of the runs of each labelled bug (`getTestRunsForDefect`), at most READS at a time and at most MAX_BUGS
 * bugs (a label on hundreds of bugs is a mistake; the summary says what was left out). None per test.
 *
 * What a quarantined test does depends on the runner: Playwright 1.62+ marks it expected-to-fail before the run
 * (`preprocess`), the other runners report it classified `quarantined`. Either way its failure files no new defect.
 */

/** Labelled bugs whose runs are read at once. */
const READS = 4;
/** Labelled bugs read at most: each costs a request. */
export const MAX_BUGS = 50;

/** Why a case is quarantined, as the run comment and the summary say it. */
export interface QuarantineSet {
  label: string;
  /** Quarantined case key → why (`label casebridge-quarantine` or `bug DEMO-40 (label casebridge-quarantine)`). */
  cases: Map<string, string>;
  /** Case identity (`casebridge-id` of its description) → case key: keyless tests find their case by it. */
  identities: Map<string, string>;
  /** Requests the read cost. */
  requests: number;
  /** Labelled bugs past MAX_BUGS whose runs were not read. */
  bugsNotRead: string[];
}

export async function readQuarantine(o: {
  tm: TestManagementClient;
  projectKey: string;
  label: string;
  /** The issue type of test cases (anything else carrying the label is a bug marked so). */
  caseType: string;
  signal?: AbortSignal;
}): Promise<QuarantineSet> {
  const { tm, label, signal } = o;
  const found = await keysetSearch({
    tm,
    jql: `project = "${o.projectKey}" AND labels = "${label}"`,
    fields: 'issuetype,status,resolution,description',
    ...(signal ? { signal } : {}),
  });
  const cases = new Map<string, string>();
  const identities = new Map<string, string>();
  const bugs: string[] = [];
  for (const issue of found.issues) {
    const f = issue.fields as { issuetype?: { name?: unknown }; description?: unknown };
    if (isDone(issue.fields)) continue;
    if (f.issuetype?.name === o.caseType) {
      cases.set(issue.key, `label ${label}`);
      const id = typeof f.description === 'string' ? identityInDescription(f.description) : undefined;
      if (id) identities.set(id, issue.key);
    } else bugs.push(issue.key);
  }
  const toRead = bugs.slice(0, MAX_BUGS);
  let requests = found.requests;
  let next = 0;
  const worker = async () => {
    while (next < toRead.length) {
      const bug = toRead[next++] as string;
      requests += 1;
      let runs: ReadonlyArray<unknown>;
      try {
        runs = await tm.runs.getTestRunsForDefect({ defectIssueKey: bug }, signal ? { signal } : undefined);
      } catch (err) {
        // Deleted since the search: it quarantines nothing.
        if (err instanceof NotFoundError) continue;
        throw err;
      }
      for (const r of runs) {
        const key = (r as { testCaseKey?: unknown }).testCaseKey;
        if (typeof key === 'string' && !cases.has(key)) cases.set(key, `bug ${bug} (label ${label})`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(READS, toRead.length) }, worker));
  return { label, cases, identities, requests, bugsNotRead: bugs.slice(MAX_BUGS) };
}

/** What a run's quarantine came to, for the summary (see RunSummary.quarantine). */
export type QuarantineStats = NonNullable<RunSummary['quarantine']>;

/**
 * A run's quarantine: the set, read at most once (before the run where the runner can act on it, else on the first
 * failing or flaky result: a run where everything passes reads nothing), and what the run's results did with it.
 */
export class Quarantine {
  private reading: Promise<QuarantineSet | undefined> | undefined;
  private set: QuarantineSet | undefined;
  private problem: string | undefined;
  private readonly failed = new Set<string>();
  /** Keys with a passing result, and keys with a failing one (a case passes only when none of its tests failed). */
  private readonly passedKeys = new Set<string>();
  private readonly failedKeys = new Set<string>();
  private marked = 0;

  constructor(
    private readonly o: {
      tm: TestManagementClient;
      projectKey: string;
      label: string;
      caseType: string;
      signal: AbortSignal;
    },
  ) {}

  get label(): string {
    return this.o.label;
  }

  /** The set, read once per run; undefined when it could not be read (said once in the summary). */
  read(signal?: AbortSignal): Promise<QuarantineSet | undefined> {
    this.reading ??= readQuarantine({ ...this.o, signal: signal ?? this.o.signal }).then(
      (set) => {
        this.set = set;
        return set;
      },
      (err: unknown) => {
        this.problem = redact(err instanceof Error ? err.message : String(err));
        return undefined;
      },
    );
    return this.reading;
  }

  /** The set when it has been read; undefined before (or when it could not be). */
  get known(): QuarantineSet | undefined {
    return this.set;
  }

  /** Why `key` is quarantined, once the set is read; undefined when it is not (or the set could not be read). */
  async why(key: string): Promise<string | undefined> {
    return (await this.read())?.cases.get(key);
  }

  /** The runner ran `n` tests expected-to-fail because of the quarantine. */
  markedBefore(n: number): void {
    this.marked += n;
  }

  /** A result of `key` with its outcome: the summary names quarantined cases that failed, and those that passed. */
  saw(key: string, outcome: string): void {
    if (outcome === 'passed') this.passedKeys.add(key);
    else if (outcome === 'failed' || outcome === 'flaky') this.failedKeys.add(key);
  }

  /** A quarantined failure was reported as such. */
  reported(key: string): void {
    this.failed.add(key);
  }

  /** Undefined when the set was never read and nothing went wrong (the run had no failure). */
  stats(): QuarantineStats | undefined {
    const set = this.set;
    if (!set && this.problem === undefined) return undefined;
    const passed = set ? [...this.passedKeys].filter((k) => set.cases.has(k) && !this.failedKeys.has(k)) : [];
    return {
      label: this.o.label,
      failed: [...this.failed],
      passed,
      marked: this.marked,
      ...(this.problem === undefined ? {} : { problem: this.problem }),
    };
  }
}
