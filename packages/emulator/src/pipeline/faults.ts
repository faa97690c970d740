import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultDecision } from '../faults.js';
import { ANSWERED, type Answered, type Env, type ServiceExchange } from './exchange.js';

/**
 * The faults step, first of all: a fault stands for the network or a proxy in front of the service. Latency is
 * waited out; an error answer, or a reset or hang before the request is processed, ends the request here. What
 * happens after the processing (a lost answer, a malformed body) is returned for the later steps.
 */
export async function faults(env: Env, x: ServiceExchange): Promise<FaultDecision | Answered> {
  const { req, res, entry } = x;
  const plan = env.faults.active
    ? env.faults.plan(x.method, x.rawPath)
    : { delayMs: 0, decision: { kind: 'none' as const } };
  if (plan.delayMs > 0) await wait(env, plan.delayMs);
  const d = plan.decision;
  if (d.kind !== 'none') entry.fault = d.kind === 'error' ? `error ${d.status}` : `${d.kind}`;
  if (d.kind === 'error') {
    const headers: Record<string, string> = { 'content-type': 'text/plain;charset=UTF-8' };
    if (d.status === 429 || d.status === 503) headers['retry-after'] = String(d.retryAfterSeconds);
    res.writeHead(d.status, headers);
    res.end(d.status === 429 ? 'Too many Requests' : `Injected fault: ${d.status}`);
    req.resume();
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

/** Waits `ms`, or less when the emulator closes meanwhile. */
function wait(env: Env, ms: number): Promise<void> {
  return sleep(ms, undefined, { signal: env.closing }).catch(() => {});
}
