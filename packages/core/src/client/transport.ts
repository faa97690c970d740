import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import PQueue from 'p-queue';
import type { Dispatcher } from 'undici';
import { backoffDelay, parseRetryAfter, sleep } from './backoff.js';
import {
  AbortedError,
  AmbiguousError,
  ConfigError,
  excerpt,
  HttpError,
  NetworkError,
  RateLimitedError,
  type RequestInfo,
  TimeoutError,
} from './errors.js';
import { redact, registerSecret, safeUrl } from './secrets.js';
import { buildProxyDispatcher, proxyFromEnv, undiciExchange } from './undici.js';

/**
 * The HTTP layer under both clients: one keep-alive pool per client, proxies and corporate CAs, timeouts, a
 * concurrency limit and optional rate cap, and retries that never re-send a create whose fate is unknown.
 */

export interface TimeoutOptions {
  /** TCP + TLS connect. Default 10 s. */
  connectMs?: number;
  /** From the request written to the response headers. Default 30 s. */
  headersMs?: number;
  /** Between body chunks of the response. Default 60 s. */
  bodyMs?: number;
}

export interface RetryOptions {
  /** Retries after the first attempt. Default 5. */
  retries?: number;
  /** Backoff base. Default 250 ms. */
  baseDelayMs?: number;
  /** Backoff cap. Default 15 s. */
  maxDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the call fails with RateLimitedError. Default 60 s. */
  maxRetryAfterMs?: number;
}

export interface TransportOptions {
  /** Origin (and optional base path) of the service, e.g. `https://jira.example.com` or `https://host/jira`. */
  baseUrl: string;
  timeouts?: TimeoutOptions;
  retry?: RetryOptions;
  /** Requests in flight at once. Default 4, which a Jira Data Center node tolerates beside its users. */
  concurrency?: number;
  /** Optional cap on requests started per second. */
  requestsPerSecond?: number;
  /** Explicit proxy URL (`http://user:pass@proxy:3128`); without it HTTPS_PROXY / HTTP_PROXY / NO_PROXY apply. */
  proxy?: string;
  /** PEM file of extra CA certificates (corporate CA); added to Node's roots and NODE_EXTRA_CA_CERTS. */
  caFile?: string;
  /** TLS verification; on unless explicitly turned off. */
  rejectUnauthorized?: boolean;
  userAgent?: string;
  /** Largest response body read, in bytes. Default 32 MiB. */
  maxResponseBytes?: number;
  /** Receives one line per retry and per give-up, secrets removed. */
  logger?: (level: 'debug' | 'warn', message: string) => void;
  /** Use this dispatcher instead of building one (tests, custom pools). */
  dispatcher?: Dispatcher;
  /** Random source for jitter (tests). */
  random?: () => number;
}

export interface TransportRequest {
  /** Contract operation id, for errors and logs. */
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path after the base URL, already encoded, without query. */
  path: string;
  /** Encoded query string without `?`, or empty. */
  query?: string;
  headers: Record<string, string>;
  /** Body factory, called once per attempt (streams are consumed). */
  body?: () => { data: string | Buffer | Readable; contentType: string; length?: number };
  /**
   * The operation creates something: after an ambiguous failure it is not re-sent (AmbiguousError instead).
   * Connection failures that happen before anything was sent are retried all the same.
   */
  creates: boolean;
  signal?: AbortSignal;
  /**
   * Whether a 429/502/503/504 answer may be sent again; default yes. An answer it refuses is returned as it came,
   * at once, for the client to turn into its typed error.
   */
  retryAnswer?: (res: TransportResponse) => boolean;
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  retries: number;
}

export interface TransportStats {
  /** HTTP exchanges started (attempts, including retries). */
  requests: number;
  retries: number;
  /** Calls that ended in an error after their retries. */
  failures: number;
}

/** Codes of failures that happen before the request could reach the service: always safe to retry. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  // The proxy failed while opening the tunnel (see proxyPool).
  'UND_ERR_PRX_CONN',
]);

/** TLS verification failures: retrying cannot help; the message says how to fix it. */
const TLS_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_UNTRUSTED',
]);

const RETRY_STATUSES = new Set([429, 502, 503, 504]);

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_ABORTED') return code;
    e = (e as { cause?: unknown }).cause;
  }
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The status with which a proxy refused to open the tunnel (undici's message), if that is what failed: the request
 * never reached the service.
 */
function proxyRefusal(err: unknown): number | undefined {
  const m = /Proxy response \((\d{3})\) !== 200 when HTTP Tunneling|Proxy Authentication Required \((407)\)/.exec(
    err instanceof Error ? err.message : '',
  );
  return m ? Number(m[1] ?? m[2]) : undefined;
}

function errorMessage(err: unknown): string {
  return redact(err instanceof Error ? err.message : String(err));
}

/** What both connection paths verify the server with. */
export interface TlsSettings {
  ca?: string[];
  rejectUnauthorized: boolean;
}

/** The CA bundle (caFile added to Node's roots) and verification setting; warns when verification is off. */
function tlsSettings(o: TransportOptions): TlsSettings {
  let ca: string[] | undefined;
  if (o.caFile) {
    let pem: string;
    try {
      pem = readFileSync(o.caFile, 'utf8');
    } catch (err) {
      throw new ConfigError(`caFile ${o.caFile} cannot be read: ${errorMessage(err)}`);
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new ConfigError(`caFile ${o.caFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    }
    // Giving `ca` replaces Node's roots (and NODE_EXTRA_CA_CERTS): add them back so public hosts still verify.
    const extra = process.env.NODE_EXTRA_CA_CERTS;
    let extraPem: string[] = [];
    if (extra) {
      try {
        extraPem = [readFileSync(extra, 'utf8')];
      } catch {
        extraPem = [];
      }
    }
    ca = [...rootCertificates, ...extraPem, pem];
  }
  if (o.rejectUnauthorized === false) {
    // Only on explicit request, and never silently: anyone on the path could read the credentials.
    const message = `casebridge: TLS certificate verification is OFF for ${safeUrl(o.baseUrl)} (rejectUnauthorized: false); give the CA with caFile instead`;
    process.emitWarning(message, { code: 'CASEBRIDGE_TLS_UNVERIFIED' });
    o.logger?.('warn', message);
  }
  return { ...(ca ? { ca } : {}), rejectUnauthorized: o.rejectUnauthorized !== false };
}

/** A response whose body is still to be read. */
interface OpenResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Buffer> & { destroy(): void };
}

type Exchange = (
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string | Buffer | Readable; signal?: AbortSignal },
) => Promise<OpenResponse>;

const failure = (code: string, message: string) => Object.assign(new Error(message), { code });

/**
 * A direct connection on `node:http` / `node:https` with a keep-alive agent, and undici's three timeouts with
 * undici's error codes (the retry policy reads them): connect, headers (from the request's last byte to the answer's
 * headers) and body (the longest silence while a body is sent or read).
 */
function nodeExchange(agents: { http: HttpAgent; https: HttpsAgent }, t: Required<TimeoutOptions>): Exchange {
  return (url, init) =>
    new Promise<OpenResponse>((resolve, reject) => {
      const secure = url.protocol === 'https:';
      let timer: NodeJS.Timeout | undefined;
      let connected = false;
      let sent = false;
      let answered = false;
      const stop = () => {
        clearTimeout(timer);
        timer = undefined;
      };
      const req = (secure ? httpsRequest : httpRequest)(url, {
        method: init.method,
        headers: init.headers,
        agent: secure ? agents.https : agents.http,
        ...(init.signal ? { signal: init.signal } : {}),
      });
      const waitForHeaders = () => {
        if (!connected || !sent || answered) return;
        req.setTimeout(0);
        stop();
        timer = setTimeout(
          () => req.destroy(failure('UND_ERR_HEADERS_TIMEOUT', `No answer within ${t.headersMs} ms`)),
          t.headersMs,
        );
      };
      req.on('socket', (socket) => {
        const ready = () => {
          stop();
          connected = true;
          // While the body goes out: the longest silence allowed.
          req.setTimeout(t.bodyMs);
          waitForHeaders();
        };
        if (!socket.connecting) return ready();
        timer = setTimeout(
          () => req.destroy(failure('UND_ERR_CONNECT_TIMEOUT', `Could not connect within ${t.connectMs} ms`)),
          t.connectMs,
        );
        socket.once(secure ? 'secureConnect' : 'connect', ready);
      });
      req.on('finish', () => {
        sent = true;
        waitForHeaders();
      });
      let response: IncomingMessage | undefined;
      req.on('timeout', () => {
        const err = failure('UND_ERR_BODY_TIMEOUT', `Nothing was sent or received for ${t.bodyMs} ms`);
        // Once answered, the error must reach whoever reads the body.
        if (response) response.destroy(err);
        else req.destroy(err);
      });
      req.on('error', (err) => {
        stop();
        if (!answered) reject(err);
      });
      req.on('response', (res) => {
        answered = true;
        response = res;
        stop();
        req.setTimeout(t.bodyMs);
        res.on('end', () => req.setTimeout(0));
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      const body = init.body;
      if (body === undefined) req.end();
      else if (typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
      else {
        body.once('error', (err) => req.destroy(err));
        body.pipe(req);
      }
    });
}

export class Transport {
  readonly stats: TransportStats = { requests: 0, retries: 0, failures: 0 };
  private readonly base: URL;
  private readonly exchangeWith: Exchange;
  private readonly closeConnections: () => Promise<void>;
  private readonly queue: PQueue;
  private readonly retry: Required<RetryOptions>;
  private readonly maxBytes: number;

  constructor(private readonly options: TransportOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new ConfigError(`baseUrl ${safeUrl(options.baseUrl)} is not a URL such as https://jira.example.com`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new ConfigError(`baseUrl must be http or https, got ${base.protocol}`);
    }
    if (base.username || base.password) {
      registerSecret(base.password);
      throw new ConfigError('baseUrl must not carry credentials; pass them as auth');
    }
    this.base = base;
    const t = options.timeouts ?? {};
    const timeouts = { connectMs: t.connectMs ?? 10_000, headersMs: t.headersMs ?? 30_000, bodyMs: t.bodyMs ?? 60_000 };
    const tls = tlsSettings(options);
    if (options.dispatcher || options.proxy || proxyFromEnv().length > 0) {
      // Proxies (and a dispatcher given by the caller) go through undici, loaded only for them.
      const own = !options.dispatcher;
      const dispatcher =
        options.dispatcher ??
        buildProxyDispatcher({ proxy: options.proxy, concurrency: options.concurrency, timeouts, tls });
      this.exchangeWith = (url, init) => undiciExchange(dispatcher, url.href, init);
      this.closeConnections = async () => {
        if (own) await dispatcher.close();
      };
    } else {
      const sockets = {
        keepAlive: true,
        maxSockets: Math.max(1, options.concurrency ?? 4) * 2,
        // How long an idle connection is kept; shorter when the server announces a shorter Keep-Alive timeout.
        timeout: 30_000,
        scheduling: 'lifo' as const,
      };
      const agents = { http: new HttpAgent(sockets), https: new HttpsAgent({ ...sockets, ...tls }) };
      this.exchangeWith = nodeExchange(agents, timeouts);
      this.closeConnections = async () => {
        agents.http.destroy();
        agents.https.destroy();
      };
    }
    const rps = options.requestsPerSecond;
    // A sliding window (`strict`): fixed windows let twice the cap start around a window's edge. The interval is
    // stretched so that a fractional rate (0.5, 2.5) is kept as given rather than rounded up to a whole one.
    const cap = rps && rps > 0 ? Math.max(1, Math.floor(rps)) : 0;
    this.queue = new PQueue({
      concurrency: Math.max(1, options.concurrency ?? 4),
      ...(rps && rps > 0 ? { intervalCap: cap, interval: Math.round((1000 * cap) / rps), strict: true } : {}),
    });
    this.retry = {
      retries: options.retry?.retries ?? 5,
      baseDelayMs: options.retry?.baseDelayMs ?? 250,
      maxDelayMs: options.retry?.maxDelayMs ?? 15_000,
      maxRetryAfterMs: options.retry?.maxRetryAfterMs ?? 60_000,
    };
    this.maxBytes = options.maxResponseBytes ?? 32 * 1024 * 1024;
  }

  /** Base path of the service (without trailing slash), prepended to every request path. */
  get basePath(): string {
    return this.base.pathname.replace(/\/+$/, '');
  }

  get origin(): string {
    return this.base.origin;
  }

  /** Sends one request with retries; resolves with any final HTTP answer, rejects with a typed error. */
  async send(req: TransportRequest): Promise<TransportResponse> {
    const info: RequestInfo = { operation: req.operation, method: req.method, path: this.basePath + req.path };
    for (let attempt = 0; ; attempt += 1) {
      info.retries = attempt;
      if (req.signal?.aborted) throw new AbortedError(info);
      let outcome: { res: TransportResponse } | { err: unknown };
      const started = Date.now();
      try {
        outcome = { res: await this.queue.add(() => this.exchange(req), { signal: req.signal }) };
      } catch (err) {
        outcome = { err };
      }
      if ('err' in outcome) {
        const delay = this.failureDelay(req, outcome.err, attempt, info);
        this.log('debug', `${req.method} ${info.path}: ${errorMessage(outcome.err)}; retry in ${delay} ms`);
        this.stats.retries += 1;
        await this.pause(delay, req, info);
        continue;
      }
      const res = outcome.res;
      res.retries = attempt;
      this.log('debug', `${req.method} ${info.path} -> HTTP ${res.status} in ${Date.now() - started} ms`);
      if (!RETRY_STATUSES.has(res.status) || req.retryAnswer?.(res) === false) return res;
      const delay = this.statusDelay(req, res, attempt, info);
      this.log('debug', `${req.method} ${info.path}: HTTP ${res.status}; retry in ${delay} ms`);
      this.stats.retries += 1;
      await this.pause(delay, req, info);
    }
  }

  /** Closes the pool (waits for requests in flight). */
  async close(): Promise<void> {
    await this.queue.onIdle();
    await this.closeConnections();
  }

  private async pause(ms: number, req: TransportRequest, info: RequestInfo): Promise<void> {
    try {
      await sleep(ms, req.signal);
    } catch {
      throw new AbortedError(info);
    }
  }

  /** The wait before retrying a failed exchange, or throws the error to give up with. */
  private failureDelay(req: TransportRequest, err: unknown, attempt: number, info: RequestInfo): number {
    if (req.signal?.aborted) throw new AbortedError(info);
    if (err instanceof HttpError || err instanceof NetworkError) throw err;
    const code = errorCode(err);
    const message = errorMessage(err);
    const fail = (e: Error) => {
      this.stats.failures += 1;
      this.log('warn', e.message);
      return e;
    };
    if (code && TLS_CODES.has(code)) {
      throw fail(
        new NetworkError(
          `TLS: the server's certificate is not trusted (${code}). Give its CA with the caFile option or NODE_EXTRA_CA_CERTS`,
          code,
          info,
          false,
        ),
      );
    }
    const refused = proxyRefusal(err);
    if (refused === 407) {
      throw fail(
        new NetworkError(
          'The proxy refused its credentials (407 Proxy Authentication Required). Check the user name and password in the proxy option or HTTPS_PROXY / HTTP_PROXY',
          'PROXY_AUTHENTICATION_REQUIRED',
          info,
          false,
        ),
      );
    }
    const notSent = refused !== undefined || (code !== undefined && NOT_SENT.has(code));
    if (!notSent && req.creates) {
      throw fail(
        new AmbiguousError(
          `The request may or may not have been applied (${code ?? message}); it was not sent again. Read the service's state before retrying`,
          code ?? 'unknown',
          info,
        ),
      );
    }
    if (attempt >= this.retry.retries) {
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
        const phase =
          code === 'UND_ERR_CONNECT_TIMEOUT' ? 'connect' : code === 'UND_ERR_BODY_TIMEOUT' ? 'body' : 'headers';
        throw fail(new TimeoutError(`Timed out (${phase}) after ${attempt + 1} attempts`, phase, info));
      }
      throw fail(new NetworkError(`${message} after ${attempt + 1} attempts`, code, info));
    }
    return backoffDelay(attempt, this.retry.baseDelayMs, this.retry.maxDelayMs, this.options.random);
  }

  /** The wait before retrying a 429/502/503/504 answer, or throws the error to give up with. */
  private statusDelay(req: TransportRequest, res: TransportResponse, attempt: number, info: RequestInfo): number {
    const detail: RequestInfo = { ...info, status: res.status, bodyExcerpt: excerpt(res.text) };
    const fail = (e: Error) => {
      this.stats.failures += 1;
      this.log('warn', e.message);
      return e;
    };
    // A gateway error may come after the service applied the request; a 503 or 429 means it was refused.
    if (req.creates && (res.status === 502 || res.status === 504)) {
      throw fail(
        new AmbiguousError(
          `HTTP ${res.status} from a gateway: the request may or may not have been applied; it was not sent again`,
          `HTTP ${res.status}`,
          detail,
        ),
      );
    }
    const retryAfter = parseRetryAfter(res.headers['retry-after']);
    if (retryAfter !== undefined && retryAfter > this.retry.maxRetryAfterMs) {
      throw fail(
        new RateLimitedError(
          `HTTP ${res.status} with Retry-After ${Math.ceil(retryAfter / 1000)} s, longer than maxRetryAfterMs`,
          detail,
          retryAfter,
        ),
      );
    }
    if (attempt >= this.retry.retries) {
      if (res.status === 429) {
        throw fail(new RateLimitedError(`HTTP 429 after ${attempt + 1} attempts`, detail, retryAfter));
      }
      throw fail(new HttpError(`HTTP ${res.status} after ${attempt + 1} attempts`, detail, true));
    }
    return retryAfter ?? backoffDelay(attempt, this.retry.baseDelayMs, this.retry.maxDelayMs, this.options.random);
  }

  /** One HTTP exchange: send, read the whole answer (bounded), never retry here. */
  private async exchange(req: TransportRequest): Promise<TransportResponse> {
    this.stats.requests += 1;
    const body = req.body?.();
    const headers: Record<string, string> = {
      'user-agent': this.options.userAgent ?? 'casebridge',
      ...req.headers,
    };
    if (body) {
      headers['content-type'] = body.contentType;
      if (body.length !== undefined) headers['content-length'] = String(body.length);
    }
    const url = new URL(`${this.base.origin}${this.basePath}${req.path}${req.query ? `?${req.query}` : ''}`);
    const res = await this.exchangeWith(url, {
      method: req.method,
      headers,
      ...(body ? { body: body.data } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > this.maxBytes) {
        res.body.destroy();
        throw new HttpError(
          `The response is larger than maxResponseBytes (${this.maxBytes})`,
          { operation: req.operation, method: req.method, path: this.basePath + req.path, status: res.status },
          false,
        );
      }
      chunks.push(chunk as Buffer);
    }
    return {
      status: res.status,
      headers: res.headers,
      text: Buffer.concat(chunks).toString('utf8'),
      retries: 0,
    };
  }

  private log(level: 'debug' | 'warn', message: string): void {
    this.options.logger?.(level, redact(message));
  }
}
