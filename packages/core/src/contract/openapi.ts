import * as z from 'zod';
import { isMultipart, type OperationDef, SERVICE_PREFIXES, type Service } from './define.js';
// A cycle (index.ts re-exports this module): `operations` is only read when a document is built, never while the
// modules load, so the cycle is harmless and the operation list stays written in one place.
import { operations } from './index.js';

/**
 * The OpenAPI 3.1 document of both services, generated from the contract: nothing here restates a path, a body or
 * a response shape. Requests are documented from the input side of their zod schemas; responses document both
 * wire variants (`id` and `ID`) where they differ.
 */

/** A JSON value as the document holds it. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** The generated document: an OpenAPI 3.1 object (typed loosely, it is data for tools and Swagger UI). */
export interface OpenApiDocument {
  openapi: string;
  info: JsonObject;
  servers: JsonObject[];
  tags: JsonObject[];
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject>; securitySchemes: Record<string, JsonObject> };
  [extension: `x-${string}`]: Json;
}

export interface OpenApiOptions {
  /** Origin the services are reached at, e.g. `http://127.0.0.1:8990`; absent: server URLs are relative. */
  serverUrl?: string;
  /** Only the operations of these services (default: all). */
  services?: readonly Service[];
  /** The operations to document (default: the whole contract); tests pass their own. */
  operations?: readonly OperationDef[];
}

/** Version of the document; follows the casebridge package version. */
const DOCUMENT_VERSION = '0.1.0';

/** Extension on every operation: the contract operation ids it documents (two for a merged route). */
export const CONTRACT_OPERATIONS_KEY = 'x-contract-operations';

const SERVICE_TITLES: Record<Service, string> = {
  tm: 'Test management (synapseRT)',
  repo: 'Content repository (edu-sharing)',
  jira: 'Jira platform',
};

/** What each prefix of a service is (the first is the real product's). */
const PREFIX_NOTES: Record<string, string> = {
  '/rest/synapse/latest/public': 'synapseRT prefix',
  '/rest/svc/latest/public': 'prefix as the spec writes it ({PFX})',
  '/edu-sharing/rest': 'edu-sharing REST root',
  '/repo/rest': 'REST root as the spec writes it',
};

/**
 * Operations that answer without authentication (they report on or create the login itself). The emulator's
 * server keeps the same list; the contract has no field for it yet.
 */
const PUBLIC_OPERATIONS = new Set(['repo.validateSession', 'jira.login']);

const SAFE_INT = 9007199254740991;

/** Builds the document. Throws when two services would share a path (the contract must keep them apart). */
export function buildOpenApi(options: OpenApiOptions = {}): OpenApiDocument {
  const base = (options.serverUrl ?? '').replace(/\/+$/, '');
  const wanted = options.services ? new Set(options.services) : undefined;
  const ops = (options.operations ?? operations).filter((op) => !wanted || wanted.has(op.service));
  const schemas: Record<string, JsonObject> = { ...errorSchemas() };
  const paths: OpenApiDocument['paths'] = {};
  /** Path key and service by hierarchy (parameter names dropped). */
  const routes = new Map<string, { key: string; service: Service }>();
  const tags = new Map<string, JsonObject>();

  for (const group of routeGroups(ops)) {
    const first = group[0]!;
    const hierarchy = first.path.replace(/\{[^}]*\}/g, '{}');
    const route = routes.get(hierarchy) ?? { key: first.path, service: first.service };
    if (route.service !== first.service) {
      throw new Error(`OpenAPI: path ${first.path} is used by the ${route.service} and the ${first.service} services`);
    }
    routes.set(hierarchy, route);
    // OpenAPI forbids two templates that differ only in parameter names: such routes share the first one's key.
    const key = route.key;
    let item = paths[key];
    if (!item) {
      item = {};
      const prefixes = SERVICE_PREFIXES[first.service].filter((p) => p !== '');
      if (prefixes.length) {
        // One path item per route, the prefixes offered as its servers: Swagger UI shows each operation once, with
        // a server choice in "Try it out", instead of listing every operation twice.
        (item as Record<string, Json>).servers = prefixes.map((p) => ({
          url: `${base}${p}`,
          description: PREFIX_NOTES[p] ?? p,
        }));
      }
      paths[key] = item;
    }
    item[first.method.toLowerCase()] = operationObject(group, key, schemas);
    if (!tags.has(first.group)) {
      tags.set(first.group, { name: first.group, description: `${SERVICE_TITLES[first.service]}: ${first.group}` });
    }
  }

  const services = [...new Set(ops.map((op) => op.service))];
  return {
    openapi: '3.1.0',
    info: {
      title: 'casebridge: synapseRT test management, edu-sharing content repository, Jira platform subset',
      version: DOCUMENT_VERSION,
      description: infoDescription(services),
    },
    servers: [{ url: base || '/', description: 'the service host (the Jira platform paths are absolute)' }],
    tags: [...tags.values()],
    paths,
    components: { schemas, securitySchemes: securitySchemes() },
    'x-tagGroups': services.map((s) => ({
      name: SERVICE_TITLES[s],
      tags: [...new Set(ops.filter((op) => op.service === s).map((op) => op.group))],
    })),
  };
}

/**
 * Operations grouped by route (service, method, path). OpenAPI allows one operation per method and path, so the
 * two body forms of updateStep become one operation.
 */
function routeGroups(ops: readonly OperationDef[]): OperationDef[][] {
  const groups = new Map<string, OperationDef[]>();
  for (const op of ops) {
    const key = `${op.service} ${op.method} ${op.path}`;
    const g = groups.get(key);
    if (g) g.push(op);
    else groups.set(key, [op]);
  }
  return [...groups.values()];
}

function operationObject(group: OperationDef[], path: string, schemas: Record<string, JsonObject>): JsonObject {
  const first = group[0]!;
  const ids = group.map((op) => op.id);
  const merged = group.length > 1;
  const out: JsonObject = {
    operationId: first.id,
    summary: [...new Set(group.map((op) => op.summary))].join('; '),
    tags: [first.group],
    [CONTRACT_OPERATIONS_KEY]: ids,
  };
  const description = operationDescription(group);
  if (description) out.description = description;
  const parameters = [...pathParameters(group, path), ...queryParameters(group)];
  if (parameters.length) out.parameters = parameters;
  const body = requestBody(group, schemas);
  if (body) out.requestBody = body;
  out.responses = responses(group, schemas);
  out.security = security(first);
  if (group.some((op) => op.creates)) out['x-creates'] = true;
  const variants = [...new Set(group.flatMap((op): string[] => [...(op.variants ?? ['id', 'ID'])]))];
  if (variants.length === 1) out['x-variants'] = variants;
  if (merged) out['x-merged'] = true;
  return out;
}

function operationDescription(group: OperationDef[]): string {
  const first = group[0]!;
  const lines: string[] = [];
  if (group.length > 1) {
    lines.push(
      `One route, ${group.length} operations of the contract (${group.map((op) => `\`${op.id}\``).join(', ')}): ` +
        'the request body is `oneOf` their forms (one per operation, titled with its summary), and the service ' +
        'tells them apart by their fields.',
    );
  }
  const prefixes = SERVICE_PREFIXES[first.service].filter((p) => p !== '');
  if (prefixes.length > 1) {
    lines.push(`Served under ${prefixes.map((p) => `\`${p}\``).join(' and ')} (pick one under Servers).`);
  }
  const only = group.flatMap((op) => (op.variants && op.variants.length < 2 ? op.variants : []));
  if (only.length === group.length && only.length) {
    lines.push(`Documented by the \`${[...new Set(only)].join('`, `')}\` variant of the interface only.`);
  }
  if (group.some((op) => op.creates)) {
    lines.push(
      'Creates something: after an ambiguous failure (timeout, connection reset) check before sending it again.',
    );
  }
  if (group.some((op) => op.textErrors)) lines.push('Its 500 answers carry a plain-text body, not JSON.');
  if (PUBLIC_OPERATIONS.has(first.id)) lines.push('Answers without authentication too.');
  return lines.join('\n\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Parameters and bodies.

/** Properties and required names of an object-like JSON schema (branches of a union are merged). */
function objectParts(schema: JsonObject): { properties: Record<string, JsonObject>; required: Set<string> } {
  const branches = (schema.anyOf ?? schema.oneOf) as JsonObject[] | undefined;
  if (Array.isArray(branches)) {
    const parts = branches.map(objectParts);
    const properties = Object.assign({}, ...parts.map((p) => p.properties)) as Record<string, JsonObject>;
    // Required only when every branch requires it.
    const required = new Set([...(parts[0]?.required ?? [])].filter((n) => parts.every((p) => p.required.has(n))));
    return { properties, required };
  }
  return {
    properties: (schema.properties ?? {}) as Record<string, JsonObject>,
    required: new Set((schema.required ?? []) as string[]),
  };
}

/** Moves a schema's description onto the parameter (Swagger UI shows it there). */
function parameter(name: string, where: 'path' | 'query', schema: JsonObject, required: boolean): JsonObject {
  const { description, ...rest } = schema;
  const p: JsonObject = { name, in: where, required, schema: rest };
  if (typeof description === 'string') p.description = description;
  return p;
}

/**
 * The parameters of the path template `path` (the key of the route, whose parameter names may differ from an
 * operation's own: they are matched by position), typed by the contract where it types them.
 */
function pathParameters(group: OperationDef[], path: string): JsonObject[] {
  const names = templateNames(path);
  const props: Record<string, JsonObject> = {};
  for (const op of group) {
    if (!op.params) continue;
    const own = objectParts(jsonSchema(op.params, 'input', `${op.id}.params`).schema).properties;
    templateNames(op.path).forEach((name, i) => {
      const schema = own[name];
      const as = names[i];
      if (schema && as && !props[as]) props[as] = schema;
    });
  }
  return names.map((name) => parameter(name, 'path', props[name] ?? { type: 'string' }, true));
}

function queryParameters(group: OperationDef[]): JsonObject[] {
  const seen = new Map<string, JsonObject>();
  for (const op of group) {
    if (!op.query) continue;
    const { properties, required } = objectParts(jsonSchema(op.query, 'input', `${op.id}.query`).schema);
    for (const [name, schema] of Object.entries(properties)) {
      if (!seen.has(name)) seen.set(name, parameter(name, 'query', schema, required.has(name)));
    }
  }
  return [...seen.values()];
}

/** Names of the `{name}` segments of a path template, in order. */
export function templateNames(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
}

function requestBody(group: OperationDef[], schemas: Record<string, JsonObject>): JsonObject | undefined {
  const withBody = group.filter((op) => op.body !== undefined);
  if (!withBody.length) return undefined;
  const first = withBody[0]!;
  if (isMultipart(first.body)) {
    const fields = first.body.fileFields;
    const file: JsonObject = { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' };
    return {
      required: true,
      description:
        first.service === 'tm'
          ? `Multipart form data; the file goes in the part ${fields.map((f) => `\`${f}\``).join(', ')} (repeat the part for several files).`
          : `Multipart form data with one part ${fields.map((f) => `\`${f}\``).join(', ')} holding the file.`,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            properties: Object.fromEntries(fields.map((f) => [f, file])),
            required: [...fields],
          },
        },
      },
    };
  }
  const forms = withBody.map((op) => {
    const zod = op.body as z.ZodType;
    const name = `${op.id}.body`;
    const converted = jsonSchema(zod, 'input', name);
    Object.assign(schemas, converted.defs);
    let schema = converted.schema;
    // A recursive body refers to itself: it has to live in the components.
    if (JSON.stringify(schema).includes(`"#/components/schemas/${name}"`)) {
      schemas[name] = schema;
      schema = { $ref: `#/components/schemas/${name}` };
    }
    return { op, schema, optional: zod.safeParse(undefined).success };
  });
  const schema: JsonObject =
    forms.length === 1 ? forms[0]!.schema : { oneOf: forms.map((f) => ({ title: f.op.summary, ...f.schema })) };
  return { required: forms.every((f) => !f.optional), content: { 'application/json': { schema } } };
}

// ---------------------------------------------------------------------------------------------------------------
// Responses.

/** The success status an operation documents (`answers 201` in its summary), else 200. */
function successStatus(op: OperationDef): string {
  return /\banswers (2\d\d)\b/.exec(op.summary)?.[1] ?? '200';
}

/** The response schema of an operation: both wire variants as components, or one when they are identical. */
function responseSchema(op: OperationDef, schemas: Record<string, JsonObject>): JsonObject | undefined {
  const build = op.response;
  if (!build) return undefined;
  const variants = op.variants?.length ? op.variants : (['id', 'ID'] as const);
  const built = variants.map((v) => ({ v, ...jsonSchema(build(v), 'output', `${op.id}.response.${v}`) }));
  const store = (name: string, title: string, b: Converted) => {
    schemas[name] = { title, ...b.schema };
    Object.assign(schemas, b.defs);
    return { $ref: `#/components/schemas/${name}` };
  };
  if (new Set(built.map((b) => JSON.stringify(b.schema))).size === 1) {
    const only = built[0]!;
    if (variants.length === 1)
      return store(`${op.id}.response.${only.v}`, `${op.id} response (variant ${only.v})`, only);
    return store(
      `${op.id}.response`,
      `${op.id} response (both variants)`,
      jsonSchema(build(only.v), 'output', `${op.id}.response`),
    );
  }
  // anyOf, not oneOf: an answer such as an empty list is valid in both variants.
  return {
    anyOf: built.map((b) =>
      store(`${op.id}.response.${b.v}`, `${op.id} response (variant ${b.v}: identifiers spelled ${b.v})`, b),
    ),
  };
}

interface Answer {
  descriptions: string[];
  content?: JsonObject;
  headers?: JsonObject;
}

const json = (ref: string): JsonObject => ({ 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } });
const text = (): JsonObject => ({ 'text/plain': { schema: { type: 'string' } } });
const retryAfter = {
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } },
};

/** The error answers every operation of a service shares, by status. */
function conventions(op: OperationDef): Record<string, Answer> {
  const hasInput = op.params !== undefined || op.query !== undefined || op.body !== undefined;
  const pub = PUBLIC_OPERATIONS.has(op.id);
  const c: Record<string, Answer> = {};
  if (op.service === 'tm') {
    if (!pub) {
      c['401'] = {
        descriptions: ['Not authenticated, or the credentials were refused'],
        content: json('tm.Error'),
        headers: { 'WWW-Authenticate': { schema: { type: 'string' } } },
      };
    }
    c['403'] = {
      descriptions: ['The user is not authorised or has no valid licence for the test-management add-on'],
      content: json('tm.Error'),
    };
    if (templateNames(op.path).length) {
      c['404'] = {
        descriptions: ['The identified object (the first path key) is not found'],
        content: json('tm.Error'),
      };
    }
    c['429'] = { descriptions: ['Too many Requests (rate limiter)'], content: text(), headers: retryAfter };
    c['500'] = {
      descriptions: ['Validation error in the input (the message names the field) or internal error'],
      content: op.textErrors ? text() : json('tm.Error'),
    };
  } else if (op.service === 'jira') {
    if (hasInput) {
      c['400'] = {
        descriptions: ['The input failed validation (the errors name the field)'],
        content: json('jira.Error'),
      };
    }
    if (!pub)
      c['401'] = { descriptions: ['Not authenticated, or the credentials were refused'], content: json('jira.Error') };
    c['429'] = { descriptions: ['Too many Requests (rate limiter)'], content: text(), headers: retryAfter };
  } else {
    if (hasInput) {
      c['400'] = { descriptions: ['The input failed validation'], content: json('repo.Error') };
    }
    // edu-sharing answers an unauthenticated request with an empty body.
    if (!pub) c['401'] = { descriptions: ['Not authenticated (empty body; a configured guest runs instead)'] };
    c['500'] = { descriptions: ['Internal error'], content: json('repo.Error') };
  }
  return c;
}

/** The error body of a documented error status of one operation. */
function errorContent(op: OperationDef, status: number): JsonObject | undefined {
  if (op.service === 'repo') return status === 401 ? undefined : json('repo.Error');
  if (op.service === 'jira') return json('jira.Error');
  return op.textErrors && status === 500 ? text() : json('tm.Error');
}

function responses(group: OperationDef[], schemas: Record<string, JsonObject>): JsonObject {
  const answers = new Map<string, Answer>();
  const add = (status: string, a: Answer) => {
    const have = answers.get(status);
    if (!have) answers.set(status, { ...a, descriptions: [...a.descriptions] });
    else for (const d of a.descriptions) if (!have.descriptions.includes(d)) have.descriptions.push(d);
  };
  for (const op of group) {
    const schema = responseSchema(op, schemas);
    add(successStatus(op), {
      descriptions: [schema ? 'Success' : 'Success (empty body)'],
      ...(schema ? { content: { 'application/json': { schema } } } : {}),
    });
    for (const e of op.errors) {
      const content = errorContent(op, e.status);
      add(String(e.status), { descriptions: [upper(e.when)], ...(content ? { content } : {}) });
    }
  }
  // The shared conventions come after what an operation documents itself, and only add to it.
  for (const op of group) {
    for (const [status, a] of Object.entries(conventions(op))) {
      const have = answers.get(status);
      // A documented 404 already says what is not found.
      if (have && status !== '404') add(status, { descriptions: a.descriptions.map((d) => `also: ${lower(d)}`) });
      else if (!have) add(status, a);
    }
  }
  const sorted = [...answers.entries()].sort(([a], [b]) => Number(a) - Number(b));
  return Object.fromEntries(
    sorted.map(([status, a]) => {
      const r: JsonObject = { description: a.descriptions.map((d, i) => (i ? lower(d) : d)).join('; ') };
      if (a.headers) r.headers = a.headers;
      if (a.content) r.content = a.content;
      return [status, r];
    }),
  );
}

/** Lower-cases a sentence's first letter (not an acronym's) so that it can follow another. */
const lower = (s: string) => (/^[A-Z][a-z]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s);
const upper = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

// ---------------------------------------------------------------------------------------------------------------
// Shared components.

/** The error bodies of each service (the emulator's `sendError` writes them). */
function errorSchemas(): Record<string, JsonObject> {
  return {
    'tm.Error': {
      title: 'Test-management error',
      description: 'Error body of the test-management service; some operations answer 500 in plain text instead.',
      type: 'object',
      properties: {
        message: { type: 'string' },
        field: { type: 'string', description: 'The request field that failed validation, when one did' },
      },
      required: ['message'],
    },
    'jira.Error': {
      title: 'Jira error',
      type: 'object',
      properties: {
        errorMessages: { type: 'array', items: { type: 'string' } },
        errors: {
          type: 'object',
          description: 'Messages by field name',
          additionalProperties: { type: 'string' },
        },
      },
      required: ['errorMessages', 'errors'],
    },
    'repo.Error': {
      title: 'edu-sharing error',
      type: 'object',
      properties: {
        error: {
          type: 'string',
          description: 'Exception class, e.g. org.edu_sharing.restservices.DAOMissingException',
        },
        message: { type: 'string' },
        logLevel: { type: 'string' },
        stacktraceArray: { type: ['array', 'null'], items: { type: 'string' } },
        details: { type: 'object' },
      },
      required: ['error', 'message'],
    },
  };
}

function securitySchemes(): Record<string, JsonObject> {
  return {
    basic: { type: 'http', scheme: 'basic', description: 'User name and password (or API token)' },
    bearer: { type: 'http', scheme: 'bearer', description: 'Personal access token (Jira) or OAuth access token' },
    cookie: {
      type: 'apiKey',
      in: 'cookie',
      name: 'JSESSIONID',
      description: 'Session cookie set by an earlier authenticated answer (Jira login, edu-sharing validateSession)',
    },
    eduTicket: {
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      description:
        'Content repository only: enter `EDU-TICKET <ticket>`; the ticket comes from POST /authentication/v1/appauth/{userId}',
    },
  };
}

function security(op: OperationDef): JsonObject[] {
  const schemes: JsonObject[] = [{ basic: [] }, { bearer: [] }, { cookie: [] }];
  if (op.service === 'repo') schemes.push({ eduTicket: [] });
  // An empty requirement: the operation also answers an anonymous caller.
  if (PUBLIC_OPERATIONS.has(op.id)) schemes.push({});
  return schemes;
}

function infoDescription(services: Service[]): string {
  const lines = [
    'Generated from the casebridge contract (`@casebridge/core/contract`), the single description of every operation.',
    '',
  ];
  if (services.includes('tm')) {
    lines.push(
      '**Test management**: every path is served under both `/rest/synapse/latest/public` and',
      '`/rest/svc/latest/public` (the Servers choice of each operation). Two wire variants exist: identifiers',
      'spelled `id` or `ID`; responses document both. Validation errors answer 500; a few operations answer 500',
      'in plain text. 403: not authorised or no licence.',
      '',
    );
  }
  if (services.includes('repo')) {
    lines.push(
      '**Content repository**: served under `/edu-sharing/rest` and `/repo/rest`. Authenticate with Basic, Bearer,',
      'the `JSESSIONID` cookie or `Authorization: EDU-TICKET <ticket>`.',
      '',
    );
  }
  if (services.includes('jira')) lines.push('**Jira platform**: the subset the test-management add-on lives in.');
  return lines.join('\n').trim();
}

// ---------------------------------------------------------------------------------------------------------------
// zod → JSON Schema.

interface Converted {
  schema: JsonObject;
  /** Sub-schemas to store as components (what zod lifts into `$defs`), by component name. */
  defs: Record<string, JsonObject>;
}

/**
 * JSON Schema of a zod schema (2020-12, the dialect of OpenAPI 3.1), meant to be stored as the component `name`
 * or inlined. Sub-schemas that zod lifts into `$defs` (recursion) become components `<name>.<def>`, and a root
 * self-reference points at `name`.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output', name: string): Converted {
  const raw = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  const { $schema: _dialect, $defs, ...root } = raw;
  const refFor = (ref: string): string => {
    if (ref === '#') return `#/components/schemas/${name}`;
    const def = /^#\/\$defs\/(.+)$/.exec(ref)?.[1];
    return def ? `#/components/schemas/${name}.${def}` : ref;
  };
  const defs: Record<string, JsonObject> = {};
  if ($defs && typeof $defs === 'object' && !Array.isArray($defs)) {
    for (const [def, sub] of Object.entries($defs)) defs[`${name}.${def}`] = tidy(sub, refFor) as JsonObject;
  }
  return { schema: tidy(root, refFor) as JsonObject, defs };
}

/** Rewrites references, drops zod's safe-integer bounds and merges intersections of closed objects. */
function tidy(value: Json, refFor: (ref: string) => string): Json {
  if (Array.isArray(value)) return value.map((v) => tidy(v, refFor));
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$ref' && typeof v === 'string') out[k] = refFor(v);
    else if ((k === 'minimum' && v === -SAFE_INT) || (k === 'maximum' && v === SAFE_INT)) continue;
    else out[k] = tidy(v, refFor);
  }
  return mergeAllOf(out);
}

/**
 * zod writes an intersection of objects as `allOf`; each part has `additionalProperties: false`, so together they
 * would admit nothing. Plain object parts are merged into one object instead.
 */
function mergeAllOf(schema: JsonObject): JsonObject {
  const parts = schema.allOf;
  if (!Array.isArray(parts) || Object.keys(schema).length !== 1) return schema;
  const objects = parts.filter((p): p is JsonObject => typeof p === 'object' && p !== null && !Array.isArray(p));
  const plain = new Set(['type', 'properties', 'required', 'additionalProperties']);
  if (
    objects.length !== parts.length ||
    !objects.every((p) => p.type === 'object' && Object.keys(p).every((k) => plain.has(k)))
  ) {
    return schema;
  }
  const properties: JsonObject = {};
  const required = new Set<string>();
  let closed = true;
  for (const p of objects) {
    Object.assign(properties, p.properties ?? {});
    for (const r of (p.required ?? []) as string[]) required.add(r);
    if (p.additionalProperties !== false) closed = false;
  }
  const merged: JsonObject = { type: 'object', properties, required: [...required] };
  if (closed) merged.additionalProperties = false;
  return merged;
}
