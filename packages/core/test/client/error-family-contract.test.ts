import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CasebridgeError, NotFoundError, registerSecret } from '../../src/client/index.js';
import * as contract from '../../src/contract/index.js';
import { needsBuild } from '../support/built.js';

/**
 * The family's base lives in the contract (so that the emulator, which may import the contract alone, raises errors
 * of the family); the client re-exports it and hands it the client's redaction.
 */
describe('the family base in the contract', () => {
  it('is the class the client exports, with the same brand and codes', () => {
    expect(contract.CasebridgeError).toBe(CasebridgeError);
    expect(new NotFoundError('HTTP 404', {})).toBeInstanceOf(contract.CasebridgeError);
    expect(contract.errorCodeOf('missing-package')).toBe('CASEBRIDGE_MISSING_PACKAGE');
    expect(contract.ERROR_BRAND).toBe(Symbol.for('casebridge.error'));
    expect(new contract.CasebridgeError('service', 'x', { status: 404 })).toMatchObject({
      kind: 'service',
      errorCode: 'CASEBRIDGE_SERVICE',
      status: 404,
    });
  });

  it('redacts with the client’s secrets, unless told to keep the message (the emulator’s answers)', () => {
    registerSecret('family-secret-1234');
    const said = 'login failed for family-secret-1234, Authorization: Bearer abcdefghij';
    const redacted = 'login failed for ***, Authorization: ***';
    expect(new NotFoundError(said, {}).message).toBe(redacted);
    expect(new contract.CasebridgeError('permanent', said).message).toBe(redacted);
    expect(new contract.CasebridgeError('http', said, { path: '/x/family-secret-1234' }).path).toBe('/x/***');
    const kept = new contract.CasebridgeError('service', said, { path: '/x/family-secret-1234' }, false, {
      redact: false,
    });
    expect([kept.message, kept.path]).toEqual([said, '/x/family-secret-1234']);
  });
});

// The built entries: `./contract` (what the emulator loads) and `.`, each as ESM and CommonJS, in one process.
// Needs `npm run build`: without it the tests fail saying so.
describe('the built contract entry', () => {
  const dist = needsBuild('index.js', 'index.cjs', 'contract.js', 'contract.cjs');
  it('exports the base, and its errors are the family’s in every other entry and format', () => {
    const script = `
      const req = (await import('node:module')).createRequire(import.meta.url);
      const esm = await import(${JSON.stringify(dist('index.js'))});
      const cjs = req(${JSON.stringify(dist('index.cjs'))});
      const cEsm = await import(${JSON.stringify(dist('contract.js'))});
      const cCjs = req(${JSON.stringify(dist('contract.cjs'))});
      class ServiceError extends cCjs.CasebridgeError {}
      const fromCjs = new ServiceError('service', 'Not found', { status: 404 });
      const fromEsm = new cEsm.CasebridgeError('admin', 'bad since');
      console.log(JSON.stringify({
        cjsContract: [fromCjs instanceof esm.CasebridgeError, fromCjs instanceof cjs.CasebridgeError],
        esmContract: [fromEsm instanceof esm.CasebridgeError, fromEsm instanceof cjs.CasebridgeError],
        notAClientClass: fromCjs instanceof esm.NotFoundError,
        clientInContract: [new cjs.NotFoundError('x', {}) instanceof cEsm.CasebridgeError],
        plain: new Error('x') instanceof cCjs.CasebridgeError,
        fields: [fromCjs.name, fromCjs.kind, fromCjs.errorCode, fromCjs.status, fromEsm.errorCode],
      }));`;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual({
      cjsContract: [true, true],
      esmContract: [true, true],
      notAClientClass: false,
      clientInContract: [true],
      plain: false,
      fields: ['ServiceError', 'service', 'CASEBRIDGE_SERVICE', 404, 'CASEBRIDGE_ADMIN'],
    });
  });
});
