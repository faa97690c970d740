/**
 * The options of a reporter, a config file or the CLI as a plain type, so a reporter's declarations need no zod
 * (schema.ts checks it equals the schema's input). The merged sources are checked when the run starts.
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
  /** A cycle the run creates gets a Not Tested run for every case of the plan (default false: it starts empty). */
  preloadRuns?: boolean | undefined;
  /**
   * Read each failing case's history (a request per failing case): a person's bug is reused, and failures are
   * classified `new`, `known`, `flaky` or `regression` (default true; `CASEBRIDGE_HISTORY`).
   */
  history?: boolean | undefined;
  /**
   * Quarantine (default on; `CASEBRIDGE_QUARANTINE`, `_LABEL`, `_MAX`): a labelled case, or one linked through a run
   * to an open labelled issue, runs expected-to-fail (Playwright 1.62+) or is `quarantined`, and files no defect.
   */
  quarantine?:
    | {
        enabled?: boolean | undefined;
        /** The Jira label that quarantines a case or a bug (default `casebridge-quarantine`). */
        label?: string | undefined;
        /** The most cases `quarantine add` quarantines, as a share (0 to 1) of the plan's cases (default 0.05). */
        max?: number | undefined;
      }
    | undefined;
  /**
   * The rules of `casebridge gate`, below its flags: `maxNew` and `maxRegressions` (default 0), `minPassRate` percent,
   * `requireAllPlanned`, `requireAttributes`, `strict` (known and quarantined count as new).
   */
  gate?:
    | {
        maxNew?: number | undefined;
        maxRegressions?: number | undefined;
        minPassRate?: number | undefined;
        requireAllPlanned?: boolean | undefined;
        requireAttributes?: Record<string, string[]> | undefined;
        strict?: boolean | undefined;
        /** Every requirement of the set covered by a case (`covered`), or covered and passing (`passing`). */
        requirements?: 'covered' | 'passing' | undefined;
        /** The requirements judged (`fixVersion = "2.3" AND issuetype = Story`); default: those linked to the cycle's cases. */
        requirementsJql?: string | undefined;
      }
    | undefined;
  /**
   * Run exactly a cycle's cases with a run of one of `status` assigned to `tester` (`me`: the credentials' user), on
   * Playwright 1.62+; other runners: `casebridge cycle keys --file`. `CASEBRIDGE_SELECT_*`.
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
  /** Run attributes of an advanced cycle: name → template (`{ Browser: '${project}' }`); each set is its own run. */
  attributes?: Record<string, string> | undefined;
  /** Regular expression of a case key; default: keys of `projectKey`. */
  keyPattern?: string | undefined;
  /** Mapping file, relative to the project root (default `casebridge.keys.json`). */
  mappingFile?: string | undefined;
  /** Create test cases for unmapped tests and record them in the mapping file (default false). */
  autoCreate?: boolean | undefined;
  /** New cases per create request through Jira's bulk create (default 50, halved if refused); 1: one per request. */
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
         * Summary template (default `${title}: ${error}`; variables in packages/core/README.md, any `${ENV_VAR}`).
         * ` [cb-<hash>]` always ends it: deduplication searches for it.
         */
        summaryTemplate?: string | undefined;
        /** Description template, the same variables; default: the built-in description (test, run, error, stack). */
        descriptionTemplate?: string | undefined;
        /** Jira create fields for every defect, in Jira's shape; `casebridge doctor` checks them against the screen. */
        fields?: DefectFields | undefined;
        /**
         * New defects at most per run, in cycle mode per cycle across machines (default 10, 0 files none); beyond it
         * failures still get status, comment and existing defects (`CASEBRIDGE_DEFECTS_MAX`).
         */
        maxPerRun?: number | undefined;
        /**
         * One defect per normalised error (default true): environment errors across tests, others per source line.
         * false: one per test and failure.
         */
        group?: boolean | undefined;
      }
    | undefined;
  /**
   * The run status each kind of result writes, as your instance names it, or `null` / `"unchanged"` to leave the run.
   * Defects depend on the outcome, not the status (`CASEBRIDGE_STATUS_MAP=skipped=Not Tested,flaky=Failed`).
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
  /**
   * Bitbucket Data Center: the cycle's Code Insights report, annotations and build status, at the end of every run and
   * on `casebridge publish`. Also CASEBRIDGE_BITBUCKET_URL, _TOKEN, _REPO.
   */
  bitbucket?:
    | {
        url: string;
        /** An HTTP access token, sent as Bearer. */
        token: string;
        /** `PROJECT/slug`. */
        repo: string;
        /** The report's key and the build status's key (default `casebridge`). */
        reportKey?: string | undefined;
      }
    | undefined;
  /** GitLab: one merge-request note, edited in place (default: CI_SERVER_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID, CASEBRIDGE_GITLAB_TOKEN). */
  gitlab?:
    | {
        url?: string | undefined;
        token?: string | undefined;
        project?: string | undefined;
        mergeRequest?: number | undefined;
      }
    | undefined;
  /** GitHub: one pull-request comment, edited in place (default: GITHUB_API_URL, GITHUB_REPOSITORY, the event's pull request, CASEBRIDGE_GITHUB_TOKEN or GITHUB_TOKEN). */
  github?:
    | {
        url?: string | undefined;
        token?: string | undefined;
        repo?: string | undefined;
        pullRequest?: number | undefined;
      }
    | undefined;
  /** How long the end of the run waits while delivery makes no progress (default 30,000 ms). */
  flushTimeoutMs?: number | undefined;
  /**
   * How long status-only results wait for a bulk update while tests run (default 30,000 ms, doubling up to 300,000):
   * lower shows results sooner, at a request per wait (`CASEBRIDGE_BULK_WAIT_MS`).
   */
  bulkWaitMs?: number | undefined;
  /** Jira's behaviour where a cluster may differ from the defaults. */
  jira?:
    | {
        /**
         * How long a create may be missing from Jira's search (default 3,000 ms; a node polls its index every second
         * and lags under load). Read-after-writes wait it (`CASEBRIDGE_JIRA_INDEX_LAG_MS`).
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
   * An `::error` annotation per failing test on GitHub Actions (at most 10; CASEBRIDGE_ANNOTATIONS=1). Off by default,
   * as a runner's own GitHub reporter may annotate the same failures.
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
