import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMultipart, type OperationDef, operations, SERVICE_PREFIXES, type Service } from '@casebridge/core/contract';
import busboy from 'busboy';
import type { z } from 'zod';
import { handleAdmin } from './admin.js';
import { authenticate, GUEST, openSession } from './auth.js';
import { BlobStore } from './blobs.js';
import { type Ctx, FileReply, Reply, ServiceError, type UploadedFile, type Variant, variantFor } from './context.js';
import { serveDocs } from './docs.js';
import { FaultController, type FaultRuleInput, malformedBody } from './faults.js';
import { serveDownload } from './handlers/downloads.js';
import { handlers } from './handlers/index.js';
import { Persistence } from './persist.js';
import { RateLimiter } from './ratelimit.js';
import { Router } from './router.js';
import { applySeed, demoSeed, loadSeedFile, type Seed, type SeedInput } from './seed.js';
import { Store } from './store.js';

export interface EmulatorOptions {
  /** Port to listen on; 0 picks a free one. Default 8990. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Seed data, a path to a seed JSON file, or `demo` (default) / `empty` (users only). */
  seed?: SeedInput | Seed | string;
  /** Identifier spelling variant. Default `id`. */
  variant?: 'id' | 'ID';
  /** executionTimeStamp format; default per variant (id → iso, ID → legacy). */
  timestamps?: Variant['timestamps'];
  /** Fault rules active from the start. */
  faults?: FaultRuleInput[];
  /** Seed for the fault dice (deterministic). Default 1. */
  faultSeed?: number;
  /** Keep state durably in this folder (SQLite + blob files). Default: in memory. */
  dataDir?: string;
  /** Answer 429 above this many requests per second (token bucket). Default off. */
  rateLimit?: { requestsPerSecond: number; burst?: number; retryAfterSeconds?: number };
  /** Content repository: unauthenticated requests run as a guest user (unless `DisableGuest: true`). */
  repoGuest?: boolean;
  /** Largest JSON body accepted, bytes. Default 10 MiB. */
  maxJsonBytes?: number;
  /** Largest uploaded file, bytes. Default 4 GiB. */
  maxFileBytes?: number;
  /** Request-log ring size. Default 100,000. */
  requestLogSize?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export interface RequestLogEntry {
  seq: number;
  at: number;
  method: string;
  path: string;
  service: Service | 'admin' | 'docs' | null;
  op: string | null;
  status: number;
  ms: number;
  user: string | null;
  fault: string | null;
}

export interface RunningEmulator {
  /** Base URL, e.g. `http://127.0.0.1:8990` (services are under their prefixes). */
  url: string;
  port: number;
  store: Store;
  faults: FaultController;
  variant: Variant;
  options: EmulatorOptions;
  /** Request log, oldest first. */
  requests(): RequestLogEntry[];
  clearRequests(): void;
  /** Back to the seed state (faults and the request log are cleared too). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_PORT = 8990;

/** Operations that answer without authentication (they report on or create the login itself). */
const AUTH_OPTIONAL = new Set(['repo.validateSession', 'jira.login']);

function resolveSeed(seed: EmulatorOptions['seed']): SeedInput | Seed {
  if (seed === undefined || seed === 'demo') return demoSeed;
  if (seed === 'empty') return { users: demoSeed.users };
  if (typeof seed === 'string') return loadSeedFile(seed);
  return seed;
}

/** Starts the emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const now = options.now ?? Date.now;
  const variant = variantFor(options.variant ?? 'id', options.timestamps);
  const seed = resolveSeed(options.seed);
  // Options that can be refused are checked before a folder or a database is opened.
  const faults = new FaultController(options.faults ?? [], options.faultSeed ?? 1);
  const limiter = options.rateLimit ? new RateLimiter(options.rateLimit) : undefined;
  const store = new Store();
  const blobs = await BlobStore.open(options.dataDir ? `${options.dataDir}/blobs` : undefined);
  const persistence = options.dataDir ? Persistence.open(options.dataDir) : undefined;
  if (persistence && !persistence.isEmpty()) {
    persistence.load(store);
    store.takeChanges();
  } else {
    applySeed(store, seed, now());
    persistence?.commit(store.takeChanges());
    persistence?.markSeeded();
  }
  const router = new Router(operations);
  const maxJson = options.maxJsonBytes ?? 10 * 1024 * 1024;
  const maxFile = options.maxFileBytes ?? 4 * 1024 ** 3;
  const logSize = options.requestLogSize ?? 100_000;
  let log: RequestLogEntry[] = [];
  let seq = 0;
  const sockets = new Set<Socket>();
  const closing = new AbortController();

  const commit = () => persistence?.commit(store.takeChanges().filter((c) => c.table !== 'sessions'));

  const emu: RunningEmulator = {
    url: '',
    port: 0,
    store,
    faults,
    variant,
    options,
    requests: () => log.slice(),
    clearRequests: () => {
      log = [];
    },
    reset: async () => {
      for (const t of store.tables()) t.clear();
      applySeed(store, seed, now());
      commit();
      faults.clear();
      log = [];
    },
    close: async () => {
      closing.abort();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // Writes made through `store` outside a request (embedding code, tests) are committed too.
      commit();
      persistence?.close();
      blobs.close();
    },
  };

  const server: Server = createServer((req, res) => {
    const started = performance.now();
    const entry: RequestLogEntry = {
      seq: ++seq,
      at: now(),
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0] ?? '/',
      service: null,
      op: null,
      status: 0,
      ms: 0,
      user: null,
      fault: null,
    };
    res.on('close', () => {
      entry.status = res.headersSent ? res.statusCode : 0;
      entry.ms = Math.round((performance.now() - started) * 100) / 100;
      if (entry.service === 'admin') return;
      log.push(entry);
      if (log.length > logSize) log = log.slice(-Math.floor(logSize / 2));
    });
    handle(req, res, entry).catch((err) => {
      // Last line of defence: the emulator never crashes on a request.
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `internal emulator error: ${(err as Error).message}` }));
      } else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 0;

  async function handle(req: IncomingMessage, res: ServerResponse, entry: RequestLogEntry): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const method = (req.method ?? 'GET').toUpperCase();
    const origin = `http://${req.headers.host ?? `${options.host ?? '127.0.0.1'}:${emu.port}`}`;

    if (rawPath.startsWith('/__emulator/') || rawPath === '/__emulator') {
      entry.service = 'admin';
      return handleAdmin(emu, { req, res, method, path: rawPath, query, commit, blobs });
    }
    if (serveDocs(req, res, rawPath, origin)) {
      entry.service = 'docs';
      return;
    }

    // Which service, and the path after its prefix.
    let service: Service | undefined;
    let prefix = '';
    let rest = rawPath;
    for (const s of ['tm', 'repo'] as const) {
      for (const p of SERVICE_PREFIXES[s]) {
        if (rawPath === p || rawPath.startsWith(`${p}/`)) {
          service = s;
          prefix = p;
          rest = rawPath.slice(p.length) || '/';
        }
      }
    }
    service ??= 'jira';
    entry.service = service;

    // Faults come first: a fault stands for the network or a proxy in front of the service.
    const plan = faults.active ? faults.plan(method, rawPath) : { delayMs: 0, decision: { kind: 'none' as const } };
    if (plan.delayMs > 0) await sleep(plan.delayMs, undefined, { signal: closing.signal }).catch(() => {});
    const d = plan.decision;
    if (d.kind !== 'none') entry.fault = d.kind === 'error' ? `error ${d.status}` : `${d.kind}`;
    if (d.kind === 'error') {
      const headers: Record<string, string> = { 'content-type': 'text/plain;charset=UTF-8' };
      if (d.status === 429 || d.status === 503) headers['retry-after'] = String(d.retryAfterSeconds);
      res.writeHead(d.status, headers);
      res.end(d.status === 429 ? 'Too many Requests' : `Injected fault: ${d.status}`);
      req.resume();
      return;
    }
    if ((d.kind === 'reset' || d.kind === 'hang') && d.phase === 'before') {
      if (d.kind === 'hang') await sleep(d.ms, undefined, { signal: closing.signal }).catch(() => {});
      req.socket.destroy();
      return;
    }

    if (limiter && service !== 'repo' && !limiter.take(now())) {
      entry.fault = 'rate-limited';
      res.writeHead(429, { 'content-type': 'text/plain;charset=UTF-8', 'retry-after': String(limiter.retryAfter) });
      res.end('Too many Requests');
      req.resume();
      return;
    }

    // Attachment and node-content downloads (URLs the services hand out, not operations of the spec).
    if (method === 'GET' && (await serveDownload({ store, blobs, req, res, rawPath, service, prefix }))) return;

    // HEAD is answered as GET without the body (Node drops it), and OPTIONS lists the methods of the path, as
    // the JAX-RS servers behind both services do for every resource.
    const routed = router.route(service, method === 'HEAD' ? 'GET' : method, rest);
    if (routed.kind !== 'match') {
      req.resume();
      if (routed.kind === 'method') {
        const allow = implicitMethods(routed.allowed).join(', ');
        if (method === 'OPTIONS') {
          res.writeHead(200, { allow, 'content-length': '0' });
          res.end();
          return;
        }
        return sendError(
          res,
          service,
          undefined,
          new ServiceError(405, `Method ${method} is not allowed here; use ${allow}`),
          { allow },
        );
      }
      return sendError(res, service, undefined, new ServiceError(404, `No operation at ${method} ${rawPath}`));
    }
    let op = routed.match.op;
    entry.op = op.id;

    // Authentication.
    const auth = authenticate(store, service, req.headers);
    let user = auth.ok ? auth.user : undefined;
    let isGuest = false;
    if (
      !auth.ok &&
      service === 'repo' &&
      auth.reason === 'missing' &&
      options.repoGuest &&
      String(req.headers.disableguest ?? req.headers['disable-guest'] ?? '').toLowerCase() !== 'true'
    ) {
      user = GUEST;
      isGuest = true;
    }
    if (!user && !AUTH_OPTIONAL.has(op.id)) {
      req.resume();
      if (service === 'repo') {
        res.writeHead(401, { 'content-length': '0' });
        res.end();
        return;
      }
      return sendError(
        res,
        service,
        op,
        new ServiceError(
          401,
          auth.ok
            ? ''
            : auth.reason === 'missing'
              ? 'You are not authenticated. Authentication required to perform this operation.'
              : 'Invalid credentials: the user name, password or token was not accepted.',
        ),
        {
          'www-authenticate': 'Basic realm="protected-area"',
          'x-seraph-loginreason': auth.ok ? 'OK' : 'AUTHENTICATED_FAILED',
        },
      );
    }
    entry.user = user?.name ?? null;
    if (service === 'tm' && user && !user.licensed) {
      req.resume();
      return sendError(
        res,
        service,
        op,
        new ServiceError(403, `User ${user.name} is not authorised: no valid licence for the test-management add-on`),
      );
    }

    const ctx: Ctx = {
      store,
      blobs,
      variant,
      op,
      user: user ?? GUEST,
      isGuest,
      params: {},
      query: {},
      body: undefined,
      files: [],
      headers: req.headers,
      origin,
      prefix,
      now,
    };

    let result: unknown;
    try {
      ctx.params = parsePart(op.params, routed.match.params, 'path');
      ctx.query = parsePart(op.query, queryObject(query), 'query');
      if (isMultipart(op.body)) {
        const { fields, files } = await readMultipart(req, blobs, maxFile);
        ctx.files = files;
        ctx.body = fields;
      } else if (op.body) {
        const json = await readJson(req, maxJson);
        // updateStep has two body forms on one route: by ID and by sequenceNumber.
        if (op.id.startsWith('cases.updateStep')) {
          const alt = operations.find(
            (o) => o !== op && o.method === op.method && o.path === op.path && o.service === op.service,
          );
          if (alt && json && typeof json === 'object' && 'sequenceNumber' in (json as object)) op = alt;
          if (op.id !== ctx.op.id) ctx.op = op;
          entry.op = op.id;
        }
        ctx.body = parsePart(op.body as z.ZodType, json, 'body');
      } else {
        req.resume();
      }
      if (auth.ok && auth.via === 'session' && AUTH_OPTIONAL.has(op.id)) {
        // validateSession with a session cookie: nothing to add.
      }
      const handler = handlers[op.id];
      if (!handler) throw new ServiceError(501, `Operation ${op.id} is not implemented by the emulator`);
      result = await handler(ctx);
    } catch (err) {
      commit();
      for (const f of ctx.files) await blobs.remove(f.blob);
      if (err instanceof ServiceError) return sendError(res, service, op, err);
      throw err;
    }
    commit();

    if (d.kind === 'reset' && d.phase === 'after') {
      req.socket.destroy();
      return;
    }
    if (d.kind === 'hang' && d.phase === 'after') {
      await sleep(d.ms, undefined, { signal: closing.signal }).catch(() => {});
      if (req.socket.destroyed) return;
    }

    if (result instanceof FileReply) {
      const file = result;
      // Headers wait until the blob is open: missing bytes are a 500 answer, and never an unhandled stream error
      // (which would end the process).
      const stream = blobs.read(file.blob);
      await new Promise<void>((resolve) => {
        stream.once('error', (err) => {
          if (res.headersSent) res.destroy();
          else {
            sendError(
              res,
              service as Service,
              op,
              new ServiceError(500, `The stored bytes of "${file.fileName}" cannot be read: ${err.message}`),
            );
          }
          resolve();
        });
        stream.once('open', () => {
          res.writeHead(200, {
            'content-type': file.mimeType,
            'content-length': String(file.size),
            'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(file.fileName)}`,
          });
          stream.pipe(res);
          resolve();
        });
      });
      return;
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
    if (d.kind === 'malformed') {
      const m = malformedBody(d.malformedKind, text);
      text = m.text;
      type = m.type;
    }
    res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(text)), ...headers });
    res.end(text);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_PORT, options.host ?? '127.0.0.1', () => resolve());
  }).catch((err) => {
    // A port in use must not leave the database open or a temporary folder behind.
    persistence?.close();
    blobs.close();
    throw err;
  });
  const addr = server.address() as AddressInfo;
  emu.port = addr.port;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  emu.url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${addr.port}`;
  return emu;
}

/** The methods a path answers: its operations' methods, HEAD wherever GET is, and OPTIONS. */
function implicitMethods(allowed: readonly string[]): string[] {
  const out = [...allowed];
  if (out.includes('GET')) out.push('HEAD');
  out.push('OPTIONS');
  return out;
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
    throw new ServiceError(500, 'Invalid request: the body is empty; this operation requires a JSON body');
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
  throw new ServiceError(500, `Invalid request: ${detail}`, { field });
}

async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw new ServiceError(500, `Invalid request: body exceeds the limit of ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ServiceError(500, `Invalid request: body is not valid JSON (${(err as Error).message})`);
  }
}

async function readMultipart(
  req: IncomingMessage,
  blobs: BlobStore,
  maxFile: number,
): Promise<{ fields: Record<string, string>; files: UploadedFile[] }> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) {
    req.resume();
    throw new ServiceError(500, 'Invalid request: expected a multipart/form-data body with a part named "file"');
  }
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: UploadedFile[] = [];
    const pending: Promise<void>[] = [];
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fileSize: maxFile } });
    } catch (err) {
      req.resume();
      reject(new ServiceError(500, `Invalid request: ${(err as Error).message}`));
      return;
    }
    bb.on('field', (name, value) => {
      fields[name] = value;
    });
    bb.on('file', (field, stream, info) => {
      // busboy truncates a file at the limit and keeps draining the request, so the answer is never stalled.
      let truncated = false;
      stream.on('limit', () => {
        truncated = true;
      });
      pending.push(
        blobs.put(stream).then(async (b) => {
          if (truncated) {
            await blobs.remove(b.id);
            throw new Error(`file "${info.filename}" exceeds the size limit of ${maxFile} bytes`);
          }
          files.push({
            field,
            fileName: info.filename || 'file',
            mimeType: info.mimeType || 'application/octet-stream',
            blob: b.id,
            size: b.size,
            sha256: b.sha256,
          });
        }),
      );
    });
    bb.on('error', (err) =>
      reject(new ServiceError(500, `Invalid request: malformed multipart body (${(err as Error).message})`)),
    );
    bb.on('close', () => {
      Promise.all(pending)
        .then(() => resolve({ fields, files }))
        .catch(async (err) => {
          for (const f of files) await blobs.remove(f.blob);
          reject(new ServiceError(500, `Invalid request: ${(err as Error).message}`));
        });
    });
    req.on('aborted', () => reject(new ServiceError(500, 'request aborted')));
    req.pipe(bb);
  });
}

const REPO_ERRORS: Record<number, string> = {
  400: 'org.edu_sharing.restservices.DAOValidationException',
  403: 'org.edu_sharing.restservices.DAOSecurityException',
  404: 'org.edu_sharing.restservices.DAOMissingException',
  409: 'org.edu_sharing.restservices.DAODuplicateNodeNameException',
  415: 'org.edu_sharing.restservices.DAOMimetypeVerificationException',
  422: 'org.edu_sharing.restservices.DAOVirusDetectedException',
  503: 'org.edu_sharing.restservices.DAOQuotaException',
};

/**
 * Error bodies (the spec leaves them open; see the package README):
 * - test management: `{"message": "...", "field"?: "..."}`, or plain text for the operations that answer so;
 * - Jira platform: `{"errorMessages": ["..."], "errors": {}}`;
 * - content repository: edu-sharing's `{"error": "<exception class>", "message": "...", ...}`.
 */
function sendError(
  res: ServerResponse,
  service: Service,
  op: OperationDef | undefined,
  err: ServiceError,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  let status = err.status;
  let text: string;
  let type = 'application/json;charset=UTF-8';
  if (service === 'repo') {
    if (status === 500 && err.options.field !== undefined) status = 400;
    text = JSON.stringify({
      error: err.options.error ?? REPO_ERRORS[status] ?? 'java.lang.RuntimeException',
      message: err.message,
      logLevel: 'INFO',
      stacktraceArray: null,
      details: {},
    });
  } else if (service === 'jira') {
    if (status === 500 && err.options.field !== undefined) status = 400;
    text = JSON.stringify({
      errorMessages: [err.message],
      errors: err.options.field ? { [err.options.field]: err.message } : {},
    });
  } else if ((op?.textErrors || err.options.text) && status === 500) {
    text = err.message;
    type = 'text/plain;charset=UTF-8';
  } else {
    text = JSON.stringify(
      err.options.field ? { message: err.message, field: err.options.field } : { message: err.message },
    );
  }
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

export { openSession };
