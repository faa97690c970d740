import { describe, expect, it } from 'vitest';
import { commentFor, readComment } from '../../src/engine/delivery/comment.js';
import type { TestResult } from '../../src/engine/kernel/model.js';
import { errorLines, failureAt } from '../../src/engine/kernel/text.js';
import type { WorkItem } from '../../src/engine/kernel/work.js';

const JEST_TO_BE = [
  '\u001b[2mexpect(\u001b[22m\u001b[31mreceived\u001b[39m\u001b[2m).\u001b[22mtoBe\u001b[2m(\u001b[22m\u001b[32mexpected\u001b[39m\u001b[2m) // Object.is equality\u001b[22m',
  '',
  'Expected: \u001b[32m3\u001b[39m',
  'Received: \u001b[31m2\u001b[39m',
].join('\n');

const JEST_TO_EQUAL = [
  'expect(received).toEqual(expected) // deep equality',
  '',
  '- Expected  - 1',
  '+ Received  + 1',
  '',
  '  Object {',
  '    "a": 1,',
  '    "b": 1,',
  '    "c": 1,',
  '    "d": 1,',
  '-   "e": 1,',
  '+   "e": 2,',
  '    "f": 1,',
  '  }',
].join('\n');

const PLAYWRIGHT = [
  'Error: expect(locator).toHaveText(expected) failed',
  '',
  "Locator: getByRole('heading')",
  'Expected string: "Welcome"',
  'Received string: "Hello"',
  'Timeout: 5000ms',
  '',
  'Call log:',
  '  - Expect "toHaveText" with timeout 5000ms',
].join('\n');

describe('the meaningful lines of an error', () => {
  it('keep a short matcher error whole, its colours removed', () => {
    expect(errorLines(JEST_TO_BE)).toEqual([
      'expect(received).toBe(expected) // Object.is equality',
      'Expected: 3',
      'Received: 2',
    ]);
  });

  it('keep the first line and the diff of a long one, at most 8 lines', () => {
    const lines = errorLines(JEST_TO_EQUAL);
    expect(lines).toEqual([
      'expect(received).toEqual(expected) // deep equality',
      '- Expected  - 1',
      '+ Received  + 1',
      '-   "e": 1,',
      '+   "e": 2,',
    ]);
  });

  it("leave out Playwright's call log and stack frames", () => {
    expect(errorLines(PLAYWRIGHT)).toEqual([
      'Error: expect(locator).toHaveText(expected) failed',
      "Locator: getByRole('heading')",
      'Expected string: "Welcome"',
      'Received string: "Hello"',
      'Timeout: 5000ms',
    ]);
    expect(
      errorLines('Error: boom\n    at Object.<anonymous> (src/a.test.ts:3:9)\n    at run (node:internal)'),
    ).toEqual(['Error: boom']);
  });
});

const failed = (message: string, at?: number): TestResult => ({
  id: 't',
  file: 'tests/cart.test.ts',
  line: 10,
  titlePath: ['cart', 'adds'],
  tags: [],
  annotations: [],
  attempts: [
    {
      retry: 0,
      status: 'failed',
      durationMs: 1,
      errors: [{ message, ...(at ? { location: { file: 'tests/cart.test.ts', line: at } } : {}) }],
      steps: [],
      attachments: [],
    },
  ],
});

describe('where a failure is', () => {
  it('is the failing line in the test file, from the repository root', () => {
    expect(failureAt(failed('x', 14), 'web/')).toBe('web/tests/cart.test.ts:14');
    expect(failureAt(failed('x'))).toBe('tests/cart.test.ts:10');
  });

  it('goes into the run comment and is read back with the error lines', () => {
    const item = { id: 'r', key: 'DEMO-1', test: failed(JEST_TO_BE, 14), progress: {} } as unknown as WorkItem;
    const text = commentFor(item, ['report.png not uploaded: too large'], 'gh-1-1', {
      classification: { classification: 'new', reason: 'first failure' },
      at: 'web/tests/cart.test.ts:14',
    });
    const read = readComment(text);
    expect(read).toMatchObject({
      file: 'web/tests/cart.test.ts',
      line: 14,
      error: 'expect(received).toBe(expected) // Object.is equality',
      errorLines: ['expect(received).toBe(expected) // Object.is equality', 'Expected: 3', 'Received: 2'],
      classification: 'new',
    });
    // A comment without the location line (an older reporter's) still gives its error.
    expect(readComment('Failed: a > b\nError: boom\nClassification: new (first)').errorLines).toEqual(['Error: boom']);
  });
});
