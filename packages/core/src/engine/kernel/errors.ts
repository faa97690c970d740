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
