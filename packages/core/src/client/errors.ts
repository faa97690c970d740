import { CasebridgeError, type RequestInfo, redactWith } from '../contract/errors.js';
import { redact } from './secrets.js';

/**
 * The client's errors, in the one family of casebridge: their base, `CasebridgeError`, is in the contract
 * (`contract/errors.ts`, which says what every one carries), so that the emulator, built from the contract alone,
 * raises errors of the family too. It is exported here as well, where the engine and the CLI have always found it.
 */

export {
  CasebridgeError,
  type CasebridgeErrorOptions,
  ERROR_BRAND,
  type ErrorKind,
  errorCodeOf,
  type RequestInfo,
} from '../contract/errors.js';

// The family's messages and paths are redacted with the client's secrets; every error class of the core and the
// CLI loads this module, so none is built before this line has run.
redactWith(redact);

const EXCERPT = 300;

export function excerpt(body: string | undefined): string | undefined {
  if (body === undefined) return undefined;
  // Only the head of a body of megabytes is read; secrets are removed before the cut, so none is shown in part.
  const head = body.length > EXCERPT * 8 ? body.slice(0, EXCERPT * 8) : body;
  const flat = redact(head).replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT || head !== body ? `${flat.slice(0, EXCERPT)}…` : flat;
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
