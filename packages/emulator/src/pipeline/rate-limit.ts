import { ANSWERED, type Answered, type Env, type ServiceExchange } from '../kernel/exchange.js';
import { jiraHosted } from '../service/cluster.js';
import type { Caller } from './access.js';

/**
 * The rate-limit step: above the configured rate the Jira-hosted services answer 429 (the repository and the code hosts have none here).
 * With one shared bucket it runs before routing, for every request; per user (Jira 8.6+) it runs after the auth
 * step, on the caller's own bucket, and anonymous requests pass. Every answer of a limited service carries Jira's
 * `X-RateLimit-*` headers.
 */
export function rateLimit(env: Env, x: ServiceExchange, caller?: Caller): Answered | undefined {
  const { limiter } = env;
  if (!limiter || !jiraHosted(x.service) || limiter.perUser !== (caller !== undefined)) return undefined;
  const key = limiter.perUser ? caller?.user?.name : '*';
  if (key === undefined) return undefined;
  const took = limiter.takeFor(key, env.now());
  if (took.ok) {
    for (const [name, value] of Object.entries(took.headers)) x.res.setHeader(name, value);
    return undefined;
  }
  x.entry.fault = 'rate-limited';
  x.res.writeHead(429, { 'content-type': 'text/plain;charset=UTF-8', ...took.headers });
  x.res.end('Too many Requests');
  x.req.resume();
  return ANSWERED;
}
