/**
 * `@casebridge/jest`: the reporter (the default export, for Jest's `reporters` option) and the runtime API for test
 * code (`caseKey`, `step`, `attach`). Importing this module from a test file loads only Node built-ins and
 * `@casebridge/core/runtime`; the engine is loaded by the reporter when the run starts.
 */
import CasebridgeReporter from './reporter.js';

export default CasebridgeReporter;
export type { CasebridgeOptions } from '@casebridge/core/runtime';
export { defineCasebridgeConfig } from '@casebridge/core/runtime';
export type { JestFileResult, JestGlobalConfig, JestTest } from './reporter.js';
export { attach, caseKey, param, requirement, step } from './runtime.js';
