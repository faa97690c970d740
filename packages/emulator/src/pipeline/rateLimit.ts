import { ANSWERED, type Answered, type Env, type ServiceExchange } from './exchange.js';

/** The rate-limit step: above the configured rate the Jira-hosted services answer 429 (the repository has none). */
export function rateLimit(env: Env, x: ServiceExchange): Answered | undefined {
  const { limiter } = env;
  if (!limiter || x.service === 'repo' || limiter.take(env.now())) return undefined;
  x.entry.fault = 'rate-limited';
  x.res.writeHead(429, { 'content-type': 'text/plain;charset=UTF-8', 'retry-after': String(limiter.retryAfter) });
  x.res.end('Too many Requests');
  x.req.resume();
  return ANSWERED;
}
