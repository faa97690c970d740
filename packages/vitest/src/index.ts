/**
 * `@casebridge/vitest`: the reporter (default export) and the runtime API for code inside tests. Importing this
 * entry from a test file loads only Node built-ins and the small runtime module; the reporter loads the engine
 * itself when the run starts.
 */

export type { CasebridgeOptions, RuntimeApi } from '@casebridge/core/runtime';
export { defineCasebridgeConfig } from '@casebridge/core/runtime';
export { default } from './reporter.js';
export { attach, caseKey, param, requirement, step } from './runtime.js';
