import { ContentRepositoryClient } from '../client/repo.js';
import { TestManagementClient } from '../client/tm.js';
import type { TransportOptions } from '../client/transport.js';
import { type CasebridgeConfig, expandTemplate } from './config/schema.js';

export type Logger = (level: string, message: string) => void;

/**
 * The clients a configuration describes: the test-management client, and the content-repository client when
 * `repository` is set. Shared by the engine and the CLI (doctor, cycle), so both reach the service the same way
 * (auth, prefix, proxy, CA file, rate limits).
 */
export function clientsFor(
  c: CasebridgeConfig,
  logger?: Logger,
  /** For quick checks (doctor): fewer retries, shorter timeouts; a run's clock for the retries' waits. */
  tuning: Pick<TransportOptions, 'retry' | 'timeouts' | 'sleep'> = {},
): { tm: TestManagementClient; repo?: ContentRepositoryClient } {
  const auth = c.token
    ? ({ type: 'bearer', token: c.token } as const)
    : ({ type: c.authType, username: c.user as string, password: c.password as string } as const);
  const network = {
    ...(c.timeouts ? { timeouts: c.timeouts } : {}),
    ...(c.proxy ? { proxy: c.proxy } : {}),
    ...(c.caFile ? { caFile: c.caFile } : {}),
    ...(logger ? { logger } : {}),
    ...tuning,
  };
  const tm = new TestManagementClient({
    baseUrl: c.url,
    auth,
    ...(c.apiPrefix ? { prefix: c.apiPrefix } : {}),
    concurrency: c.concurrency,
    ...(c.requestsPerSecond ? { requestsPerSecond: c.requestsPerSecond } : {}),
    ...network,
  });
  if (!c.repository) return { tm };
  const r = c.repository;
  const repoAuth = r.ticket
    ? ({ type: 'ticket', ticket: r.ticket } as const)
    : r.token
      ? ({ type: 'bearer', token: r.token } as const)
      : ({ type: 'basic', username: r.user ?? c.user ?? '', password: r.password ?? c.password ?? '' } as const);
  return { tm, repo: new ContentRepositoryClient({ baseUrl: r.url, auth: repoAuth, ...network }) };
}

/** The cycle name of a run: the `cycle` template expanded (`${build}`, `${environment}`, `${date}`, `${branch}`, env). */
export function cycleNameFor(c: CasebridgeConfig, env: NodeJS.ProcessEnv = process.env, now = new Date()): string {
  const vars = {
    build: c.build,
    environment: c.environment,
    date: now.toISOString().slice(0, 10),
    branch: env.GITHUB_REF_NAME ?? env.CI_COMMIT_REF_NAME ?? env.BRANCH_NAME,
  };
  return expandTemplate(c.cycle, vars, env) || `CI ${vars.date}`;
}

/**
 * CI variables that hold a value of one pipeline run (an id or a number that counts runs): a cycle named after one
 * is new in almost every run. Per job or per attempt ones too (GitLab's CI_JOB_ID, Azure's SYSTEM_JOBID): newer still.
 * Not a commit (GITHUB_SHA) nor a branch: several runs share those.
 */
export const PER_RUN_VARIABLES: readonly string[] = [
  'CASEBRIDGE_PIPELINE_ID',
  'GITHUB_RUN_ID',
  'GITHUB_RUN_NUMBER',
  'CI_PIPELINE_ID',
  'CI_PIPELINE_IID',
  'CI_JOB_ID',
  'BUILD_NUMBER',
  'BUILD_ID',
  'BUILD_TAG',
  'BUILD_BUILDID',
  'BUILD_BUILDNUMBER',
  'SYSTEM_JOBID',
  'BUILDKITE_BUILD_ID',
  'BUILDKITE_BUILD_NUMBER',
  'CIRCLE_BUILD_NUM',
  'CIRCLE_WORKFLOW_ID',
  'BITBUCKET_BUILD_NUMBER',
  'TRAVIS_BUILD_ID',
  'TRAVIS_BUILD_NUMBER',
  'DRONE_BUILD_NUMBER',
];

/**
 * Whether the run's cycle name is new per run: the `cycle` template names `${build}` (option `build` set) or a
 * PER_RUN_VARIABLES variable that is set. Such a cycle is created first and looked for only when the create is
 * refused (one request less); the default `CI ${date}` is made by the day's first run and found by the others.
 */
export function cycleNamePerRun(c: CasebridgeConfig, env: NodeJS.ProcessEnv = process.env): boolean {
  const names = [...c.cycle.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);
  return names.some((name) =>
    name === 'build' ? Boolean(c.build?.trim()) : PER_RUN_VARIABLES.includes(name) && Boolean(env[name]?.trim()),
  );
}
