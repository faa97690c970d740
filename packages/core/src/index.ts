/** @casebridge/core: the contract, the typed clients, the result model and the reporting engine. */

export { type DryRunClients, withDryRun } from './client/dry-run.js';
export * from './client/index.js';
export * as contract from './contract/index.js';
export * from './engine/config/load.js';
export * from './engine/config/schema.js';
export { Engine } from './engine/engine.js';
export * from './engine/kernel/model.js';
export * from './engine/kernel/types.js';
export { defineCasebridgeConfig } from './runtime/channel.js';
