import { redact } from './secrets.js';

/**
 * The one family of errors in casebridge: the client's (below), the engine's (`engine/kernel/errors.ts`) and the CLI's
 * all extend `CasebridgeError`. (The emulator's do not: it is built from the contract alone, which sits below the
 * client, so that it cannot agree with a bug of the client's.) Every one carries
 * - `kind`: what happened, stable; callers and the engine's health decide on it (and on `retryable`), never on the
 *   message;
 * - `errorCode`: the same as a stable string for logs and other programs, `CASEBRIDGE_` and the kind in capitals
 *   (`CASEBRIDGE_NOT_FOUND`). Not `code`: a `NetworkError`'s `code` is the system's (`ECONNRESET`), as on Node's own
 *   errors, and a JUnit read error's `code` its reason;
 * - `retryable`, an optional `exitCode` (where the CLI exits with one) and, for a client call, the operation id,
 *   method and path (never a query string, header or body that could hold a secret), the status when there was an
 *   answer, and a short, redacted excerpt of the answer's body. The message is redacted too.
 *
 * `instanceof` holds across copies of the core in one process (its ESM and CommonJS builds, two versions in one
 * `node_modules`): see `CasebridgeError[Symbol.hasInstance]`.
 */

export type ErrorKind =
  // The client's.
  | 'input'
  | 'config'
  | 'unauthorized'
  | 'forbidden'
  | 'captcha'
  | 'not-found'
  | 'validation'
  | 'rate-limited'
  | 'http'
  | 'timeout'
  | 'network'
  | 'ambiguous'
  | 'aborted'
  | 'response-shape'
  // The engine's: a problem no retry heals (PermanentProblem), a base URL that is not Jira's (NotJiraError).
  | 'permanent'
  | 'not-jira'
  // The CLI's: wrong arguments, a cycle command, a JUnit file, a sync list, an optional package not installed.
  | 'usage'
  | 'cycle'
  | 'junit'
  | 'list'
  | 'missing-package';

/** `CASEBRIDGE_` and the kind in capitals, `-` as `_`: `not-found` is `CASEBRIDGE_NOT_FOUND`. */
export const errorCodeOf = (kind: ErrorKind): string => `CASEBRIDGE_${kind.toUpperCase().replaceAll('-', '_')}`;

/**
 * On every instance of the family, not enumerable. `Symbol.for` gives every copy of the core in the process the same
 * symbol, so a copy knows another copy's errors by it.
 */
export const ERROR_BRAND: unique symbol = Symbol.for('casebridge.error');

export interface RequestInfo {
  /** Contract operation id, e.g. `runs.update`. */
  operation?: string;
  method?: string;
  /** Path without query string, e.g. `/rest/synapse/latest/public/testRun/update`. */
  path?: string;
  status?: number;
  /** First 300 characters of the response body, secrets removed. */
  bodyExcerpt?: string;
  /** The request was retried this many times before the error. */
  retries?: number;
}

const EXCERPT = 300;

export function excerpt(body: string | undefined): string | undefined {
  if (body === undefined) return undefined;
  // Only the head of a body of megabytes is read; secrets are removed before the cut, so none is shown in part.
  const head = body.length > EXCERPT * 8 ? body.slice(0, EXCERPT * 8) : body;
  const flat = redact(head).replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT || head !== body ? `${flat.slice(0, EXCERPT)}…` : flat;
}

export interface CasebridgeErrorOptions {
  /** The process exits with this code when the CLI stops on the error (a usage error exits 2). */
  exitCode?: number;
  /** What caused it, as `Error.cause` (not in `toJSON`: it may hold what was not redacted). */
  cause?: unknown;
}

/** See `CasebridgeError[Symbol.hasInstance]`. */
function isFamilyInstance(cls: { name: string }, value: unknown): boolean {
  if (Function.prototype[Symbol.hasInstance].call(cls, value)) return true;
  if (typeof value !== 'object' || value === null || (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] !== true) {
    return false;
  }
  if (cls === CasebridgeError) return true;
  for (let p: object | null = Object.getPrototypeOf(value); p !== null; p = Object.getPrototypeOf(p)) {
    if (Object.hasOwn(p, 'constructor') && (p as { constructor: { name?: unknown } }).constructor.name === cls.name) {
      return true;
    }
  }
  return false;
}

export class CasebridgeError extends Error {
  readonly kind: ErrorKind;
  /** Stable: `CASEBRIDGE_` and the kind (see errorCodeOf). */
  readonly errorCode: string;
  /** Where the CLI exits on this error, the code it exits with. */
  readonly exitCode?: number;
  readonly operation?: string;
  readonly method?: string;
  readonly path?: string;
  readonly status?: number;
  readonly bodyExcerpt?: string;
  readonly retries?: number;
  /** Sending the same request again may succeed (the engine keeps the result on disk and tries later). */
  readonly retryable: boolean;

  constructor(
    kind: ErrorKind,
    message: string,
    info: RequestInfo = {},
    retryable = false,
    options: CasebridgeErrorOptions = {},
  ) {
    const where = info.operation
      ? ` [${info.operation} ${info.method ?? ''} ${info.path ?? ''}]`.replace(/ +]/, ']')
      : '';
    super(redact(`${message}${where}`), options.cause === undefined ? undefined : { cause: options.cause });
    Object.defineProperty(this, ERROR_BRAND, { value: true });
    this.name = new.target.name;
    this.kind = kind;
    this.errorCode = errorCodeOf(kind);
    if (options.exitCode !== undefined) this.exitCode = options.exitCode;
    this.operation = info.operation;
    this.method = info.method;
    this.path = info.path === undefined ? undefined : redact(info.path);
    this.status = info.status;
    this.bodyExcerpt = info.bodyExcerpt;
    this.retries = info.retries;
    this.retryable = retryable;
  }

  /**
   * `value instanceof X` for X the base or any class of the family: true when `value` is one by its prototype (the
   * usual test), or when it carries the brand (ERROR_BRAND) and, for a subclass, a class of X's name is on its
   * prototype chain. So an error raised by another copy of the core (the CommonJS build beside the ESM one, another
   * version) is still an instance of this copy's `ValidationError`; a plain `Error`, or an object that only forges
   * `name`, is not. Subclasses inherit this: a subclass's name must be unique in the family (the build keeps names).
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the class right of `instanceof`, a subclass as often as the base.
    return isFamilyInstance(this, value);
  }

  /** A plain object for logs and journals: no stack, no cause, nothing unredacted. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      kind: this.kind,
      errorCode: this.errorCode,
      ...(this.exitCode === undefined ? {} : { exitCode: this.exitCode }),
      message: this.message,
      operation: this.operation,
      method: this.method,
      path: this.path,
      status: this.status,
      bodyExcerpt: this.bodyExcerpt,
      retries: this.retries,
      retryable: this.retryable,
    };
  }
}

/** The call's input does not match the operation's schema; nothing was sent. */
export class InputError extends CasebridgeError {
  readonly field: string;
  constructor(message: string, field: string, info: RequestInfo) {
    super('input', message, info);
    this.field = field;
  }
}

/** The client's options are invalid. */
export class ConfigError extends CasebridgeError {
  constructor(message: string) {
    super('config', message);
  }
}

/** 401: the credentials were refused. */
export class UnauthorizedError extends CasebridgeError {
  constructor(message: string, info: RequestInfo) {
    super('unauthorized', message, info);
  }
}

/** 403: the user may not do this, or (test management) has no valid synapseRT licence. */
export class ForbiddenError extends CasebridgeError {
  constructor(message: string, info: RequestInfo, kind: 'forbidden' | 'captcha' = 'forbidden') {
    super(kind, message, info);
  }
}

/**
 * 403 with `X-Authentication-Denied-Reason: CAPTCHA_CHALLENGE`: after failed logins Jira wants the user to log in
 * once in a browser (and solve a CAPTCHA); until then it refuses every login of the user, right password or not, and
 * each further try counts as one more failed login. The client sends nothing more once it has seen one. Its kind is
 * `captcha`: a stop of its own (the fix is a browser login, not other credentials).
 */
export class CaptchaError extends ForbiddenError {
  constructor(
    message: string,
    info: RequestInfo,
    /** The user Jira asks to log in, when the credentials name one (none for a token). */
    readonly user: string | undefined,
    /** Where to log in: the header's `login-url`, or the base URL's `/login.jsp`. */
    readonly loginUrl: string,
  ) {
    super(message, info, 'captcha');
  }
}

/** 404: the object named by the path, query or body is not found. */
export class NotFoundError extends CasebridgeError {
  constructor(message: string, info: RequestInfo) {
    super('not-found', message, info);
  }
}

/**
 * The service refused the input, or may have: `serverMessage` is the service's own words, read from a JSON body
 * (`message`, Jira's `errorMessages` / `errors`), a plain-text body, or an HTML error page (its title or first
 * heading, tags stripped, short).
 *
 * - **HTTP 400** (Jira, the content repository; Jira's own validation errors are 400): a certain refusal.
 *   `uncertain: false`, `retryable: false`, `mayHaveApplied: false`.
 * - **HTTP 500** (test management, and Jira on the same server): synapseRT documents every 500 as "a validation error
 *   with input data or any unknown Internal Server Error", so a 500 is ambiguous: a refusal of this input, or a
 *   transient fault (a lock timeout, a node restarting, a search past the result window). `uncertain: true` and
 *   `retryable: true`: the caller keeps the data and may try again later, or splits a batch to find a refused item.
 *   A request that does not create was already sent `serverErrorRetries + 1` times with backoff (3 by default,
 *   `retries` in the message counts the re-sends); a request that creates was sent once and not again, since the
 *   write may have committed before the fault: `mayHaveApplied: true`, and the caller reads the service's state
 *   before sending it again.
 *
 * Message shape: `HTTP 500 (a refusal or an internal error of the service) after 3 attempts: <server message>`,
 * `HTTP 500 (a refusal or an internal error of the service; it may have been applied, so it was not sent again):
 * <server message>`, `HTTP 400: the service refused the input: <server message>`.
 */
export class ValidationError extends CasebridgeError {
  readonly serverMessage: string;
  /** A 500: a refusal or an internal error, the client cannot tell. False for a 400 (a certain refusal). */
  readonly uncertain: boolean;
  /** A create that answered 500: the write may have committed, so it was not re-sent. Read the state first. */
  readonly mayHaveApplied: boolean;
  constructor(
    message: string,
    serverMessage: string,
    info: RequestInfo,
    options: { uncertain?: boolean; mayHaveApplied?: boolean } = {},
  ) {
    const uncertain = options.uncertain ?? false;
    super('validation', message, info, uncertain);
    this.serverMessage = redact(serverMessage);
    this.uncertain = uncertain;
    this.mayHaveApplied = uncertain && options.mayHaveApplied === true;
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      serverMessage: this.serverMessage,
      uncertain: this.uncertain,
      mayHaveApplied: this.mayHaveApplied,
    };
  }
}

/** 429 after the retries, or a Retry-After longer than the client is allowed to wait. */
export class RateLimitedError extends CasebridgeError {
  readonly retryAfterMs?: number;
  constructor(message: string, info: RequestInfo, retryAfterMs?: number) {
    super('rate-limited', message, info, true);
    this.retryAfterMs = retryAfterMs;
  }
}

/** Any other non-success status (502/503/504 after the retries, 409, 415, ...). */
export class HttpError extends CasebridgeError {
  constructor(message: string, info: RequestInfo, retryable: boolean) {
    super('http', message, info, retryable);
  }
}

export type TimeoutPhase = 'connect' | 'headers' | 'body';

/** A timeout that left no doubt: nothing was applied (connect), or the operation is safe to repeat. */
export class TimeoutError extends CasebridgeError {
  constructor(
    message: string,
    readonly phase: TimeoutPhase,
    info: RequestInfo,
  ) {
    super('timeout', message, info, true);
  }
}

/** A connection-level failure (refused, reset, DNS, TLS). `code` is the system or undici code. */
export class NetworkError extends CasebridgeError {
  constructor(
    message: string,
    readonly code: string | undefined,
    info: RequestInfo,
    retryable = true,
  ) {
    super('network', message, info, retryable);
  }
}

/**
 * An operation that creates something failed after the request may have reached the service (timeout waiting for
 * the answer, connection reset after the request was written, 502/504 from a gateway). It may or may not have been
 * applied, so the client did not send it again: the caller must read the service's state to find out.
 */
export class AmbiguousError extends CasebridgeError {
  constructor(
    message: string,
    /** What happened: a timeout phase, an error code, or an HTTP status. */
    readonly reason: string,
    info: RequestInfo,
  ) {
    super('ambiguous', message, info, false);
  }
}

/** The caller's AbortSignal fired. */
export class AbortedError extends CasebridgeError {
  constructor(info: RequestInfo) {
    super('aborted', 'The request was aborted by the caller', info);
  }
}

/** The service answered 2xx with a body the client cannot understand. `field` names where (`$` for the root). */
export class ResponseShapeError extends CasebridgeError {
  readonly field: string;
  constructor(message: string, field: string, info: RequestInfo) {
    super('response-shape', message, info);
    this.field = field;
  }
}
