import { bitbucketOperations } from './codehost/bitbucket.js';
import { githubOperations } from './codehost/github.js';
import { gitlabOperations } from './codehost/gitlab.js';
import type { OperationDef } from './define.js';
import { jiraOperations } from './jira.js';
import { repoOperations } from './repo.js';
import { caseOperations } from './tm/cases.js';
import { cycleOperations } from './tm/cycles.js';
import { planOperations } from './tm/plans.js';
import { requirementOperations } from './tm/requirements.js';
import { runOperations } from './tm/runs.js';
import { suiteOperations } from './tm/suites.js';

export * from './codehost/bitbucket.js';
export * from './codehost/github.js';
export * from './codehost/gitlab.js';
export * from './define.js';
// The base of the error family (not redactWith, which is the client's to call).
export {
  CasebridgeError,
  type CasebridgeErrorOptions,
  ERROR_BRAND,
  type ErrorKind,
  errorCodeOf,
  type RequestInfo,
} from './errors.js';
export * from './tm/schemas.js';

/** Every operation of the test-management spec (72: updateStep has two body forms). */
const tm = [
  ...planOperations,
  ...cycleOperations,
  ...runOperations,
  ...caseOperations,
  ...requirementOperations,
  ...suiteOperations,
];
export const tmOperations: readonly (typeof tm)[number][] = tm;

/** The content-repository operations (the 3 of the spec, plus ticket issuance). */
export { jiraOperations, repoOperations };

export const operations: readonly OperationDef[] = [
  ...tmOperations,
  ...repoOperations,
  ...jiraOperations,
  ...bitbucketOperations,
  ...gitlabOperations,
  ...githubOperations,
];

const byId = new Map(operations.map((op) => [op.id, op]));

/** The operation with this id; throws when there is none (a programming error, not a user error). */
export function operation(id: string): OperationDef {
  const op = byId.get(id);
  if (!op) throw new Error(`unknown operation id ${JSON.stringify(id)}`);
  return op;
}
