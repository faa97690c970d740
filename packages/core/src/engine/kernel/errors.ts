import { CasebridgeError } from '../../client/errors.js';

/** The engine's own errors, in the client's family: RunHealth.classify decides on their kind. */

/** The URL does not answer as Jira (kind `not-jira`): sending stops for the run, the results are kept. */
export class NotJiraError extends CasebridgeError {
  constructor(message: string) {
    super('not-jira', message);
  }
}

/** A problem that sending again will not cure (kind `permanent`): named in the summary, the item not journaled. */
export class PermanentProblem extends CasebridgeError {
  constructor(message: string) {
    super('permanent', message);
  }
}

/**
 * The service refused a result's attribute set: journaled with `answer`, named once in the summary. Kind
 * `validation`, retryable, so it is never dropped.
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
 * A result's attribute run is not in the cycle's list yet (a lost createTestRuns answer). Kind `ambiguous`: asked
 * again, then journaled; never dropped.
 */
export class RunNotFoundYet extends CasebridgeError {
  constructor(message: string) {
    super('ambiguous', message, {}, true);
  }
}
