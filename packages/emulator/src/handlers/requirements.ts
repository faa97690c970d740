import type { Handler } from '../context.js';

/** TODO(helper): handlers of the requirements operations, keyed by operation id. */
export const requirementsHandlers: Record<string, Handler> = {};
