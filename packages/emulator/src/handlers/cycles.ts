import type { Handler } from '../context.js';

/** TODO(helper): handlers of the cycles operations, keyed by operation id. */
export const cyclesHandlers: Record<string, Handler> = {};
