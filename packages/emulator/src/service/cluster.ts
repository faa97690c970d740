import type { IncomingHttpHeaders } from 'node:http';
import type { Service } from '@casebridge/core/contract';
import type { JiraBehaviour } from '../behaviour/profile.js';
import { parseCookies } from './auth.js';

/**
 * The load balancer in front of a simulated Jira Data Center cluster ("Jira Data Center Load Balancer examples"):
 * sticky sessions by its own cookie, `ROUTEID=node1`, which it sets on an answer to a request that came without
 * a valid one. A request with the cookie goes to that node; one without goes to the next node in turn (so a client
 * that drops `ROUTEID` but keeps `JSESSIONID` lands on a node that does not know its session about every other
 * time). Sessions and search indexes are per node; the database is shared.
 */
export class Cluster {
  private turn = 0;

  constructor(private readonly behaviour: () => JiraBehaviour) {}

  get nodes(): number {
    return this.behaviour().nodes;
  }

  /** The node (0-based) a request lands on, and whether the balancer sets its cookie on the answer. */
  route(headers: IncomingHttpHeaders): { node: number; setCookie: boolean } {
    const n = this.nodes;
    if (n <= 1) return { node: 0, setCookie: false };
    const named = /^\.?node(\d+)$/.exec(parseCookies(headers.cookie).ROUTEID ?? '');
    const wanted = named ? Number(named[1]) - 1 : -1;
    if (wanted >= 0 && wanted < n) return { node: wanted, setCookie: false };
    const node = this.turn % n;
    this.turn = (this.turn + 1) % n;
    return { node, setCookie: true };
  }
}

/**
 * The services that run inside Jira, behind its load balancer, its rate limiter and its cluster: synapseRT and the
 * Jira platform. The content repository and the code hosts are servers of their own.
 */
export function jiraHosted(service: Service): boolean {
  return service === 'tm' || service === 'jira';
}

/** The balancer's cookie for a node (0-based). */
export function routeCookie(node: number): string {
  return `ROUTEID=node${node + 1}; Path=/`;
}
