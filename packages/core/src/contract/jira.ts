import type { OperationDef } from './define.js';

/** TODO(helper): the Jira platform subset. */
export const jiraOperations: OperationDef[] = [];
