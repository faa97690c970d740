/**
 * @casebridge/core: the contract of both services (also at `@casebridge/core/contract`); the clients, the result
 * model and the reporting engine follow in later issues.
 */
export * as contract from './contract/index.js';
