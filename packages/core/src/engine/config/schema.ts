import * as z from 'zod';
import { looksLikePersonalAccessToken, TOKEN_AS_PASSWORD } from '../../client/auth.js';
import { timeoutsSchema } from '../../client/base.js';
import { TIMING } from '../kernel/timing.js';
import { RUN_STATUSES } from '../kernel/work.js';
import { defectFieldsSchema } from './defect-fields.js';
import type { CasebridgeOptions } from './options.js';

export {
  type DefectFields,
  defectFieldsSchema,
  type ScreenField,
  type ScreenProblem,
  screenProblems,
} from './defect-fields.js';
export { ENV_OPTIONS, mergeOptions, optionsFromEnv } from './env.js';

/**
 * The configuration of every runner and the CLI (documented in options.ts): reporter options over `CASEBRIDGE_*` over
 * the config file. A problem names the option and the fix, and the reporter disables itself instead of failing.
 */

const issueKey = z
  .string()
  .regex(/^[A-Z][A-Z0-9_]*-[1-9][0-9]*$/, 'expected an issue key such as PROJ-12 (project key, dash, number)');
const projectKey = z.string().regex(/^[A-Z][A-Z0-9_]+$/, 'expected a Jira project key such as PROJ (capitals)');

/**
 * Any non-empty run status name is taken, as statuses are per instance (renamed, custom); the five built-ins get the
 * service's spelling. An unknown name is refused at delivery; `doctor` warns.
 */
const runStatusName = z.union([z.string(), z.null()]).transform((value, ctx) => {
  if (value === null) return null;
  const trimmed = value.trim().replace(/\s+/g, ' ');
  const wanted = trimmed.toLowerCase();
  if (wanted === 'unchanged') return null;
  const builtIn = RUN_STATUSES.find((s) => s.toLowerCase() === wanted);
  if (builtIn) return builtIn;
  if (trimmed) return trimmed;
  ctx.addIssue({
    code: 'custom',
    message: `expected a run status as your instance names it (e.g. ${RUN_STATUSES.join(', ')}, or a renamed or custom one), or null or "unchanged" to leave the run as it is; got an empty name`,
  });
  return z.NEVER;
});

export const configSchema = z
  .strictObject({
    /** Turn the reporter off without removing it from the runner's config. */
    enabled: z.boolean().default(true),
    /** The Jira base URL, e.g. https://jira.example.com. */
    url: z.url({ message: 'expected the Jira base URL, e.g. https://jira.example.com' }),
    /** API prefix of the test-management service. */
    apiPrefix: z.string().optional(),
    /** Personal access token (Bearer). */
    token: z.string().min(1).optional(),
    /** User name, with `password` (a password; a personal access token goes in `token`). */
    user: z.string().min(1).optional(),
    password: z.string().min(1).optional(),
    /** How user + password are sent: Basic on every request, or one session login. */
    authType: z.enum(['basic', 'session']).default('basic'),
    /** The Jira project of the test cases and defects. */
    projectKey,
    mode: z.enum(['adhoc', 'cycle']).default('adhoc'),
    /** Test plan key; required in cycle mode. */
    testPlan: issueKey.optional(),
    /** Cycle name template: `${build}`, `${environment}`, `${date}`, `${branch}` and any `${ENV_VAR}`. */
    cycle: z.string().min(1).default('CI ${date}'),
    environment: z.string().optional(),
    build: z.string().optional(),
    /** Complete the cycle when the run ends (off: shards may still be reporting). */
    completeCycle: z.boolean().default(false),
    /** A cycle the run creates gets a run (Not Tested) for every case of the test plan; false: it starts empty. */
    preloadRuns: z.boolean().default(false),
    /**
     * Read each failing case's history (one request per failing case) to reuse a person's bug and classify failures.
     */
    history: z.boolean().default(true),
    /** Quarantine: one search per run plus a read per quarantined bug; a quarantined failure files no defect. */
    quarantine: z
      .strictObject({
        enabled: z.boolean().default(true),
        label: z
          .string()
          .regex(/^[^\s"'\\]+$/, 'expected a Jira label: no spaces or quotes (e.g. casebridge-quarantine)')
          .default('casebridge-quarantine'),
        /** Most cases quarantined (a share of the plan's, at least one); `quarantine add` and reporters stop there. */
        max: z
          .number()
          .min(0, 'expected a share from 0 to 1, e.g. 0.05')
          .max(1, 'expected a share from 0 to 1, e.g. 0.05')
          .default(0.05),
      })
      .prefault({}),
    /** The rules of `casebridge gate` (query/gate.ts), below its flags. */
    gate: z
      .strictObject({
        maxNew: z.number().int().min(0, 'expected a count from 0').default(0),
        maxRegressions: z.number().int().min(0, 'expected a count from 0').default(0),
        minPassRate: z
          .number()
          .min(0, 'expected a percentage from 0 to 100')
          .max(100, 'expected a percentage from 0 to 100')
          .optional(),
        requireAllPlanned: z.boolean().default(false),
        /** Run attribute name → the values that must each have a run with a result (`{ Browser: ['Chrome', 'Firefox'] }`). */
        requireAttributes: z.record(z.string(), z.array(z.string()).min(1)).optional(),
        strict: z.boolean().default(false),
        /** Every requirement of the set covered (`covered`), or covered and passing (`passing`), query/coverage.ts. */
        requirements: z.enum(['covered', 'passing']).optional(),
        requirementsJql: z.string().min(1).optional(),
      })
      .prefault({}),
    /** Run exactly a cycle's cases (Playwright 1.62+ `preprocess`); the cycle's cases no test maps are listed. */
    select: z
      .strictObject({
        /** Test plan key; default `testPlan`. */
        plan: issueKey.optional(),
        /**
         * Cycle name, `#<id>` or an id. Without it every test runs, so a CI template may set CASEBRIDGE_SELECT_STATUS
         * for every job and the cycle for some.
         */
        cycle: z.string().min(1).optional(),
        /** Run statuses, as the instance names them (any case); empty: every status. */
        status: z.array(z.string().min(1)).default([]),
        /** The run's assigned tester; `me`: the user of the credentials. */
        tester: z.string().min(1).optional(),
      })
      .optional(),
    /** Run attributes, name → template (`${project}`, `${tag:…}`, `${annotation:…}`, `${param.…}`): a run per set. */
    attributes: z.record(z.string().min(1), z.string().min(1)).optional(),
    /** Regular expression of a case key; default: keys of `projectKey`. */
    keyPattern: z.string().optional(),
    /** Mapping file, relative to the project root. */
    mappingFile: z.string().default('casebridge.keys.json'),
    /** Create test cases for unmapped tests and record them in the mapping file. */
    autoCreate: z.boolean().default(false),
    /** New cases per create request (Jira's bulk create); 1: the add-on's create, one case per request. */
    createBatchSize: z.number().int().min(1).max(1000).default(50),
    defects: z
      .strictObject({
        enabled: z.boolean().default(true),
        /** Project of new defects; default `projectKey`. */
        projectKey: projectKey.optional(),
        issueType: z.string().min(1).default('Bug'),
        /** File defects for flaky tests too. */
        onFlaky: z.boolean().default(false),
        /** Summary template (variables in defects/text.ts); ` [cb-<hash>]` always ends the summary. */
        summaryTemplate: z.string().min(1).default('${title}: ${error}'),
        /** Description template (the same variables); default: the built-in description. */
        descriptionTemplate: z.string().min(1).optional(),
        /** Jira create fields sent with every defect: labels, components, priority, versions, custom fields. */
        fields: defectFieldsSchema.optional(),
        /** New defects at most per run (per cycle across its machines); 0 files none but still links. */
        maxPerRun: z.number().int().min(0).default(10),
        /** One defect per group of failures with the same normalised error (see groups.ts); false: one per test. */
        group: z.boolean().default(true),
      })
      .prefault({}),
    /** The run status each kind of result writes; `null` or `"unchanged"` leaves the run as it is. */
    statusMap: z
      .strictObject({
        passed: runStatusName.default('Passed'),
        failed: runStatusName.default('Failed'),
        timedOut: runStatusName.optional(),
        flaky: runStatusName.default('Passed'),
        skipped: runStatusName.default(null),
        interrupted: runStatusName.default('Blocked'),
      })
      .prefault({}),
    attachments: z
      .strictObject({
        /** Screenshots: of failed tests (default), of every test, or none. */
        screenshots: z.enum(['on-failure', 'all', 'off']).default('on-failure'),
        traces: z.boolean().default(false),
        videos: z.boolean().default(false),
        /** Other attachments (logs, custom files). */
        others: z.boolean().default(false),
        /** Upload roots besides the project, temp folder and journal; a path elsewhere is named, not sent. */
        roots: z.array(z.string().min(1)).default([]),
        /** Larger files are not uploaded; the run's comment names them. */
        maxBytes: z
          .number()
          .int()
          .positive()
          .default(50 * 1024 * 1024),
        /** Send files at least this large to the content repository (when configured) and link them. */
        repositoryMinBytes: z
          .number()
          .int()
          .nonnegative()
          .default(10 * 1024 * 1024),
      })
      .prefault({}),
    /** Optional content repository for large artifacts (videos, traces). */
    repository: z
      .strictObject({
        url: z.url({ message: 'expected the content repository URL, e.g. https://repo.example.com' }),
        token: z.string().min(1).optional(),
        user: z.string().min(1).optional(),
        password: z.string().min(1).optional(),
        ticket: z.string().min(1).optional(),
      })
      .optional(),
    /** Bitbucket Data Center: a Code Insights report and a build status on the commit (engine/publish). */
    bitbucket: z
      .strictObject({
        url: z.url({ message: 'expected the Bitbucket server URL, e.g. https://bitbucket.example.com' }),
        /** An HTTP access token (personal, project or repository), sent as Bearer. */
        token: z.string().min(1),
        repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, "expected the repository as 'PROJECT/slug'"),
        reportKey: z.string().min(1).max(100).default('casebridge'),
      })
      .optional(),
    /** GitLab: one merge-request note, edited in place; the CI's variables fill in what is not set here. */
    gitlab: z
      .strictObject({
        url: z.url({ message: 'expected the GitLab URL, e.g. https://gitlab.example.com' }).optional(),
        token: z.string().min(1).optional(),
        /** The project's id or path (`group/shop`). */
        project: z.string().min(1).optional(),
        mergeRequest: z.number().int().positive().optional(),
      })
      .optional(),
    /** GitHub: one pull-request comment, edited in place; the Actions variables fill in what is not set here. */
    github: z
      .strictObject({
        /** The API root: https://api.github.com, or https://<host>/api/v3 for GitHub Enterprise Server. */
        url: z.url({ message: 'expected the GitHub API URL, e.g. https://api.github.com' }).optional(),
        token: z.string().min(1).optional(),
        repo: z
          .string()
          .regex(/^[^/\s]+\/[^/\s]+$/, "expected the repository as 'owner/name'")
          .optional(),
        pullRequest: z.number().int().positive().optional(),
      })
      .optional(),
    /** How long the end of the run waits while no request succeeds before journaling the rest (see `flushMaxMs`). */
    flushTimeoutMs: z.number().int().positive().default(30_000),
    /** How long status-only results wait for a bulk update, doubling up to 300 s: liveness against request count. */
    bulkWaitMs: z.number().int().min(100).max(TIMING.bulkWaitMaxMs).default(TIMING.bulkWaitMs),
    /** Jira's behaviour where a cluster may differ from the defaults. */
    jira: z
      .strictObject({
        /** How long a create may be missing from Jira's search (index replication): every read-after-write waits it. */
        indexLagMs: z.number().int().min(0).max(60_000).default(TIMING.indexLagMs),
      })
      .default({ indexLagMs: TIMING.indexLagMs }),
    /** The longest the end of the run waits for delivery, progress or not (a first run creating thousands of cases). */
    flushMaxMs: z.number().int().positive().default(600_000),
    /** Let delivery failures fail the test run (off: the exit code is the tests' own). */
    failOnError: z.boolean().default(false),
    /** Make no writes; print every call it would make (and save them as JSON when a path is given). */
    dryRun: z.union([z.boolean(), z.string().min(1)]).default(false),
    /** Where undelivered results wait, relative to the project root. */
    journalDir: z.string().default('.casebridge/journal'),
    concurrency: z.number().int().min(1).max(32).default(4),
    requestsPerSecond: z.number().positive().optional(),
    proxy: z.string().optional(),
    caFile: z.string().optional(),
    /** Client timeouts per request, ms (defaults: connect 10 s, headers 30 s, body 60 s). */
    timeouts: timeoutsSchema.optional(),
    /** Log every request (redacted) to stderr; also CASEBRIDGE_DEBUG=1. */
    debug: z.boolean().default(false),
    /** On GitHub Actions, an `::error` annotation per failing test (at most 10) with its links. */
    annotations: z.boolean().default(false),
    /** Report in watch mode (Vitest): each rerun once. */
    watch: z.boolean().default(false),
  })
  .superRefine((c, ctx) => {
    if (!c.token && !(c.user && c.password)) {
      ctx.addIssue({
        code: 'custom',
        path: ['token'],
        message:
          'credentials missing: set token (CASEBRIDGE_TOKEN) or user and password (CASEBRIDGE_USER, CASEBRIDGE_PASSWORD)',
      });
    }
    if (c.user && !c.password) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'user is set but password is not' });
    }
    if (c.password && looksLikePersonalAccessToken(c.password)) {
      ctx.addIssue({
        code: 'custom',
        path: ['password'],
        message: `${TOKEN_AS_PASSWORD}. Move it from password (CASEBRIDGE_PASSWORD) to token (CASEBRIDGE_TOKEN) and unset user (CASEBRIDGE_USER)`,
      });
    }
    if (c.mode === 'cycle' && !c.testPlan) {
      ctx.addIssue({
        code: 'custom',
        path: ['testPlan'],
        message: 'cycle mode needs the test plan key (testPlan or CASEBRIDGE_TEST_PLAN), e.g. PROJ-1',
      });
    }
    if (c.keyPattern) {
      try {
        new RegExp(c.keyPattern);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['keyPattern'], message: `not a regular expression: ${String(err)}` });
      }
    }
  });

export type CasebridgeConfig = z.output<typeof configSchema>;
export type { CasebridgeOptions } from './options.js';

/** `CasebridgeOptions`, written out without zod for the declaration files, is exactly the schema's input. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Mutually assignable with the same keys (optional keys would let one side lack some). */
type Exact<A, B> = Same<A, B> extends true ? Same<keyof A, keyof B> : false;
type Input = Partial<z.input<typeof configSchema>>;
type Nested<K extends keyof Input & keyof CasebridgeOptions> = Exact<
  NonNullable<CasebridgeOptions[K]>,
  NonNullable<Input[K]>
>;
const optionsTypeMatchesSchema: [
  Exact<CasebridgeOptions, Input>,
  Nested<'defects'>,
  Nested<'statusMap'>,
  Nested<'attachments'>,
  Nested<'repository'>,
  Nested<'timeouts'>,
  Nested<'jira'>,
  Nested<'gate'>,
  Nested<'quarantine'>,
  Nested<'bitbucket'>,
  Nested<'gitlab'>,
  Nested<'github'>,
] = [true, true, true, true, true, true, true, true, true, true, true, true];
void optionsTypeMatchesSchema;

/** Expands `${name}` in a template from `vars`, then the environment; unknown names become empty. */
export function expandTemplate(template: string, vars: Record<string, string | undefined>, env = process.env): string {
  return template.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => vars[name] ?? env[name] ?? '').trim();
}
