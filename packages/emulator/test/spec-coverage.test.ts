import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { operations, type Service, tmOperations } from '@casebridge/core/contract';
import { describe, expect, it } from 'vitest';
import { handlers } from '../src/handlers/index.js';
import { buildOpenApi, CONTRACT_OPERATIONS_KEY } from '../src/openapi/document.js';

/**
 * The contract covers the specs: every `| METHOD | /path |` row of the endpoint tables has an operation in the
 * contract, every contract operation has an emulator handler and appears in the OpenAPI document. The specs are
 * read at test time, so a spec change shows up here.
 */

/** A route of a spec row (with its line) or of a contract operation. */
interface Route {
  method: string;
  path: string;
  line?: number;
}

/**
 * The spec: the shared folder next to the repository (`<work>/shared/spec` beside `<work>/main`) when it is there,
 * else the copy kept in `test/spec/` (taken from it, so a clean clone elsewhere checks the same thing).
 */
function readSpec(name: string): string {
  const shared = fileURLToPath(new URL(`../../../../shared/spec/${name}`, import.meta.url));
  const copy = fileURLToPath(new URL(`./spec/${name}`, import.meta.url));
  const file = existsSync(shared) ? shared : copy;
  if (!existsSync(file)) throw new Error(`spec file ${name} found neither at ${shared} nor at ${copy}`);
  return readFileSync(file, 'utf8');
}

/** Endpoint rows of a spec's markdown tables. */
function specRows(markdown: string): Route[] {
  const rows: Route[] = [];
  markdown.split('\n').forEach((text, i) => {
    const m = /^\|\s*(GET|POST|PUT|DELETE|PATCH|HEAD)\s*\|\s*(\/[^\s|]*)\s*\|/.exec(text);
    if (m) rows.push({ method: m[1]!, path: m[2]!, line: i + 1 });
  });
  return rows;
}

/** A route as both sides compare it: parameter names dropped (`{}`), no trailing slash. */
function routeKey(method: string, path: string): string {
  const p = path.replace(/\{[^}]*\}/g, '{}').replace(/\/+$/, '');
  return `${method.toUpperCase()} ${p || '/'}`;
}

function countBy<T>(items: readonly T[], key: (t: T) => string): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of items) m.set(key(t), (m.get(key(t)) ?? 0) + 1);
  return m;
}

/** The routes of `want` that `have` lacks (counted: a route listed twice needs two), one line per route. */
function uncovered(want: readonly Route[], have: readonly Route[]): string[] {
  const got = countBy(have, (r) => routeKey(r.method, r.path));
  const out: string[] = [];
  for (const [route, n] of countBy(want, (r) => routeKey(r.method, r.path))) {
    const g = got.get(route) ?? 0;
    if (g >= n) continue;
    const lines = want.filter((r) => routeKey(r.method, r.path) === route && r.line).map((r) => r.line);
    out.push(`${route} (${lines.length ? `spec line ${lines.join(', ')}: ` : ''}${n} wanted, ${g} found)`);
  }
  return out;
}

const of = (service: Service) => operations.filter((op) => op.service === service);

describe('the test-management spec is covered by the contract', () => {
  it('has an operation for every endpoint row, and no other', () => {
    const rows = specRows(readSpec('test-management-api.md'));
    expect(rows.length, 'endpoint rows found in test-management-api.md').toBeGreaterThan(60);
    expect(uncovered(rows, tmOperations), 'spec rows without a contract operation').toEqual([]);
    expect(uncovered(tmOperations, rows), 'contract operations that the spec does not list').toEqual([]);
    expect(tmOperations.length, 'one contract operation per spec row').toBe(rows.length);
    expect(of('tm')).toEqual([...tmOperations]);
  });
});

describe('the content-repository spec is covered by the contract', () => {
  it('has an operation for every endpoint row', () => {
    const rows = specRows(readSpec('content-repository-api.md'));
    expect(rows.length, 'endpoint rows found in content-repository-api.md').toBeGreaterThan(0);
    expect(uncovered(rows, of('repo')), 'spec rows without a contract operation').toEqual([]);
  });
});

describe('every contract operation is served and documented', () => {
  it('has unique ids', () => {
    const ids = operations.map((op) => op.id);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it('has an emulator handler', () => {
    expect(operations.filter((op) => !handlers[op.id]).map((op) => op.id)).toEqual([]);
  });

  it('has no handler without an operation', () => {
    const ids = new Set(operations.map((op) => op.id));
    expect(Object.keys(handlers).filter((id) => !ids.has(id))).toEqual([]);
  });

  it('appears in the OpenAPI document', () => {
    const doc = buildOpenApi();
    const documented = new Set(
      Object.values(doc.paths).flatMap((item) =>
        Object.values(item).flatMap(
          (op) => ((op as Record<string, unknown>)[CONTRACT_OPERATIONS_KEY] as string[]) ?? [],
        ),
      ),
    );
    expect(operations.filter((op) => !documented.has(op.id)).map((op) => op.id)).toEqual([]);
  });
});
