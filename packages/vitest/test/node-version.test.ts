import { describe, expect, it } from 'vitest';
import { nodeTooOld } from '../src/reporter.js';

describe('Vitest 5 on an older Node', () => {
  it('names the cause in one line for Vitest 5 below Node 22.12, and says nothing otherwise', () => {
    expect(nodeTooOld('5.1.1', '20.19.0')).toMatch(
      /^casebridge: Vitest 5\.1\.1 needs Node 22\.12 or later, and this is Node 20\.19\.0: .*npx -p node@24 vitest run/,
    );
    expect(nodeTooOld('5.0.0', '22.11.0')).toBeDefined();
    expect(nodeTooOld('5.0.0', '22.12.0')).toBeUndefined();
    expect(nodeTooOld('5.1.1', '24.9.0')).toBeUndefined();
    expect(nodeTooOld('4.1.12', '20.19.0')).toBeUndefined();
    expect(nodeTooOld(undefined, '20.19.0')).toBeUndefined();
  });
});
