import { handlers } from '../handlers/index.js';
import { ANSWERED, type Answered, type Env, type ServiceExchange } from '../kernel/exchange.js';
import { sendError } from '../kernel/send.js';
import { type Ctx, ServiceError } from '../service/context.js';

/** The dispatch step: the operation's handler runs; what it returns is the answer. */
export async function dispatch(ctx: Ctx): Promise<unknown> {
  const handler = handlers[ctx.op.id];
  if (!handler) throw new ServiceError(501, `Operation ${ctx.op.id} is not implemented by the emulator`);
  return handler(ctx);
}

/**
 * Runs `work` (parse and dispatch) as one unit: the store's changes are committed whether it succeeds or fails,
 * and a failure drops the files the request uploaded. A ServiceError is answered with the service's error body;
 * anything else goes on to the server's last line of defence.
 */
export async function unitOfWork(
  env: Env,
  x: ServiceExchange,
  ctx: Ctx,
  work: () => Promise<unknown>,
): Promise<unknown | Answered> {
  let result: unknown;
  try {
    result = await work();
  } catch (err) {
    env.commit();
    for (const f of ctx.files) await env.blobs.remove(f.blob);
    if (!(err instanceof ServiceError)) throw err;
    sendError(x.res, x.service, ctx.op, err);
    return ANSWERED;
  }
  env.commit();
  return result;
}
