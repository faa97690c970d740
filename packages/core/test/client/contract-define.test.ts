import { execFileSync } from 'node:child_process';
import { defineOperation, lazy } from '@casebridge/core/contract';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

/**
 * Request schemas are built on first read: a reporter uses about ten of the contract's operations, and building
 * every schema when the module loads cost about 2.5 MB in each runner process.
 */
describe('defineOperation builds request schemas on first read', () => {
  it('builds each schema once, when it is first read, and keeps it', () => {
    const built: string[] = [];
    const op = defineOperation({
      id: 'fixture.lazy',
      service: 'tm',
      group: 'fixture',
      method: 'PUT',
      path: '/thing/{key}',
      summary: 'lazy',
      params: () => {
        built.push('params');
        return z.object({ key: z.string() });
      },
      query: () => {
        built.push('query');
        return z.object({ page: z.coerce.number().int() });
      },
      body: () => {
        built.push('body');
        return z.strictObject({ name: z.string() });
      },
      errors: [],
    });
    expect(built).toEqual([]);
    expect((op.body as z.ZodType).parse({ name: 'a' })).toEqual({ name: 'a' });
    expect(op.body).toBe(op.body);
    expect(built).toEqual(['body']);
    expect(op.params?.parse({ key: 'K' })).toEqual({ key: 'K' });
    expect(op.query?.parse({ page: '2' })).toEqual({ page: 2 });
    expect(op.params).toBe(op.params);
    expect(built).toEqual(['body', 'params', 'query']);
    expect(Object.keys(op)).toEqual(expect.arrayContaining(['params', 'query', 'body']));
  });

  it('takes a schema as it is, and an absent one stays absent', () => {
    const params = z.object({ key: z.string() });
    const op = defineOperation({
      id: 'fixture.eager',
      service: 'repo',
      group: 'fixture',
      method: 'GET',
      path: '/thing/{key}',
      summary: 'eager',
      params,
      errors: [],
    });
    expect(op.params).toBe(params);
    expect('query' in op).toBe(false);
    expect(op.body).toBeUndefined();
    const copy = defineOperation({ ...op, id: 'fixture.copy' });
    expect(copy.params).toBe(params);
  });

  it('lazy() builds on the first call only', () => {
    let calls = 0;
    const shared = lazy(() => {
      calls++;
      return z.string();
    });
    expect(calls).toBe(0);
    expect(shared()).toBe(shared());
    expect(calls).toBe(1);
  });

  it('loading the contract builds no request schema of any operation', () => {
    // A fresh process: in this one, other tests may already have read some schemas.
    const script = `
      const { operations } = await import('@casebridge/core/contract');
      const built = [];
      let lazyCount = 0;
      for (const op of operations) {
        for (const key of ['params', 'query', 'body']) {
          const d = Object.getOwnPropertyDescriptor(op, key);
          if (!d) continue;
          if (d.get) lazyCount++;
          else built.push(op.id + '.' + key);
        }
      }
      console.log(JSON.stringify({ built, lazyCount, operations: operations.length }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    const result = JSON.parse(out) as { built: string[]; lazyCount: number; operations: number };
    expect(result.built).toEqual([]);
    expect(result.operations).toBeGreaterThan(80);
    expect(result.lazyCount).toBeGreaterThan(100);
  });
});
