/** The engine's own errors (the client's are in `client/errors.ts`). */

/** The URL does not answer as Jira: nothing of this run can be delivered there, but the results are kept. */
export class NotJiraError extends Error {}

/** A problem that will not go away by sending again: named in the summary, the item is not journaled. */
export class PermanentProblem extends Error {}
