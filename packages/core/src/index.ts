/**
 * @casebridge/core: the contract of both services (also at `@casebridge/core/contract`) and the typed clients;
 * the result model and the reporting engine follow.
 */
export * from './client/index.js';
export * as contract from './contract/index.js';
