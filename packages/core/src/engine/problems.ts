import {
  AbortedError,
  CaptchaError,
  CasebridgeError,
  InputError,
  NotFoundError,
  ResponseShapeError,
  UnauthorizedError,
  ValidationError,
} from '../client/errors.js';
import { redact } from '../client/secrets.js';
import type { TestManagementClient } from '../client/tm.js';

/** The URL does not answer as Jira: nothing of this run can be delivered there, but the results are kept. */
export class NotJiraError extends Error {}

/** A problem that will not go away by sending again: named in the summary, the item is not journaled. */
export class PermanentProblem extends Error {}

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

/**
 * What went wrong in a run: the problem lines of the summary, and whether (and why) the service stopped answering.
 * `classify` decides what a failure means for the result it stopped.
 */
export class RunHealth {
  /** Problem lines for the summary (may repeat: the summary names each once). */
  readonly problems: string[] = [];
  /** Set when the service stopped answering: the rest goes to the journal without more attempts. */
  down?: string;

  constructor(
    private readonly signal: AbortSignal,
    private readonly out: (text: string) => void,
  ) {}

  /**
   * Classifies a failure: a permanent one (bad key, refused input) becomes a problem line and the result is dropped;
   * anything that may work later (network, timeouts, 429/5xx after retries, lost answers, rejected credentials)
   * stops further attempts for this run and leaves the results for the journal.
   */
  classify(err: unknown, what: string): 'permanent' | 'later' {
    if (err instanceof AbortedError || this.signal.aborted) return 'later';
    if (err instanceof CaptchaError) {
      // The client sends nothing more; the fix (a browser login) goes once into the summary, in full.
      if (!this.down) {
        this.down = err.message.replace(/^HTTP 403: /, '').replace(/ \[[^\]]*\]$/, '');
        this.out(
          `casebridge: Jira asks for a CAPTCHA${err.user ? ` for user ${err.user}` : ''}: stopped sending, results are kept on disk (the summary says what to do)`,
        );
      }
      return 'later';
    }
    if (err instanceof NotJiraError) {
      if (!this.down) {
        this.down = err.message;
        this.out(`casebridge: ${err.message}`);
      }
      return 'later';
    }
    const message = redact(err instanceof Error ? err.message : String(err));
    if (
      err instanceof PermanentProblem ||
      err instanceof InputError ||
      err instanceof ValidationError ||
      err instanceof NotFoundError
    ) {
      this.problems.push(err instanceof PermanentProblem ? message : `${what}: ${message}`);
      return 'permanent';
    }
    if (err instanceof CasebridgeError || (err instanceof Error && /fetch|socket|ECONN/i.test(err.message))) {
      if (!this.down) {
        this.down =
          err instanceof UnauthorizedError
            ? `the service refused the credentials (HTTP 401): check token (CASEBRIDGE_TOKEN) or user and password (CASEBRIDGE_USER, CASEBRIDGE_PASSWORD)`
            : `${what}: ${message}`;
        this.out(`casebridge: the service is not answering as it should (${this.down}); results are kept on disk`);
      }
      return 'later';
    }
    this.problems.push(`${what}: internal error: ${message}`);
    return 'later';
  }
}
