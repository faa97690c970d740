import { isMultipart, type OperationDef, operations, SERVICE_PREFIXES, type Service } from '@casebridge/core/contract';
import type * as z from 'zod';
import { PUBLIC_OPERATIONS } from '../service/auth.js';
import { templateNames } from '../service/router.js';
import { type Json, type JsonObject, jsonSchema, objectParts } from './json-schema.js';
import { errorSchemas, responses } from './responses.js';

/**
 * The OpenAPI 3.1 document of both services, generated from the contract: nothing here restates a path, a body or
 * a response shape. Requests are documented from the input side of their zod schemas; responses document both
 * wire variants (`id` and `ID`) where they differ.
 */

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
  bitbucket: 'Bitbucket Data Center',
  gitlab: 'GitLab',
  github: 'GitHub',
};

/** What each prefix of a service is (the first is the real product's). */
const PREFIX_NOTES: Record<string, string> = {
  '/rest/synapse/latest/public': 'synapseRT prefix',
  '/rest/svc/latest/public': 'prefix as the spec writes it ({PFX})',
  '/edu-sharing/rest': 'edu-sharing REST root',
  '/repo/rest': 'REST root as the spec writes it',
  '/api/v3': 'GitHub Enterprise Server API root (GITHUB_API_URL); served at the root too, as api.github.com',
};

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
      title: 'casebridge: synapseRT test management, edu-sharing content repository, Jira platform subset, code hosts',
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
// Security and the document's description.

function securitySchemes(): Record<string, JsonObject> {
  return {
    basic: {
      type: 'http',
      scheme: 'basic',
      description: 'User name and password (a personal access token goes as Bearer: Jira refuses it as a password)',
    },
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
    privateToken: {
      type: 'apiKey',
      in: 'header',
      name: 'PRIVATE-TOKEN',
      description: 'GitLab only: a personal, project or group access token',
    },
    githubToken: {
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      description: 'GitHub only: enter `token <token>` (Bearer works too)',
    },
  };
}

function security(op: OperationDef): JsonObject[] {
  // The code hosts take a token only (Bitbucket: an HTTP access token as Bearer).
  if (op.service === 'bitbucket') return [{ bearer: [] }];
  if (op.service === 'gitlab') return [{ privateToken: [] }, { bearer: [] }];
  if (op.service === 'github') return [{ bearer: [] }, { githubToken: [] }];
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
  if (services.includes('jira')) {
    lines.push('**Jira platform**: the subset the test-management add-on lives in.', '');
  }
  if (services.includes('bitbucket')) {
    lines.push(
      '**Bitbucket Data Center**: Code Insights reports and annotations, and build status, at their full paths.',
      'An HTTP access token as Bearer; a commit is its full 40-character hash; errors are `{"errors": [...]}`.',
      '',
    );
  }
  if (services.includes('gitlab')) {
    lines.push('**GitLab**: merge-request notes under `/api/v4`; `PRIVATE-TOKEN` or Bearer.', '');
  }
  if (services.includes('github')) {
    lines.push('**GitHub**: pull-request comments under `/api/v3` (Enterprise Server) or the root; Bearer or `token`.');
  }
  return lines.join('\n').trim();
}
