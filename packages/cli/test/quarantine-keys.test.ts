import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allBut, grepPattern } from '../src/grep-pattern.js';
import { formatQuarantined, LABEL } from '../src/quarantine-keys.js';

/**
 * `cycle keys --quarantined`'s patterns, compiled as each runner compiles its filter: Jest's `-t` with flag `i`
 * (jest-circus: `new RegExp(testNamePattern, 'i')`), Vitest's `-t` without flags (`new RegExp(pattern)`), and the
 * `u` flag for good measure. The inverted pattern must match every full name the plain one does not.
 */
const compiled = (pattern: string) => [new RegExp(pattern, 'i'), new RegExp(pattern), new RegExp(pattern, 'u')];
const runs = (pattern: string, name: string) => compiled(pattern).every((re) => re.test(name));
const skips = (pattern: string, name: string) => compiled(pattern).every((re) => !re.test(name));

describe('allBut', () => {
  const keys = grepPattern(['DEMO-2', 'DEMO-4'], [['cart', 'adds (two) items [x]']], 'jest');

  it('matches every test name but those the pattern matches', () => {
    const p = allBut(keys);
    expect(p).toBe('^(?![\\s\\S]*(?:\\b(?:DEMO-2|DEMO-4)\\b|^cart adds \\(two\\) items \\[x\\]$))');
    for (const name of [
      'DEMO-2 logs in',
      'DEMO-4 search finds by name',
      'login [DEMO-4] @x',
      'cart adds (two) items [x]',
    ]) {
      expect(skips(p, name), name).toBe(true);
    }
    for (const name of [
      'DEMO-20 is another case',
      'DEMO-3 logs out',
      'cart adds (two) items [x] twice',
      'x cart adds (two) items [x]',
      '',
    ]) {
      expect(runs(p, name), name).toBe(true);
    }
  });

  it('leaves out a key after a line break in the title too (no `s` flag: `.` would stop there)', () => {
    expect(skips(allBut(keys), 'a title on\ntwo lines DEMO-2')).toBe(true);
  });

  it('is the exact complement of the pattern, for any names (property)', () => {
    const p = grepPattern(['DEMO-2'], [['logs in']]);
    const inverted = allBut(p);
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme' }),
        fc.constantFrom('', 'DEMO-2 ', 'DEMO-20 ', 'x logs in'),
        (s, mix) => {
          const name = `${mix}${s}`;
          for (const flags of ['i', '', 'u']) {
            expect(new RegExp(inverted, flags).test(name), name).toBe(!new RegExp(p, flags).test(name));
          }
        },
      ),
    );
    expect(allBut('')).toBe('');
  });
});

describe('formatQuarantined', () => {
  const result = {
    label: 'casebridge-quarantine',
    keys: ['DEMO-2', 'DEMO-4'],
    why: { 'DEMO-2': 'label casebridge-quarantine', 'DEMO-4': 'bug DEMO-40 (label casebridge-quarantine)' },
    tests: [{ name: 'a.spec.ts > logs in', titlePath: ['logs in'] }],
    notes: [],
  };
  const plain = '\\b(?:DEMO-2|DEMO-4)\\b|(?:^|\\s)logs in(?=\\s@|$)';

  it('Playwright and no runner: the quarantined tests, for --grep-invert; Jest and Vitest: every test but those', () => {
    expect(formatQuarantined(result, 'grep')).toBe(plain);
    expect(formatQuarantined(result, 'grep', 'playwright')).toBe(plain);
    expect(formatQuarantined(result, 'grep', 'vitest')).toBe(`^(?![\\s\\S]*(?:${plain}))`);
    expect(formatQuarantined(result, 'grep', 'jest')).toBe('^(?![\\s\\S]*(?:\\b(?:DEMO-2|DEMO-4)\\b|^logs in$))');
  });

  it('lines and json (grep as printed, invert saying which filter takes it); nothing when none is quarantined', () => {
    expect(formatQuarantined(result, 'lines')).toBe('DEMO-2\nDEMO-4');
    expect(JSON.parse(formatQuarantined(result, 'json'))).toEqual({
      label: 'casebridge-quarantine',
      keys: ['DEMO-2', 'DEMO-4'],
      why: result.why,
      titles: ['a.spec.ts > logs in'],
      grep: plain,
      invert: true,
    });
    expect(JSON.parse(formatQuarantined(result, 'json', 'vitest'))).toMatchObject({
      grep: `^(?![\\s\\S]*(?:${plain}))`,
      invert: false,
    });
    for (const f of ['grep', 'lines', 'json'] as const) expect(formatQuarantined({ ...result, keys: [] }, f)).toBe('');
  });

  it('a label is what the quarantine.label option takes', () => {
    expect(LABEL.test('casebridge-quarantine')).toBe(true);
    expect(LABEL.test('known_broken.2')).toBe(true);
    for (const bad of ['', 'two words', 'a"b', "a'b", 'a\\b']) expect(LABEL.test(bad), bad).toBe(false);
  });
});
