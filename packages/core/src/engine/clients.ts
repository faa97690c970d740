import { ContentRepositoryClient } from '../client/repo.js';
import { TestManagementClient } from '../client/tm.js';
import type { TransportOptions } from '../client/transport.js';
import { type CasebridgeConfig, expandTemplate } from './config/schema.js';

export type Logger = (level: string, message: string) => void;

/**
 * The clients a configuration describes (content repository when `repository` is set), shared by the engine and the
 * CLI so both reach the service the same way.
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
 * CI variables whose value is new per pipeline run, job or attempt: a cycle named after one is new almost every run.
 * Not a commit or a branch: several runs share those.
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
 * Whether the cycle name is new per run (`${build}` set, or a set PER_RUN_VARIABLES): such a cycle is created first,
 * saving a request; the default `CI ${date}` is made by the day's first run and found by the others.
 */
export function cycleNamePerRun(c: CasebridgeConfig, env: NodeJS.ProcessEnv = process.env): boolean {
  const names = [...c.cycle.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);
  return names.some((name) =>
    name === 'build' ? Boolean(c.build?.trim()) : PER_RUN_VARIABLES.includes(name) && Boolean(env[name]?.trim()),
  );
}
