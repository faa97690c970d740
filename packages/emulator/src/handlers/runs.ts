import type { Handler } from '../context.js';

/** TODO(helper): handlers of the runs operations, keyed by operation id. */
export const runsHandlers: Record<string, Handler> = {};
