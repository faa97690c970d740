import type { OperationDef } from '@casebridge/core/contract';
import { type FaultDecision, malformedBody } from '../behaviour/faults.js';
import type { Env, ServiceExchange } from '../kernel/exchange.js';
import { sendBlob, sendError } from '../kernel/send.js';
import { FileReply, Reply, ServiceError } from '../service/context.js';

/**
 * The reply step: writes what the handler returned (a body, a `Reply` with another status or headers, or a
 * `FileReply` download), malformed on purpose when a fault says so. The error bodies are in ../kernel/send.ts.
 */
export async function reply(
  env: Env,
  x: ServiceExchange,
  op: OperationDef,
  result: unknown,
  fault: FaultDecision,
): Promise<void> {
  const { res } = x;
  if (result instanceof FileReply) {
    return sendBlob(res, env.blobs, result, (message) => sendError(res, x.service, op, new ServiceError(500, message)));
  }
  let status = 200;
  let headers: Record<string, string | string[]> = {};
  let body = result;
  if (result instanceof Reply) {
    status = result.status;
    headers = result.headers;
    body = result.body;
  }
  if (body === undefined) {
    res.writeHead(status, { ...headers, 'content-length': '0' });
    res.end();
    return;
  }
  let text = typeof body === 'string' ? body : JSON.stringify(body);
  let type = typeof body === 'string' ? 'text/plain;charset=UTF-8' : 'application/json;charset=UTF-8';
  if (fault.kind === 'malformed') {
    const m = malformedBody(fault.malformedKind, text);
    text = m.text;
    type = m.type;
  }
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}
