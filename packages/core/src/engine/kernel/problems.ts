import { NotFoundError, ResponseShapeError } from '../../client/errors.js';
import type { TestManagementClient } from '../../client/tm.js';
import { NotJiraError } from './errors.js';

/**
 * A once-made check that `/rest/api/2/myself` is Jira's (else NotJiraError), so a 404 elsewhere means the URL, not
 * the plan or case; any other failure is checked again next call.
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

/** One problem of a run: a sentence, or a result the service refused on its own (named once per answer). */
export type Problem =
  | { kind: ProblemKind; message: string }
  | { kind: 'refused'; key: string; test: string; answer: string };

/** The run's problems in order, one collector passed to every part; report/ renders them (problemLines). */
export class Problems {
  private readonly records: Problem[] = [];

  add(kind: ProblemKind, message: string): void {
    this.records.push({ kind, message });
  }

  /** A result the service refused on its own (see WorkItem.refused). */
  refused(key: string, test: string, answer: string): void {
    this.records.push({ kind: 'refused', key, test, answer });
  }

  all(): readonly Problem[] {
    return this.records;
  }
}
