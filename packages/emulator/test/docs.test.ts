import { operations } from '@casebridge/core/contract';
import { describe, expect, it } from 'vitest';
import { CONTRACT_OPERATIONS_KEY } from '../src/openapi/document.js';
import { call, enc, REPO, TM, useEmulator } from './helpers.js';

/**
 * The emulator's API documentation: `/openapi.json` and the Swagger UI pages with their assets (served from the
 * installed swagger-ui-dist, no CDN). Real answers of the emulator are checked against the served document with a
 * small JSON Schema validator (no validator package is installed): the document describes what the wire carries.
 */

type Any = any;

/** Validates a value against a JSON Schema (the subset the generated document uses); returns the problems. */
function validate(root: Any, schema: Any, value: unknown, at = '$'): string[] {
  if (schema === true || schema === undefined || (typeof schema === 'object' && !Object.keys(schema).length)) {
    return [];
  }
  if (schema === false) return [`${at}: no value allowed`];
  if (schema.$ref) {
    const target = (schema.$ref as string)
      .slice(2)
      .split('/')
      .reduce((o: Any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], root);
    if (target === undefined) return [`${at}: $ref ${schema.$ref} does not resolve`];
    const { $ref: _ref, ...rest } = schema;
    return [...validate(root, target, value, at), ...validate(root, rest, value, at)];
  }
  const problems: string[] = [];
  const types: string[] = schema.type === undefined ? [] : [schema.type].flat();
  if (types.length && !types.some((t) => hasType(value, t))) {
    return [`${at}: expected ${types.join(' or ')}, got ${JSON.stringify(value)?.slice(0, 80)}`];
  }
  if ('const' in schema && value !== schema.const) problems.push(`${at}: expected ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.includes(value)) problems.push(`${at}: ${JSON.stringify(value)} not in enum`);
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern).test(value)) problems.push(`${at}: does not match pattern`);
    if (schema.minLength !== undefined && value.length < schema.minLength) problems.push(`${at}: too short`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${at}: below minimum`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${at}: above maximum`);
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((v, i) => {
      problems.push(...validate(root, schema.items, v, `${at}[${i}]`));
    });
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    for (const r of schema.required ?? []) if (!(r in o)) problems.push(`${at}: missing ${r}`);
    for (const [k, v] of Object.entries(o)) {
      const sub = schema.properties?.[k];
      if (sub !== undefined) problems.push(...validate(root, sub, v, `${at}.${k}`));
      else if (schema.additionalProperties === false) problems.push(`${at}: unexpected property ${k}`);
      else if (schema.additionalProperties)
        problems.push(...validate(root, schema.additionalProperties, v, `${at}.${k}`));
    }
  }
  for (const s of schema.allOf ?? []) problems.push(...validate(root, s, value, at));
  const anyOf = schema.anyOf ?? schema.oneOf;
  if (anyOf) {
    const results = anyOf.map((s: Any) => validate(root, s, value, at));
    const passing = results.filter((r: string[]) => !r.length).length;
    if (!passing)
      problems.push(`${at}: matches none of the alternatives (${results.map((r: string[]) => r[0]).join(' | ')})`);
    else if (schema.oneOf && passing > 1) problems.push(`${at}: matches ${passing} oneOf alternatives`);
  }
  return problems;
}

function hasType(value: unknown, type: string): boolean {
  if (type === 'integer') return Number.isInteger(value);
  if (type === 'null') return value === null;
  if (type === 'array') return Array.isArray(value);
  if (type === 'object') return typeof value === 'object' && value !== null && !Array.isArray(value);
  return typeof value === type;
}

/** The response schema an operation documents for a status and media type. */
function responseSchema(doc: Any, path: string, method: string, status: number, type = 'application/json'): Any {
  const schema = doc.paths[path]?.[method]?.responses?.[String(status)]?.content?.[type]?.schema;
  if (!schema) throw new Error(`the document has no ${type} response ${status} for ${method.toUpperCase()} ${path}`);
  return schema;
}

async function fetchDocument(url: string): Promise<Any> {
  const res = await fetch(`${url}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json();
}

describe('the OpenAPI document served by the emulator', () => {
  const emu = useEmulator();

  it('answers without authentication, lists every operation and points its servers at the emulator', async () => {
    const doc = await fetchDocument(emu().url);
    expect(doc.openapi).toBe('3.1.0');
    const documented = Object.values<Any>(doc.paths).flatMap((item) =>
      Object.values<Any>(item).flatMap((op) => op?.[CONTRACT_OPERATIONS_KEY] ?? []),
    );
    expect(new Set(documented)).toEqual(new Set(operations.map((op) => op.id)));
    expect(doc.servers[0].url).toBe(emu().url);
    expect(doc.paths['/testPlan/{testPlanIssueKey}/cycles'].servers.map((s: Any) => s.url)).toEqual([
      `${emu().url}/rest/synapse/latest/public`,
      `${emu().url}/rest/svc/latest/public`,
    ]);
    const host = `localhost:${emu().port}`;
    const viaName = await fetch(`http://${host}/openapi.json`).then((r): Promise<Any> => r.json());
    expect(viaName.servers[0].url).toBe(`http://${host}`);
    expect(
      emu()
        .requests()
        .some((r) => r.service === 'docs' && r.path === '/openapi.json'),
    ).toBe(true);
  });

  it('keeps only the services of ?service= and refuses an unknown one', async () => {
    const repo = await fetch(`${emu().url}/openapi.json?service=repo`).then((r): Promise<Any> => r.json());
    const documented = Object.values<Any>(repo.paths).flatMap((item) =>
      Object.values<Any>(item).flatMap((op) => op?.[CONTRACT_OPERATIONS_KEY] ?? []),
    );
    expect(documented.sort()).toEqual(
      operations
        .filter((op) => op.service === 'repo')
        .map((op) => op.id)
        .sort(),
    );
    const two = await fetch(`${emu().url}/openapi.json?service=repo,jira`).then((r): Promise<Any> => r.json());
    expect(two.tags.map((t: Any) => t.name)).toEqual(['repo', 'jira']);
    const bad = await fetch(`${emu().url}/openapi.json?service=nope`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('"nope"');
  });

  it('answers HEAD with the headers only', async () => {
    const head = await fetch(`${emu().url}/openapi.json`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1000);
    expect(await head.text()).toBe('');
  });

  it('describes what the test-management service answers, in the id variant', async () => {
    const doc = await fetchDocument(emu().url);
    for (const suffix of ['cycles', 'members', 'testPlanInformation', 'defects']) {
      const path = `/testPlan/{testPlanIssueKey}/${suffix}`;
      const server = doc.paths[path].servers[0].url as string;
      const res = await fetch(`${server}/testPlan/DEMO-1/${suffix}`, { headers: { authorization: adminAuth } });
      expect(res.status, path).toBe(200);
      expect(validate(doc, responseSchema(doc, path, 'get', 200), await res.json()), path).toEqual([]);
    }
    const missing = await call(emu(), 'GET', `${TM}/testPlan/DEMO-404/cycles`);
    expect(missing.status).toBe(404);
    const schema404 = responseSchema(doc, '/testPlan/{testPlanIssueKey}/cycles', 'get', 404);
    expect(validate(doc, schema404, missing.json)).toEqual([]);
    const textError = await call(emu(), 'DELETE', `${TM}/testPlan/DEMO-1/deleteCycleByIdOrName`, {
      body: { name: 'no such cycle' },
    });
    expect(textError.status).toBe(500);
    expect(textError.headers.get('content-type')).toMatch(/^text\/plain/);
    responseSchema(doc, '/testPlan/{testPlanIssueKey}/deleteCycleByIdOrName', 'delete', 500, 'text/plain');
  });

  it('describes what the content repository and the Jira platform answer, errors included', async () => {
    const doc = await fetchDocument(emu().url);
    const session = await call(emu(), 'GET', `${REPO}/authentication/v1/validateSession`);
    expect(validate(doc, responseSchema(doc, '/authentication/v1/validateSession', 'get', 200), session.json)).toEqual(
      [],
    );
    const noNode = await call(emu(), 'POST', `${REPO}/node/v1/nodes/-home-/${enc('no-such-node')}/children`, {
      query: { type: 'ccm:io' },
      body: { 'cm:name': ['a.txt'] },
    });
    expect(noNode.status).toBe(404);
    const repo404 = responseSchema(doc, '/node/v1/nodes/{repository}/{parentNodeId}/children', 'post', 404);
    expect(validate(doc, repo404, noNode.json)).toEqual([]);

    for (const [path, url] of [
      ['/rest/api/2/myself', '/rest/api/2/myself'],
      ['/rest/api/2/project/{projectIdOrKey}', '/rest/api/2/project/DEMO'],
      ['/rest/api/2/issue/{issueIdOrKey}', '/rest/api/2/issue/DEMO-1'],
      ['/rest/api/2/search', '/rest/api/2/search?jql=project%20%3D%20DEMO'],
    ] as const) {
      const res = await call(emu(), 'GET', url);
      expect(res.status, url).toBe(200);
      expect(validate(doc, responseSchema(doc, path, 'get', 200), res.json), url).toEqual([]);
    }
    const noIssue = await call(emu(), 'GET', '/rest/api/2/issue/DEMO-9999');
    expect(noIssue.status).toBe(404);
    expect(validate(doc, responseSchema(doc, '/rest/api/2/issue/{issueIdOrKey}', 'get', 404), noIssue.json)).toEqual(
      [],
    );
  });
});

describe('the OpenAPI document against the ID variant', () => {
  const emu = useEmulator({ variant: 'ID' });

  it('describes what the test-management service answers, in the ID variant', async () => {
    const doc = await fetchDocument(emu().url);
    for (const suffix of ['cycles', 'members', 'testPlanInformation']) {
      const path = `/testPlan/{testPlanIssueKey}/${suffix}`;
      const res = await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/${suffix}`);
      expect(res.status, path).toBe(200);
      expect(validate(doc, responseSchema(doc, path, 'get', 200), res.json), path).toEqual([]);
    }
    // The ID variant's members do not match the id variant's schema, so both are needed.
    const members = await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/members`);
    const idOnly = doc.components.schemas['plans.members.response.id'];
    expect(validate(doc, idOnly, members.json)).not.toEqual([]);
  });
});

const adminAuth = `Basic ${Buffer.from('admin:admin').toString('base64')}`;

describe('the Swagger UI pages', () => {
  const emu = useEmulator();

  /** Fetches a page, then every asset it references; returns the page's HTML. */
  async function checkPage(path: string): Promise<string> {
    const res = await fetch(emu().url + path);
    expect(res.status, path).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.filter((a) => a.endsWith('.js'))).toHaveLength(2);
    expect(assets.filter((a) => a.endsWith('.css'))).toHaveLength(2);
    for (const asset of assets) {
      // Served locally: this machine has no internet access.
      expect(asset, asset).toMatch(/^\/swagger\/assets\//);
      const a = await fetch(emu().url + asset);
      expect(a.status, asset).toBe(200);
      const type = a.headers.get('content-type') ?? '';
      if (asset.endsWith('.js')) expect(type, asset).toMatch(/^text\/javascript/);
      else if (asset.endsWith('.css')) expect(type, asset).toMatch(/^text\/css/);
      else expect(type, asset).toBe('image/png');
      const body = Buffer.from(await a.arrayBuffer());
      expect(body.length, asset).toBe(Number(a.headers.get('content-length')));
      if (asset.endsWith('swagger-ui-bundle.js')) expect(body.toString('utf8', 0, 2000)).toContain('SwaggerUIBundle');
    }
    return html;
  }

  it('serves /swagger with every service, its assets included', async () => {
    const html = await checkPage('/swagger');
    expect(html).toContain('"urls.primaryName":"All services"');
    expect(html).toContain('"url":"/openapi.json"');
    expect(html).toContain('"validatorUrl":null');
    expect(await checkPage('/swagger/')).toBe(html);
    expect(await checkPage('/swagger/index.html')).toBe(html);
  });

  it('serves the content repository pages with the repository document first', async () => {
    for (const path of ['/edu-sharing/swagger', '/repo/swagger']) {
      const html = await checkPage(path);
      const urls = JSON.parse(/var config = (\{.*\});/.exec(html)?.[1] ?? '{}').urls as { url: string }[];
      expect(urls[0]?.url, path).toBe('/openapi.json?service=repo');
      expect(urls.map((u) => u.url)).toContain('/openapi.json');
    }
  });

  it('serves only the files of the Swagger UI package', async () => {
    for (const bad of [
      '/swagger/assets/package.json',
      '/swagger/assets/..%2Fpackage.json',
      '/swagger/assets/../../package.json',
      '/swagger/assets/',
      '/swagger/assets/nope.js',
    ]) {
      const res = await fetch(emu().url + bad);
      expect(res.status, bad).toBe(404);
      await res.text();
    }
  });

  it('leaves other methods on the docs paths to the services', async () => {
    const res = await call(emu(), 'POST', '/openapi.json', { body: {} });
    expect(res.status).toBe(404);
    expect(res.json.errorMessages[0]).toContain('No operation');
  });
});
