import PQueue from 'p-queue';
import { type Connection, openConnection, readText } from './connection.js';
import { AbortedError, ConfigError, type RequestInfo } from './errors.js';
import { RatePacer } from './rate-pacer.js';
import { RetryPolicy } from './retry-policy.js';
import { redact, redactedMessage, registerSecret, safeUrl } from './secrets.js';
import { now, pause } from './time.js';
import { tlsSettings } from './tls.js';
import type { TransportOptions, TransportRequest, TransportResponse, TransportStats } from './transport-types.js';

export type { TlsSettings } from './tls.js';
export type {
  RetryOptions,
  TimeoutOptions,
  TransportOptions,
  TransportRequest,
  TransportResponse,
  TransportStats,
} from './transport-types.js';

/** p-queue priorities: higher goes first. */
const FOREGROUND = 0;
const BACKGROUND = -1;

/**
 * The HTTP layer under both clients: a concurrency limit, a rate cap and retries that never re-send a create of
 * unknown fate. The pool is in connection.ts, the retry rules in retry-policy.ts.
 */
export class Transport {
  readonly stats: TransportStats = { requests: 0, retries: 0, failures: 0 };
  private readonly base: URL;
  private readonly connection: Connection;
  private readonly queue: PQueue;
  private readonly policy: RetryPolicy;
  private readonly maxBytes: number;
  /** Paces requests by the server's `X-RateLimit-*` headers (see rate-pacer.ts). */
  readonly pacer = new RatePacer();
  private readonly maxPaceMs: number;

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
    this.connection = openConnection(options, timeouts, tlsSettings(options));
    const rps = options.requestsPerSecond;
    // A sliding window (`strict`), as fixed windows let twice the cap through at an edge; the interval is stretched
    // so a fractional rate is kept as given.
    const cap = rps && rps > 0 ? Math.max(1, Math.floor(rps)) : 0;
    this.queue = new PQueue({
      concurrency: Math.max(1, options.concurrency ?? 4),
      ...(rps && rps > 0 ? { intervalCap: cap, interval: Math.round((1000 * cap) / rps), strict: true } : {}),
    });
    this.policy = new RetryPolicy(options.retry, options.random, (err) => {
      this.stats.failures += 1;
      this.log('warn', err.message);
    });
    this.maxBytes = options.maxResponseBytes ?? 32 * 1024 * 1024;
    // A bucket that refills hourly is not waited for: the request goes, and its 429's Retry-After decides.
    this.maxPaceMs = options.retry?.maxRetryAfterMs ?? 60_000;
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
    let serverErrors = 0;
    for (let attempt = 0; ; attempt += 1) {
      info.retries = attempt;
      if (req.signal?.aborted) throw new AbortedError(info);
      let outcome: { res: TransportResponse } | { err: unknown };
      const started = now();
      try {
        const release = await this.slot(req.signal, req.background === true);
        try {
          outcome = { res: await this.exchange(req, info) };
        } finally {
          release();
        }
      } catch (err) {
        outcome = { err };
      }
      if ('err' in outcome) {
        const delay = this.policy.afterFailure(req, outcome.err, attempt, info);
        this.log('debug', `${req.method} ${info.path}: ${redactedMessage(outcome.err)}; retry in ${delay} ms`);
        this.stats.retries += 1;
        await this.pause(delay, req, info);
        continue;
      }
      const res = outcome.res;
      res.retries = attempt;
      this.log('debug', `${req.method} ${info.path} -> HTTP ${res.status} in ${now() - started} ms`);
      if (res.status === 500) serverErrors += 1;
      if (!this.policy.retriesAnswer(req, res, attempt, serverErrors)) return res;
      const delay = this.policy.afterAnswer(req, res, attempt, info);
      this.log('debug', `${req.method} ${info.path}: HTTP ${res.status}; retry in ${delay} ms`);
      this.stats.retries += 1;
      await this.pause(delay, req, info);
    }
  }

  /** Closes the pool (waits for requests in flight). */
  async close(): Promise<void> {
    await this.queue.onIdle();
    await this.connection.close();
  }

  /**
   * Waits for a slot and returns its release; the request is sent from `send`, keeping the queue's frames off the
   * way to the socket. A background request (a bulk create holds its slot long) goes after all others waiting.
   */
  private slot(signal: AbortSignal | undefined, background: boolean): Promise<() => void> {
    return new Promise((granted, refused) => {
      let release = () => {};
      const held = new Promise<void>((done) => {
        release = done;
      });
      this.queue
        .add(
          () => {
            granted(release);
            return held;
          },
          { ...(signal ? { signal } : {}), priority: background ? BACKGROUND : FOREGROUND },
        )
        .catch(refused);
    });
  }

  private async pause(ms: number, req: TransportRequest, info: RequestInfo): Promise<void> {
    await (this.options.sleep ?? pause)(ms, req.signal);
    if (req.signal?.aborted) throw new AbortedError(info);
  }

  /** One exchange, never retried here; a rate-limit wait holds the slot, so the requests behind it keep their order. */
  private async exchange(req: TransportRequest, info: RequestInfo): Promise<TransportResponse> {
    const wait = Math.min(this.pacer.reserve(), this.maxPaceMs);
    let res: TransportResponse;
    try {
      if (wait > 0) {
        this.log('debug', `${req.method} ${info.path}: rate limit nearly reached; waiting ${wait} ms for the bucket`);
        await this.pause(wait, req, info);
      }
      this.stats.requests += 1;
      const body = req.body?.();
      const headers: Record<string, string> = {
        'user-agent': this.options.userAgent ?? 'casebridge',
        ...req.headers,
      };
      const cookie = req.cookies?.header();
      if (cookie) headers.cookie = cookie;
      if (body?.contentType) headers['content-type'] = body.contentType;
      if (body?.length !== undefined) headers['content-length'] = String(body.length);
      const url = new URL(`${this.base.origin}${this.basePath}${req.path}${req.query ? `?${req.query}` : ''}`);
      const open = await this.connection.exchange(url, {
        method: req.method,
        headers,
        ...(body ? { body: body.data } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
      });
      req.cookies?.update(open.headers['set-cookie']);
      // The request an answer too large names (send's `info` also counts retries).
      const read = { operation: req.operation, method: req.method, path: this.basePath + req.path };
      res = { status: open.status, headers: open.headers, text: await readText(open, this.maxBytes, read), retries: 0 };
    } catch (err) {
      this.pacer.release();
      throw err;
    }
    this.pacer.observe(res.headers);
    return res;
  }

  private log(level: 'debug' | 'warn', message: string): void {
    this.options.logger?.(level, redact(message));
  }
}
