import { describe, expect, it } from 'vitest';
import { commentFor, readComment } from '../../src/engine/delivery/comment.js';
import type { TestResult } from '../../src/engine/kernel/model.js';
import { DEFAULT_STATUS_MAP } from '../../src/engine/kernel/work.js';
import {
  attachmentKind,
  errorOfComment,
  failureDetail,
  ownFrames,
  storedFiles,
} from '../../src/engine/query/failure.js';
import { QueryError, type Reader } from '../../src/engine/query/results.js';
import { base, last, png, report, result, step, useEngineWorld } from '../support/engine-world.js';

/** One failure's story (query/failure.ts): the comment's error and stack read back, and what the story costs. */

const MATCHER = ['expect(received).toBe(expected) // Object.is equality', '', 'Expected: 3', 'Received: 2'].join('\n');

const failed = (message: string, stack?: string): TestResult => ({
  id: 'x',
  file: 'tests/shop.test.js',
  titlePath: ['DEMO-2 adds'],
  tags: [],
  annotations: [],
  attempts: [
    {
      retry: 0,
      status: 'failed',
      durationMs: 1,
      errors: [{ message, ...(stack ? { stack } : {}) }],
      steps: [],
      attachments: [],
    },
  ],
});
const item = (t: TestResult) => ({
  id: '1',
  key: 'DEMO-2',
  test: t,
  target: { mode: 'cycle' as const, projectKey: 'DEMO' },
  progress: {},
});

describe('the error of a run comment', () => {
  it('every line of the message as commentFor wrote it, colours gone; no stack when the comment has none', () => {
    const comment = commentFor(item(failed(`\u001b[2m${MATCHER}\u001b[22m`)), ['Defect: DEMO-40'], undefined, {
      at: 'tests/shop.test.js:3',
      classification: { classification: 'new', reason: 'first failure' },
      signature: '0123456789abcdef',
    });
    const got = errorOfComment(comment, 'tests/shop.test.js');
    expect(got).toEqual({ message: MATCHER.split('\n') });
    // The same block readComment reads: its first line and meaningful lines agree.
    const said = readComment(comment);
    expect(got?.message[0]).toBe(said.error);
    expect(said.errorLines).toEqual([
      'expect(received).toBe(expected) // Object.is equality',
      'Expected: 3',
      'Received: 2',
    ]);
  });

  it('a message holding frames: the stack apart, trimmed to the project’s frames, paths from the root', () => {
    const comment = [
      'Failed: tests/shop.test.js > DEMO-2 adds',
      'At: tests/shop.test.js:3',
      'Error: boom',
      '    at Object.<anonymous> (/ci/work/repo/tests/shop.test.js:3:17)',
      '    at helper (/ci/work/repo/tests/support/cart.js:10:5)',
      '    at Promise.then.completed (/ci/work/repo/node_modules/jest-circus/build/utils.js:298:28)',
      '    at new Promise (<anonymous>)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      'Classification: new (first failure)',
    ].join('\n');
    expect(errorOfComment(comment, 'tests/shop.test.js')).toEqual({
      message: ['Error: boom'],
      stack: ['at Object.<anonymous> (tests/shop.test.js:3:17)', 'at helper (tests/support/cart.js:10:5)'],
    });
  });

  it('frames none of which is the project’s: the first three, where it threw', () => {
    const frames = [
      '    at a (node:internal/x:1:1)',
      '    at b (/r/node_modules/p/i.js:2:2)',
      '    at c (/r/node_modules/p/j.js:3:3)',
      '    at d (/r/node_modules/p/k.js:4:4)',
    ];
    expect(ownFrames(frames, 'tests/shop.test.js')).toEqual([
      'at a (node:internal/x:1:1)',
      'at b (/r/node_modules/p/i.js:2:2)',
      'at c (/r/node_modules/p/j.js:3:3)',
    ]);
  });

  it('a comment that names no failure, or a person’s, has no error', () => {
    expect(errorOfComment('Flaky: passed on attempt 2 after 1 failed attempt(s) (retry 0): x')).toBeUndefined();
    expect(errorOfComment('looked at it, a data problem')).toBeUndefined();
    expect(errorOfComment(undefined)).toBeUndefined();
  });
});

describe('files', () => {
  it('kinds by name and type', () => {
    expect(attachmentKind('error-context.md', 'text/markdown')).toBe('error-context');
    expect(attachmentKind('screenshot.png', 'image/png')).toBe('screenshot');
    expect(attachmentKind('trace.zip', 'application/zip')).toBe('trace');
    expect(attachmentKind('video.webm', 'video/webm')).toBe('video');
    expect(attachmentKind('login.log', 'text/plain')).toBe('other');
  });
  it('those stored in the content repository, by the comment’s lines', () => {
    const comment = [
      'Failed: x',
      'Error: boom',
      'Page state at the failure: error-context.md (https://repo.example/d/1)',
      'trace.zip: https://repo.example/d/2',
      'video.webm not uploaded: 80 MB is over attachments.maxBytes (50 MB)',
    ].join('\n');
    expect(storedFiles(comment)).toEqual([
      { name: 'error-context.md', kind: 'error-context', url: 'https://repo.example/d/1', stored: true },
      { name: 'trace.zip', kind: 'trace', url: 'https://repo.example/d/2', stored: true },
    ]);
  });
});

const world = useEngineWorld();

describe('failureDetail against the emulator', () => {
  it('the run, its steps, files with links, the defect’s status and assignee, the last results; 5 requests', async () => {
    const emu = world.emulator();
    const reader: Reader = { tm: world.admin(), baseUrl: emu.url, statusMap: DEFAULT_STATUS_MAP };
    const checkout = () => {
      const t = result('DEMO-5 pays with the saved card', 'failed');
      last(t).steps = [
        step('Add a product to the cart', 'passed'),
        step('Open checkout', 'failed', {
          error: { message: 'no card' },
          attachments: [{ name: 'screenshot', contentType: 'image/png', body: png }],
        }),
      ];
      return t;
    };
    for (const cycle of ['N1', 'N2']) {
      await report(base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle }), [
        checkout(),
        result('DEMO-2 logs in', 'passed'),
      ]);
    }
    const since = emu.requests().at(-1)?.seq ?? 0;
    const d = await failureDetail(reader, 'DEMO-1', 'N2', 'DEMO-5');
    // The cycle and the history at once, the run's details, the defect (the id variant links the files).
    const ops = emu
      .requests()
      .filter((q) => q.seq > since && !q.path.startsWith('/__emulator'))
      .map((q) => q.op)
      .sort();
    expect(ops).toEqual(
      ['cycles.testRunsByCycleId', 'jira.issue', 'plans.cycles', 'runs.caseTestRuns', 'runs.get'].sort(),
    );
    expect(d).toMatchObject({
      key: 'DEMO-5',
      run: { status: 'Failed', result: 'failed' },
      classification: 'known',
      error: ['expected 200, got 500 for DEMO-5 pays with the saved card'],
    });
    expect(d.stack).toBeUndefined();
    expect(d.steps.map((s) => [s.step, s.status])).toEqual([
      [1, 'Passed'],
      [2, 'Failed'],
      [3, 'Not Tested'],
    ]);
    expect(d.attachments).toEqual([
      expect.objectContaining({ kind: 'screenshot', step: 2, url: expect.stringMatching(/\/download\//) }),
    ]);
    const download = await fetch(d.attachments[0]?.url as string, {
      headers: { authorization: 'Bearer casebridge-dev-token' },
    });
    expect(Buffer.from(await download.arrayBuffer())).toEqual(png);
    expect(d.defects).toHaveLength(1);
    // The seed's Bug screen has no assignee: filed unassigned (null), in its workflow's first status.
    expect(d.defects[0]).toMatchObject({ status: 'Offen', done: false, assignee: null });
    expect(d.history.runs.map((r) => r.cycle)).toEqual(['N2', 'N1']);

    // A passing run is told too, without an error; an unknown case and a case with no run are QueryErrors.
    expect((await failureDetail(reader, 'DEMO-1', 'N2', 'DEMO-2')).error).toBeUndefined();
    await expect(failureDetail(reader, 'DEMO-1', 'N2', 'DEMO-999')).rejects.toThrow(
      new QueryError('test case DEMO-999 is not there (or not a test case these credentials can read)'),
    );
    await expect(failureDetail(reader, 'DEMO-1', 'N2', 'DEMO-7')).rejects.toThrow(/DEMO-7 has no run in cycle "N2"/);
    await expect(failureDetail(reader, 'DEMO-1', 'N9', 'DEMO-5')).rejects.toBeInstanceOf(QueryError);
  });
});
