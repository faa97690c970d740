/**
 * Every wait of the engine, in one table: each named for the behaviour of the service (or of the run) it answers,
 * with its value. Two are settings a user's cluster or taste may need changed, and their entries are the defaults:
 * `jira.indexLagMs` and `bulkWaitMs` (config/schema.ts, `CASEBRIDGE_JIRA_INDEX_LAG_MS`, `CASEBRIDGE_BULK_WAIT_MS`).
 * The client's timeouts and the end of the run's patience are settings too (`timeouts`, `flushTimeoutMs`,
 * `flushMaxMs`). docs/architecture.md lists this table with the batchers and limiters that use it.
 */
export const TIMING = {
  // Jira's search index.
  /**
   * How long a create may be missing from Jira's search. Each Data Center node polls the index for changes about
   * once a second and falls behind under load (Atlassian's Data Center docs; the emulator's README, "Behaviour the
   * spec leaves open"): every read-after-write waits this long or reads back this far (the re-read window of new
   * cases, the read that decides a new case or defect is the oldest, the read before a lost create is sent again).
   * The default of `jira.indexLagMs`.
   */
  indexLagMs: 3_000,
  /** A read again to see what the index took in: once per index poll of a node (re-reads of new cases, a follower). */
  indexPollMs: 1_000,

  // Requests gathered into one.
  /** The first ask waits this long for others to share its request (bug states in one search, cases in one create). */
  gatherMs: 100,
  /**
   * ... and at most this long while asks keep coming (the creates of tests that come one by one), or for the first
   * look of failure groups, started as failures come in (about one every half second under Playwright, which starts
   * a new worker after each failure), and for the read after a defect's create, which nothing waits on while the run
   * goes on (defects/search.ts).
   */
  gatherMaxMs: 2_000,

  // Results on their way (delivery/pipeline.ts).
  /**
   * Status-only results wait at most this long for a bulk update while tests run; each wait that runs out doubles the
   * next, up to `bulkWaitMaxMs` (30 s, 60 s, 120 s...: a 90 s run makes one timed update, an hour about ten). Waiting
   * costs nothing in safety: each result is in the write-ahead log. The default of `bulkWaitMs`.
   */
  bulkWaitMs: 30_000,
  bulkWaitMaxMs: 300_000,
  /** After the last planned test (or the end), results wait this long for others to join them in one bulk. */
  soonMs: 20,
  /** ... and this long while cases are still being created, so that a first run sends a few bulks, not hundreds. */
  soonWhileCreatingMs: 2_000,
  /**
   * Runners that name no tests up front (Jest, Vitest): the runs of the keys seen so far join the cycle this long
   * after the first one, then twice as long, and so on (2 s, 4 s, 8 s...): a few batches whatever the suite's size.
   */
  prepareWaitMs: 2_000,
  /**
   * A failing result's run gets its status this long after it came in at the latest: its classification and defect
   * (the case's history, Jira's search, a create) join that update when they are known by then (one request), else
   * follow in one more run update. A status never waits for Jira beyond this.
   */
  statusWithinMs: 1_000,
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
  /**
   * A failure group the cap's ranking left out waits at most this long for a ranked group to link an existing
   * defect instead of filing (its slot then passes on): bounded, a ranked group may never ask (defects/cap.ts).
   */
  standbyMs: 3_000,
  /** A machine that lets another create the suite's cases takes what appears for at most this long (cases/creates.ts). */
  followerWaitMaxMs: 60_000,
} as const;
