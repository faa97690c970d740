export type { Variant } from './context.js';
export { type FaultRule, type FaultRuleInput, faultRuleSchema } from './faults.js';
export type { EmulatorOptions, RequestLogEntry, RunningEmulator } from './kernel/emulator.js';
export { type JiraBehaviour, type JiraBehaviourInput, PROFILES, type Profile } from './profile.js';
export type { RateLimitOptions } from './ratelimit.js';
export { demoSeed, type Seed, type SeedInput, seedSchema } from './seed.js';
export { DEFAULT_PORT, startEmulator } from './server.js';
