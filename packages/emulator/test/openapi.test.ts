import {
  automationJob,
  createdIssue,
  defineOperation,
  entity,
  executionHistoryItem,
  historyEntry,
  issueRefs,
  type OperationDef,
  obj,
  operations,
  planMember,
  runStatusObject,
  runStep,
  type SchemaMode,
  SERVICE_PREFIXES,
  testCycle,
  testRun,
  testRunDetails,
  testStep,
} from '@casebridge/core/contract';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApi, CONTRACT_OPERATIONS_KEY, type OpenApiDocument } from '../src/openapi/document.js';
import { templateNames } from '../src/service/router.js';

/**
 * The generated OpenAPI document, checked structurally (no validator package is installed, so the checks that
 * matter are written out here): every operation present once, unique operation ids, every reference resolves,
 * every path parameter declared, schemas well formed.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
const COMPONENT_NAME = /^[a-zA-Z0-9.\-_]+$/;

type Any = any;

interface Found {
  path: string;
  method: string;
  op: Any;
  item: Any;
}

function operationsOf(doc: OpenApiDocument): Found[] {
  const out: Found[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.includes(method)) out.push({ path, method, op, item });
    }
  }
  return out;
}

/** Resolves a local JSON pointer (`#/a/b`) in the document; undefined when it does not resolve. */
function resolve(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let cur: Any = doc;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || !(key in cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** Every `$ref` value in a JSON value, with where it was found. */
function refs(value: unknown, at = '#', out: { at: string; ref: string }[] = []): { at: string; ref: string }[] {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      refs(v, `${at}/${i}`, out);
    });
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push({ at, ref: v });
      else refs(v, `${at}/${k}`, out);
    }
  }
  return out;
}

/** Problems in a JSON Schema: unknown types, required names that are not properties, empty combinators. */
function schemaProblems(schema: unknown, at: string, out: string[] = []): string[] {
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => {
      schemaProblems(s, `${at}/${i}`, out);
    });
    return out;
  }
  if (!schema || typeof schema !== 'object') return out;
  const s = schema as Any;
  const types = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
  for (const t of types) if (!JSON_TYPES.has(t)) out.push(`${at}: unknown type ${JSON.stringify(t)}`);
  if (Array.isArray(s.required) && s.properties && typeof s.properties === 'object') {
    for (const r of s.required) if (!(r in s.properties)) out.push(`${at}: required "${r}" is not a property`);
  }
  for (const k of ['anyOf', 'oneOf', 'allOf']) {
    if (k in s && (!Array.isArray(s[k]) || s[k].length === 0)) out.push(`${at}: ${k} must be a non-empty array`);
  }
  if ('$schema' in s || '$defs' in s) out.push(`${at}: left-over $schema/$defs`);
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' && v && typeof v === 'object') {
      for (const [p, sub] of Object.entries(v)) schemaProblems(sub, `${at}/properties/${p}`, out);
    } else if (typeof v === 'object') schemaProblems(v, `${at}/${k}`, out);
  }
  return out;
}

/** A path with its parameter names dropped: OpenAPI treats two such equal paths as the same. */
const hierarchy = (path: string) => path.replace(/\{[^}]*\}/g, '{}');

/** Structural checks every generated document must pass; returns the problems found. */
function structuralProblems(doc: OpenApiDocument, ops: readonly OperationDef[]): string[] {
  const problems: string[] = [];
  const found = operationsOf(doc);

  const ids = found.map((f) => f.op.operationId);
  for (const id of new Set(ids)) {
    if (ids.filter((x) => x === id).length > 1) problems.push(`operationId ${id} is not unique`);
  }
  const documented = found.flatMap((f) => f.op[CONTRACT_OPERATIONS_KEY] as string[]);
  for (const op of ops) {
    const n = documented.filter((id) => id === op.id).length;
    if (n !== 1) problems.push(`contract operation ${op.id} is documented ${n} times`);
  }

  for (const { at, ref } of refs(doc)) {
    if (resolve(doc, ref) === undefined) problems.push(`${at}: $ref ${ref} does not resolve`);
  }

  const hierarchies = Object.keys(doc.paths).map(hierarchy);
  for (const h of new Set(hierarchies)) {
    if (hierarchies.filter((x) => x === h).length > 1) problems.push(`paths ${h} differ only in parameter names`);
  }

  const tags = new Set(doc.tags.map((t) => t.name));
  const schemes = new Set(Object.keys(doc.components.securitySchemes));
  for (const { path, method, op } of found) {
    const where = `${method.toUpperCase()} ${path}`;
    const params: Any[] = op.parameters ?? [];
    const pathParams = params.filter((p) => p.in === 'path').map((p) => p.name);
    const names = templateNames(path);
    for (const n of names) if (!pathParams.includes(n)) problems.push(`${where}: path parameter {${n}} undeclared`);
    for (const n of pathParams) if (!names.includes(n)) problems.push(`${where}: parameter ${n} is not in the path`);
    for (const p of params) {
      if (p.in === 'path' && p.required !== true) problems.push(`${where}: path parameter ${p.name} not required`);
      if (!p.schema) problems.push(`${where}: parameter ${p.name} has no schema`);
    }
    const keys = params.map((p) => `${p.in}:${p.name}`);
    if (new Set(keys).size !== keys.length) problems.push(`${where}: duplicate parameters ${keys.join(', ')}`);

    const statuses = Object.keys(op.responses ?? {});
    if (!statuses.some((s) => /^2\d\d$/.test(s))) problems.push(`${where}: no success response`);
    for (const [status, r] of Object.entries<Any>(op.responses ?? {})) {
      if (!/^[1-5]\d\d$/.test(status)) problems.push(`${where}: response key ${status} is not a status`);
      if (typeof r.description !== 'string' || !r.description) problems.push(`${where} ${status}: no description`);
    }
    for (const t of op.tags ?? []) if (!tags.has(t)) problems.push(`${where}: tag ${t} is not declared`);
    for (const req of op.security ?? []) {
      for (const name of Object.keys(req)) if (!schemes.has(name)) problems.push(`${where}: unknown scheme ${name}`);
    }
    if (op.requestBody && !op.requestBody.content) problems.push(`${where}: requestBody without content`);
    schemaProblems(op, `${where}`, problems);
  }

  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    if (!COMPONENT_NAME.test(name)) problems.push(`component name ${name} has characters OpenAPI does not allow`);
    schemaProblems(schema, `#/components/schemas/${name}`, problems);
  }
  return problems;
}

describe('the OpenAPI document of the contract', () => {
  const doc = buildOpenApi({ serverUrl: 'http://emulator.test:8990' });

  it('is OpenAPI 3.1 and survives a JSON round trip', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBeTypeOf('string');
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it('passes the structural checks', () => {
    expect(structuralProblems(doc, operations)).toEqual([]);
  });

  it('documents every contract operation, as its own operationId unless merged', () => {
    const found = operationsOf(doc);
    const byId = new Map(found.map((f) => [f.op.operationId, f]));
    for (const op of operations) {
      const f = found.find((x) => (x.op[CONTRACT_OPERATIONS_KEY] as string[]).includes(op.id));
      expect(f, op.id).toBeDefined();
      expect(f?.method).toBe(op.method.toLowerCase());
      expect(hierarchy(f?.path ?? '')).toBe(hierarchy(op.path));
      expect(f?.op.tags).toEqual([op.group]);
      if ((f?.op[CONTRACT_OPERATIONS_KEY] as string[] | undefined)?.length === 1) expect(byId.get(op.id)).toBe(f);
    }
  });

  it('offers every prefix of a service as the servers of its paths', () => {
    expect(doc.servers).toEqual([{ url: 'http://emulator.test:8990', description: expect.any(String) }]);
    for (const op of operations) {
      const key = Object.keys(doc.paths).find((p) => hierarchy(p) === hierarchy(op.path)) ?? op.path;
      const item = doc.paths[key] as Any;
      const prefixes = SERVICE_PREFIXES[op.service].filter((p) => p !== '');
      if (!prefixes.length) expect(item.servers).toBeUndefined();
      else expect(item.servers.map((s: Any) => s.url)).toEqual(prefixes.map((p) => `http://emulator.test:8990${p}`));
    }
    const relative = buildOpenApi();
    expect(relative.servers[0]?.url).toBe('/');
    expect((relative.paths['/testPlan/{testPlanIssueKey}/cycles'] as Any).servers[0].url).toBe(
      '/rest/synapse/latest/public',
    );
  });

  it('documents both wire variants of a response when they differ, and one schema when they do not', () => {
    const cycles = (doc.paths['/testPlan/{testPlanIssueKey}/cycles'] as Any).get;
    const schema = cycles.responses['200'].content['application/json'].schema;
    expect(schema.anyOf.map((s: Any) => s.$ref)).toEqual([
      '#/components/schemas/plans.cycles.response.id',
      '#/components/schemas/plans.cycles.response.ID',
    ]);
    const id = doc.components.schemas['plans.cycles.response.id'] as Any;
    const ID = doc.components.schemas['plans.cycles.response.ID'] as Any;
    expect(id.title).toContain('variant id');
    expect(id.items.required).toContain('id');
    expect(ID.items.required).toContain('ID');
    expect(ID.items.properties.id).toBeUndefined();

    const upload = (doc.paths['/node/v1/nodes/{repository}/{nodeId}/content'] as Any).post;
    expect(upload.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/repo.uploadContent.response',
    });
  });

  it('documents requests from the input side: path and query strings as the types they coerce to', () => {
    const info = (doc.paths['/testPlan/{testPlanIssueKey}/testPlanInformation'] as Any).get;
    const pageSize = info.parameters.find((p: Any) => p.name === 'pageSize');
    expect(pageSize).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1 } });
    const key = info.parameters.find((p: Any) => p.name === 'testPlanIssueKey');
    expect(key).toMatchObject({ in: 'path', required: true, schema: { type: 'string', pattern: expect.any(String) } });
    const addMembers = (doc.paths['/testPlan/{testPlanIssueKey}/addMembers'] as Any).post;
    expect(addMembers.requestBody).toMatchObject({
      required: true,
      content: { 'application/json': { schema: { type: 'object', required: ['testCaseKeys'] } } },
    });
    // An optional body (appauth's SSO data) is not required.
    expect((doc.paths['/authentication/v1/appauth/{userId}'] as Any).post.requestBody.required).toBe(false);
  });

  it('documents uploads as multipart/form-data with a binary file part', () => {
    const upload = (doc.paths['/node/v1/nodes/{repository}/{nodeId}/content'] as Any).post;
    const schema = upload.requestBody.content['multipart/form-data'].schema;
    expect(schema.required).toEqual(['file']);
    expect(schema.properties.file).toMatchObject({ type: 'string', format: 'binary' });
  });

  it('documents the errors of each operation and the conventions of each service', () => {
    const addCycle = (doc.paths['/testPlan/{testPlanIssueKey}/addCycle'] as Any).post;
    expect(Object.keys(addCycle.responses)).toEqual(['200', '401', '403', '404', '429', '500']);
    expect(addCycle.responses['500'].description).toMatch(/^The name is missing.*also: validation error/);
    expect(addCycle.responses['403'].content['application/json'].schema.$ref).toBe('#/components/schemas/tm.Error');
    expect(addCycle['x-creates']).toBe(true);

    const deleteCycle = (doc.paths['/testPlan/{testPlanIssueKey}/deleteCycleByIdOrName'] as Any).delete;
    expect(deleteCycle.responses['500'].content).toEqual({ 'text/plain': { schema: { type: 'string' } } });
    expect(deleteCycle.responses['403'].content['application/json']).toBeDefined();
    expect(deleteCycle['x-variants']).toEqual(['id']);
    expect(deleteCycle.description).toContain('plain-text');

    const upload = (doc.paths['/node/v1/nodes/{repository}/{nodeId}/content'] as Any).post;
    expect(Object.keys(upload.responses)).toEqual(['200', '400', '401', '403', '404', '415', '422', '500', '503']);
    expect(upload.responses['401'].content).toBeUndefined();
    expect(upload.responses['415'].content['application/json'].schema.$ref).toBe('#/components/schemas/repo.Error');

    const createIssue = (doc.paths['/rest/api/2/issue'] as Any).post;
    expect(Object.keys(createIssue.responses)).toContain('201');
    expect(createIssue.responses['400'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/jira.Error',
    );
    const logout = (doc.paths['/rest/auth/1/session'] as Any).delete;
    expect(logout.responses['204'].content).toBeUndefined();
  });

  it('declares the security schemes and which operations answer anonymous callers', () => {
    const schemes = doc.components.securitySchemes as Any;
    expect(schemes.basic).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(schemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.cookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'JSESSIONID' });
    expect(schemes.eduTicket).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
    const cycles = (doc.paths['/testPlan/{testPlanIssueKey}/cycles'] as Any).get;
    expect(cycles.security).toEqual([{ basic: [] }, { bearer: [] }, { cookie: [] }]);
    const validate = (doc.paths['/authentication/v1/validateSession'] as Any).get;
    expect(validate.security).toContainEqual({ eduTicket: [] });
    expect(validate.security).toContainEqual({});
    expect(validate.responses['401']).toBeUndefined();
  });

  it('tags operations with their groups, in contract order', () => {
    expect(doc.tags.map((t) => t.name)).toEqual([...new Set(operations.map((op) => op.group))]);
  });

  it('has checks that catch a broken document', () => {
    const broken = structuredClone(doc) as Any;
    const cycles = broken.paths['/testPlan/{testPlanIssueKey}/cycles'].get;
    cycles.parameters = [];
    cycles.responses['200'].content['application/json'].schema.anyOf[0].$ref = '#/components/schemas/nothing';
    broken.paths['/testPlan/{testPlanIssueKey}/members'].get.operationId = 'plans.cycles';
    broken.components.schemas['tm.Error'].required = ['nope'];
    const problems = structuralProblems(broken, operations);
    expect(problems).toEqual(
      expect.arrayContaining([
        'operationId plans.cycles is not unique',
        expect.stringMatching(/\$ref #\/components\/schemas\/nothing does not resolve/),
        'GET /testPlan/{testPlanIssueKey}/cycles: path parameter {testPlanIssueKey} undeclared',
        '#/components/schemas/tm.Error: required "nope" is not a property',
      ]),
    );
  });

  it('keeps only the services asked for', () => {
    const repo = buildOpenApi({ services: ['repo'] });
    const ids = operationsOf(repo).flatMap((f) => f.op[CONTRACT_OPERATIONS_KEY] as string[]);
    expect(ids.sort()).toEqual(
      operations
        .filter((op) => op.service === 'repo')
        .map((op) => op.id)
        .sort(),
    );
    expect(repo.tags.map((t) => t.name)).toEqual(['repo']);
    expect(
      structuralProblems(
        repo,
        operations.filter((op) => op.service === 'repo'),
      ),
    ).toEqual([]);
  });
});

describe('OpenAPI generation of the harder contract shapes', () => {
  const key = z.object({ testCaseIssueKey: z.string() });
  const byId = defineOperation({
    id: 'fixture.updateStep',
    service: 'tm',
    group: 'fixture',
    method: 'PUT',
    path: '/testCase/{testCaseIssueKey}/updateStep',
    summary: 'Update a step by ID',
    params: key,
    body: z.strictObject({ ID: z.string(), step: z.string() }),
    errors: [{ status: 404, when: 'the step ID is not found' }],
  });
  const bySequence = defineOperation({
    id: 'fixture.updateStepBySequenceNumber',
    service: 'tm',
    group: 'fixture',
    method: 'PUT',
    path: '/testCase/{testCaseIssueKey}/updateStep',
    summary: 'Update a step by sequence number',
    params: key,
    body: z.strictObject({ sequenceNumber: z.string(), step: z.string() }),
    errors: [{ status: 404, when: 'the sequenceNumber is not found' }],
  });
  type Tree = { name: string; children: Tree[] };
  const tree: z.ZodType<Tree> = z.lazy(() => z.strictObject({ name: z.string(), children: z.array(tree) }));
  const recursive = defineOperation({
    id: 'fixture.tree',
    service: 'tm',
    group: 'fixture',
    method: 'POST',
    path: '/tree/{a}/{b}',
    summary: 'A recursive body, an undeclared path parameter and an intersection response; answers 201',
    params: z.object({ a: z.coerce.number().int() }),
    body: tree,
    response: (mode) =>
      z.intersection(entity(mode, { name: z.string() }), obj(mode, { extra: z.string().nullable().optional() })),
    errors: [],
    creates: true,
  });
  const ops: OperationDef[] = [byId, bySequence, recursive];
  const doc = buildOpenApi({ operations: ops });

  it('passes the structural checks', () => {
    expect(structuralProblems(doc, ops)).toEqual([]);
  });

  it('merges two operations on one route into one whose body is oneOf their forms', () => {
    const put = (doc.paths['/testCase/{testCaseIssueKey}/updateStep'] as Any).put;
    expect(put.operationId).toBe('fixture.updateStep');
    expect(put[CONTRACT_OPERATIONS_KEY]).toEqual(['fixture.updateStep', 'fixture.updateStepBySequenceNumber']);
    const forms = put.requestBody.content['application/json'].schema.oneOf;
    expect(forms.map((f: Any) => f.title)).toEqual(['Update a step by ID', 'Update a step by sequence number']);
    expect(forms[0].required).toContain('ID');
    expect(forms[1].required).toContain('sequenceNumber');
    expect(put.description).toContain('oneOf');
    expect(put.responses['404'].description).toBe('The step ID is not found; the sequenceNumber is not found');
    expect(put.parameters).toHaveLength(1);
  });

  it('stores a recursive body as a component, declares every path parameter, merges intersections', () => {
    const post = (doc.paths['/tree/{a}/{b}'] as Any).post;
    expect(post.requestBody.content['application/json'].schema.$ref).toMatch(/^#\/components\/schemas\//);
    expect(post.parameters.map((p: Any) => [p.name, p.schema.type])).toEqual([
      ['a', 'integer'],
      ['b', 'string'],
    ]);
    expect(Object.keys(post.responses)[0]).toBe('201');
    const id = doc.components.schemas['fixture.tree.response.id'] as Any;
    expect(id.allOf).toBeUndefined();
    expect(id).toMatchObject({ type: 'object', required: ['id', 'name'], additionalProperties: false });
    expect(Object.keys(id.properties)).toEqual(['id', 'name', 'extra']);
    // zod's safe-integer bounds are noise in a document.
    expect(id.properties.id).toEqual({ type: 'integer' });
  });

  it('converts every shared entity schema cleanly in both variants', () => {
    const shared: Record<string, (mode: SchemaMode) => z.ZodType> = {
      testCycle,
      planMember,
      testRun,
      historyEntry,
      runStep,
      testRunDetails,
      runStatusObject,
      testStep,
      executionHistoryItem,
      createdIssue,
      automationJob,
      issueRefs,
    };
    const fixtures = Object.entries(shared).map(([name, response]) =>
      defineOperation({
        id: `fixture.${name}`,
        service: 'tm',
        group: 'fixture',
        method: 'GET',
        path: `/fixture/${name}`,
        summary: name,
        response,
        errors: [],
      }),
    );
    const shapes = buildOpenApi({ operations: fixtures });
    expect(structuralProblems(shapes, fixtures)).toEqual([]);
    // executionHistoryItem is an intersection: merged into one closed object, not an allOf that admits nothing.
    expect(JSON.stringify(shapes.components.schemas)).not.toContain('allOf');
    const history = shapes.components.schemas['fixture.executionHistoryItem.response.ID'] as Any;
    expect(history.required).toEqual(expect.arrayContaining(['ID', 'testRunDetails', 'testPlanKey']));
  });

  it('puts routes that differ only in parameter names on one path item', () => {
    const get = defineOperation({
      id: 'fixture.get',
      service: 'tm',
      group: 'fixture',
      method: 'GET',
      path: '/run/{runID}',
      summary: 'get',
      params: z.object({ runID: z.coerce.number().int() }),
      errors: [],
    });
    const remove = defineOperation({
      ...get,
      id: 'fixture.delete',
      method: 'DELETE',
      path: '/run/{runId}',
      params: z.object({ runId: z.string() }),
    });
    const twoNames = buildOpenApi({ operations: [get, remove] });
    expect(structuralProblems(twoNames, [get, remove])).toEqual([]);
    expect(Object.keys(twoNames.paths)).toEqual(['/run/{runID}']);
    const item = twoNames.paths['/run/{runID}'] as Any;
    expect(item.delete.parameters).toEqual([{ name: 'runID', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(item.get.parameters[0].schema).toEqual({ type: 'integer' });
  });

  it('refuses two services on one path', () => {
    const clash = defineOperation({ ...byId, id: 'fixture.clash', service: 'repo', method: 'GET', body: undefined });
    expect(() => buildOpenApi({ operations: [byId, clash] })).toThrow(/used by the tm and the repo services/);
  });
});
