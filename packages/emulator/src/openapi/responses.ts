import type { OperationDef } from '@casebridge/core/contract';
import { PUBLIC_OPERATIONS } from '../service/auth.js';
import { templateNames } from '../service/router.js';
import { type Converted, type JsonObject, jsonSchema } from './json-schema.js';

/**
 * The responses of the OpenAPI document: what each operation answers on success (both wire variants where they
 * differ), the errors it documents, and the error conventions every operation of a service shares.
 */

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
  } else if (op.service === 'bitbucket' || op.service === 'gitlab' || op.service === 'github') {
    const error = json(`${op.service}.Error`);
    if (hasInput) {
      c[op.service === 'github' && op.body ? '422' : '400'] = {
        descriptions: ['The input failed validation'],
        content: error,
      };
    }
    c['401'] = { descriptions: ['No token, or a token the host does not know'], content: error };
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
  if (op.service === 'bitbucket' || op.service === 'gitlab' || op.service === 'github') {
    return json(`${op.service}.Error`);
  }
  return op.textErrors && status === 500 ? text() : json('tm.Error');
}

export function responses(group: OperationDef[], schemas: Record<string, JsonObject>): JsonObject {
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

/** The error bodies of each service (the emulator's `sendError` writes them). */
export function errorSchemas(): Record<string, JsonObject> {
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
    'bitbucket.Error': {
      title: 'Bitbucket error',
      type: 'object',
      properties: {
        errors: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              context: { type: ['string', 'null'], description: 'The request field at fault, or null' },
              message: { type: 'string' },
              exceptionName: { type: ['string', 'null'] },
            },
            required: ['context', 'message', 'exceptionName'],
          },
        },
      },
      required: ['errors'],
    },
    'gitlab.Error': {
      title: 'GitLab error',
      description: '`{"message": "404 Project Not Found"}`; invalid input answers `{"error": "..."}`',
      type: 'object',
      properties: { message: { type: 'string' }, error: { type: 'string' } },
    },
    'github.Error': {
      title: 'GitHub error',
      type: 'object',
      properties: {
        message: { type: 'string' },
        documentation_url: { type: 'string' },
        status: { type: 'string' },
        errors: {
          type: 'array',
          description: 'With 422 Validation Failed: the fields at fault',
          items: {
            type: 'object',
            properties: {
              resource: { type: 'string' },
              code: { type: 'string' },
              field: { type: 'string' },
              message: { type: 'string' },
            },
          },
        },
      },
      required: ['message'],
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
