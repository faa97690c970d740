import type { OperationDef } from '../define.js';

/** TODO(helper): operations of this group. */
export const suiteOperations: OperationDef[] = [];
