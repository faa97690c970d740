import { compareKeys } from '@casebridge/core/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CycleError } from '../src/cycle.js';
import { formatKeys, resolveCycle, resolveStatuses, splitStatuses } from '../src/cycle-keys.js';
import { escapeRegExp, grepPattern, mappedTests, titlePattern } from '../src/grep-pattern.js';

/** The pattern compiled as each runner compiles it: Playwright `gi`, Jest `i`, Vitest none. */
const compiled = (pattern: string) => [new RegExp(pattern, 'i'), new RegExp(pattern), new RegExp(pattern, 'u')];
const selects = (pattern: string, name: string) => compiled(pattern).every((re) => re.test(name));
const rejects = (pattern: string, name: string) => compiled(pattern).every((re) => !re.test(name));

describe('grepPattern: keys', () => {
  it('is one alternation of whole-word keys, sorted by project and number, each once', () => {
    expect(grepPattern(['DEMO-10', 'DEMO-2', 'DEMO-2', 'ABC-7'])).toBe('\\b(?:ABC-7|DEMO-2|DEMO-10)\\b');
    expect(grepPattern([])).toBe('');
  });

  it('selects the key in a title, in brackets, as a tag, in a describe path; never a longer key', () => {
    const p = grepPattern(['DEMO-2', 'DEMO-5']);
    for (const name of [
      'DEMO-2 logs in',
      'login [DEMO-5] logs out',
      'chromium tests/a.spec.ts logs in @DEMO-2',
      'cart DEMO-5: adds an item',
      'ends with DEMO-2',
    ]) {
      expect(selects(p, name), name).toBe(true);
    }
    for (const name of ['DEMO-20 logs in', 'XDEMO-2 logs in', 'DEMO-25', 'DEMO-3 logs in', 'DEMO-2x']) {
      expect(rejects(p, name), name).toBe(true);
    }
  });

  it('orders keys of several projects and numbers naturally', () => {
    expect(['B-1', 'A-10', 'A-9', 'A-100'].sort(compareKeys)).toEqual(['A-9', 'A-10', 'A-100', 'B-1']);
  });
});

describe('grepPattern: mapped titles', () => {
  it('escapes every regular-expression character of a title, and leaves "-" readable', () => {
    const title = 'a.b*c+d?e^f$g{1}(h)|i[j]k\\l/m-n';
    expect(escapeRegExp(title)).toBe('a\\.b\\*c\\+d\\?e\\^f\\$g\\{1\\}\\(h\\)\\|i\\[j\\]k\\\\l\\/m-n');
    expect(selects(titlePattern([title]), title)).toBe(true);
    expect(rejects(titlePattern([title]), 'aXb*c+d?e^f$g{1}(h)|i[j]k\\l/m-n')).toBe(true);
  });

  it('matches the title path as each runner names the test, not a longer title', () => {
    const p = titlePattern(['login', 'logs in']);
    expect(selects(p, 'login logs in')).toBe(true); // Jest, Vitest
    expect(selects(p, ' chromium tests/login.spec.ts login logs in @smoke')).toBe(true); // Playwright with a tag
    expect(selects(p, 'tests/login.test.ts login logs in')).toBe(true); // a file before it
    expect(rejects(p, 'login logs in twice')).toBe(true);
    expect(rejects(p, 'xlogin logs in')).toBe(true);
    // Jest's full name is exactly the path: anchored at both ends.
    const jest = titlePattern(['login', 'logs in'], 'jest');
    expect(jest).toBe('^login logs in$');
    expect(rejects(jest, 'relogin logs in')).toBe(true);
  });

  it('any title is matched by its own pattern, in every runner flavour (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, unit: 'grapheme' }), { minLength: 1, maxLength: 3 }), (path) => {
        const name = path.join(' ');
        expect(selects(titlePattern(path), name)).toBe(true);
        expect(selects(titlePattern(path, 'jest'), name)).toBe(true);
        expect(selects(grepPattern([], [path]), `file.ts ${name} @tag`)).toBe(true);
      }),
    );
  });

  it('the mapping file gives the tests of the selected keys; keys and titles combine in one pattern', () => {
    const mapping = {
      'tests/login.spec.ts > login > logs in': 'DEMO-2',
      'tests/cart.spec.ts > adds (two) items': ['DEMO-3', 'DEMO-5'],
      'tests/other.spec.ts > other': 'DEMO-9',
    };
    const tests = mappedTests(mapping, ['DEMO-2', 'DEMO-5']);
    expect(tests).toEqual([
      { name: 'tests/login.spec.ts > login > logs in', titlePath: ['login', 'logs in'] },
      { name: 'tests/cart.spec.ts > adds (two) items', titlePath: ['adds (two) items'] },
    ]);
    const p = grepPattern(
      ['DEMO-2', 'DEMO-5'],
      tests.map((t) => t.titlePath),
    );
    expect(p).toBe('\\b(?:DEMO-2|DEMO-5)\\b|(?:^|\\s)login logs in(?=\\s@|$)|(?:^|\\s)adds \\(two\\) items(?=\\s@|$)');
    expect(selects(p, 'adds (two) items')).toBe(true);
    expect(selects(p, 'DEMO-5 something else')).toBe(true);
    expect(rejects(p, 'other')).toBe(true);
  });
});

describe('formatKeys', () => {
  const result = {
    plan: 'DEMO-1',
    cycle: { id: 4, name: 'Nightly', status: 'Active' },
    keys: ['DEMO-2', 'DEMO-5'],
    tests: [{ name: 'a.spec.ts > logs in', titlePath: ['logs in'] }],
    notes: [],
  };
  it('grep, lines and json; nothing at all when nothing is selected', () => {
    expect(formatKeys(result, 'grep')).toBe('\\b(?:DEMO-2|DEMO-5)\\b|(?:^|\\s)logs in(?=\\s@|$)');
    expect(formatKeys(result, 'lines')).toBe('DEMO-2\nDEMO-5');
    expect(JSON.parse(formatKeys(result, 'json'))).toEqual({
      plan: 'DEMO-1',
      cycle: { id: 4, name: 'Nightly', status: 'Active' },
      keys: ['DEMO-2', 'DEMO-5'],
      titles: ['a.spec.ts > logs in'],
      grep: '\\b(?:DEMO-2|DEMO-5)\\b|(?:^|\\s)logs in(?=\\s@|$)',
    });
    for (const f of ['grep', 'lines', 'json'] as const) expect(formatKeys({ ...result, keys: [] }, f)).toBe('');
  });
});

describe('statuses and cycles', () => {
  it('splits comma-separated and repeated --status values', () => {
    expect(splitStatuses(['Failed,Not Tested', ' blocked ', '"NA"'])).toEqual([
      'Failed',
      'Not Tested',
      'blocked',
      'NA',
    ]);
  });

  it('accepts the five statuses in any case and custom ones the runs show; names the valid ones otherwise', () => {
    expect([...resolveStatuses(['failed', 'NOT  TESTED', 'Retest'], ['Retest'])]).toEqual([
      'failed',
      'not tested',
      'retest',
    ]);
    let thrown: unknown;
    try {
      resolveStatuses(['Faild'], []);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(CycleError);
    expect((thrown as CycleError).exitCode).toBe(2);
    expect((thrown as Error).message).toContain(
      '"Faild" is not a run status; expected one or more of "Passed", "Failed", "Blocked", "Not Tested", "NA"',
    );
  });

  it('finds a cycle by name, #id, id, or a name in another case; names the cycles it has otherwise', () => {
    const cycles = [
      { id: 3, name: 'Nightly' },
      { id: 7, name: '3' },
      { id: 9, name: 'Release 1.0' },
    ];
    expect(resolveCycle(cycles, 'Nightly', 'P-1').id).toBe(3);
    expect(resolveCycle(cycles, '#3', 'P-1').id).toBe(3);
    expect(resolveCycle(cycles, '3', 'P-1').id).toBe(7); // a cycle named "3" wins over the id 3
    expect(resolveCycle(cycles, '9', 'P-1').id).toBe(9);
    expect(resolveCycle(cycles, 'release 1.0', 'P-1').id).toBe(9);
    expect(() => resolveCycle(cycles, 'Weekly', 'P-1')).toThrow(
      'test plan P-1 has no cycle "Weekly": it has "Nightly" (#3), "3" (#7), "Release 1.0" (#9)',
    );
    expect(() => resolveCycle(cycles, '#44', 'P-1')).toThrow('has no cycle with id 44');
  });
});
