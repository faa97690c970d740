import { CasebridgeError } from '../../client/errors.js';

/**
 * The engine's own errors, in the family of the client's (`client/errors.ts`): RunHealth.classify decides on their
 * kind, as on the client's.
 */

/**
 * The URL does not answer as Jira (kind `not-jira`): nothing of this run can be delivered there, but the results are
 * kept; sending stops for the rest of the run.
 */
export class NotJiraError extends CasebridgeError {
  constructor(message: string) {
    super('not-jira', message);
  }
}

/**
 * A problem that will not go away by sending again (kind `permanent`): named in the summary as its message says it
 * (the message names the item), the item is not journaled.
 */
export class PermanentProblem extends CasebridgeError {
  constructor(message: string) {
    super('permanent', message);
  }
}

/**
 * The service refused a result's run attribute set (option `attributes`: a value the project does not define): the
 * result is kept in the journal, marked with `answer`, and the summary names the set once (`line`). Kind
 * `validation` and retryable, so that wherever it is classified it waits, never dropped.
 */
export class AttributeSetRefused extends CasebridgeError {
  constructor(
    message: string,
    /** The service's answer, for the journal's mark. */
    readonly answer: string,
    /** The summary's line for this set (the same for every result of it). */
    readonly line: string,
  ) {
    super('validation', message, {}, true);
  }
}

/**
 * A result's run (option `attributes`) is not in the cycle's run list yet: an answer of createTestRuns was lost, or
 * the list does not name the runs' attribute sets. Kind `ambiguous`: the result waits and asks again, then is
 * journaled; never dropped.
 */
export class RunNotFoundYet extends CasebridgeError {
  constructor(message: string) {
    super('ambiguous', message, {}, true);
  }
}
