import type { OperationDef } from './define.js';

/** TODO(helper): content-repository operations. */
export const repoOperations: OperationDef[] = [];
