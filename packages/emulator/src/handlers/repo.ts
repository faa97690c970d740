import type { Handler } from '../context.js';

/** TODO(helper): handlers of the repo operations, keyed by operation id. */
export const repoHandlers: Record<string, Handler> = {};
