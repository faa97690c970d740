import { NotFoundError, ValidationError } from '../../client/errors.js';
import type { TestManagementClient } from '../../client/tm.js';
import { TEST_CASE_TYPE } from '../cases/bulk-create.js';
import type { CasebridgeConfig } from '../config/schema.js';
import { closeIssue } from '../jira/duplicate.js';
import { compareKeys } from '../kernel/issue-keys.js';
import {
  isExpired,
  isQuarantineDate,
  parseQuarantineLine,
  type QuarantineEntry,
  type QuarantineRead,
  QuarantineRefused,
  quarantineLine,
  readQuarantine,
  utcDay,
  withQuarantineLine,
} from './quarantine.js';
import { countCases, quarantineCap } from './quarantine-cap.js';

/** The quarantine as people and agents manage it; what it writes is what quarantine.ts reads for the reporters. */

/** The quarantine options of a configuration, so the CLI's and the MCP server's quarantine is the reporters'. */
export function quarantineOptions(c: CasebridgeConfig, tm: TestManagementClient, plan = c.testPlan) {
  return {
    tm,
    projectKey: c.projectKey,
    label: c.quarantine.label,
    caseType: TEST_CASE_TYPE,
    cap: { max: c.quarantine.max, plan },
    bugType: c.defects.issueType,
  };
}

/** The project's quarantined cases, active and expired, by key; with `cap`, those past it marked `overCap`. */
export async function quarantineList(o: QuarantineRead): Promise<{ cases: QuarantineEntry[]; capUnread?: string }> {
  const set = await readQuarantine(o);
  return { cases: set.entries, ...(set.capUnread !== undefined ? { capUnread: set.capUnread } : {}) };
}

/** A quarantined case as `casebridge quarantine --json` and the MCP tools answer it. */
export function quarantineView(e: QuarantineEntry) {
  return {
    key: e.key,
    reason: e.reason,
    ...(e.owner ? { owner: e.owner } : {}),
    ...(e.until ? { until: e.until } : {}),
    expired: e.expired,
    ...(e.overCap ? { overCap: true } : {}),
  };
}

interface QuarantineChange {
  tm: TestManagementClient;
  projectKey: string;
  label: string;
  key: string;
  signal?: AbortSignal;
}

/**
 * Quarantines a case: a labelled bug linked to a new ad hoc run of it (about eight requests). Throws
 * QuarantineRefused for an unknown or non-test-case key, a bad date, a case already quarantined, or the cap reached.
 */
export async function quarantineAdd(
  o: QuarantineChange & {
    caseType: string;
    reason: string;
    owner?: string;
    until?: string;
    /** The cap: `max`, a share (0..1, option `quarantine.max`) of the cases of `plan`, else of the project's. */
    cap: { max: number; plan?: string | undefined };
    /** The issue type of the bug filed; default Bug. */
    bugType?: string;
    /** Today; default the clock's. */
    now?: Date;
  },
): Promise<QuarantineEntry> {
  const { tm, key } = o;
  const r = o.signal ? { signal: o.signal } : undefined;
  const now = o.now ?? new Date();
  const reason = o.reason.replace(/\s+/g, ' ').trim();
  const owner = o.owner?.trim() || undefined;
  const until = o.until?.trim() || undefined;
  if (!reason) throw new QuarantineRefused('a quarantine needs a reason (--reason "why")');
  if (owner !== undefined && /[;=\n]/.test(owner)) {
    throw new QuarantineRefused(`owner: expected a Jira user name or a team, without ";" or "=", got "${owner}"`);
  }
  if (until !== undefined && !isQuarantineDate(until)) {
    throw new QuarantineRefused(`until: expected a date as YYYY-MM-DD (e.g. 2025-07-31), got "${until}"`);
  }
  if (until !== undefined && isExpired(until, now)) {
    throw new QuarantineRefused(`until: ${until} has passed (today is ${utcDay(now)}, UTC): give a later date`);
  }
  const { max, plan } = o.cap;
  if (!(max >= 0 && max <= 1)) throw new QuarantineRefused(`quarantine.max: expected a share from 0 to 1, got ${max}`);
  let issue: { fields?: { issuetype?: { name?: unknown }; summary?: unknown } };
  try {
    issue = await tm.jira.issue({ issueIdOrKey: key, fields: 'issuetype,summary' }, r);
  } catch (err) {
    if (err instanceof NotFoundError)
      throw new QuarantineRefused(`${key}: no such issue in Jira; give a test case key`);
    throw err;
  }
  const type = String(issue.fields?.issuetype?.name ?? '');
  if (type !== o.caseType)
    throw new QuarantineRefused(`${key} is a ${type || 'issue'}, not a ${o.caseType}: only test cases are quarantined`);
  const set = await readQuarantine({ ...o, now });
  const current = set.entries.find((e) => e.key === key);
  if (current && !current.expired) {
    throw new QuarantineRefused(
      `${key} is already quarantined (${describeEntry(current)}): to change it, remove it first`,
    );
  }
  // The read counted the cases when two or more quarantines are active; else they are counted here.
  const total = set.cap?.total ?? (await countCases({ ...o, plan }, o.signal));
  const allowed = quarantineCap(max, total);
  const active = set.cases.size + set.overCap.length;
  if (active + 1 > allowed) {
    const of = plan ? `test plan ${plan}` : `project ${o.projectKey}`;
    throw new QuarantineRefused(
      `the quarantine cap is reached: ${active} of the ${total} cases of ${of} are quarantined and quarantine.max ${max} allows ${allowed}; remove one (casebridge quarantine remove KEY), or raise quarantine.max (CASEBRIDGE_QUARANTINE_MAX)`,
    );
  }
  const line = quarantineLine({ reason, owner, until });
  const entry: QuarantineEntry = {
    key,
    reason: reason.replaceAll(';', ','),
    ...(owner ? { owner } : {}),
    ...(until ? { until } : {}),
    expired: false,
    via: 'bug',
  };
  // An ended quarantine by a bug of this case alone (casebridge's own): that bug is closed, the new one replaces it.
  if (current?.bug && (await otherCases(tm, current.bug, key, r)).length === 0)
    await closeIssue(tm, current.bug, { resolution: 'Done', ...(r ?? {}) });
  const bugType = o.bugType ?? 'Bug';
  const screen = await screenFields(tm, o.projectKey, bugType, r);
  const run = await tm.runs.adhocCreate({ testCaseIssueKey: key }, r);
  // Commented first: a reporter's replay never adopts a run with a comment as its own, even if the bug is refused.
  await tm.runs.update({ runId: String(run.id), comment: `casebridge: ${line}` }, r);
  const summary = `Quarantined: ${key} ${String(issue.fields?.summary ?? '')}`.trim().slice(0, 255);
  const description = `${line}\n\ncasebridge quarantines ${key} (label ${o.label}): the reporters run it expected to fail, or classify its failures quarantined, and file no defect for them${until ? ` until ${until}` : ''}. Close this issue (or remove its label) to end the quarantine; \`casebridge quarantine list\` shows every quarantined case.`;
  const assignee = owner && screen.has('assignee') ? { assignee: { name: owner } } : {};
  let bug: { key: string };
  try {
    bug = await tm.defects.createRunBug(
      {
        fields: {
          project: { key: o.projectKey },
          issuetype: { name: bugType },
          summary,
          description,
          labels: [o.label],
          ...assignee,
          ...(until && screen.has('duedate') ? { duedate: until } : {}),
        },
        runId: run.id,
      },
      r,
    );
  } catch (err) {
    if (err instanceof ValidationError && owner && 'assignee' in assignee && err.serverMessage.includes(owner)) {
      throw new QuarantineRefused(
        `Jira refused the owner "${owner}" as the bug's assignee (${err.serverMessage}): give a Jira user name, or leave the owner out`,
      );
    }
    throw err;
  }
  return { ...entry, bug: bug.key };
}

/**
 * Ends a case's quarantine: its bug closed, or its line made to end yesterday. Refused when the bug quarantines other
 * cases too; `removed: false` when it was not quarantined.
 */
export async function quarantineRemove(
  o: QuarantineChange & { caseType?: string; now?: Date },
): Promise<{ key: string; removed: boolean }> {
  const { tm, key } = o;
  const r = o.signal ? { signal: o.signal } : undefined;
  const now = o.now ?? new Date();
  const set = await readQuarantine({ ...o, caseType: o.caseType ?? TEST_CASE_TYPE, now });
  const current = set.entries.find((e) => e.key === key);
  if (!current || current.expired) return { key, removed: false };
  const ended = utcDay(new Date(now.getTime() - 86_400_000));
  const end = async (issueKey: string) => {
    const got = await tm.jira.issue({ issueIdOrKey: issueKey, fields: 'description' }, r);
    const description = typeof got.fields?.description === 'string' ? got.fields.description : '';
    const note = parseQuarantineLine(description) ?? {};
    const line = quarantineLine({ reason: note.reason ?? current.reason, owner: note.owner, until: ended });
    await tm.jira.editIssue(
      { issueIdOrKey: issueKey, fields: { description: withQuarantineLine(description, line) } },
      r,
    );
  };
  if (current.via === 'label') {
    await end(key);
    return { key, removed: true };
  }
  const bug = current.bug as string;
  const others = await otherCases(tm, bug, key, r);
  if (others.length > 0) {
    throw new QuarantineRefused(
      `${key} is quarantined by bug ${bug}, which also quarantines ${others.join(', ')}: close the bug or remove its label ${o.label} in Jira to lift them all`,
    );
  }
  if (!(await closeIssue(tm, bug, { resolution: 'Done', ...(r ?? {}) }))) await end(bug);
  return { key, removed: true };
}

function describeEntry(e: QuarantineEntry): string {
  const via = e.via === 'bug' ? `bug ${e.bug}` : 'label';
  return [via, e.reason, e.owner && `owner ${e.owner}`, e.until && `until ${e.until}`].filter(Boolean).join(', ');
}

type Req = { signal: AbortSignal } | undefined;

/** The fields of the create screen of `type` in the project (two requests); empty when it cannot be read. */
async function screenFields(tm: TestManagementClient, project: string, type: string, r: Req): Promise<Set<string>> {
  try {
    const types = await tm.jira.createMetaIssueTypes({ projectIdOrKey: project, maxResults: '100' }, r);
    const id = types.values.find((t) => String(t.name).toLowerCase() === type.toLowerCase())?.id;
    if (id === undefined) return new Set();
    const fields = await tm.jira.createMetaFields(
      { projectIdOrKey: project, issueTypeId: String(id), maxResults: '200' },
      r,
    );
    return new Set(fields.values.map((f) => f.fieldId));
  } catch {
    // An old Jira (before 8.4) or a proxy without createmeta: the line alone says who and until when.
    return new Set();
  }
}

/** The cases other than `key` whose runs `bug` is linked to (one request). */
async function otherCases(tm: TestManagementClient, bug: string, key: string, r: Req): Promise<string[]> {
  const runs = await tm.runs.getTestRunsForDefect({ defectIssueKey: bug }, r);
  const keys = runs
    .map((x) => (x as { testCaseKey?: unknown }).testCaseKey)
    .filter((k): k is string => typeof k === 'string');
  return [...new Set(keys)].filter((k) => k !== key).sort(compareKeys);
}
