import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  FileNames,
  leavesRoot,
  OUTPUT_EXCERPT_CHARS,
  outputExcerpt,
  problemPrinter,
  relativeFile,
  stableId,
  stackWithCauses,
  stripAnsi,
} from '../../src/adapter/index.js';
import { normaliseMessage } from '../../src/engine/defects/fingerprint.js';

/**
 * The formula each adapter had its own copy of before `@casebridge/core/adapter` (packages/playwright, vitest and
 * jest `src/translate.ts`, packages/cli `src/junit/build.ts`, commit 6759e48): the four bodies were the same, only the
 * parameter types differed. Kept here as the reference the shared `stableId` must keep matching.
 */
function copiedStableId(file: string, titlePath: string[], project: string | undefined): string {
  return createHash('sha1')
    .update(JSON.stringify([file, titlePath, project ?? '']))
    .digest('hex')
    .slice(0, 20);
}

/**
 * Inputs and the ids the four copies gave for them (computed by running each old module on them: all four agreed).
 * The ids feed the defect fingerprint and key the journal: a change here files a second defect for a known failure.
 */
const PINNED: Array<[string, string[], string | undefined, string]> = [
  ['tests/login.spec.ts', ['login', 'DEMO-2 logs in'], 'chromium', '4032c708b7ebfad40d0c'],
  ['tests/login.spec.ts', ['login', 'DEMO-2 logs in'], undefined, 'c63cb550b05791f50a70'],
  ['tests/login.spec.ts', ['login', 'DEMO-2 logs in'], '', 'c63cb550b05791f50a70'],
  ['tests/a.test.js', ['outer', 'x'], undefined, 'cdacb75fa2d1713b2005'],
  ['tests/a.test.js', ['outer x'], undefined, 'dd1fdf4e246f02557ba7'],
  ['tests/a.test.js', [], undefined, '9c3d6e1b4ad52d6174e8'],
  ['tests/a.test.js', [''], undefined, 'e0f5dd5b8d19f512957c'],
  ['tests/a.test.js', ['', ''], 'api', 'cbade6fe17f39409da49'],
  ['', [''], undefined, '04c27967d25e6d41f4cb'],
  ['com.example.LoginTest', ['com.example.LoginTest', 'logsIn[1]'], 'surefire', '23205c893b887bfe14b7'],
  ['tests\\win\\path.spec.ts', ['C:\\temp', 'back\\slash'], 'firefox', 'cd96f54a8378e4b60ae4'],
  ['a.ts', ['"quoted" \\ ~ AND OR ORDER BY', 'NOT IN (a, b) [x] {y}: *?'], undefined, '925a02c50c5658e7fd3b'],
  ['a.ts', ['🚀 emoji', 'שלום עולם', 'e\u0301 combining', '\u00e9 precomposed'], 'ünïcødé', '5727a7b5cb563ae835f9'],
  ['a.ts', ['two\nlines\tand  spaces', 'nul\u0000char', '\u001b[31mred\u001b[0m'], undefined, '84af3ec4e433cf9898c9'],
  ['a.ts', ['lone \ud800 surrogate', 'line\u2028sep'], undefined, 'fc861217d90bb8d6600b'],
  ['a.ts', ['x'.repeat(5000)], 'p'.repeat(300), 'e7e442ea56d0f9d54686'],
  ['a.ts', ['a > b', 'c'], undefined, 'cb63dc17e670e5c75554'],
  ['a.ts', ['a', 'b > c'], undefined, 'c4ef3e26669521d40c6e'],
  ['a.ts', ['["a","b"]'], undefined, '3505378a111c2c27c53b'],
  ['a.ts', ['__proto__', 'constructor'], 'undefined', '43a12c0b49d9ac1e15fd'],
];

describe('stableId: the identity every adapter computes', () => {
  it.each(PINNED)('gives the id the adapters gave before: %j %j %j', (file, titlePath, project, id) => {
    expect(stableId(file, titlePath, project)).toBe(id);
    expect(stableId(file, titlePath, project)).toBe(copiedStableId(file, titlePath, project));
  });

  it('treats a missing project and an empty one alike, and separates what joining would merge', () => {
    expect(stableId('a.ts', ['t'])).toBe(stableId('a.ts', ['t'], ''));
    expect(stableId('a.ts', ['a > b', 'c'])).not.toBe(stableId('a.ts', ['a', 'b > c']));
    expect(stableId('a.ts', ['outer x'])).not.toBe(stableId('a.ts', ['outer', 'x']));
    expect(stableId('a.ts', ['t'], 'p')).not.toBe(stableId('a.ts', ['t']));
    for (const [file, titlePath, project] of PINNED)
      expect(stableId(file, titlePath, project)).toMatch(/^[0-9a-f]{20}$/);
  });
});

describe('relativeFile and leavesRoot: the file of the identity', () => {
  it('is relative to the root with forward slashes; a relative path only changes its slashes', () => {
    expect(relativeFile('/work/app', '/work/app/tests/a.spec.ts')).toBe('tests/a.spec.ts');
    expect(relativeFile('/work/app', 'tests\\a.spec.ts')).toBe('tests/a.spec.ts');
    expect(relativeFile('/work/app', '/work/other/a.spec.ts')).toBe('../other/a.spec.ts');
  });

  it('tells a path that leaves the root from one that only starts with dots', () => {
    expect(leavesRoot('../other/a.spec.ts')).toBe(true);
    expect(leavesRoot('..')).toBe(true);
    expect(leavesRoot('..\\x.ts')).toBe(true);
    expect(leavesRoot('..hidden/c.spec.ts')).toBe(false);
    expect(leavesRoot('tests/a.spec.ts')).toBe(false);
  });
});

describe("FileNames: a test file's name made once per file", () => {
  it('makes a name once per file and root, and again for another root', () => {
    const made: string[] = [];
    const names = new FileNames<string>((root, file) => {
      made.push(`${root}:${file}`);
      return relativeFile(root, file);
    });
    expect(names.of('/p', '/p/tests/a.spec.ts')).toBe('tests/a.spec.ts');
    expect(names.of('/p', '/p/tests/a.spec.ts')).toBe('tests/a.spec.ts');
    expect(names.of('/p', '/p/b.spec.ts')).toBe('b.spec.ts');
    expect(names.of('/', '/p/b.spec.ts')).toBe('p/b.spec.ts');
    expect(names.of('/p', '/p/b.spec.ts')).toBe('b.spec.ts');
    expect(made).toEqual(['/p:/p/tests/a.spec.ts', '/p:/p/b.spec.ts', '/:/p/b.spec.ts', '/p:/p/b.spec.ts']);
  });
});

describe('stripAnsi: one pattern for the adapters and the engine', () => {
  const ESC = String.fromCharCode(27);

  it('strips colours, cursor moves, private parameters and non-letter final bytes', () => {
    expect(stripAnsi(`${ESC}[31mred${ESC}[39m ${ESC}[1;2mbold${ESC}[0m`)).toBe('red bold');
    expect(stripAnsi(`a${ESC}[2Kb${ESC}[1Gc${ESC}[?25ld${ESC}[?25he${ESC}[3~f${ESC}[1 qg`)).toBe('abcdefg');
    expect(stripAnsi('no codes [31m here')).toBe('no codes [31m here');
  });

  it('strips everything the engine pattern it replaces stripped, with the same result', () => {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the engine's former pattern, for comparison.
    const former = /\u001b\[[0-9;]*[A-Za-z]/g;
    for (const s of [`${ESC}[31mx${ESC}[0m`, `${ESC}[1;31;40mx`, `a${ESC}[Kb`, `${ESC}[38;5;196mx${ESC}[m`]) {
      expect(stripAnsi(s)).toBe(s.replace(former, ''));
    }
  });

  it('keeps the defect fingerprint of a coloured message equal to that of the plain one', () => {
    expect(normaliseMessage(`${ESC}[31mexpected 1 to be 2${ESC}[39m`)).toBe(normaliseMessage('expected 1 to be 2'));
  });
});

describe('outputExcerpt', () => {
  it('keeps the end, bounded, without colour codes; bytes are decoded; nothing printed is undefined', () => {
    const long = `${'a'.repeat(5000)}THE END`;
    const e = outputExcerpt([long]) as string;
    expect(e.length).toBe(OUTPUT_EXCERPT_CHARS);
    expect(e.startsWith('…')).toBe(true);
    expect(e.endsWith('THE END')).toBe(true);
    expect(outputExcerpt(['a', new TextEncoder().encode(`${String.fromCharCode(27)}[32mb`), 'c'])).toBe('abc');
    expect(outputExcerpt([])).toBeUndefined();
    expect(outputExcerpt([''])).toBeUndefined();
    expect(outputExcerpt(['abcdef'], 4)).toBe('…def');
  });
});

describe('stackWithCauses', () => {
  type E = { stack?: string; message?: string; cause?: unknown };
  const text = (c: E) => c.stack ?? c.message ?? '';

  it('appends each cause, at most five, stopping at one that is not an object', () => {
    const deep: E = { message: 'c0' };
    let at = deep;
    for (let i = 1; i < 8; i++) at = (at.cause = { message: `c${i}` }) as E;
    expect(stackWithCauses('top', deep, text)).toBe(
      'top\n[cause]: c0\n[cause]: c1\n[cause]: c2\n[cause]: c3\n[cause]: c4',
    );
    expect(stackWithCauses(undefined, { stack: `${String.fromCharCode(27)}[31mboom` }, text)).toBe('\n[cause]: boom');
    expect(stackWithCauses('top', 'a string cause', text)).toBe('top');
    expect(stackWithCauses(undefined, undefined, text)).toBeUndefined();
  });
});

describe('problemPrinter', () => {
  it('prints one line per distinct problem, at most 21, and never throws', () => {
    const lines: string[] = [];
    const problem = problemPrinter('Cypress', (t) => lines.push(t));
    problem('onEnd', new Error('boom'));
    problem('onEnd', new Error('boom'));
    problem('onBegin', 'not an error');
    expect(lines).toEqual([
      'casebridge: the Cypress reporter failed in onEnd and goes on without it: boom\n',
      'casebridge: the Cypress reporter failed in onBegin and goes on without it: not an error\n',
    ]);
    for (let i = 0; i < 50; i++) problem(`hook ${i}`, 'x');
    expect(lines.length).toBe(21);
    const broken = problemPrinter('Cypress', () => {
      throw new Error('stderr closed');
    });
    expect(() => broken('onEnd', new Error('boom'))).not.toThrow();
  });
});
