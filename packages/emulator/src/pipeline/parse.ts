import type { IncomingMessage } from 'node:http';
import { isMultipart, type OperationDef, operations } from '@casebridge/core/contract';
import type { z } from 'zod';
import type { Env, ServiceExchange } from '../kernel/exchange.js';
import { GUEST } from '../service/auth.js';
import { jiraHosted } from '../service/cluster.js';
import { type Ctx, ServiceError } from '../service/context.js';
import type { Match } from '../service/router.js';
import type { Caller } from './access.js';
import { readMultipart } from './multipart.js';

/** The handler's context before the request is parsed into it. */
export function newContext(env: Env, x: ServiceExchange, op: OperationDef, caller: Caller): Ctx {
  return {
    store: env.store,
    blobs: env.blobs,
    variant: env.variant,
    op,
    user: caller.user ?? GUEST,
    isGuest: caller.isGuest,
    params: {},
    query: {},
    body: undefined,
    files: [],
    headers: x.req.headers,
    origin: x.origin,
    prefix: x.prefix,
    now: env.now,
    ...(jiraHosted(x.service) ? { cluster: { node: x.node ?? 0, jira: env.jira, index: env.index } } : {}),
  };
}

/**
 * The parse step: path parameters, query and body, each validated by the operation's schema (a failure is the
 * service's validation error naming the field). Uploaded files go to the blob store. updateStep has two body forms
 * on one route, by ID and by sequenceNumber: the body picks the operation, and `ctx.op` becomes it.
 */
export async function parse(env: Env, x: ServiceExchange, ctx: Ctx, params: Match['params']): Promise<void> {
  const { req } = x;
  let op = ctx.op;
  ctx.params = parsePart(op.params, params, 'path');
  ctx.query = parsePart(op.query, queryObject(x.query), 'query');
  if (isMultipart(op.body)) {
    const { fields, files } = await readMultipart(req, env.blobs, env.maxFile);
    ctx.files = files;
    ctx.body = fields;
  } else if (op.body) {
    const json = await readJson(req, env.maxJson);
    if (op.id.startsWith('cases.updateStep')) {
      const alt = operations.find(
        (o) => o !== op && o.method === op.method && o.path === op.path && o.service === op.service,
      );
      if (alt && json && typeof json === 'object' && 'sequenceNumber' in (json as object)) op = alt;
      ctx.op = op;
      x.entry.op = op.id;
    }
    ctx.body = parsePart(op.body as z.ZodType, json, 'body');
  } else {
    req.resume();
  }
}

/** Query parameters as an object; a repeated parameter becomes an array of its values. */
function queryObject(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(query.keys())) {
    const all = query.getAll(key);
    out[key] = all.length > 1 ? all : (all[0] ?? '');
  }
  return out;
}

/** Validates one part of a request; a failure is the service's validation error naming the field. */
function parsePart(schema: z.ZodType | undefined, value: unknown, where: 'path' | 'query' | 'body'): any {
  if (!schema) return where === 'body' ? undefined : {};
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  if (where === 'body' && value === undefined) {
    throw new ServiceError(500, 'Invalid request: the body is empty; this operation requires a JSON body', {
      input: true,
    });
  }
  const first = r.error.issues[0];
  const field = first?.path.length ? first.path.join('.') : undefined;
  const detail = r.error.issues
    .slice(0, 5)
    .map((i) => {
      const at = i.path.length ? `${where} field "${i.path.join('.')}"` : where === 'body' ? 'body' : where;
      if (i.code === 'unrecognized_keys') return `${at}: unknown field(s) ${i.keys.map((k) => `"${k}"`).join(', ')}`;
      return `${at}: ${i.message}`;
    })
    .join('; ');
  throw new ServiceError(500, `Invalid request: ${detail}`, { field, input: true });
}

async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw new ServiceError(500, `Invalid request: body exceeds the limit of ${limit} bytes`, { input: true });
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ServiceError(500, `Invalid request: body is not valid JSON (${(err as Error).message})`, {
      input: true,
    });
  }
}
