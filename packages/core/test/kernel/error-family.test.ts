import { spawnSync } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import {
  CaptchaError,
  CasebridgeError,
  ERROR_BRAND,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  ValidationError,
} from '../../src/client/errors.js';
import { RunHealth } from '../../src/engine/delivery/health.js';
import { NotJiraError, PermanentProblem } from '../../src/engine/kernel/errors.js';
import { needsBuild } from '../support/built.js';

/** A second copy of the client's errors, as another copy of the core in the same process would hold. */
async function secondCopy(): Promise<typeof import('../../src/client/errors.js')> {
  vi.resetModules();
  const copy = await import('../../src/client/errors.js');
  expect(copy.CasebridgeError, 'a copy of its own').not.toBe(CasebridgeError);
  return copy;
}

describe('one error family', () => {
  it('the engine errors are in it, with their kind, a stable code and the same message', () => {
    const p = new PermanentProblem('DEMO-9: no such test case (a test)');
    expect(p).toBeInstanceOf(CasebridgeError);
    expect(p).toMatchObject({
      name: 'PermanentProblem',
      kind: 'permanent',
      errorCode: 'CASEBRIDGE_PERMANENT',
      retryable: false,
      message: 'DEMO-9: no such test case (a test)',
    });
    const j = new NotJiraError('http://x does not answer as Jira');
    expect(j).toMatchObject({
      kind: 'not-jira',
      errorCode: 'CASEBRIDGE_NOT_JIRA',
      message: 'http://x does not answer as Jira',
    });
    expect(j).not.toBeInstanceOf(PermanentProblem);
    expect(new CasebridgeError('usage', 'casebridge: unknown option --x', {}, false, { exitCode: 2 })).toMatchObject({
      errorCode: 'CASEBRIDGE_USAGE',
      exitCode: 2,
    });
  });

  it('the brand is not enumerable: not in keys, JSON or toJSON', () => {
    const e = new NotFoundError('HTTP 404', { operation: 'plans.get', method: 'GET', path: '/x', status: 404 });
    expect((e as unknown as Record<symbol, unknown>)[ERROR_BRAND]).toBe(true);
    expect(Object.keys(e)).not.toContain(ERROR_BRAND);
    expect(JSON.stringify(e)).not.toContain('brand');
    expect(e.toJSON()).toMatchObject({ kind: 'not-found', errorCode: 'CASEBRIDGE_NOT_FOUND', status: 404 });
    expect(e.toJSON()).not.toHaveProperty('exitCode');
  });

  it('instanceof holds across two copies of the module, by the brand and the class name', async () => {
    const copy = await secondCopy();
    const theirs = new copy.ValidationError('HTTP 400', 'bad', {});
    expect(theirs instanceof ValidationError).toBe(true);
    expect(theirs instanceof CasebridgeError).toBe(true);
    expect(theirs instanceof NotFoundError).toBe(false);
    const captcha = new copy.CaptchaError('HTTP 403: log in', {}, 'alice', 'http://x/login.jsp');
    expect(captcha instanceof ForbiddenError, 'a subclass of a subclass').toBe(true);
    expect(captcha instanceof CaptchaError).toBe(true);
    expect(new ForbiddenError('HTTP 403', {}) instanceof copy.CaptchaError, 'not the other way').toBe(false);
    expect(new NetworkError('reset', 'ECONNRESET', {}) instanceof copy.NetworkError).toBe(true);
    // The engine's own decisions hold for the other copy's errors too.
    const health = new RunHealth(new AbortController().signal, () => undefined);
    expect(health.classify(theirs, 'x')).toBe('permanent');
    expect(health.classify(new copy.NetworkError('reset', 'ECONNRESET', {}), 'x')).toBe('later');
    expect(health.problems).toEqual(['x: HTTP 400']);
  });

  it('a plain Error, or a forged name without the brand, is not one', () => {
    const forged = Object.assign(new Error('HTTP 400'), { name: 'ValidationError', kind: 'validation' });
    expect(forged instanceof ValidationError).toBe(false);
    expect(forged instanceof CasebridgeError).toBe(false);
    expect(new Error('x') instanceof CasebridgeError).toBe(false);
    expect({ name: 'CasebridgeError', kind: 'http' } instanceof CasebridgeError).toBe(false);
    expect((null as unknown) instanceof CasebridgeError).toBe(false);
    expect(('ValidationError' as unknown) instanceof ValidationError).toBe(false);
    const health = new RunHealth(new AbortController().signal, () => undefined);
    expect(health.classify(forged, 'x'), 'an internal error, whatever it calls itself').toBe('later');
    expect(health.problems).toEqual(['x: internal error: HTTP 400']);
  });
});

// The built entries, as a project that has both loads them: the ESM build (import) and the CommonJS build
// (require, e.g. by Jest) are two copies of every class in one process. Needs `npm run build`: without it the tests fail saying so.
describe('the built ESM and CommonJS entries', () => {
  const dist = needsBuild('index.js', 'index.cjs');
  const esm = dist('index.js');
  const cjs = dist('index.cjs');
  it('know each other’s errors, and nothing unbranded', () => {
    const script = `
      const esm = await import(${JSON.stringify(esm)});
      const cjs = (await import('node:module')).createRequire(import.meta.url)(${JSON.stringify(cjs)});
      const fromCjs = new cjs.ValidationError('HTTP 400', 'bad', {});
      const fromEsm = new esm.ValidationError('HTTP 400', 'bad', {});
      const forged = Object.assign(new Error('x'), { name: 'ValidationError', kind: 'validation' });
      console.log(JSON.stringify({
        twoCopies: esm.CasebridgeError !== cjs.CasebridgeError,
        cjsInEsm: [fromCjs instanceof esm.CasebridgeError, fromCjs instanceof esm.ValidationError],
        esmInCjs: [fromEsm instanceof cjs.CasebridgeError, fromEsm instanceof cjs.ValidationError],
        otherClass: fromCjs instanceof esm.NotFoundError,
        plain: [new Error('x') instanceof esm.CasebridgeError, new Error('x') instanceof cjs.ValidationError],
        forged: [forged instanceof esm.CasebridgeError, forged instanceof cjs.ValidationError],
        fields: [fromCjs.name, fromCjs.kind, fromCjs.errorCode],
      }));`;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual({
      twoCopies: true,
      cjsInEsm: [true, true],
      esmInCjs: [true, true],
      otherClass: false,
      plain: [false, false],
      forged: [false, false],
      fields: ['ValidationError', 'validation', 'CASEBRIDGE_VALIDATION'],
    });
  });
});
