import { CasebridgeError, type RequestInfo, redactWith } from '../contract/errors.js';
import { redact } from './secrets.js';

/** The client's errors; their base `CasebridgeError` lives in the contract so the emulator raises the same family. */

export {
  CasebridgeError,
  type CasebridgeErrorOptions,
  ERROR_BRAND,
  type ErrorKind,
  errorCodeOf,
  type RequestInfo,
} from '../contract/errors.js';

// Redacts the family's messages with the client's secrets; every error class loads this module, so this runs first.
redactWith(redact);

const EXCERPT = 300;

export function excerpt(body: string | undefined): string | undefined {
  if (body === undefined) return undefined;
  // Only the head of a body of megabytes is read; secrets are removed before the cut, so none is shown in part.
  const head = body.length > EXCERPT * 8 ? body.slice(0, EXCERPT * 8) : body;
  const flat = redact(head).replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT || head !== body ? `${flat.slice(0, EXCERPT)}…` : flat;
}

/** Reading error answers: the service's own message whatever the body's shape, and Jira's CAPTCHA header. */

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Text of an HTML fragment: tags dropped, common entities decoded, whitespace folded. */
function htmlText(html: string): string {
  return html
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#\d+|[a-z]+);/gi, (m, e: string) =>
      e.startsWith('#') ? String.fromCharCode(Number(e.slice(1))) : (ENTITIES[e.toLowerCase()] ?? m),
    )
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The gist of an HTML error page (a servlet container's or a proxy's): its title or first heading, then a short start.
 */
function htmlMessage(html: string): string {
  const heading =
    htmlText(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? '') ||
    htmlText(/<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html)?.[1] ?? '');
  let text = htmlText(html);
  // The title usually opens the page's text as its first heading too.
  while (heading && text.startsWith(heading)) text = text.slice(heading.length).trim();
  const rest = text.length > 160 ? `${text.slice(0, 160)}…` : text;
  return redact(['HTML page', heading, rest].filter(Boolean).join(': '));
}

/** The service's own message in an error answer: JSON (Jira's or edu-sharing's fields), plain text or an HTML page. */
export function serverMessage(text: string): string {
  const t = text.trim();
  if (!t) return '';
  try {
    const j = JSON.parse(t) as Record<string, unknown>;
    const parts: string[] = [];
    if (typeof j.message === 'string' && j.message) parts.push(j.message);
    if (Array.isArray(j.errorMessages)) parts.push(...j.errorMessages.filter((m) => typeof m === 'string' && m));
    if (j.errors && typeof j.errors === 'object' && !Array.isArray(j.errors)) {
      for (const [k, v] of Object.entries(j.errors as Record<string, unknown>)) parts.push(`${k}: ${String(v)}`);
    }
    if (parts.length) return redact(parts.join('; '));
    if (typeof j.error === 'string') return redact(j.error);
    return excerpt(t) ?? '';
  } catch {
    // Not JSON: a plain-text message, or an HTML page from the servlet container or a proxy.
  }
  if (/^<(!doctype|html|head|body|\?xml)|<\/(html|body|h1|title)>/i.test(t)) return htmlMessage(t);
  return excerpt(t) ?? '';
}

/** Whether a 403 is Jira's CAPTCHA challenge (`X-Authentication-Denied-Reason: CAPTCHA_CHALLENGE; login-url=…`). */
export function captchaChallenge(
  headers: Record<string, string | string[] | undefined>,
): { loginUrl?: string } | undefined {
  const raw = headers['x-authentication-denied-reason'];
  const value = Array.isArray(raw) ? raw.join('; ') : (raw ?? '');
  if (!/\bCAPTCHA_CHALLENGE\b/i.test(value)) return undefined;
  const url = /login-url\s*=\s*([^;\s]+)/i.exec(value)?.[1];
  return url ? { loginUrl: url } : {};
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
 * 403 CAPTCHA_CHALLENGE: Jira refuses the user's logins until a browser login, and each try counts as another
 * failure, so the client sends nothing more. Kind `captcha`.
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
 * The service refused the input, or may have. A 400 is certain; synapseRT answers 500 to refusals and faults alike,
 * so a 500 is `uncertain` and `retryable`, and a create (sent once: `mayHaveApplied`) needs a read before a re-send.
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

/** A create that may have reached the service (a lost answer, 502/504): not re-sent; read the state to find out. */
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
