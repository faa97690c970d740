import { NotFoundError, ResponseShapeError } from '../../client/errors.js';
import type { TestManagementClient } from '../../client/tm.js';
import { NotJiraError } from './errors.js';

/**
 * A check, made once, that throws NotJiraError when the base URL does not answer as Jira (`/rest/api/2/myself` is
 * not found or answers something that is not Jira's), so a 404 elsewhere means the URL, not the plan or the case.
 * Any other failure is forgotten: the next call checks again.
 */
export function jiraCheck(tm: TestManagementClient, url: string, signal: AbortSignal): () => Promise<void> {
  let checked: Promise<void> | undefined;
  return () => {
    checked ??= tm.jira.myself({}, { signal }).then(
      () => undefined,
      (err) => {
        if (err instanceof NotFoundError || err instanceof ResponseShapeError) {
          throw new NotJiraError(
            `${url} does not answer as Jira (GET /rest/api/2/myself: ${err instanceof NotFoundError ? 'not found' : 'not a Jira answer'}): check url (CASEBRIDGE_URL), including its context path; the results are kept on disk`,
          );
        }
        checked = undefined;
        throw err;
      },
    );
    return checked;
  };
}

/** Where a problem was found. `run`: RunHealth's classification of a failure, Journaling's disk errors. */
export type ProblemKind = 'config' | 'mapping' | 'delivery' | 'cycle' | 'internal' | 'run';

/**
 * One problem of a run. Most are a sentence (`message`); a result the service refused on its own, repeatedly,
 * while it took others is a record of its own (`refused`): the summary names those once per answer of the service.
 */
export type Problem =
  | { kind: ProblemKind; message: string }
  | { kind: 'refused'; key: string; test: string; answer: string };

/**
 * The run's problems, in the order they happened: one collector, passed down to every part that finds one, and
 * rendered into the summary's problem lines by report/ (problemLines).
 */
export class Problems {
  private readonly records: Problem[] = [];

  /** A sentence for the summary. */
  add(kind: ProblemKind, message: string): void {
    this.records.push({ kind, message });
  }

  /** A result the service refused on its own (see WorkItem.refused). */
  refused(key: string, test: string, answer: string): void {
    this.records.push({ kind: 'refused', key, test, answer });
  }

  /** Every record so far, oldest first. */
  all(): readonly Problem[] {
    return this.records;
  }
}
