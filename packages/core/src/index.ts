/**
 * @casebridge/core: the contract of both services (also at `@casebridge/core/contract`) and the typed clients;
 * the result model and the reporting engine.
 */

export { type DryRunClients, withDryRun } from './client/dry-run.js';
export * from './client/index.js';
export * as contract from './contract/index.js';
export * from './engine/cases/mapping.js';
export { readMappingFile, writeMapping } from './engine/cases/mapping-file.js';
export {
  CaseRegistry,
  type CaseRegistryOptions,
  caseIdentity,
  caseSummary,
  suitePathOf,
} from './engine/cases/registry.js';
export { clientsFor, cycleNameFor } from './engine/clients.js';
export * from './engine/config/schema.js';
export * from './engine/defects/fingerprint.js';
export {
  CYCLE_STATUS_AFTER,
  type CycleSpec,
  type CycleWorkflow,
  createCycle,
  findCycle,
  moveCycle,
} from './engine/delivery/cycles.js';
export { Engine } from './engine/engine.js';
export { Journal, type JournalEntry } from './engine/journal/store.js';
export * from './engine/kernel/model.js';
export type { Service } from './engine/kernel/service.js';
export * from './engine/kernel/types.js';
export { defineCasebridgeConfig } from './runtime/index.js';
