import type { Handler } from '../context.js';

/** TODO(helper): handlers of the suites operations, keyed by operation id. */
export const suitesHandlers: Record<string, Handler> = {};
