import { HttpError, NotFoundError, ValidationError } from '../../client/errors.js';
import type { TestManagementClient } from '../../client/tm.js';
import type { TestResult } from '../kernel/model.js';
import { truncate } from '../kernel/text.js';
import { topSteps } from '../kernel/work.js';
import { suitePathOf } from './identity.js';
import { mappingKey } from './mapping.js';

/**
 * New cases through Jira's bulk create (up to `createBatchSize`), not one add-on create each. A refused element goes
 * alone through the add-on (which says why); a 400 halves the batch size, a missing route means one by one.
 */

/** The Jira issue type of a test case (the add-on's). */
export const TEST_CASE_TYPE = 'Test Case';

/** The fields of a new case: its summary, and a description whose last lines carry its identity (identity.ts). */
export function caseFields(project: string, summary: string, test: TestResult, id: string) {
  return {
    project: { key: project },
    summary,
    description: [
      `Created by casebridge for ${test.file}${test.line ? `:${test.line}` : ''}`,
      `casebridge-test: ${mappingKey(test).replace(/[\r\n]+/g, ' ')}`,
      `casebridge-id: ${id}`,
    ].join('\n'),
  };
}

/** The case steps of a test: its top-level steps, titles only. */
export function caseSteps(test: TestResult) {
  return topSteps(test).map((s) => ({
    step: truncate(s.title.trim() || '(untitled step)', 2000),
    expectedResult: '',
  }));
}

export interface BulkJob {
  test: TestResult;
  id: string;
  summary: string;
}

/** What one bulk create did: key and id by job position; `refused` positions go alone through the add-on. */
export interface BulkOutcome {
  created: Map<number, { key: string; id: number }>;
  refused: number[];
}

/** Sends one bulk create. Throws what the client throws (the caller tells a refused batch from an outage). */
export async function bulkCreate(
  tm: TestManagementClient,
  project: string,
  jobs: readonly BulkJob[],
  signal: AbortSignal | undefined,
): Promise<BulkOutcome> {
  const issueUpdates = jobs.map((j) => ({
    fields: { ...caseFields(project, j.summary, j.test, j.id), issuetype: { name: TEST_CASE_TYPE } },
  }));
  // In the background: a bulk takes Jira seconds per batch and would hold every slot ahead of reads and deliveries.
  const answer = await tm.jira.bulkCreateIssues({ issueUpdates }, { ...(signal ? { signal } : {}), background: true });
  const refused = new Set<number>();
  for (const e of answer.errors ?? []) {
    if (typeof e.failedElementNumber === 'number') refused.add(e.failedElementNumber);
  }
  // Jira lists the created issues in the order of their elements, the refused ones left out.
  const created = new Map<number, { key: string; id: number }>();
  const issues = answer.issues;
  let next = 0;
  for (let i = 0; i < jobs.length; i++) {
    if (refused.has(i)) continue;
    const issue = issues[next++];
    if (issue) created.set(i, { key: issue.key, id: Number(issue.id) });
    else refused.add(i);
  }
  return { created, refused: [...refused].sort((a, b) => a - b) };
}

/** Adds the steps of each new case that has some, before it is used (a run copies them); failures are named. */
export async function addCaseSteps(
  tm: TestManagementClient,
  made: ReadonlyArray<{ key: string; test: TestResult }>,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const o = signal ? { signal } : undefined;
  const failures: string[] = [];
  await Promise.all(
    made.flatMap((m) => {
      const steps = caseSteps(m.test);
      if (steps.length === 0) return [];
      return [
        tm.cases.addSteps({ testCaseIssueKey: m.key, body: steps }, o).then(
          () => undefined,
          (err: unknown) => failures.push(`the steps of ${m.key}: ${messageOf(err)}`),
        ),
      ];
    }),
  );
  return failures;
}

/** New cases waiting to be filed in their files' suites: one `testSuite/linkTestCase` per suite path per `flush`. */
export class SuiteLinks {
  private readonly waiting = new Map<string, string[]>();
  private sending?: Promise<void>;
  /** Links that failed, named; the cases are used all the same. */
  readonly failures: string[] = [];

  constructor(
    private readonly tm: TestManagementClient,
    private readonly project: string,
    private readonly signal: AbortSignal | undefined,
  ) {}

  add(key: string, test: TestResult): void {
    const path = suitePathOf(test.file);
    const keys = this.waiting.get(path) ?? [];
    keys.push(key);
    this.waiting.set(path, keys);
  }

  /** Cases waiting to be linked. */
  get size(): number {
    let n = 0;
    for (const keys of this.waiting.values()) n += keys.length;
    return n;
  }

  /** Links sent and not answered, or waiting. */
  get busy(): boolean {
    return this.sending !== undefined || this.waiting.size > 0;
  }

  /** Sends the waiting links for the paths `which` takes, one request per suite path, at once. */
  flush(which?: (path: string, count: number) => boolean): Promise<void> {
    const batch = [...this.waiting].filter(([path, keys]) => which?.(path, keys.length) ?? true);
    if (batch.length === 0) return this.sending ?? Promise.resolve();
    for (const [path] of batch) this.waiting.delete(path);
    const o = this.signal ? { signal: this.signal } : undefined;
    const sent = Promise.all(
      batch.map(([testSuitePath, testCaseKeys]) =>
        this.tm.cases.linkTestCaseToSuite({ testCaseKeys, testSuitePath, projectKey: this.project }, o).then(
          () => undefined,
          (err: unknown) => {
            this.failures.push(`suite ${testSuitePath} of ${testCaseKeys.join(', ')}: ${messageOf(err)}`);
          },
        ),
      ),
    ).then(() => undefined);
    const before = this.sending;
    const all = Promise.all([before, sent]).then(() => {
      if (this.sending === all) this.sending = undefined;
    });
    this.sending = all;
    return all;
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The server has no bulk create (the route is missing, or the method): one by one for the rest of the run. */
export function noBulkRoute(err: unknown): boolean {
  return err instanceof NotFoundError || (err instanceof HttpError && err.status === 405);
}

/** A certain refusal of the whole batch (400): a smaller batch, or the add-on's create for one, may pass. */
export function batchRefused(err: unknown): boolean {
  return err instanceof ValidationError && !err.mayHaveApplied && !err.retryable;
}
