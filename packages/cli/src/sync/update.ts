import { NotFoundError, redact, type TestManagementClient } from '@casebridge/core';
import {
  type CaseDiff,
  type CaseFromCode,
  diffCase,
  diffLines,
  hasChanges,
  type StepRequest,
  stepRequests,
  totalLine,
} from './diff.js';

/**
 * `sync --update`: reads each keyed case from the service, compares it with the code (see diff.ts) and, when told
 * to, applies the changes: the summary through Jira's issue edit (`PUT /rest/api/2/issue/{key}`), the steps through
 * the test-management API by sequence number.
 *
 * Cost: two reads per keyed case (the issue, for its project, type and summary; its steps) and, when applying, one
 * request per changed or removed step plus one append per case. At 10,000 keyed tests that is 20,000 reads run
 * `concurrency` at a time, which is why the update is opt-in and not part of every `sync`.
 */

/** Summaries are applied with Jira's issue edit. */
export const SUMMARIES = 'apply' as const;

/** One case the code describes: its key, the tests that name it, and what they say it is. */
export interface UpdateTarget {
  key: string;
  /** Mapping names of the tests, for the report. */
  tests: string[];
  code: CaseFromCode;
  /** Why the steps are not known (set when `code.steps` is undefined). */
  stepsUnknown?: string;
}

export interface Skipped {
  key: string;
  test: string;
  reason: string;
}

export interface PlannedCase {
  target: UpdateTarget;
  diff: CaseDiff;
}

export interface UpdatePlan {
  /** Every keyed case read, whether it differs or not. */
  cases: PlannedCase[];
  skipped: Skipped[];
  failed: string[];
}

/** What one test says about its case, before tests of the same key are merged. */
export interface KeyedTest {
  name: string;
  keys: string[];
  code: CaseFromCode;
  stepsUnknown?: string;
}

/**
 * One target per key. A test that names several cases is left alone (which of them its title and steps describe
 * is not known), and so is a key named by tests that disagree on the summary or the steps.
 */
export function targetsOf(tests: readonly KeyedTest[]): { targets: UpdateTarget[]; skipped: Skipped[] } {
  const skipped: Skipped[] = [];
  const byKey = new Map<string, KeyedTest[]>();
  for (const t of tests) {
    if (t.keys.length > 1) {
      for (const key of t.keys) {
        skipped.push({ key, test: t.name, reason: `the test names ${t.keys.length} cases (${t.keys.join(', ')})` });
      }
      continue;
    }
    const key = t.keys[0];
    if (!key) continue;
    const list = byKey.get(key);
    if (list) list.push(t);
    else byKey.set(key, [t]);
  }
  const targets: UpdateTarget[] = [];
  const same = (a: KeyedTest, b: KeyedTest) =>
    a.code.summary === b.code.summary && JSON.stringify(a.code.steps ?? null) === JSON.stringify(b.code.steps ?? null);
  for (const [key, list] of byKey) {
    const first = list[0];
    if (!first) continue;
    if (list.some((t) => !same(t, first))) {
      for (const t of list) {
        skipped.push({
          key,
          test: t.name,
          reason: `${list.length} tests name this case with different titles or steps`,
        });
      }
      continue;
    }
    targets.push({
      key,
      tests: list.map((t) => t.name),
      code: first.code,
      ...(first.stepsUnknown ? { stepsUnknown: first.stepsUnknown } : {}),
    });
  }
  targets.sort((a, b) => (a.tests[0] ?? '').localeCompare(b.tests[0] ?? ''));
  return { targets, skipped };
}

const message = (err: unknown) => redact(err instanceof Error ? err.message : String(err));

/**
 * Reads every target's case and computes its diff. A key that is not found, belongs to another project or is not a
 * test case is skipped and named: nothing outside the project is ever read twice or touched.
 */
export async function planUpdates(
  tm: TestManagementClient,
  project: string,
  targets: readonly UpdateTarget[],
): Promise<UpdatePlan> {
  const plan: UpdatePlan = { cases: [], skipped: [], failed: [] };
  await Promise.all(
    targets.map(async (target) => {
      const test = target.tests[0] ?? '';
      const skip = (reason: string) => plan.skipped.push({ key: target.key, test, reason });
      try {
        let issue: Awaited<ReturnType<TestManagementClient['jira']['issue']>>;
        try {
          issue = await tm.jira.issue({ issueIdOrKey: target.key, fields: 'summary,project,issuetype' });
        } catch (err) {
          if (err instanceof NotFoundError) return void skip('no issue has this key');
          throw err;
        }
        const inProject = issue.fields.project?.key;
        if (inProject !== project)
          return void skip(`the issue is in project ${inProject ?? '(unknown)'}, not ${project}`);
        const type = issue.fields.issuetype?.name;
        if (type !== 'Test Case')
          return void skip(`the issue is a ${type ?? 'issue of unknown type'}, not a Test Case`);
        const steps = target.code.steps
          ? (await tm.cases.steps({ testCaseIssueKey: target.key }))
              .map((s) => ({ seq: Number(s.sequenceNumber), step: s.step }))
              .sort((a, b) => a.seq - b.seq)
              .map((s) => s.step)
          : [];
        const diff = diffCase({ key: target.key, summary: issue.fields.summary ?? '', steps }, target.code);
        plan.cases.push({ target, diff });
      } catch (err) {
        plan.failed.push(`${target.key} (${test}): ${message(err)}`);
      }
    }),
  );
  plan.cases.sort((a, b) => (a.target.tests[0] ?? '').localeCompare(b.target.tests[0] ?? ''));
  plan.skipped.sort((a, b) => a.test.localeCompare(b.test) || a.key.localeCompare(b.key));
  return plan;
}

async function send(tm: TestManagementClient, key: string, r: StepRequest): Promise<void> {
  if (r.op === 'update') {
    await tm.cases.updateStepBySequence({ testCaseIssueKey: key, sequenceNumber: r.sequenceNumber, step: r.step });
  } else if (r.op === 'delete') {
    await tm.cases.deleteStepBySequenceNo({ testCaseIssueKey: key, stepNo: String(r.stepNo) });
  } else {
    await tm.cases.addSteps({
      testCaseIssueKey: key,
      body: r.steps.map((step) => ({ step, expectedResult: '' })),
    });
  }
}

/**
 * Applies the step changes, cases side by side, the requests of one case one after another (their order keeps the
 * sequence numbers valid). A case whose request fails stops there and is named; the others go on. Returns the
 * failures; a second run picks up what is left, since it diffs again from what the service then holds.
 */
export async function applyUpdates(tm: TestManagementClient, plan: UpdatePlan): Promise<string[]> {
  const failed: string[] = [];
  await Promise.all(
    plan.cases
      .filter((c) => hasChanges(c.diff))
      .map(async ({ target, diff }) => {
        if (diff.summary) {
          try {
            await tm.jira.editIssue({ issueIdOrKey: target.key, fields: { summary: diff.summary.to } });
          } catch (err) {
            failed.push(`${target.key} (${target.tests[0] ?? ''}): summary: ${message(err)}`);
            return;
          }
        }
        for (const r of stepRequests(diff)) {
          try {
            await send(tm, target.key, r);
          } catch (err) {
            failed.push(`${target.key} (${target.tests[0] ?? ''}): ${r.op} of steps: ${message(err)}`);
            return;
          }
        }
      }),
  );
  return failed.sort();
}

/** The machine-readable account of an update (`sync --update --json`). */
export function updateReport(plan: UpdatePlan, applied: boolean, failed: readonly string[]) {
  const changed = plan.cases.filter((c) => hasChanges(c.diff));
  return {
    applied,
    summaries: 'applied with the issue edit',
    compared: plan.cases.length,
    cases: changed.map(({ target, diff }) => ({
      key: diff.key,
      tests: target.tests,
      ...(diff.summary ? { summary: diff.summary } : {}),
      steps: diff.steps,
    })),
    stepsUnknown: plan.cases.flatMap((c) =>
      c.target.stepsUnknown ? [{ key: c.target.key, test: c.target.tests[0], reason: c.target.stepsUnknown }] : [],
    ),
    skipped: plan.skipped,
    failed: [...plan.failed, ...failed],
    total: totalLine(
      plan.cases.map((c) => c.diff),
      applied,
      SUMMARIES,
    ),
  };
}

/** The text account: each differing case with its changes, what was not compared and why, and the total. */
export function updateLines(plan: UpdatePlan, applied: boolean): string[] {
  const out = [
    applied
      ? `  update: ${plan.cases.length} keyed case(s) compared with the code`
      : `  update (dry run: nothing changed; add --yes to apply): ${plan.cases.length} keyed case(s) compared with the code`,
  ];
  for (const { target, diff } of plan.cases) {
    if (hasChanges(diff)) out.push(...diffLines(diff, target.tests.join(', '), SUMMARIES));
  }
  for (const s of plan.skipped) out.push(`  not compared: ${s.key} (${s.test}): ${s.reason}`);
  const unknown = plan.cases.filter((c) => c.target.stepsUnknown);
  if (unknown.length > 0) {
    out.push(
      `  steps left alone for ${unknown.length} case(s) whose steps the source does not show: ${unknown
        .map((c) => `${c.target.key} (${c.target.stepsUnknown})`)
        .join(', ')}`,
    );
  }
  out.push(
    `  ${totalLine(
      plan.cases.map((c) => c.diff),
      applied,
      SUMMARIES,
    )}`,
  );
  return out;
}
