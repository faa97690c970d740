import type { Handler } from '../context.js';

/** TODO(helper): handlers of the cases operations, keyed by operation id. */
export const casesHandlers: Record<string, Handler> = {};
