import { type OperationDef, operations } from '@casebridge/core/contract';
import { describe, expect, it } from 'vitest';
import { Router, safeDecode } from '../src/service/router.js';

/** The path-template router on its own: literal segments first, backtracking, 405 lists, decoding. */

const op = (id: string, method: string, path: string, service: OperationDef['service'] = 'tm') =>
  ({ id, service, group: 'test', method, path, summary: id, errors: [] }) as unknown as OperationDef;

const ops = [
  op('run.get', 'GET', '/testRun/{runID}'),
  op('run.update', 'PUT', '/testRun/{runID}'),
  op('run.created', 'GET', '/testRun/getTestRunsCreated'),
  op('run.defects', 'GET', '/testRun/defects/runId'),
  op('run.step', 'PUT', '/testRun/{runID}/step/{stepNo}'),
  op('cycle.runs', 'GET', '/cycle/{cycleName}/runs'),
  op('cycle.start', 'PUT', '/cycle/{cycleName}/wf/{action}'),
  op('cycle.slash', 'POST', '/cycle/{cycleName}/updateStep/'),
  op('first', 'POST', '/dup'),
  op('second', 'POST', '/dup'),
  op('repo.node', 'GET', '/node/v1/nodes/{repository}/{node}', 'repo'),
];
const router = new Router(ops);

const match = (method: string, path: string, service: OperationDef['service'] = 'tm') => {
  const r = router.route(service, method, path);
  if (r.kind !== 'match') throw new Error(`expected a match for ${method} ${path}, got ${JSON.stringify(r)}`);
  return { id: r.match.op.id, params: r.match.params };
};

describe('Router', () => {
  it('matches templates and returns the parameters by name', () => {
    expect(match('GET', '/testRun/42')).toEqual({ id: 'run.get', params: { runID: '42' } });
    expect(match('PUT', '/testRun/42/step/3')).toEqual({ id: 'run.step', params: { runID: '42', stepNo: '3' } });
    expect(match('GET', '/node/v1/nodes/-home-/abc', 'repo')).toEqual({
      id: 'repo.node',
      params: { repository: '-home-', node: 'abc' },
    });
  });

  it('prefers literal segments over parameters', () => {
    expect(match('GET', '/testRun/getTestRunsCreated').id).toBe('run.created');
    expect(match('GET', '/testRun/defects/runId').id).toBe('run.defects');
  });

  it('backtracks to the parameter branch when the literal branch has no operation for the method', () => {
    // `/testRun/getTestRunsCreated` is a GET; a PUT there is an update of a run with that (odd) id.
    expect(match('PUT', '/testRun/getTestRunsCreated')).toEqual({
      id: 'run.update',
      params: { runID: 'getTestRunsCreated' },
    });
  });

  it('answers "method" with every method the path allows, across branches', () => {
    const r = router.route('tm', 'DELETE', '/testRun/getTestRunsCreated');
    expect(r.kind).toBe('method');
    if (r.kind === 'method') expect(r.allowed.sort()).toEqual(['GET', 'PUT']);
    const one = router.route('tm', 'POST', '/cycle/x/runs');
    expect(one).toEqual({ kind: 'method', allowed: ['GET'] });
  });

  it('answers "none" for unknown paths, services without operations, and empty parameter segments', () => {
    expect(router.route('tm', 'GET', '/nothing/here')).toEqual({ kind: 'none' });
    expect(router.route('tm', 'GET', '/testRun/1/step')).toEqual({ kind: 'none' });
    expect(router.route('jira', 'GET', '/testRun/1')).toEqual({ kind: 'none' });
    expect(router.route('tm', 'GET', '/cycle//runs')).toEqual({ kind: 'none' });
    expect(router.route('tm', 'GET', '/')).toEqual({ kind: 'none' });
  });

  it('ignores one trailing slash on the request and on the template', () => {
    expect(match('GET', '/testRun/42/').id).toBe('run.get');
    expect(match('POST', '/cycle/c1/updateStep').id).toBe('cycle.slash');
    expect(match('POST', '/cycle/c1/updateStep/').id).toBe('cycle.slash');
  });

  it('keeps the first operation defined for a method and path', () => {
    expect(match('POST', '/dup').id).toBe('first');
  });

  it('decodes parameters (an encoded slash stays inside one segment) and keeps malformed escapes as written', () => {
    expect(match('GET', '/cycle/CI%201%2F2%20%F0%9F%9A%80/runs').params).toEqual({ cycleName: 'CI 1/2 🚀' });
    expect(match('GET', '/cycle/100%25/runs').params).toEqual({ cycleName: '100%' });
    expect(match('GET', '/cycle/%E0%A4%A/runs').params).toEqual({ cycleName: '%E0%A4%A' });
    // Literal segments are compared encoded: an encoded literal is a parameter value.
    expect(match('GET', '/testRun/getTestRuns%43reated')).toEqual({
      id: 'run.get',
      params: { runID: 'getTestRunsCreated' },
    });
  });

  it('routes very long segments', () => {
    const name = 'n'.repeat(10_000);
    expect(match('GET', `/cycle/${name}/runs`).params.cycleName).toHaveLength(10_000);
  });
});

describe('safeDecode', () => {
  it('decodes valid escapes and returns malformed ones unchanged', () => {
    expect(safeDecode('a%20b')).toBe('a b');
    expect(safeDecode('%D7%A9%D7%9C%D7%95%D7%9D')).toBe('שלום');
    expect(safeDecode('%')).toBe('%');
    expect(safeDecode('%zz')).toBe('%zz');
    expect(safeDecode('%E0%A4%A')).toBe('%E0%A4%A');
  });
});

describe('Router over the whole contract', () => {
  const real = new Router(operations);

  it('routes every operation of the contract from its own template', () => {
    for (const o of operations) {
      const path = o.path.replace(/\{[^}]+\}/g, 'X-1');
      const r = real.route(o.service, o.method, path);
      expect(r.kind, `${o.id} ${o.method} ${o.path}`).toBe('match');
      if (r.kind !== 'match') continue;
      // Operations sharing a method and path (updateStep's two body forms) route to the first one defined.
      const bare = (p: string) => p.replace(/\{[^}]+\}/g, '{}').replace(/(.)\/$/, '$1');
      const first = operations.find(
        (x) => x.service === o.service && x.method === o.method && bare(x.path) === bare(o.path),
      );
      expect(r.match.op.id).toBe(first?.id);
    }
  });

  it('routes a test-plan path of the test-management service', () => {
    const r = real.route('tm', 'GET', '/testPlan/DEMO-1/members');
    expect(r.kind === 'match' && r.match.op.id).toBe('plans.members');
    expect(r.kind === 'match' && r.match.params).toEqual({ testPlanIssueKey: 'DEMO-1' });
  });
});
