import type { Service } from '@casebridge/core/contract';
import type { FaultController, FaultRuleInput } from '../behaviour/faults.js';
import type { JiraBehaviour, JiraBehaviourInput, Profile } from '../behaviour/profile.js';
import type { RateLimitOptions } from '../behaviour/ratelimit.js';
import type { Seed, SeedInput } from '../seed/seed.js';
import type { Variant } from '../service/context.js';
import type { Store } from '../store/store.js';

// The emulator's public shapes: what `startEmulator` (../server.ts) takes and answers, and its request log. Here,
// below the pipeline and the UI, because they hold a running emulator too (`Env.emu`, the admin endpoints).

export interface EmulatorOptions {
  /**
   * `realistic` (default): Jira Data Center as it is (two nodes, index lag, page cap, result window, tokenised
   * `~`, tokens as Bearer only, CAPTCHA after 3 failed logins); `ideal`: the kind stand-in. See the README.
   */
  profile?: Profile;
  /** Knobs of the Jira behaviour, each over the profile's value (src/behaviour/profile.ts). */
  jira?: JiraBehaviourInput;
  /** Port to listen on; 0 picks a free one. Default 8990. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Seed data, a path to a seed JSON file, or `demo` (default) / `empty` (users only). */
  seed?: SeedInput | Seed | string;
  /** Identifier spelling variant. Default `id`. */
  variant?: 'id' | 'ID';
  /** executionTimeStamp format; default per variant (id → iso, ID → legacy). */
  timestamps?: Variant['timestamps'];
  /** Fault rules active from the start. */
  faults?: FaultRuleInput[];
  /** Seed for the fault dice (deterministic). Default 1. */
  faultSeed?: number;
  /** Keep state durably in this folder (`emulator.jsonl`, fsynced on each write, and blob files). Default: in memory. */
  dataDir?: string;
  /**
   * Answer 429 above a rate (token bucket; Jira's default is off): `requestsPerSecond` (or `fillRate` per
   * `intervalSeconds`), `burst`, `retryAfterSeconds` (0 up to a day; default the time to the next token), `perUser`.
   */
  rateLimit?: RateLimitOptions;
  /** Content repository: unauthenticated requests run as a guest user (unless `DisableGuest: true`). */
  repoGuest?: boolean;
  /** Largest JSON body accepted, bytes. Default 10 MiB. */
  maxJsonBytes?: number;
  /** Largest uploaded file, bytes. Default 4 GiB. */
  maxFileBytes?: number;
  /** Request-log ring size. Default 100,000. */
  requestLogSize?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export interface RequestLogEntry {
  seq: number;
  at: number;
  method: string;
  path: string;
  /** `admin` and `ui` (the emulator's own endpoints and pages) are not logged. */
  service: Service | 'admin' | 'docs' | 'ui' | null;
  op: string | null;
  status: number;
  ms: number;
  user: string | null;
  fault: string | null;
  /** The simulated Jira node that answered (`node1`, `node2`, ...); null for the content repository and the rest. */
  node: string | null;
}

export interface RunningEmulator {
  /** Base URL, e.g. `http://127.0.0.1:8990` (services are under their prefixes). */
  url: string;
  port: number;
  store: Store;
  faults: FaultController;
  variant: Variant;
  options: EmulatorOptions;
  /** What was noticed while opening `dataDir` (a torn last line skipped, a leftover SQLite file); empty in memory. */
  notes: string[];
  /** The Jira behaviour in effect; `setJira` changes knobs while it runs. */
  jira: JiraBehaviour;
  /** Changes knobs of the Jira behaviour (validated; a bad one throws naming it); answers the behaviour now. */
  setJira(knobs: JiraBehaviourInput): JiraBehaviour;
  /**
   * Every node's search index catches up with the store at once, as if the index lag had passed (the lag stays for
   * later writes): a test waits for Jira's index without waiting on the clock.
   */
  catchUpIndex(): void;
  /** Request log, oldest first. */
  requests(): RequestLogEntry[];
  clearRequests(): void;
  /** Back to the seed state (faults and the request log are cleared too). */
  reset(): Promise<void>;
  close(): Promise<void>;
}
