import type { TestManagementClient } from '../../client/tm.js';
import type { Clock } from './clock.js';

/** What each part of delivery talks to the service with. */
export interface Service {
  /** In a dry run, the client wrapped by `withDryRun` (client/dry-run.ts): calls are recorded, nothing is sent. */
  readonly tm: TestManagementClient;
  /**
   * A dry run: where a stand-in answer would mislead (a cycle read back, run ids after an add), the call is skipped.
   */
  readonly dryRun: boolean;
  /** The options of every request: the run's abort signal. */
  readonly o: { signal?: AbortSignal };
  /** Whether the service answered any request since `since` (ms): a batch item failing alone then is refused. */
  readonly answeredSince?: (since: number) => boolean;
  /** The run's clock: now, pauses, timers and the waits' settings (kernel/clock.ts). */
  readonly clock: Clock;
}
