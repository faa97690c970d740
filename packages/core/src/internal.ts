/**
 * @casebridge/core/internal: the engine's parts the casebridge CLI uses directly. Not a public API: it follows the
 * CLI of the same version and may change in any release.
 */

export { TEST_CASE_TYPE } from './engine/cases/bulk-create.js';
export * from './engine/cases/mapping.js';
export {
  CaseRegistry,
  type CaseRegistryOptions,
  caseIdentity,
  caseSummary,
  suitePathOf,
} from './engine/cases/registry.js';
export * from './engine/cases/requirements.js';
export {
  type CycleCases,
  type CycleQuery,
  type CycleRef,
  findCycleRef,
  matchStatuses,
  readCycleCases,
  SelectionError,
  sameName,
  selectPlanned,
} from './engine/cases/select.js';
export { clientsFor, cycleNameFor } from './engine/clients.js';
export * from './engine/defects/fingerprint.js';
export {
  type QuarantineEntry,
  QuarantineRefused,
  type QuarantineSet,
  readQuarantine,
} from './engine/defects/quarantine.js';
export {
  quarantineAdd,
  quarantineList,
  quarantineOptions,
  quarantineRemove,
  quarantineView,
} from './engine/defects/quarantine-manage.js';
export {
  CYCLE_STATUS_AFTER,
  type CycleSpec,
  type CycleWorkflow,
  createCycle,
  findCycle,
  moveCycle,
} from './engine/delivery/cycles.js';
export { Journal, type JournalEntry } from './engine/journal/store.js';
export { systemClock } from './engine/kernel/clock.js';
export { compareKeys } from './engine/kernel/issue-keys.js';
export type { Service } from './engine/kernel/service.js';
export type { CycleInfo } from './engine/kernel/types.js';
export { RUN_STATUSES } from './engine/kernel/work.js';
export * from './engine/publish/commit.js';
export * from './engine/publish/publish.js';
export * from './engine/publish/render.js';
export * from './engine/publish/report.js';
export * from './engine/query/compare.js';
export * from './engine/query/coverage.js';
export * from './engine/query/failure.js';
export * from './engine/query/gate.js';
export * from './engine/query/results.js';
