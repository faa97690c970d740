/**
 * The options a reporter, a `casebridge.config.*` file or the CLI takes, as a plain type: no zod in it, so a
 * reporter's declaration files need nothing but this package (schema.ts checks at compile time that it is exactly
 * the input of the schema that validates them). Every option may come from another source (`CASEBRIDGE_*`
 * variables, the config file): none is required here; the merged whole is checked when the run starts.
 */
export interface CasebridgeOptions {
  /** Turn the reporter off without removing it from the runner's config (default true). */
  enabled?: boolean | undefined;
  /** The Jira base URL, e.g. https://jira.example.com (`CASEBRIDGE_URL`). */
  url?: string | undefined;
  /** API prefix of the test-management service. */
  apiPrefix?: string | undefined;
  /** Personal access token, sent as Bearer (`CASEBRIDGE_TOKEN`); best from the environment, never in a file. */
  token?: string | undefined;
  /** User name, with `password` (`CASEBRIDGE_USER`). */
  user?: string | undefined;
  /** The user's password (`CASEBRIDGE_PASSWORD`); a personal access token goes in `token`, never here. */
  password?: string | undefined;
  /** How user + password are sent: Basic on every request (default), or one session login. */
  authType?: 'basic' | 'session' | undefined;
  /** The Jira project of the test cases and defects, e.g. PROJ (`CASEBRIDGE_PROJECT`). */
  projectKey?: string | undefined;
  /** `adhoc` (default): one ad hoc run per test; `cycle`: runs in a cycle of `testPlan`. */
  mode?: 'adhoc' | 'cycle' | undefined;
  /** Test plan key, e.g. PROJ-1; required in cycle mode (`CASEBRIDGE_TEST_PLAN`). */
  testPlan?: string | undefined;
  /** Cycle name template: `${build}`, `${environment}`, `${date}`, `${branch}` and any `${ENV_VAR}` (default `CI ${date}`). */
  cycle?: string | undefined;
  environment?: string | undefined;
  build?: string | undefined;
  /** Complete the cycle when the run ends (default false: shards may still be reporting). */
  completeCycle?: boolean | undefined;
  /**
   * A cycle the run creates gets a run for every case of the test plan, Not Tested until reported: the cycle shows
   * what the run left out (default false: it starts empty and holds only the cases the run reports).
   */
  preloadRuns?: boolean | undefined;
  /**
   * Read the execution history of each failing case (one request per case and run, none for passing tests): a bug a
   * person linked to the case's failed run is linked instead of a new defect, and each failure and flaky test is
   * classified `new`, `known`, `flaky` or `regression` (default true; `CASEBRIDGE_HISTORY`).
   */
  history?: boolean | undefined;
  /**
   * Quarantine from the tool (default on, label `casebridge-quarantine`): a case carrying the label, or linked through
   * one of its runs to an open issue carrying it (a known bug marked so), is quarantined. Playwright 1.62+ runs it
   * expected-to-fail (a known failure keeps CI green, a pass is reported); Jest, Vitest and older Playwright report
   * it classified `quarantined`. Its failure files no new defect. `CASEBRIDGE_QUARANTINE`,
   * `CASEBRIDGE_QUARANTINE_LABEL`, `CASEBRIDGE_QUARANTINE_MAX`.
   */
  quarantine?:
    | {
        enabled?: boolean | undefined;
        /** The Jira label that quarantines a case or a bug (default `casebridge-quarantine`). */
        label?: string | undefined;
        /**
         * The most cases `casebridge quarantine add` quarantines at once, a share of the plan's cases (without a plan,
         * the project's), from 0 to 1 (default 0.05: 5 %). `CASEBRIDGE_QUARANTINE_MAX` (`0.05` or `5%`).
         */
        max?: number | undefined;
      }
    | undefined;
  /**
   * The rules of `casebridge gate`, below its flags: at most `maxNew` new failures (default 0) and `maxRegressions`
   * regressions (default 0), a pass rate of at least `minPassRate` percent (not checked unless set), every planned
   * case run (`requireAllPlanned`), each value of a run attribute run (`requireAttributes`), and known and
   * quarantined failures counted as new (`strict`).
   */
  gate?:
    | {
        maxNew?: number | undefined;
        maxRegressions?: number | undefined;
        minPassRate?: number | undefined;
        requireAllPlanned?: boolean | undefined;
        requireAttributes?: Record<string, string[]> | undefined;
        strict?: boolean | undefined;
      }
    | undefined;
  /**
   * Run exactly a cycle's cases (Playwright 1.62+, in the reporter's `preprocess`): tests whose case has a run in the
   * cycle with one of `status` (any when empty) assigned to `tester` (`me`: the user of the credentials); the others
   * are excluded. `CASEBRIDGE_SELECT_PLAN`, `_CYCLE`, `_STATUS` (comma-separated), `_TESTER`. Other runners:
   * `casebridge cycle keys --file`.
   */
  select?:
    | {
        plan?: string | undefined;
        /** Without it nothing is selected: one line says so, every test runs (reporting goes on). */
        cycle?: string | undefined;
        status?: string[] | undefined;
        tester?: string | undefined;
      }
    | undefined;
  /**
   * Run attributes of an advanced cycle: attribute name → template over the test, e.g. `{ Browser: '${project}' }`.
   * Each attribute set of a case is its own run in the cycle.
   */
  attributes?: Record<string, string> | undefined;
  /** Regular expression of a case key; default: keys of `projectKey`. */
  keyPattern?: string | undefined;
  /** Mapping file, relative to the project root (default `casebridge.keys.json`). */
  mappingFile?: string | undefined;
  /** Create test cases for unmapped tests and record them in the mapping file (default false). */
  autoCreate?: boolean | undefined;
  /**
   * New cases per create request, through Jira's bulk create (default 50; a server that takes fewer halves it for
   * the run). 1: the add-on's create, one case per request.
   */
  createBatchSize?: number | undefined;
  defects?:
    | {
        /** File a defect for a new failure, link the existing one when it recurs (default true). */
        enabled?: boolean | undefined;
        /** Project of new defects; default `projectKey`. */
        projectKey?: string | undefined;
        /** Default `Bug`. */
        issueType?: string | undefined;
        /** File defects for flaky tests too (default false). */
        onFlaky?: boolean | undefined;
        /**
         * Summary template (default `${title}: ${error}`): `${title}`, `${test}`, `${error}`, `${errorFull}`,
         * `${file}`, `${line}`, `${location}`, `${ciUrl}`, `${runner}`, `${project}`, `${key}` and any `${ENV_VAR}`.
         * ` [cb-<hash>]` always ends the summary (deduplication searches for it).
         */
        summaryTemplate?: string | undefined;
        /** Description template, the same variables; default: the built-in description (test, run, error, stack). */
        descriptionTemplate?: string | undefined;
        /**
         * Jira create fields sent with every defect, in Jira's shape: `labels`, `components`, `priority`,
         * `fixVersions`, `versions`, `assignee`, `duedate`, `environment`, `customfield_NNNNN` (any JSON).
         * `casebridge doctor` checks them against the create screen.
         */
        fields?: DefectFields | undefined;
        /**
         * New defects at most per run (`CASEBRIDGE_DEFECTS_MAX`, default 10); in cycle mode per cycle, counted
         * across the machines reporting into it. Beyond it failures get their status and a comment but no new
         * defect; an existing one is still linked. 0 files none.
         */
        maxPerRun?: number | undefined;
        /**
         * One defect for failures that share a normalised error across tests (default true): environment errors
         * (connection refused, DNS, TLS, hook timeouts) whatever the test, others at the same source line. false:
         * one defect per test and failure.
         */
        group?: boolean | undefined;
      }
    | undefined;
  /**
   * The run status each kind of result writes (`CASEBRIDGE_STATUS_MAP=skipped=Not Tested,flaky=Failed`): a status
   * as your instance names it (built-in `Passed`, `Failed`, `Blocked`, `Not Tested`, `NA` in any case, a renamed or a
   * custom one), or `null` / `"unchanged"` to leave the run as it is. `casebridge doctor` warns about a name the
   * plan's runs never show. Whether a defect is filed depends on the outcome, not on the status written.
   */
  statusMap?:
    | {
        /** Default `Passed`. */
        passed?: string | null | undefined;
        /** Default `Failed`. */
        failed?: string | null | undefined;
        /** A failure whose last attempt timed out; default: as `failed`. */
        timedOut?: string | null | undefined;
        /** Passed after failed attempts; default `Passed`. */
        flaky?: string | null | undefined;
        /** Default `null`: the run is left as it is. */
        skipped?: string | null | undefined;
        /** The run was stopped before the test finished; default `Blocked`. */
        interrupted?: string | null | undefined;
      }
    | undefined;
  attachments?:
    | {
        /** Screenshots: of failed tests (default), of every test, or none. */
        screenshots?: 'on-failure' | 'all' | 'off' | undefined;
        traces?: boolean | undefined;
        videos?: boolean | undefined;
        /** Other attachments (logs, custom files). */
        others?: boolean | undefined;
        /** Folders files may be uploaded from besides the project folder, the temporary folder and the journal. */
        roots?: string[] | undefined;
        /** Larger files are not uploaded; the run's comment names them (default 50 MiB). */
        maxBytes?: number | undefined;
        /** Send files at least this large to the content repository, when configured (default 10 MiB). */
        repositoryMinBytes?: number | undefined;
      }
    | undefined;
  /** Optional content repository for large artifacts (videos, traces). */
  repository?:
    | {
        url: string;
        token?: string | undefined;
        user?: string | undefined;
        password?: string | undefined;
        ticket?: string | undefined;
      }
    | undefined;
  /** How long the end of the run waits while delivery makes no progress (default 30,000 ms). */
  flushTimeoutMs?: number | undefined;
  /**
   * How long status-only results wait for a bulk update while tests run (default 30,000 ms, doubling each time up to
   * 300,000): lower shows a long suite's results sooner, at a request per wait (`CASEBRIDGE_BULK_WAIT_MS`).
   */
  bulkWaitMs?: number | undefined;
  /** Jira's behaviour where a cluster may differ from the defaults. */
  jira?:
    | {
        /**
         * How long a create may be missing from Jira's search (default 3,000 ms): each Data Center node polls its
         * index about once a second and falls behind under load. Every read-after-write waits it: the read that
         * decides whether a new case or defect is the oldest (two machines at once), the read before a create whose
         * answer was lost is sent again (`CASEBRIDGE_JIRA_INDEX_LAG_MS`).
         */
        indexLagMs?: number | undefined;
      }
    | undefined;
  /** The longest the end of the run waits for delivery, progress or not (default 600,000 ms). */
  flushMaxMs?: number | undefined;
  /** Let delivery failures (and an invalid configuration) fail the test run (default false). */
  failOnError?: boolean | undefined;
  /** Make no writes; print every call it would make (and save them as JSON when a path is given). */
  dryRun?: string | boolean | undefined;
  /** Where undelivered results wait, relative to the project root (default `.casebridge/journal`). */
  journalDir?: string | undefined;
  /** Requests in flight at once, 1 to 32 (default 4). */
  concurrency?: number | undefined;
  requestsPerSecond?: number | undefined;
  proxy?: string | undefined;
  caFile?: string | undefined;
  /** Client timeouts per request, ms (defaults: connect 10 s, headers 30 s, body 60 s). */
  timeouts?:
    | {
        connectMs?: number | undefined;
        headersMs?: number | undefined;
        bodyMs?: number | undefined;
      }
    | undefined;
  /** Log every request (redacted) to stderr; also CASEBRIDGE_DEBUG=1. */
  debug?: boolean | undefined;
  /**
   * On GitHub Actions, an `::error` annotation per failing test (at most 10, GitHub's limit per step) naming its
   * case, run and defect with links; also CASEBRIDGE_ANNOTATIONS=1. Off by default: a runner's own GitHub reporter
   * may annotate the same failures.
   */
  annotations?: boolean | undefined;
  /** Report in watch mode (Vitest): each rerun once. */
  watch?: boolean | undefined;
}

/** A component, version or priority: by name (case-insensitive in Jira) or by id. */
// A type, not an interface: it must fit the contract's loose `{ [x: string]: unknown }` objects.
export type JiraRef = {
  name?: string | undefined;
  id?: string | undefined;
};

export interface DefectFields {
  /** Labels without spaces (Jira refuses a label with a space). */
  labels?: string[] | undefined;
  components?: JiraRef[] | undefined;
  priority?: JiraRef | undefined;
  fixVersions?: JiraRef[] | undefined;
  /** Affects version(s). */
  versions?: JiraRef[] | undefined;
  assignee?: { name: string } | undefined;
  /** `yyyy-MM-dd`. */
  duedate?: string | undefined;
  environment?: string | undefined;
  /** Any custom field of the create screen, in Jira's create shape. */
  [customField: `customfield_${number}`]: unknown;
}
