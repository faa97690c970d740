import { routeCookie } from '../service/cluster.js';
import type { Env, Exchange } from './exchange.js';

/**
 * The balance step: the load balancer in front of the simulated Jira nodes (service/cluster.ts) picks the node of a
 * request to the Jira-hosted services, and sets its `ROUTEID` cookie on the answer when the request came without a
 * valid one, as Apache's `stickysession=ROUTEID` setup does. The content repository is another server. In the
 * kernel, not in pipeline/, because a browser's login (ui/access.ts) lands on a node too.
 */
export function balance(env: Env, x: Exchange): number {
  if (x.node !== undefined) return x.node;
  const { node, setCookie } = env.cluster.route(x.req.headers);
  x.node = node;
  x.entry.node = `node${node + 1}`;
  if (setCookie && !x.res.headersSent) x.res.setHeader('set-cookie', routeCookie(node));
  return node;
}
