/**
 * The base of casebridge's one family of errors (docs/architecture.md), in the lowest layer so the emulator, built
 * from the contract alone, raises them too. Plain TypeScript: nothing imported, nothing of Node's.
 */

/** What happened, stable. `delivery/health.ts` gives each kind a verdict. */
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
  | 'missing-package'
  // The emulator's: an error answer of the fake service (with its HTTP status), a refused request to its admin API, a
  // field value Jira's create screen refuses. Each becomes an HTTP answer inside the emulator; none reaches the engine.
  | 'service'
  | 'admin'
  | 'refused';

/** `CASEBRIDGE_` and the kind in capitals, `-` as `_`: `not-found` is `CASEBRIDGE_NOT_FOUND`. */
export const errorCodeOf = (kind: ErrorKind): string => `CASEBRIDGE_${kind.toUpperCase().replaceAll('-', '_')}`;

/** The family's brand: `Symbol.for` gives every copy of the core in the process the same symbol. */
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

export interface CasebridgeErrorOptions {
  /** The process exits with this code when the CLI stops on the error (a usage error exits 2). */
  exitCode?: number;
  /** What caused it, as `Error.cause` (not in `toJSON`: it may hold what was not redacted). */
  cause?: unknown;
  /**
   * `false`: the message and path kept as given. For the emulator only: a real service does not redact its answers
   * either, and the client's redaction of them is what the tests check.
   */
  redact?: false;
}

/**
 * Removes secrets from a message and a path. The secrets are the client's, a layer above, so `client/errors.ts`
 * hands its `redact` down when it loads; the contract alone (the emulator) keeps text as it is.
 */
let redactText: (text: string) => string = (text) => text;

/** For `client/errors.ts` only (not exported by the contract entry): see redactText. */
export function redactWith(redact: (text: string) => string): void {
  redactText = redact;
}

const keep = (text: string): string => text;

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
    const redact = options.redact === false ? keep : redactText;
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
   * True for an instance by prototype, or for a branded error whose chain has a class of X's name: errors of another
   * copy of the core (CommonJS beside ESM, another version) still match. A subclass's name must be unique.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the class right of `instanceof`, a subclass as often as the base.
    return isFamilyInstance(this, value);
  }

  /** A plain object for logs and journals: no stack, no cause, nothing unredacted (but see `redact: false`). */
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
