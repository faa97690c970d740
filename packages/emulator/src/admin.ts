import type { IncomingMessage, ServerResponse } from 'node:http';
import { CasebridgeError } from '@casebridge/core/contract';
import { ZodError, z } from 'zod';
import { faultRuleSchema } from './behaviour/faults.js';
import type { RunningEmulator } from './kernel/emulator.js';
import type { BlobStore } from './store/blobs.js';

/**
 * Admin endpoints under `/__emulator/` (no authentication on the loopback, where the emulator is a local tool; an
 * administrator's beyond it, checked before this runs by `refuseAdminApi` in ui/access.ts):
 * - `GET  /__emulator/health`           → {ok, variant, url}
 * - `GET  /__emulator/state`            → every table's rows (passwords and tokens masked)
 * - `GET  /__emulator/requests`         → the request log (`?since=<seq>` for newer entries only)
 * - `DELETE /__emulator/requests`       → clears the request log
 * - `GET  /__emulator/faults`           → active fault rules and how often each applied
 * - `PUT  /__emulator/faults`           → replaces the rules: {rules: [...], seed?: n} or a bare array
 * - `POST /__emulator/faults`           → adds one rule
 * - `DELETE /__emulator/faults`         → removes all rules
 * - `GET  /__emulator/jira`             → the Jira behaviour in effect (profile knobs, src/behaviour/profile.ts)
 * - `PUT  /__emulator/jira`             → changes some knobs: {"indexLagMs": [500, 2500], ...}
 * - `POST /__emulator/jira/index`       → every node's search index catches up now (the lag stays for later writes)
 * - `POST /__emulator/reset`            → back to the seed state; clears faults and the request log
 */

export interface AdminRequest {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  query: URLSearchParams;
  commit: () => void;
  blobs: BlobStore;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json;charset=UTF-8',
    'content-length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() ? JSON.parse(text) : undefined;
}

/** A copy of the state with secrets masked: the dump may end up in CI logs. */
export function stateDump(emu: RunningEmulator): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const t of emu.store.tables()) {
    if (t.name === 'sessions' || t.name === 'tickets') {
      out[t.name] = t.all().map((r) => ({ ...r, id: '***' }));
    } else if (t.name === 'users') {
      out[t.name] = t.all().map((r) => ({
        ...r,
        password: '***',
        tokens: (r as unknown as { tokens: string[] }).tokens.map(() => '***'),
      }));
    } else out[t.name] = t.all();
  }
  return out;
}

/**
 * `PUT /__emulator/faults` body: a bare array of rules, or `{rules, seed?}`. Checked as a whole, so a single rule
 * object sent by mistake is refused instead of read as "no rules", and a rule's field is named with its position.
 */
const faultRules = z.array(faultRuleSchema);
const faultsEnvelope = z.strictObject({ rules: faultRules.default([]), seed: z.number().int().optional() });

function parseFaultsPut(body: unknown): { rules: z.output<typeof faultRules>; seed?: number } {
  if (body === undefined) return { rules: [] };
  return Array.isArray(body) ? { rules: faultRules.parse(body) } : faultsEnvelope.parse(body);
}

/** `since` of the request log: a sequence number, entries after it are returned. */
function sinceParam(query: URLSearchParams): number {
  const raw = query.get('since');
  if (raw === null || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    throw new AdminError(
      `Invalid query parameter "since": expected a request sequence number (integer >= 0), got "${raw}"`,
    );
  }
  return n;
}

/** A request to the admin API that is refused (answered 400 with its message); in the family, kind `admin`. */
export class AdminError extends CasebridgeError {
  constructor(message: string) {
    super('admin', message, {}, false, { redact: false });
  }
}

export async function handleAdmin(emu: RunningEmulator, a: AdminRequest): Promise<void> {
  const { req, res, method, path, query } = a;
  const route = `${method} ${path.replace(/\/$/, '')}`;
  try {
    switch (route) {
      case 'GET /__emulator/health':
        req.resume();
        return send(res, 200, { ok: true, url: emu.url, variant: emu.variant });
      case 'GET /__emulator/state':
        req.resume();
        return send(res, 200, stateDump(emu));
      case 'GET /__emulator/requests': {
        req.resume();
        const since = sinceParam(query);
        return send(
          res,
          200,
          emu.requests().filter((r) => r.seq > since),
        );
      }
      case 'DELETE /__emulator/requests':
        req.resume();
        emu.clearRequests();
        return send(res, 200, { ok: true });
      case 'GET /__emulator/faults':
        req.resume();
        return send(res, 200, emu.faults.list());
      case 'PUT /__emulator/faults': {
        const { rules, seed } = parseFaultsPut(await readBody(req));
        emu.faults.set(rules, seed);
        return send(res, 200, emu.faults.list());
      }
      case 'POST /__emulator/faults': {
        const body = await readBody(req);
        emu.faults.add((body ?? {}) as never);
        return send(res, 200, emu.faults.list());
      }
      case 'DELETE /__emulator/faults':
        req.resume();
        emu.faults.clear();
        return send(res, 200, emu.faults.list());
      case 'GET /__emulator/jira':
        req.resume();
        return send(res, 200, emu.jira);
      case 'PUT /__emulator/jira': {
        const body = await readBody(req);
        if (!body || typeof body !== 'object' || Array.isArray(body)) {
          throw new AdminError('PUT /__emulator/jira takes an object of knobs, e.g. {"indexLagMs": 2500}');
        }
        try {
          return send(res, 200, emu.setJira(body as never));
        } catch (err) {
          throw new AdminError((err as Error).message);
        }
      }
      case 'POST /__emulator/jira/index':
        req.resume();
        emu.catchUpIndex();
        return send(res, 200, { ok: true });
      case 'POST /__emulator/reset':
        req.resume();
        await emu.reset();
        return send(res, 200, { ok: true });
      default:
        req.resume();
        return send(res, 404, { message: `No admin endpoint ${method} ${path}. See the emulator README.` });
    }
  } catch (err) {
    if (err instanceof ZodError) {
      // One issue per unknown key, so the offending field is named like any other.
      const issues = err.issues.flatMap((i) =>
        i.code === 'unrecognized_keys'
          ? i.keys.map((k) => ({ field: [...i.path, k].join('.'), message: `unknown field "${k}"` }))
          : [{ field: i.path.join('.'), message: i.message }],
      );
      return send(res, 400, {
        message: `Invalid fault rule: ${issues.map((i) => `${i.field || '(body)'}: ${i.message}`).join('; ')}`,
        issues,
      });
    }
    if (err instanceof AdminError) return send(res, 400, { message: err.message });
    if (err instanceof SyntaxError) return send(res, 400, { message: `Body is not valid JSON: ${err.message}` });
    throw err;
  }
}
