import { CasebridgeError, NotFoundError } from '../../client/errors.js';
import { redact } from '../../client/secrets.js';
import type { TestManagementClient } from '../../client/tm.js';
import { identityInDescription } from '../cases/identity.js';
import { isDone } from '../jira/duplicate.js';
import { keysetSearch } from '../jira/keyset.js';
import { compareKeys } from '../kernel/issue-keys.js';
import type { RunSummary } from '../kernel/types.js';
import { countCases, pastTheCap, quarantineCap } from './quarantine-cap.js';

/**
 * The project's quarantined cases, read once per run: labelled, or linked through a run to an open labelled issue.
 * Cost: one search plus one read per labelled bug (at most MAX_BUGS); none per test.
 */

/** Labelled bugs whose runs are read at once. */
const READS = 4;
/** Labelled bugs read at most: each costs a request. */
export const MAX_BUGS = 50;

/** One quarantined case as the CLI and the MCP server show it (`quarantined_cases`). */
export interface QuarantineEntry {
  key: string;
  /** The line's reason; else a bug's summary, or `label L`. */
  reason: string;
  owner?: string;
  /** `YYYY-MM-DD`, the last day the quarantine applies (UTC). */
  until?: string;
  /** The end has passed: the quarantine no longer applies. */
  expired: boolean;
  /** The label is on the case itself, or on a bug linked to one of its runs (`bug`). */
  via: 'label' | 'bug';
  bug?: string;
  /** Active, but past the cap `quarantine.max`: it does not apply (pastTheCap says which do). */
  overCap?: boolean;
}

/** Why a case is quarantined, as the run comment and the summary say it. */
export interface QuarantineSet {
  label: string;
  /** Quarantined case key → why, with the issue's reason, owner and end when it says so; expired ones left out. */
  cases: Map<string, string>;
  /** Case key → its quarantine whose end has passed (and no other quarantine of the case applies). */
  expired: Map<string, { reason: string; owner?: string; until: string }>;
  /** Every quarantined case, active and expired, one entry per key, sorted by key. */
  entries: QuarantineEntry[];
  /** Case identity (`casebridge-id` of its description) → case key: keyless tests find their case by it. */
  identities: Map<string, string>;
  /** Requests the read cost. */
  requests: number;
  /** Labelled bugs past MAX_BUGS whose runs were not read. */
  bugsNotRead: string[];
  /** Active quarantines past the cap, left out of `cases` (sorted by key); empty without a cap. */
  overCap: string[];
  /** The cap when it was counted: `allowed` quarantines of the `total` cases of `of` (a plan or a project). */
  cap?: { allowed: number; total: number; of: string };
  /** Why the cases could not be counted: every active quarantine applies. */
  capUnread?: string;
}

/** The line that says why, who and until when, in the description of a labelled case or bug. */
export const QUARANTINE_LINE = /^casebridge-quarantine:[ \t]*(.*)$/m;

export interface QuarantineNote {
  reason?: string;
  owner?: string;
  until?: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A real calendar date written `YYYY-MM-DD` (2025-02-30 is not). */
export function isQuarantineDate(v: string): boolean {
  return (
    DATE.test(v) &&
    !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) &&
    new Date(`${v}T00:00:00Z`).toISOString().startsWith(v)
  );
}

/** Today as `YYYY-MM-DD`, in UTC: a quarantine applies through its `until` day, wherever the run is. */
export const utcDay = (now: Date): string => now.toISOString().slice(0, 10);

/** Whether a quarantine ending `until` no longer applies on `now` (no end: never). */
export const isExpired = (until: string | undefined, now: Date): boolean => until !== undefined && until < utcDay(now);

/** The reason, owner and end of a description's quarantine line, read leniently (what a person typed). */
export function parseQuarantineLine(description: string): QuarantineNote | undefined {
  const m = QUARANTINE_LINE.exec(description);
  if (!m) return undefined;
  const out: QuarantineNote = {};
  for (const part of (m[1] ?? '').split(/;(?=\s*(?:reason|owner|until)\s*=)/)) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (eq < 0 || value === '') continue;
    if (name === 'reason' || name === 'owner') out[name] = value;
    else if (name === 'until' && isQuarantineDate(value)) out.until = value;
  }
  return out;
}

/** The line for a description: the reason on one line, `;` in it made `,` so that the line reads back the same. */
export function quarantineLine(n: { reason: string; owner?: string | undefined; until?: string | undefined }): string {
  const reason = n.reason.replace(/\s+/g, ' ').replaceAll(';', ',').trim();
  return `casebridge-quarantine: reason=${reason}${n.owner ? `; owner=${n.owner}` : ''}${n.until ? `; until=${n.until}` : ''}`;
}

/** `description` with its quarantine line replaced by `line` (or `line` put first when it has none). */
export function withQuarantineLine(description: string, line: string): string {
  return QUARANTINE_LINE.test(description)
    ? description.replace(QUARANTINE_LINE, line)
    : `${line}\n\n${description}`.trimEnd();
}

/** A quarantine change casebridge refuses (unknown key, not a test case, a bad date, the cap): the CLI exits 1. */
export class QuarantineRefused extends CasebridgeError {
  constructor(message: string) {
    super('refused', message, {}, false, { exitCode: 1 });
  }
}

interface Found {
  entry: QuarantineEntry;
  /** For the run comment (see QuarantineSet.cases). */
  why: string;
  /** Made by `quarantine add` (a bug with the line), which checked the cap: first under the cap. */
  added: boolean;
}

/** The better of two quarantines of a case: the first that applies, else the one that ended last. */
function better(a: Found | undefined, b: Found): Found {
  if (!a) return b;
  if (a.entry.expired !== b.entry.expired) return a.entry.expired ? b : a;
  return a.entry.expired && (b.entry.until ?? '') > (a.entry.until ?? '') ? b : a;
}

function found(
  key: string,
  via: 'label' | 'bug',
  base: string,
  note: QuarantineNote,
  fallback: string,
  now: Date,
  bug?: { key: string; added: boolean },
): Found {
  const entry: QuarantineEntry = {
    key,
    reason: note.reason ?? fallback,
    ...(note.owner ? { owner: note.owner } : {}),
    ...(note.until ? { until: note.until } : {}),
    expired: isExpired(note.until, now),
    via,
    ...(bug ? { bug: bug.key } : {}),
  };
  const more = [note.owner && `owner ${note.owner}`, note.until && `until ${note.until}`].filter(Boolean).join(', ');
  const why = `${base}${note.reason ? `: ${note.reason}` : ''}${more ? ` (${more})` : ''}`;
  return { entry, why, added: bug?.added ?? false };
}

export interface QuarantineRead {
  tm: TestManagementClient;
  projectKey: string;
  label: string;
  /** The issue type of test cases (anything else carrying the label is a bug marked so). */
  caseType: string;
  /** Today, for expiry; default the clock's. */
  now?: Date;
  /** The cap: `max` (a share, 0..1) of the cases of `plan`, else of the project's. None: every quarantine applies. */
  cap?: { max: number; plan?: string | undefined };
  signal?: AbortSignal;
}

export async function readQuarantine(o: QuarantineRead): Promise<QuarantineSet> {
  const { tm, label, signal } = o;
  const now = o.now ?? new Date();
  const search = await keysetSearch({
    tm,
    jql: `project = "${o.projectKey}" AND labels = "${label}"`,
    fields: 'issuetype,status,resolution,description,summary,assignee,duedate',
    ...(signal ? { signal } : {}),
  });
  const byKey = new Map<string, Found>();
  const identities = new Map<string, string>();
  const bugs: Array<{ key: string; note: QuarantineNote; summary: string; added: boolean }> = [];
  for (const issue of search.issues) {
    const f = issue.fields as {
      issuetype?: { name?: unknown };
      description?: unknown;
      summary?: unknown;
      assignee?: { name?: unknown } | null;
      duedate?: unknown;
    };
    if (isDone(issue.fields)) continue;
    const description = typeof f.description === 'string' ? f.description : '';
    const note = parseQuarantineLine(description) ?? {};
    if (f.issuetype?.name === o.caseType) {
      byKey.set(
        issue.key,
        better(byKey.get(issue.key), found(issue.key, 'label', `label ${label}`, note, `label ${label}`, now)),
      );
      const id = identityInDescription(description);
      if (id) identities.set(id, issue.key);
    } else {
      // What a person sets in Jira (assignee, due date) wins over the line.
      const owner = typeof f.assignee?.name === 'string' ? f.assignee.name : note.owner;
      const until = typeof f.duedate === 'string' && isQuarantineDate(f.duedate) ? f.duedate : note.until;
      const summary = typeof f.summary === 'string' && f.summary ? f.summary : `bug ${issue.key}`;
      bugs.push({
        key: issue.key,
        note: { ...note, ...(owner ? { owner } : {}), ...(until ? { until } : {}) },
        summary,
        added: QUARANTINE_LINE.test(description),
      });
    }
  }
  const toRead = bugs.slice(0, MAX_BUGS);
  let requests = search.requests;
  let next = 0;
  const worker = async () => {
    while (next < toRead.length) {
      const bug = toRead[next++] as (typeof toRead)[number];
      requests += 1;
      let runs: ReadonlyArray<unknown>;
      try {
        runs = await tm.runs.getTestRunsForDefect({ defectIssueKey: bug.key }, signal ? { signal } : undefined);
      } catch (err) {
        // Deleted since the search: it quarantines nothing.
        if (err instanceof NotFoundError) continue;
        throw err;
      }
      for (const r of runs) {
        const key = (r as { testCaseKey?: unknown }).testCaseKey;
        if (typeof key !== 'string') continue;
        const f = found(key, 'bug', `bug ${bug.key} (label ${label})`, bug.note, bug.summary, now, bug);
        byKey.set(key, better(byKey.get(key), f));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(READS, toRead.length) }, worker));
  const active = [...byKey.values()].filter((x) => !x.entry.expired);
  let cap: QuarantineSet['cap'];
  let capUnread: string | undefined;
  if (o.cap && active.length > (o.cap.max > 0 ? 1 : 0)) {
    requests += 1;
    // A count that cannot be read leaves every quarantine applied (said in the summary): the set itself was read.
    const total = await countCases({ ...o, plan: o.cap.plan }, signal).catch((err: unknown) => {
      if (signal?.aborted) throw err;
      capUnread = redact(err instanceof Error ? err.message : String(err));
      return undefined;
    });
    if (total !== undefined) {
      cap = {
        allowed: quarantineCap(o.cap.max, total),
        total,
        of: o.cap.plan ? `test plan ${o.cap.plan}` : `project ${o.projectKey}`,
      };
      for (const x of pastTheCap(active, cap.allowed)) x.entry.overCap = true;
    }
  }
  const cases = new Map<string, string>();
  const expired: QuarantineSet['expired'] = new Map();
  for (const [key, { entry, why }] of byKey) {
    if (entry.expired)
      expired.set(key, {
        reason: entry.reason,
        ...(entry.owner ? { owner: entry.owner } : {}),
        until: entry.until as string,
      });
    else if (!entry.overCap) cases.set(key, why);
  }
  const entries = [...byKey.values()].map((x) => x.entry).sort((a, b) => compareKeys(a.key, b.key));
  return {
    label,
    cases,
    expired,
    entries,
    identities,
    requests,
    bugsNotRead: bugs.slice(MAX_BUGS).map((b) => b.key),
    overCap: entries.filter((e) => e.overCap).map((e) => e.key),
    ...(cap ? { cap } : {}),
    ...(capUnread !== undefined ? { capUnread } : {}),
  };
}

/** What a run's quarantine came to, for the summary; `overCap`: quarantines past the cap, not applied. */
export type QuarantineStats = NonNullable<RunSummary['quarantine']> & {
  expired?: string[];
  overCap?: { keys: string[]; max: number; allowed: number; total: number; of: string };
  capUnread?: string;
};

/** A run's quarantine: read at most once (before the run, or at the first failure), and what its results did. */
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
      cap: { max: number; plan?: string | undefined };
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
      ...(set?.expired.size ? { expired: [...set.expired.keys()].sort(compareKeys) } : {}),
      ...(set?.cap && set.overCap.length ? { overCap: { keys: set.overCap, max: this.o.cap.max, ...set.cap } } : {}),
      ...(set?.capUnread !== undefined ? { capUnread: set.capUnread } : {}),
      ...(this.problem === undefined ? {} : { problem: this.problem }),
    };
  }
}
