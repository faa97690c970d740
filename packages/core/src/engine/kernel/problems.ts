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

/**
 * Runs `send`; when the service answers 404 on the route (the older service variant has no such operation), answers
 * what `missing` says instead. Any other failure is thrown.
 */
export async function orIfMissing<T, U>(send: () => Promise<T>, missing: () => U): Promise<T | U> {
  try {
    return await send();
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    return missing();
  }
}
