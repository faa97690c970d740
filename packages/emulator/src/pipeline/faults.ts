import { setTimeout as sleep } from 'node:timers/promises';
import { type FaultDecision, servletErrorPage } from '../behaviour/faults.js';
import { ANSWERED, type Answered, type Env, type ServiceExchange } from '../kernel/exchange.js';
import { sendError } from '../kernel/send.js';
import { ServiceError } from '../service/context.js';

/**
 * The faults step, first of all: a fault stands for the network or a proxy in front of the service. Latency is
 * waited out; an error answer, or a reset or hang before the request is processed, ends the request here. What
 * happens after the processing (a lost answer, a malformed body) is returned for the later steps.
 */
export async function faults(env: Env, x: ServiceExchange): Promise<FaultDecision | Answered> {
  const { req, entry } = x;
  const plan = env.faults.active
    ? env.faults.plan(x.method, x.rawPath)
    : { delayMs: 0, decision: { kind: 'none' as const } };
  if (plan.delayMs > 0) await wait(env, plan.delayMs);
  const d = plan.decision;
  if (d.kind !== 'none') entry.fault = d.kind === 'error' ? `error ${d.status}` : `${d.kind}`;
  if (d.kind === 'error' && d.phase === 'before') {
    req.resume();
    sendFault(x, d);
    return ANSWERED;
  }
  if ((d.kind === 'reset' || d.kind === 'hang') && d.phase === 'before') {
    if (d.kind === 'hang') await wait(env, d.ms);
    req.socket.destroy();
    return ANSWERED;
  }
  return d;
}

/**
 * After the request was processed and committed: a reset drops the answer, a hang holds it (an ambiguous failure
 * for the client). Returns ANSWERED when the answer is lost.
 */
export async function afterFaults(env: Env, x: ServiceExchange, d: FaultDecision): Promise<Answered | undefined> {
  if (d.kind === 'error' && d.phase === 'after') {
    sendFault(x, d);
    return ANSWERED;
  }
  if (d.kind === 'reset' && d.phase === 'after') {
    x.req.socket.destroy();
    return ANSWERED;
  }
  if (d.kind === 'hang' && d.phase === 'after') {
    await wait(env, d.ms);
    if (x.req.socket.destroyed) return ANSWERED;
  }
  return undefined;
}

/**
 * An injected error answer in the body the rule asks for: plain text (429 keeps Jira's `Too many Requests`), the
 * service's JSON error shape, or a servlet container's HTML page. 429 and 503 carry `Retry-After`.
 */
function sendFault(x: ServiceExchange, d: Extract<FaultDecision, { kind: 'error' }>): void {
  const headers: Record<string, string> = {};
  if (d.status === 429 || d.status === 503) headers['retry-after'] = String(d.retryAfterSeconds);
  if (d.body === 'json') {
    sendError(x.res, x.service, undefined, new ServiceError(d.status, d.message), headers);
    return;
  }
  const html = d.body === 'html';
  const text = html
    ? servletErrorPage(d.status, d.message)
    : d.status === 429 && d.message === 'Injected fault: 429'
      ? 'Too many Requests'
      : d.message;
  x.res.writeHead(d.status, {
    'content-type': html ? 'text/html;charset=utf-8' : 'text/plain;charset=UTF-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  x.res.end(text);
}

/** Waits `ms`, or less when the emulator closes meanwhile (latency, hangs, and the work a request takes: Ctx.workMs). */
export function wait(env: Env, ms: number): Promise<void> {
  return sleep(ms, undefined, { signal: env.closing }).catch(() => {});
}
