import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleAdmin } from '../admin.js';
import { serveDocs } from '../docs.js';
import { serveDownload } from '../handlers/downloads.js';
import { balance } from '../kernel/balance.js';
import type { RequestLogEntry } from '../kernel/emulator.js';
import { ANSWERED, type Env, type Exchange } from '../kernel/exchange.js';
import { jiraHosted } from '../service/cluster.js';
import { refuseAdminApi, serveUi } from '../ui/index.js';
import { auth, licence } from './access.js';
import { dispatch, unitOfWork } from './dispatch.js';
import { afterFaults, faults, wait } from './faults.js';
import { newContext, parse } from './parse.js';
import { rateLimit } from './rate-limit.js';
import { reply } from './reply.js';
import { address, route } from './route.js';

/**
 * How the emulator answers a request: a pipeline of small steps, in this order. The admin endpoints and the API
 * documentation are the emulator's own and skip it. Each step either hands its result to the next or answers the
 * request itself (an error, a fault, a download) and returns ANSWERED, which ends the pipeline.
 *
 * 0. balance: the simulated Jira node the load balancer sends the request to (src/service/cluster.ts);
 * 1. faults: injected latency, error answers, resets and hangs (what the network or a proxy would do);
 * 2. rate limit: 429 above the configured rate (one bucket for all);
 *    then the downloads at the URLs the services hand out (not operations of the spec);
 * 3. route: the operation at the method and path (404, 405, OPTIONS);
 * 4. auth: the caller (401), the repository's guest; then the rate limit per user, when it is per user;
 * 5. licence: the test-management add-on's licence (403);
 * 6. parse: path, query and body against the operation's schemas (the service's validation error);
 * 7. dispatch: the operation's handler, committed as one unit with the parse;
 * 8. reply: the handler's answer, lost, malformed or replaced by an error when a fault says so (`phase: 'after'`).
 */
export async function handleRequest(
  env: Env,
  req: IncomingMessage,
  res: ServerResponse,
  entry: RequestLogEntry,
): Promise<void> {
  const x = exchange(env, req, res, entry);
  if (await serveOwn(env, x)) return;
  const sx = address(x);
  if (jiraHosted(sx.service)) balance(env, sx);
  const fault = await faults(env, sx);
  if (fault === ANSWERED) return;
  if (rateLimit(env, sx) === ANSWERED) return;
  if (
    sx.method === 'GET' &&
    (await serveDownload({ store: env.store, blobs: env.blobs, ...sx, patAsBasic: env.jira.patAsBasic }))
  )
    return;
  const match = route(env, sx);
  if (match === ANSWERED) return;
  const caller = auth(env, sx, match.op);
  if (caller === ANSWERED) return;
  if (rateLimit(env, sx, caller) === ANSWERED) return;
  if (licence(sx, match.op, caller) === ANSWERED) return;
  const ctx = newContext(env, sx, match.op, caller);
  const result = await unitOfWork(env, sx, ctx, async () => {
    await parse(env, sx, ctx, match.params);
    return dispatch(ctx);
  });
  if (result === ANSWERED) return;
  // The service's own time for the work (issues created): committed already, answered once it has passed.
  if (ctx.workMs) await wait(env, ctx.workMs);
  if ((await afterFaults(env, sx, fault)) === ANSWERED) return;
  await reply(env, sx, ctx.op, result, fault);
}

/** What the request line says. */
function exchange(env: Env, req: IncomingMessage, res: ServerResponse, entry: RequestLogEntry): Exchange {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return {
    req,
    res,
    entry,
    method: (req.method ?? 'GET').toUpperCase(),
    rawPath: q < 0 ? url : url.slice(0, q),
    query: new URLSearchParams(q < 0 ? '' : url.slice(q + 1)),
    origin: `http://${req.headers.host ?? `${env.host}:${env.emu.port}`}`,
  };
}

/**
 * The emulator's own endpoints: the admin API under `/__emulator/` (an administrator's when the emulator listens
 * beyond the loopback), the API documentation, and the web UI's pages (src/ui/).
 */
async function serveOwn(env: Env, x: Exchange): Promise<boolean> {
  const { req, res, rawPath } = x;
  if (rawPath.startsWith('/__emulator/') || rawPath === '/__emulator') {
    x.entry.service = 'admin';
    if (refuseAdminApi(env, x)) return true;
    const { emu, commit, blobs } = env;
    await handleAdmin(emu, { req, res, method: x.method, path: rawPath, query: x.query, commit, blobs });
    return true;
  }
  if (serveDocs(req, res, rawPath, x.origin)) {
    x.entry.service = 'docs';
    return true;
  }
  return serveUi(env, x);
}
