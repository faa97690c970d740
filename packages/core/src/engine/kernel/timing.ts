/** Every wait of the engine, each named for the behaviour it answers; docs/architecture.md lists their users. */
export const TIMING = {
  // Jira's search index.
  /** How long a create may be missing from Jira's search (default of `jira.indexLagMs`): read-after-writes wait it. */
  indexLagMs: 3_000,
  /** A re-read to see what the index took in: once per node's index poll. */
  indexPollMs: 1_000,

  // Requests gathered into one.
  /** The first ask waits this long for others to share its request (bug states in one search, cases in one create). */
  gatherMs: 100,
  /** ... at most this long while asks keep coming (tests one by one; Playwright's failures, one every half second). */
  gatherMaxMs: 2_000,

  // Results on their way (delivery/pipeline.ts).
  /** Status-only results wait this long for a bulk, doubling to `bulkWaitMaxMs`; safe, as the log holds each result. */
  bulkWaitMs: 30_000,
  bulkWaitMaxMs: 300_000,
  /** After the last planned test (or the end), results wait this long for others to join them in one bulk. */
  soonMs: 20,
  /** ... and this long while cases are being created, so a first run sends a few bulks, not hundreds. */
  soonWhileCreatingMs: 2_000,
  /** Runners that name no tests up front: runs join the cycle after 2 s, 4 s, 8 s...: a few batches at any size. */
  prepareWaitMs: 2_000,
  /** A failing result's status goes at most this long after it came, with its verdict if known by then. */
  statusWithinMs: 800,
  /** ... and at least this long after its delivery starts (a failure that waited for a delivery slot). */
  statusGraceMs: 250,
  /** A result that was not delivered is tried again after these waits (or the service's Retry-After), then kept. */
  retryAfterMs: [1_000, 3_000, 6_000] as readonly number[],

  // The service's health (delivery/health.ts).
  /** Nothing succeeded for this long while calls kept failing: the service is judged down. */
  quietMs: 30_000,
  /** A service judged down is asked again after 1 s, 2 s, 4 s... at most this often (one cheap request). */
  probeFirstMs: 1_000,
  probeMaxMs: 15_000,
  /** A result the service refused alone (it answered others within this window) is a refusal, not an outage. */
  refusalWindowMs: 15_000,

  // The end of the run.
  /** The end prints a progress line once it has taken this long, then every `progressEveryMs`. */
  progressAfterMs: 3_000,
  progressEveryMs: 5_000,

  // Defects and cases across machines.
  /** A group the cap left out waits at most this long for a ranked group to link an existing defect. */
  standbyMs: 3_000,
  /** A machine that lets another create the suite's cases stops waiting when none appears for this long (creates.ts). */
  followerWaitMaxMs: 60_000,
} as const;
