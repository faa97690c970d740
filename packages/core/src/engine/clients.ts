import { ContentRepositoryClient } from '../client/repo.js';
import { TestManagementClient } from '../client/tm.js';
import type { RetryOptions, TimeoutOptions } from '../client/transport.js';
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
  /** For quick checks (doctor): fewer retries, shorter timeouts. */
  tuning: { retry?: RetryOptions; timeouts?: TimeoutOptions } = {},
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
