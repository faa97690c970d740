import * as z from 'zod';

/**
 * The contract: every operation of the services described once, as data, for the emulator, the client and the
 * OpenAPI document. Nothing else may restate a path, a body or a response shape.
 */

/** Which service an operation belongs to (each mounted under its own prefixes), the code hosts included. */
export type Service = 'tm' | 'repo' | 'jira' | 'bitbucket' | 'gitlab' | 'github';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * `id` / `ID`: the exact wire shape of that documented variant. `tolerant`: what a client accepts (either spelling,
 * any timestamp format, unknown fields kept), normalised to numeric `id`s and ISO 8601 timestamps.
 */
export type SchemaMode = 'id' | 'ID' | 'tolerant';

export const SERVICE_PREFIXES: Record<Service, readonly string[]> = {
  tm: ['/rest/synapse/latest/public', '/rest/svc/latest/public'],
  repo: ['/edu-sharing/rest', '/repo/rest'],
  jira: [''],
  // Full paths (`/rest/insights/...`, `/rest/build-status/...`): a client's base URL is the Bitbucket URL.
  bitbucket: [''],
  // Full paths (`/api/v4/...`): a client's base URL is CI_SERVER_URL.
  gitlab: [''],
  // Paths start at `/repos`: a client's base URL is GITHUB_API_URL, which ends in `/api/v3` on GitHub Enterprise
  // Server and is the host alone on api.github.com; the emulator serves both.
  github: ['/api/v3', ''],
};

/** A documented error answer of one operation. */
export interface ErrorDoc {
  status: number;
  when: string;
}

/** Multipart upload: the parts that carry files, by form field name. */
export interface MultipartBody {
  kind: 'multipart';
  /** Field names the server reads files from (the services use `file`). */
  fileFields: readonly string[];
}

export interface OperationDef<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  I extends string = string,
> {
  /** Stable id `group.name`: the client method `client.<group>.<name>` and the OpenAPI operationId. */
  id: I;
  service: Service;
  /** The group a user thinks in: plans, cycles, runs, cases, requirements, requirementSuites, testSuites, ... */
  group: string;
  method: HttpMethod;
  /** Path template after the service prefix, e.g. `/testPlan/{testPlanIssueKey}/cycles`. */
  path: string;
  summary: string;
  params?: P;
  query?: Q;
  /** JSON body schema, or a multipart description. */
  body?: B | MultipartBody;
  /** Response body schema for a mode; absent for a bare 200 with no body. */
  response?: (mode: SchemaMode) => R;
  /** Documented error answers besides the conventions every operation shares. */
  errors: readonly ErrorDoc[];
  /** Error bodies of this operation are plain text (synapseRT answers some 500s that way). */
  textErrors?: boolean;
  /** The operation creates something: an ambiguous failure must not be blindly re-sent. */
  creates?: boolean;
  /** Variant that documents the operation (absent: both). */
  variants?: readonly ('id' | 'ID')[];
}

export function isMultipart(body: OperationDef['body']): body is MultipartBody {
  return typeof body === 'object' && body !== null && (body as MultipartBody).kind === 'multipart';
}

/**
 * An operation as an operation file writes it, each request schema as a function that builds it: building every
 * zod schema at load cost about 2.5 MB in each runner process, and a reporter uses about ten operations.
 */
export interface OperationSpec<
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  R extends z.ZodType,
  I extends string = string,
> extends Omit<OperationDef<P, Q, B, R, I>, 'params' | 'query' | 'body'> {
  params?: P | (() => P);
  query?: Q | (() => Q);
  body?: B | MultipartBody | (() => B | MultipartBody);
}

/** An upload operation's definition: its body is multipart. */
export interface UploadSpec<P extends z.ZodType, Q extends z.ZodType, R extends z.ZodType, I extends string>
  extends Omit<OperationSpec<P, Q, z.ZodType, R, I>, 'body'> {
  body: MultipartBody | (() => MultipartBody);
}

declare const uploadBrand: unique symbol;

/** An operation with a multipart body: its method takes `file` too. The mark is for the type checker only. */
export type UploadOperationDef<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  I extends string = string,
> = OperationDef<P, Q, z.ZodType, R, I> & { readonly [uploadBrand]: true };

/** Turns an operation file's definition into an {@link OperationDef}; its schemas are built when first read. */
export function defineOperation<P extends z.ZodType, Q extends z.ZodType, R extends z.ZodType, I extends string>(
  spec: UploadSpec<P, Q, R, I>,
): UploadOperationDef<P, Q, R, I>;
export function defineOperation<
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  R extends z.ZodType = z.ZodType,
  I extends string = string,
>(spec: OperationSpec<P, Q, B, R, I>): OperationDef<P, Q, B, R, I>;
export function defineOperation(spec: OperationSpec<z.ZodType, z.ZodType, z.ZodType, z.ZodType>): OperationDef {
  const { params, query, body, ...op } = spec;
  builtOnFirstRead(op, 'params', params);
  builtOnFirstRead(op, 'query', query);
  builtOnFirstRead(op, 'body', body);
  return op as OperationDef;
}

/** The group of an operation id: `plans` of `plans.addMembers`. */
type GroupOf<Id> = Id extends `${infer G}.${string}` ? G : never;

/** Operations keyed by group, then by the name after the group in their id: `groups.plans.addMembers`. */
export type Grouped<Op extends OperationDef> = {
  [G in GroupOf<Op['id']>]: { [O in Op as O['id'] extends `${G}.${infer N}` ? N : never]: O };
};

/** Groups operations by id (`plans.addMembers` → `plans` → `addMembers`), so an operation has one name everywhere. */
export function groupOperations<Op extends OperationDef>(ops: readonly Op[]): Grouped<Op> {
  const groups: Record<string, Record<string, OperationDef>> = {};
  for (const op of ops) {
    const dot = op.id.indexOf('.');
    const group = op.id.slice(0, dot);
    groups[group] ??= {};
    (groups[group] as Record<string, OperationDef>)[op.id.slice(dot + 1)] = op;
  }
  return groups as Grouped<Op>;
}

function builtOnFirstRead(target: object, key: string, given: unknown): void {
  if (given === undefined) return;
  if (typeof given !== 'function') {
    Object.defineProperty(target, key, { value: given, enumerable: true });
    return;
  }
  const build = given as () => unknown;
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value = build();
      Object.defineProperty(target, key, { value, enumerable: true, writable: false, configurable: false });
      return value;
    },
  });
}

/** A value built on the first call and returned by every later one: for schemas several operations share. */
export function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}

/*
 * The building blocks below are typed as the tolerant output, the shape code reads from the client; wire-mode
 * schemas only validate what the emulator sends, where the static type is unused.
 */

// ---------------------------------------------------------------------------------------------------------------
// Building blocks shared by the operation files.

/** An issue key such as `DEMO-12`. */
export const issueKey = z
  .string()
  .regex(/^[A-Z][A-Z0-9_]*-[1-9][0-9]*$/, 'expected an issue key such as DEMO-12 (project key, dash, number)');

/** A date `yyyy-mm-dd`. */
export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date yyyy-mm-dd');

/** Integer that a path or query string carries as text. */
export const intString = z.coerce.number().int();

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A moment as one variant writes `executionTimeStamp`: `legacy` `dd/Mon/yy h:mm AM/PM` (UTC), `iso`, `epoch` ms. */
export function formatTimestamp(ms: number, format: 'legacy' | 'iso' | 'epoch'): string | number {
  if (format === 'epoch') return ms;
  const d = new Date(ms);
  if (format === 'iso') return d.toISOString().replace('Z', '+0000');
  const h = d.getUTCHours();
  const dd = String(d.getUTCDate()).padStart(2, '0');
  const yy = String(d.getUTCFullYear() % 100).padStart(2, '0');
  const mm = String(d.getUTCMinutes()).padStart(2, '0');
  return `${dd}/${MONTHS[d.getUTCMonth()]}/${yy} ${h % 12 === 0 ? 12 : h % 12}:${mm} ${h < 12 ? 'AM' : 'PM'}`;
}

/** `dd-Mon-yyyy hh:mm:ss`, the `executionOn` string of some history variants. */
export function formatExecutionOn(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
}

const LEGACY_RE = /^(\d{1,2})\/([A-Za-z]{3})\/(\d{2}) (\d{1,2}):(\d{2}) ?([AaPp][Mm])$/;

/** Parses any of the three timestamp formats to epoch ms; `undefined` when it is none of them. */
export function parseTimestamp(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const s = value.trim();
  if (/^\d{10,}$/.test(s)) return Number(s);
  const legacy = LEGACY_RE.exec(s);
  if (legacy) {
    const [, dd, mon, yy, hh, mi, ampm] = legacy;
    const month = MONTHS.findIndex((m) => m.toLowerCase() === mon?.toLowerCase());
    if (month < 0) return undefined;
    let hour = Number(hh) % 12;
    if (ampm?.toUpperCase() === 'PM') hour += 12;
    return Date.UTC(2000 + Number(yy), month, Number(dd), hour, Number(mi));
  }
  // ISO 8601; `+0000` offsets (no colon) are valid ISO but not always accepted by Date.parse.
  const iso = s.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * A timestamp field. Wire modes accept the three documented formats; tolerant mode normalises to an ISO string.
 */
export function timestamp(mode: SchemaMode): z.ZodType<string> {
  const wire = z.union([z.string(), z.number().int()]);
  if (mode !== 'tolerant') return wire as unknown as z.ZodType<string>;
  return wire.transform((v, ctx) => {
    const ms = parseTimestamp(v);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: `unrecognised timestamp ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    return new Date(ms).toISOString();
  });
}

/** Renames `ID` to `id` (when `id` is absent) and turns a numeric-string id into a number. */
function normaliseId(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const o = value as Record<string, unknown>;
  if (!('ID' in o) && typeof o.id !== 'string') return o;
  const { ID, ...rest } = o;
  const raw = rest.id ?? ID;
  const id = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
  return { ...rest, id };
}

/** An object with its identifier spelled per mode; wire modes strip unknown keys, tolerant mode keeps them. */
export function entity<S extends z.ZodRawShape>(
  mode: SchemaMode,
  shape: S,
): z.ZodType<{ id: number } & z.output<z.ZodObject<S>>> {
  type Out = z.ZodType<{ id: number } & z.output<z.ZodObject<S>>>;
  if (mode === 'id') return z.object({ id: z.number().int(), ...shape }) as unknown as Out;
  if (mode === 'ID') return z.object({ ID: z.number().int(), ...shape }) as unknown as Out;
  return z.preprocess(normaliseId, z.looseObject({ id: z.number().int(), ...shape })) as unknown as Out;
}

/** Plain object in wire modes, loose (unknown keys kept) in tolerant mode. */
export function obj<S extends z.ZodRawShape>(mode: SchemaMode, shape: S): z.ZodType<z.output<z.ZodObject<S>>> {
  return (mode === 'tolerant' ? z.looseObject(shape) : z.object(shape)) as unknown as z.ZodType<
    z.output<z.ZodObject<S>>
  >;
}

/** An integer that the tolerant client also accepts as a numeric string. */
export function int(mode: SchemaMode): z.ZodType<number> {
  return (mode === 'tolerant' ? z.coerce.number().int() : z.number().int()) as z.ZodType<number>;
}

/** Issue reference {id, key, summary}. */
export const issueRef = (mode: SchemaMode) => obj(mode, { id: int(mode), key: z.string(), summary: z.string() });

/** Attachment reference {id, fileName, mimeType, filePath?}. */
export const attachmentRef = (mode: SchemaMode) =>
  obj(mode, { id: int(mode), fileName: z.string(), mimeType: z.string(), filePath: z.string().optional() });

/** A bare 200 carries no body; the client resolves to `undefined`. */
export const NO_BODY = undefined;
