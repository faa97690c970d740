import {
  AbortedError,
  AmbiguousError,
  excerpt,
  HttpError,
  NetworkError,
  RateLimitedError,
  type RequestInfo,
  TimeoutError,
} from './errors.js';
import { redactedMessage } from './secrets.js';
import { now } from './time.js';
import type { RetryOptions, TransportRequest, TransportResponse } from './transport-types.js';

/**
 * When a request is tried again; a create of unknown fate is never re-sent. Not cockatiel 3: its retry wait ignores
 * the AbortSignal (an aborted call would wait out a 60 s Retry-After).
 */

/** Codes of failures that happen before the request could reach the service: always safe to retry. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  // The proxy failed while opening the tunnel (see proxyPool in connection.ts).
  'UND_ERR_PRX_CONN',
]);

/** TLS verification failures: retrying cannot help. */
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

/**
 * Jira's 500 for a search past its result window (OpenSearch `max_result_window`, 10,000): it repeats, never re-sent.
 */
export function isResultWindowRefusal(text: string): boolean {
  return /search limit exceeded|max_result_window|result window/i.test(text.slice(0, 4000));
}

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

/** The status with which a proxy refused to open the tunnel, if that failed: the request never reached the service. */
function proxyRefusal(err: unknown): number | undefined {
  const m = /Proxy response \((\d{3})\) !== 200 when HTTP Tunneling|Proxy Authentication Required \((407)\)/.exec(
    err instanceof Error ? err.message : '',
  );
  return m ? Number(m[1] ?? m[2]) : undefined;
}

export class RetryPolicy {
  private readonly retry: Required<RetryOptions>;

  /** @param gaveUp called once with each error the policy gives up with, not with those it only passes on. */
  constructor(
    options: RetryOptions | undefined,
    private readonly random: (() => number) | undefined,
    private readonly gaveUp: (err: Error) => void,
  ) {
    const retries = options?.retries ?? 5;
    this.retry = {
      retries,
      baseDelayMs: options?.baseDelayMs ?? 250,
      maxDelayMs: options?.maxDelayMs ?? 15_000,
      maxRetryAfterMs: options?.maxRetryAfterMs ?? 60_000,
      serverErrorRetries: Math.min(retries, options?.serverErrorRetries ?? 2),
    };
  }

  /** Re-send on 429/502/503/504, or a 500 to a non-create within `serverErrorRetries`, unless the request refuses. */
  retriesAnswer(req: TransportRequest, res: TransportResponse, attempt: number, serverErrors: number): boolean {
    const candidate =
      res.status === 500
        ? !req.creates &&
          serverErrors <= this.retry.serverErrorRetries &&
          attempt < this.retry.retries &&
          !isResultWindowRefusal(res.text)
        : RETRY_STATUSES.has(res.status);
    return candidate && req.retryAnswer?.(res) !== false;
  }

  /** The wait before retrying a failed exchange, or throws the error to give up with. */
  afterFailure(req: TransportRequest, err: unknown, attempt: number, info: RequestInfo): number {
    if (req.signal?.aborted) throw new AbortedError(info);
    if (err instanceof HttpError || err instanceof NetworkError) throw err;
    const code = errorCode(err);
    const message = redactedMessage(err);
    if (code && TLS_CODES.has(code)) {
      throw this.giveUp(
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
      throw this.giveUp(
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
      throw this.giveUp(
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
        throw this.giveUp(new TimeoutError(`Timed out (${phase}) after ${attempt + 1} attempts`, phase, info));
      }
      throw this.giveUp(new NetworkError(`${message} after ${attempt + 1} attempts`, code, info));
    }
    return this.backoff(attempt);
  }

  /** The wait before retrying an answer `retriesAnswer` accepted, or throws the error to give up with. */
  afterAnswer(req: TransportRequest, res: TransportResponse, attempt: number, info: RequestInfo): number {
    // A transient internal error (a lock or database timeout) needs a moment: never re-sent at once.
    if (res.status === 500) return this.pause(attempt);
    const detail: RequestInfo = { ...info, status: res.status, bodyExcerpt: excerpt(res.text) };
    // A gateway error may come after the service applied the request; a 503 or 429 means it was refused.
    if (req.creates && (res.status === 502 || res.status === 504)) {
      throw this.giveUp(
        new AmbiguousError(
          `HTTP ${res.status} from a gateway: the request may or may not have been applied; it was not sent again`,
          `HTTP ${res.status}`,
          detail,
        ),
      );
    }
    const retryAfter = parseRetryAfter(res.headers['retry-after']);
    if (retryAfter !== undefined && retryAfter > this.retry.maxRetryAfterMs) {
      throw this.giveUp(
        new RateLimitedError(
          `HTTP ${res.status} with Retry-After ${Math.ceil(retryAfter / 1000)} s, longer than maxRetryAfterMs`,
          detail,
          retryAfter,
        ),
      );
    }
    if (attempt >= this.retry.retries) {
      if (res.status === 429) {
        throw this.giveUp(new RateLimitedError(`HTTP 429 after ${attempt + 1} attempts`, detail, retryAfter));
      }
      throw this.giveUp(new HttpError(`HTTP ${res.status} after ${attempt + 1} attempts`, detail, true));
    }
    if (retryAfter === undefined) return this.backoff(attempt);
    // Even `Retry-After: 0` gets the backoff's pause plus jitter, so a hundred clients do not return together.
    const spread = Math.floor((this.random ?? Math.random)() * this.retry.baseDelayMs);
    return Math.max(retryAfter + spread, this.pause(attempt));
  }

  private backoff(attempt: number): number {
    return backoffDelay(attempt, this.retry.baseDelayMs, this.retry.maxDelayMs, this.random);
  }

  private pause(attempt: number): number {
    return pauseDelay(attempt, this.retry.baseDelayMs, this.retry.maxDelayMs, this.random);
  }

  private giveUp(err: Error): Error {
    this.gaveUp(err);
    return err;
  }
}

/** The wait before retry number `attempt` (0-based), full jitter: uniform in [0, min(cap, base * 2^attempt)). */
function backoffDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random) {
  const bound = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * bound);
}

/** Equal jitter (at least half the bound): for a 500 or `Retry-After: 0`, where full jitter could re-send at once. */
function pauseDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random) {
  const bound = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(bound / 2 + (random() * bound) / 2);
}

/** A `Retry-After` header (seconds or an HTTP date) in milliseconds; undefined when absent or unparseable. */
function parseRetryAfter(value: string | string[] | undefined, from: number = now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const s = raw.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const at = Date.parse(s);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - from);
}
