export { type FaultRule, type FaultRuleInput, faultRuleSchema } from './behaviour/faults.js';
export { type JiraBehaviour, type JiraBehaviourInput, PROFILES, type Profile } from './behaviour/profile.js';
export type { RateLimitOptions } from './behaviour/ratelimit.js';
export type { EmulatorOptions, RequestLogEntry, RunningEmulator } from './kernel/emulator.js';
export { demoSeed, type Seed, type SeedInput, seedSchema } from './seed/seed.js';
export { DEFAULT_PORT, startEmulator } from './server.js';
export type { Variant } from './service/context.js';
