import { setMaxListeners } from 'node:events';
import * as z from 'zod';
import { isMultipart, type OperationDef, type UploadOperationDef } from '../contract/define.js';
import {
  Authenticator,
  type AuthOptions,
  authSchema,
  looksLikePersonalAccessToken,
  TOKEN_AS_PASSWORD,
} from './auth.js';
import {
  AbortedError,
  CaptchaError,
  ConfigError,
  captchaChallenge,
  excerpt,
  ForbiddenError,
  HttpError,
  InputError,
  NotFoundError,
  type RequestInfo,
  ResponseShapeError,
  serverMessage,
  UnauthorizedError,
  ValidationError,
} from './errors.js';
import { type FileInput, formData } from './multipart.js';
import { registerSecret } from './secrets.js';
import { Transport, type TransportOptions, type TransportRequest, type TransportResponse } from './transport.js';

/** Options common to every client. */
export interface ClientOptions extends Omit<TransportOptions, 'baseUrl'> {
  /** The service's base URL: the Jira base URL, or the content repository's origin. */
  baseUrl: string;
  auth: AuthOptions;
  /** API prefix after the base URL; each client has the real product's default. */
  prefix?: string;
}

/** Client timeouts per request, ms (defaults: connect 10 s, headers 30 s, body 60 s). */
export const timeoutsSchema = z.strictObject({
  connectMs: z.number().int().positive().optional(),
  headersMs: z.number().int().positive().optional(),
  bodyMs: z.number().int().positive().optional(),
});

const clientOptionsSchema = z.strictObject({
  baseUrl: z.string().min(1),
  auth: authSchema,
  prefix: z
    .string()
    .regex(/^(\/[^/?#]+)*$/, 'expected a path such as /rest/synapse/latest/public (leading slash, no trailing slash)')
    .optional(),
  timeouts: timeoutsSchema.optional(),
  retry: z
    .strictObject({
      retries: z.number().int().min(0).max(20).optional(),
      baseDelayMs: z.number().int().min(0).optional(),
      maxDelayMs: z.number().int().min(0).optional(),
      maxRetryAfterMs: z.number().int().min(0).optional(),
      serverErrorRetries: z.number().int().min(0).max(20).optional(),
    })
    .optional(),
  concurrency: z.number().int().min(1).max(64).optional(),
  requestsPerSecond: z.number().positive().optional(),
  proxy: z.string().min(1).optional(),
  caFile: z.string().min(1).optional(),
  rejectUnauthorized: z.boolean().optional(),
  userAgent: z.string().optional(),
  maxResponseBytes: z.number().int().positive().optional(),
  logger: z.function().optional(),
  dispatcher: z.custom<object>((v) => typeof v === 'object' && v !== null).optional(),
  random: z.function().optional(),
  sleep: z.function().optional(),
});

/** Validates client options; the error names each wrong or unknown key and never echoes a secret. */
export function parseClientOptions(options: unknown): ClientOptions {
  if (options && typeof options === 'object') {
    const auth = (options as { auth?: Record<string, unknown> }).auth;
    if (auth && typeof auth === 'object') {
      for (const k of ['password', 'token', 'ticket']) if (typeof auth[k] === 'string') registerSecret(auth[k]);
    }
  }
  const parsed = clientOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const where = i.path.length ? i.path.join('.') : '(options)';
      if (i.code === 'unrecognized_keys') return `${where}: unknown key(s) ${i.keys.join(', ')}`;
      return `${where}: ${i.message}`;
    });
    throw new ConfigError(`Invalid client options:\n  ${lines.join('\n  ')}`);
  }
  return options as ClientOptions;
}

/** Types of a call's input and output, derived from the contract. */

type Simplify<T> = { [K in keyof T]: T[K] } & {};
/** A schema slot that the operation leaves empty is typed with the bare `z.ZodType` default. */
type IsUnset<T> = z.ZodType extends T ? true : false;
/** Path and query values travel as text: a number is accepted wherever the contract reads a string. */
type Textual<T> = { [K in keyof T]: T[K] extends string ? T[K] | number : T[K] };
type ObjectPart<T> = IsUnset<T> extends true ? unknown : T extends z.ZodType ? Textual<z.input<T>> : unknown;
type BodyPart<T> =
  IsUnset<T> extends true
    ? unknown
    : T extends z.ZodObject
      ? z.input<T>
      : T extends z.ZodOptional<infer I extends z.ZodObject>
        ? z.input<I>
        : T extends z.ZodType
          ? undefined extends z.input<T>
            ? { body?: z.input<T> }
            : { body: z.input<T> }
          : unknown;

/** What a call takes: path and query parameters and the fields of an object body, flat; other bodies as `body`. */
export type InputOf<Op> =
  Op extends OperationDef<infer P, infer Q, infer B, z.ZodType>
    ? Simplify<ObjectPart<P> & ObjectPart<Q> & BodyPart<B>>
    : never;

/** What a call resolves to: the tolerant parse of the answer, or `undefined` for operations without a body. */
export type OutputOf<Op> =
  Op extends OperationDef<z.ZodType, z.ZodType, z.ZodType, infer R>
    ? IsUnset<R> extends true
      ? undefined
      : z.output<R>
    : never;

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Whether a 429/502/503/504 answer may be re-sent (default: always); a refused one fails at once, not retryable. */
  retryAnswer?: (answer: { status: number; headers: Record<string, string | string[] | undefined> }) => boolean;
  /** A long request (a bulk create): queued behind every other request, so reads and deliveries go first. */
  background?: boolean;
}

/** A method of a client group. Input is optional when the operation needs none. */
export type Method<Op> =
  Record<never, never> extends InputOf<Op>
    ? (input?: InputOf<Op>, options?: CallOptions) => Promise<OutputOf<Op>>
    : (input: InputOf<Op>, options?: CallOptions) => Promise<OutputOf<Op>>;

/** Upload methods take `file` (one or several) in addition to the operation's parameters. */
export type UploadMethod<Op> = (
  input: InputOf<Op> & { file: FileInput | readonly FileInput[] },
  options?: CallOptions,
) => Promise<OutputOf<Op>>;

/** The methods of a group: upload operations take files, the others their parameters. */
export type Methods<G> = { [K in keyof G]: G[K] extends UploadOperationDef ? UploadMethod<G[K]> : Method<G[K]> };

/** The fields of an object schema, looking through an optional wrapper (an optional object body is still flat). */
function shapeKeys(schema: unknown): string[] {
  const s = schema as { shape?: Record<string, unknown>; def?: { type?: string; innerType?: unknown } } | undefined;
  if (s?.def?.type === 'optional') return shapeKeys(s.def.innerType);
  return s?.shape ? Object.keys(s.shape) : [];
}

function firstIssue(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : '$';
  return { field, message: issue?.message ?? 'invalid' };
}

function encodeQuery(query: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    const values = Array.isArray(v) ? v : [v];
    for (const item of values) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(item))}`);
  }
  return parts.join('&');
}

/** Shared by the clients: input checked against the contract, auth, typed errors, the answer parsed tolerantly. */
export class ServiceClient {
  readonly transport: Transport;
  protected readonly authenticator: Authenticator;
  protected readonly prefix: string;
  /** Set by Jira's CAPTCHA challenge: every later call fails with it unsent, as each try is another failed login. */
  private captcha: CaptchaError | undefined;
  private readonly halt = new AbortController();

  constructor(
    options: ClientOptions,
    private readonly kind: 'tm' | 'repo' | 'jira' | 'codehost',
    defaultPrefix: string,
    obtain: (client: ServiceClient) => Promise<string>,
    ticketScheme = 'EDU-TICKET',
  ) {
    const o = parseClientOptions(options);
    // A personal access token as a password is refused before sending: one try already counts towards the CAPTCHA.
    if ((kind === 'tm' || kind === 'jira') && 'password' in o.auth && looksLikePersonalAccessToken(o.auth.password)) {
      throw new ConfigError(
        `Invalid client options:\n  auth.password: ${TOKEN_AS_PASSWORD}: use auth { type: 'bearer', token }`,
      );
    }
    this.transport = new Transport(o);
    this.prefix = o.prefix ?? defaultPrefix;
    this.authenticator = new Authenticator(o.auth, () => obtain(this), { ticket: ticketScheme, url: o.baseUrl });
    // Every call in the queue listens to it (10,000 queued calls are 10,000 listeners, removed as they finish).
    setMaxListeners(0, this.halt.signal);
  }

  /** Closes the connection pool. */
  async close(): Promise<void> {
    await this.transport.close();
  }

  /** Calls an operation of the contract. Prefer the typed group methods; this is what they use. */
  async call<Op extends OperationDef>(
    op: Op,
    input: Record<string, unknown> = {},
    options: CallOptions = {},
    prefix: string = this.prefix,
    authenticate = true,
  ): Promise<OutputOf<Op>> {
    if (this.captcha) throw this.captcha;
    const path0 = prefix + op.path;
    const info: RequestInfo = { operation: op.id, method: op.method, path: path0 };
    const { path, query, body } = await this.build(op, input, prefix, info);
    info.path = path;
    const { signal, release } = this.linked(options.signal);
    try {
      for (let renewed = false; ; renewed = true) {
        if (this.captcha) throw this.captcha;
        const auth = authenticate
          ? await this.authenticator.headers()
          : { headers: {}, generation: 0, cookies: this.authenticator.jar?.view() };
        const headers: Record<string, string> = { accept: 'application/json', ...auth.headers };
        if (this.kind === 'tm' && isMultipart(op.body)) headers['x-atlassian-token'] = 'no-check';
        let res: TransportResponse;
        try {
          res = await this.transport.send({
            operation: op.id,
            method: op.method,
            path,
            query,
            headers,
            body,
            creates: op.creates === true,
            signal,
            ...(options.background ? { background: true } : {}),
            retryAnswer: this.kind === 'repo' ? notFor500(options.retryAnswer) : options.retryAnswer,
            ...(auth.cookies ? { cookies: auth.cookies } : {}),
          });
        } catch (err) {
          // Cancelled by another call's CAPTCHA answer, not by the caller.
          if (this.captcha && err instanceof AbortedError && !options.signal?.aborted) throw this.captcha;
          throw err;
        }
        if (res.status === 401 && authenticate && !renewed && this.authenticator.renewable) {
          await this.authenticator.renew(auth.generation);
          continue;
        }
        return this.answer(op, res, { ...info, retries: res.retries }) as OutputOf<Op>;
      }
    } finally {
      release();
    }
  }

  /** The caller's signal joined with `halt`: a CAPTCHA answer cancels the calls still waiting to be sent. */
  private linked(outer: AbortSignal | undefined): { signal: AbortSignal; release: () => void } {
    const joined = new AbortController();
    const stop = () => joined.abort();
    if (outer?.aborted || this.halt.signal.aborted) joined.abort();
    outer?.addEventListener('abort', stop, { once: true });
    this.halt.signal.addEventListener('abort', stop, { once: true });
    return {
      signal: joined.signal,
      release: () => {
        outer?.removeEventListener('abort', stop);
        this.halt.signal.removeEventListener('abort', stop);
      },
    };
  }

  private async build(op: OperationDef, input: Record<string, unknown>, prefix: string, info: RequestInfo) {
    const paramKeys = shapeKeys(op.params);
    const queryKeys = shapeKeys(op.query);
    const params: Record<string, unknown> = {};
    const query: Record<string, unknown> = {};
    const rest: Record<string, unknown> = {};
    const text = (v: unknown) => (typeof v === 'number' || typeof v === 'bigint' ? String(v) : v);
    for (const [k, v] of Object.entries(input ?? {})) {
      if (paramKeys.includes(k)) params[k] = text(v);
      else if (queryKeys.includes(k)) query[k] = Array.isArray(v) ? v.map(text) : text(v);
      else rest[k] = v;
    }
    const check = (schema: z.ZodType | undefined, value: unknown, where: string) => {
      if (!schema) return;
      const r = schema.safeParse(value);
      if (!r.success) {
        const { field, message } = firstIssue(r.error);
        const name = where === 'body' && field === '$' ? 'body' : field;
        throw new InputError(`Invalid input for ${op.id}: ${name}: ${message}`, name, info);
      }
    };
    check(op.params, params, 'path');
    check(op.query, query, 'query');
    let path = prefix + op.path;
    for (const key of paramKeys) {
      const value = params[key];
      path = path.replace(`{${key}}`, encodeURIComponent(String(value)));
    }
    let body: TransportRequest['body'];
    if (isMultipart(op.body)) {
      const file = rest.file as FileInput | readonly FileInput[] | undefined;
      const files = file === undefined ? [] : Array.isArray(file) ? (file as FileInput[]) : [file as FileInput];
      if (files.length === 0) throw new InputError(`Invalid input for ${op.id}: file: expected a file`, 'file', info);
      let form: Awaited<ReturnType<typeof formData>>;
      try {
        form = await formData(op.body.fileFields[0] ?? 'file', files);
      } catch (err) {
        throw new InputError(
          `Invalid input for ${op.id}: file: ${err instanceof Error ? err.message : String(err)}`,
          'file',
          info,
        );
      }
      body = () => ({ data: form });
    } else if (op.body) {
      const schema = op.body as z.ZodType;
      const flat = shapeKeys(schema).length > 0 || (schema as { def?: { type?: string } }).def?.type === 'object';
      const value = flat ? rest : rest.body;
      check(schema, value, 'body');
      if (value !== undefined) {
        const json = JSON.stringify(value);
        body = () => ({ data: json, contentType: 'application/json', length: Buffer.byteLength(json) });
      }
    }
    return { path, query: encodeQuery(query), body };
  }

  /** Keeps the CAPTCHA error (naming the user and login page, never the password) and cancels the queued calls. */
  private stopForCaptcha(loginUrl: string | undefined, info: RequestInfo): CaptchaError {
    if (this.captcha) return this.captcha;
    const auth = this.authenticator.auth;
    const user = 'username' in auth ? auth.username : undefined;
    const url = loginUrl ?? `${this.transport.origin}${this.transport.basePath}/login.jsp`;
    const who = user ? `user ${user}` : 'the user of this token';
    this.captcha = new CaptchaError(
      `HTTP 403: Jira asks for a CAPTCHA after failed logins of ${who}: log in once in a browser at ${url} (then check the password or token casebridge is given); casebridge sends nothing more so as not to lock the account further`,
      info,
      user,
      url,
    );
    this.halt.abort();
    return this.captcha;
  }

  /** What a 401 means for the scheme in use, and which scheme to use instead. */
  private refusal(): string {
    const type = this.authenticator.auth.type;
    if (this.kind === 'repo') {
      return 'the content repository refused the credentials (check the user name and password, token or ticket)';
    }
    if (this.kind === 'codehost') return 'the code host refused the token (check it, its expiry and its scopes)';
    if (type === 'basic' || type === 'session') {
      const sent = type === 'basic' ? 'as Basic' : 'for a session';
      return `the user name and password sent ${sent} were refused. Check the password; a personal access token is not a password: it goes in token (auth { type: 'bearer', token }, CASEBRIDGE_TOKEN), since Jira refuses it as a password and counts each failed login towards the CAPTCHA`;
    }
    if (type === 'bearer') {
      return 'the token sent as Bearer was refused: it must be a personal access token of Jira 8.14 or later, not expired or revoked (a password goes in user and password instead)';
    }
    return 'the credentials were refused';
  }

  private answer(op: OperationDef, res: TransportResponse, info: RequestInfo): unknown {
    const status = res.status;
    // Built for an error only: a successful answer of 1,000 runs is not flattened and redacted for nothing.
    const detail = (): RequestInfo => ({ ...info, status, bodyExcerpt: excerpt(res.text) });
    if (status >= 200 && status < 300) {
      if (!op.response) return undefined;
      const type = String(res.headers['content-type'] ?? '');
      if (!/\S/.test(res.text)) {
        throw new ResponseShapeError(
          `${op.id}: expected a JSON body, got an empty answer (HTTP ${status})`,
          '$',
          detail(),
        );
      }
      let json: unknown;
      try {
        json = JSON.parse(res.text);
      } catch {
        const what =
          /html/i.test(type) || /^\s*</.test(res.text)
            ? `an HTML page (${serverMessage(res.text).replace(/^HTML page: /, '')})`
            : 'text that is not JSON';
        throw new ResponseShapeError(`${op.id}: expected JSON, got ${what}`, '$', detail());
      }
      const parsed = tolerant(op).safeParse(json);
      if (!parsed.success) {
        const { field, message } = firstIssue(parsed.error);
        throw new ResponseShapeError(
          `${op.id}: the answer does not have the documented shape at ${field}: ${message}`,
          field,
          detail(),
        );
      }
      return parsed.data;
    }
    const msg = serverMessage(res.text);
    const said = msg ? `: ${msg}` : '';
    if (status === 401) throw new UnauthorizedError(`HTTP 401: ${this.refusal()}${said}`, detail());
    const captcha = status === 403 ? captchaChallenge(res.headers) : undefined;
    if (captcha) throw this.stopForCaptcha(captcha.loginUrl, detail());
    if (status === 403) {
      const hint =
        this.kind === 'tm'
          ? 'the user is not allowed to do this, has no valid synapseRT licence, or the cycle is not Active'
          : 'the user is not allowed to do this';
      throw new ForbiddenError(`HTTP 403: ${hint}${said}`, detail());
    }
    if (status === 404) throw new NotFoundError(`HTTP 404: not found${said}`, detail());
    if (status === 400) {
      throw new ValidationError(`HTTP 400: the service refused the input${said}`, msg, detail());
    }
    if (status === 500 && (this.kind === 'tm' || this.kind === 'jira')) {
      // synapseRT answers 500 to validation errors and faults alike: retried unless it creates, then uncertain.
      const creates = op.creates === true;
      const attempts = (info.retries ?? 0) + 1;
      const why = creates ? '; it may have been applied, so it was not sent again)' : ')';
      const tries = !creates && attempts > 1 ? ` after ${attempts} attempts` : '';
      const message = `HTTP 500 (a refusal or an internal error of the service${why}${tries}${said}`;
      throw new ValidationError(message, msg, detail(), { uncertain: true, mayHaveApplied: creates });
    }
    throw new HttpError(`HTTP ${status}${said}`, detail(), false);
  }
}

/** The content repository's 500 ("file too large", or an error it will repeat) is not retried. */
function notFor500(
  inner: CallOptions['retryAnswer'],
): (res: { status: number; headers: Record<string, string | string[] | undefined> }) => boolean {
  return (res) => res.status !== 500 && inner?.(res) !== false;
}

const tolerantSchemas = new WeakMap<OperationDef, z.ZodType>();

/** An operation's tolerant response schema, built once: zod compiles an object's parser on its first use. */
function tolerant(op: OperationDef): z.ZodType {
  let schema = tolerantSchemas.get(op);
  if (!schema) {
    schema = (op.response as (mode: 'tolerant') => z.ZodType)('tolerant');
    tolerantSchemas.set(op, schema);
  }
  return schema;
}

/** Binds each operation of `group` to `client.call`: a bound function adds no stack frame (bench/frames.mjs). */
export function bindGroup<G extends Record<string, OperationDef>>(client: ServiceClient, group: G): Methods<G> {
  const out: Record<string, unknown> = {};
  for (const [name, op] of Object.entries(group)) out[name] = client.call.bind(client, op);
  return out as Methods<G>;
}
