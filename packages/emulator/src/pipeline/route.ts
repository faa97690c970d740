import { operations, SERVICE_PREFIXES, type Service } from '@casebridge/core/contract';
import { ANSWERED, type Answered, type Env, type Exchange, type ServiceExchange } from '../kernel/exchange.js';
import { sendError } from '../kernel/send.js';
import { ServiceError } from '../service/context.js';
import type { Match } from '../service/router.js';

const under = (path: string, root: string) => path === root || path.startsWith(`${root}/`);

/**
 * The roots of the services served at the top of the host besides Jira (an empty prefix): the literal segments
 * their paths start with, up to two (`/rest/insights`, `/rest/build-status`, `/api/v4`, `/repos`). Jira's own
 * paths (`/rest/api/2`, `/rest/auth/1`) never start so.
 */
let roots: { root: string; service: Service }[] | undefined;
function rootsAtTop(): { root: string; service: Service }[] {
  if (roots) return roots;
  const found = new Map<string, Service>();
  for (const op of operations) {
    if (op.service === 'jira' || !SERVICE_PREFIXES[op.service].includes('')) continue;
    const literal = op.path.split('/').slice(1, 3);
    const end = literal.findIndex((seg) => seg.startsWith('{'));
    found.set(`/${(end < 0 ? literal : literal.slice(0, end)).join('/')}`, op.service);
  }
  roots = [...found].map(([root, service]) => ({ root, service }));
  return roots;
}

/** Which service a request is for, and the path after its prefix: the Jira platform owns every other path. */
export function address(x: Exchange): ServiceExchange {
  let service: Service | undefined;
  let prefix = '';
  let rest = x.rawPath;
  for (const s of ['tm', 'repo', 'bitbucket', 'gitlab', 'github'] as const) {
    for (const p of SERVICE_PREFIXES[s]) {
      if (p !== '' && under(x.rawPath, p)) {
        service = s;
        prefix = p;
        rest = x.rawPath.slice(p.length) || '/';
      }
    }
  }
  service ??= rootsAtTop().find((r) => under(x.rawPath, r.root))?.service ?? 'jira';
  x.entry.service = service;
  return { ...x, service, prefix, rest };
}

/**
 * The route step: the operation at the method and path, with its path parameters. HEAD is answered as GET without
 * the body (Node drops it), and OPTIONS lists the methods of the path, as the JAX-RS servers behind both services
 * do for every resource; another method is a 405, an unknown path a 404.
 */
export function route(env: Env, x: ServiceExchange): Match | Answered {
  const { req, res, method, service } = x;
  const routed = env.router.route(service, method === 'HEAD' ? 'GET' : method, x.rest);
  if (routed.kind === 'match') {
    x.entry.op = routed.match.op.id;
    return routed.match;
  }
  req.resume();
  if (routed.kind === 'none') {
    sendError(res, service, undefined, new ServiceError(404, `No operation at ${method} ${x.rawPath}`));
    return ANSWERED;
  }
  const allow = implicitMethods(routed.allowed).join(', ');
  if (method === 'OPTIONS') {
    res.writeHead(200, { allow, 'content-length': '0' });
    res.end();
  } else {
    sendError(res, service, undefined, new ServiceError(405, `Method ${method} is not allowed here; use ${allow}`), {
      allow,
    });
  }
  return ANSWERED;
}

/** The methods a path answers: its operations' methods, HEAD wherever GET is, and OPTIONS. */
function implicitMethods(allowed: readonly string[]): string[] {
  const out = [...allowed];
  if (out.includes('GET')) out.push('HEAD');
  out.push('OPTIONS');
  return out;
}
