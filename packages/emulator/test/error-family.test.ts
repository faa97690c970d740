import { CasebridgeError, ERROR_BRAND } from '@casebridge/core/contract';
import { describe, expect, it, vi } from 'vitest';
import { AdminError } from '../src/admin.js';
import { Refused } from '../src/handlers/jira-fields.js';
import { forbidden, invalid, notFound, ServiceError } from '../src/service/context.js';

/**
 * The emulator's three errors are in casebridge's one error family (the base is the contract's, the only part of the
 * core the emulator may import): a stable kind and errorCode, the brand, and everything they did before unchanged.
 */
describe('the emulator errors in the family', () => {
  it('ServiceError: kind service, its HTTP status and options, the message as given', () => {
    const e = new ServiceError(500, 'Run id(s) 14 are not runs of test cycle "Nightly" (runIds)', { text: true });
    expect(e).toBeInstanceOf(CasebridgeError);
    expect(e).toBeInstanceOf(ServiceError);
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({
      name: 'ServiceError',
      kind: 'service',
      errorCode: 'CASEBRIDGE_SERVICE',
      status: 500,
      retryable: false,
      message: 'Run id(s) 14 are not runs of test cycle "Nightly" (runIds)',
      options: { text: true },
    });
    expect((e as unknown as Record<symbol, unknown>)[ERROR_BRAND]).toBe(true);
    expect(e.toJSON()).toMatchObject({ kind: 'service', errorCode: 'CASEBRIDGE_SERVICE', status: 500 });
    // The helpers keep their statuses.
    expect([notFound('x'), invalid('x', 'f'), forbidden('x')].map((x) => [x.status, x.kind, x.options])).toEqual([
      [404, 'service', {}],
      [500, 'service', { field: 'f' }],
      [403, 'service', {}],
    ]);
  });

  it('AdminError (kind admin) and Refused (kind refused)', () => {
    const a = new AdminError('Invalid query parameter "since": expected a request sequence number');
    expect(a).toBeInstanceOf(CasebridgeError);
    expect(a).toMatchObject({ name: 'AdminError', kind: 'admin', errorCode: 'CASEBRIDGE_ADMIN', status: undefined });
    expect(a.message).toBe('Invalid query parameter "since": expected a request sequence number');
    const r = new Refused("Priority name 'Urgentest' is not valid");
    expect(r).toBeInstanceOf(CasebridgeError);
    expect(r).toMatchObject({ name: 'Refused', kind: 'refused', errorCode: 'CASEBRIDGE_REFUSED' });
    expect(r.message).toBe("Priority name 'Urgentest' is not valid");
    // Each knows only its own class: the dispatch, the admin API and the field check catch theirs alone.
    expect(r).not.toBeInstanceOf(ServiceError);
    expect(a).not.toBeInstanceOf(Refused);
    expect(new ServiceError(404, 'x')).not.toBeInstanceOf(AdminError);
    expect(new Error('x')).not.toBeInstanceOf(ServiceError);
  });

  it('another copy of the contract knows them by the brand', async () => {
    vi.resetModules();
    const copy = await import('@casebridge/core/contract');
    expect(copy.CasebridgeError, 'a copy of its own').not.toBe(CasebridgeError);
    expect(new ServiceError(404, 'x') instanceof copy.CasebridgeError).toBe(true);
    expect(new copy.CasebridgeError('service', 'x') instanceof CasebridgeError).toBe(true);
    expect(new copy.CasebridgeError('service', 'x') instanceof ServiceError, 'not of the subclass').toBe(false);
  });
});
