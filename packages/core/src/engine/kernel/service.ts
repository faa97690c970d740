import type { TestManagementClient } from '../../client/tm.js';
import type { Clock } from './clock.js';

/** What each part of delivery talks to the service with. */
export interface Service {
  /** In a dry run, the client wrapped by `withDryRun` (client/dry-run.ts): calls are recorded, nothing is sent. */
  readonly tm: TestManagementClient;
  /**
   * A dry run: the few places where a stand-in answer would lead somewhere else than the real one (a cycle read
   * back after its create, run ids after an add) skip the call or make up the answer instead.
   */
  readonly dryRun: boolean;
  /** The options of every request: the run's abort signal. */
  readonly o: { signal?: AbortSignal };
  /**
   * Whether the service answered any request at `since` (ms) or later (RunHealth.answeredSince): a batch item that
   * fails on its own while the service answers others is refused, not caught in an outage (see splitBatch).
   */
  readonly answeredSince?: (since: number) => boolean;
  /** The run's clock: now, pauses, timers and the waits' settings (kernel/clock.ts). */
  readonly clock: Clock;
}
