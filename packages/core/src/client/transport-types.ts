import type { Readable } from 'node:stream';
import type { Dispatcher, FormData } from 'undici';

/** The transport's options, requests and answers (public through `transport.ts`). */

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
  /**
   * Re-sends of a non-create after a 500 (a refusal or a fault: the client cannot tell) before an uncertain
   * ValidationError; a create is never re-sent. Default 2; at most `retries`.
   */
  serverErrorRetries?: number;
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
  /** The run's clock's pause (engine/kernel/clock.ts) for retries and the rate pacer; default the system's. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface TransportRequest {
  /** Contract operation id, for errors and logs. */
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path after the base URL, already encoded, without query. */
  path: string;
  /** Encoded query string without `?`, or empty. */
  query?: string;
  headers: Record<string, string>;
  /** Body factory, called once per attempt (a stream is consumed); `length` is needed only for a stream. */
  body?: () => { data: string | Buffer | Readable | FormData; contentType?: string; length?: number };
  /** The operation creates: after an ambiguous failure it is not re-sent (failures before sending still are). */
  creates: boolean;
  signal?: AbortSignal;
  /** Waits in the queue behind every request that is not (see CallOptions.background). */
  background?: boolean;
  /** The session's cookies: sent with each attempt and updated from each answer (a retried one's too). */
  cookies?: { header(): string | undefined; update(setCookie: string | readonly string[] | undefined): void };
  /** Whether a 429/5xx may be re-sent (default yes; a 500 only for non-creates); a refused one is returned at once. */
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
