import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Service } from '@casebridge/core/contract';
import type { FaultController } from '../behaviour/faults.js';
import type { JiraBehaviour } from '../behaviour/profile.js';
import type { RateLimiter } from '../behaviour/ratelimit.js';
import type { Cluster } from '../service/cluster.js';
import type { Variant } from '../service/context.js';
import type { Router } from '../service/router.js';
import type { BlobStore } from '../store/blobs.js';
import type { SearchIndex } from '../store/search-index.js';
import type { Store } from '../store/store.js';
import type { RequestLogEntry, RunningEmulator } from './emulator.js';

/** What every request of one emulator shares: its state and settings, fixed when it starts. */
export interface Env {
  emu: RunningEmulator;
  store: Store;
  blobs: BlobStore;
  variant: Variant;
  faults: FaultController;
  /** Absent: no rate limit. */
  limiter: RateLimiter | undefined;
  /** How harsh the emulated Jira is (behaviour/profile.ts); one object, changed in place by `PUT /__emulator/jira`. */
  jira: JiraBehaviour;
  /** The load balancer in front of the simulated nodes. */
  cluster: Cluster;
  /** What each node's search index holds. */
  index: SearchIndex;
  router: Router;
  now: () => number;
  /** Host named in the origin of a request that sends no Host header. */
  host: string;
  /** Content repository: unauthenticated requests run as the guest. */
  repoGuest: boolean;
  /** Largest JSON body, bytes. */
  maxJson: number;
  /** Largest uploaded file, bytes. */
  maxFile: number;
  /** Aborted when the emulator closes: injected latency and hangs end at once. */
  closing: AbortSignal;
  /** Writes the store's changes to disk (sessions are not kept). */
  commit: () => void;
}

/** One request on its way through the steps: what its request line says, and the log entry the steps fill in. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  entry: RequestLogEntry;
  /** Upper case. */
  method: string;
  /** As sent (still percent-encoded), without the query. */
  rawPath: string;
  query: URLSearchParams;
  /** Base URL the client reached the emulator at, e.g. `http://127.0.0.1:8990`. */
  origin: string;
  /** The simulated Jira node the balancer sent the request to (0-based); see `landOn`. */
  node?: number;
}

/** An exchange addressed to one service. */
export interface ServiceExchange extends Exchange {
  service: Service;
  /** The service prefix the request came in under ('' for the Jira platform). */
  prefix: string;
  /** The path after the prefix. */
  rest: string;
}

/** What a step returns when it has answered the request (or dropped the connection): the pipeline stops there. */
export const ANSWERED = Symbol('answered');
export type Answered = typeof ANSWERED;
