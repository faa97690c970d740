/**
 * @casebridge/core: the contract of both services (also at `@casebridge/core/contract`) and the typed clients;
 * the result model and the reporting engine.
 */

export { type DryRunClients, withDryRun } from './client/dry-run.js';
export * from './client/index.js';
export * as contract from './contract/index.js';
export { CaseRegistry, type CaseRegistryOptions, caseIdentity, caseSummary, suitePathOf } from './engine/cases.js';
export { clientsFor, cycleNameFor } from './engine/clients.js';
export * from './engine/config.js';
export {
  CYCLE_STATUS_AFTER,
  type CycleInfo,
  type CycleSpec,
  type CycleWorkflow,
  createCycle,
  findCycle,
  moveCycle,
} from './engine/cycles.js';
export { Engine } from './engine/engine.js';
export * from './engine/fingerprint.js';
export { Journal, type JournalEntry } from './engine/journal.js';
export * from './engine/mapping.js';
export { readMappingFile, writeMapping } from './engine/mapping-file.js';
export * from './engine/model.js';
export type { Service } from './engine/service.js';
export * from './engine/types.js';
export { defineCasebridgeConfig } from './runtime/index.js';
