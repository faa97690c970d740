import type { Handler } from '../context.js';

/** TODO(helper): handlers of the jira operations, keyed by operation id. */
export const jiraHandlers: Record<string, Handler> = {};
