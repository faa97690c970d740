import { describe, expect, it } from 'vitest';
import { filesToSend } from '../../src/engine/delivery/attachments.js';
import type { Attempt, ResultAttachment, TestResult } from '../../src/engine/kernel/model.js';
import type { AttachmentChoice } from '../../src/engine/kernel/work.js';

/**
 * Which files of a result are sent: Playwright's failure context (`error-context.md`) goes with a failed result's
 * files whatever kinds the config asks for, unless the config asks for no files at all.
 */

const DEFAULT: AttachmentChoice = { screenshots: 'on-failure', traces: false, videos: false, others: false };
const NONE: AttachmentChoice = { screenshots: 'off', traces: false, videos: false, others: false };

const context: ResultAttachment = {
  name: 'error-context',
  contentType: 'text/markdown',
  path: '/p/test-results/a-fails/error-context.md',
};
const shot: ResultAttachment = {
  name: 'screenshot',
  contentType: 'image/png',
  path: '/p/test-results/a-fails/test-failed-1.png',
};
const log: ResultAttachment = { name: 'server log', contentType: 'text/plain', body: new TextEncoder().encode('x') };

function attempt(status: Attempt['status'], attachments: ResultAttachment[], retry = 0): Attempt {
  return { retry, status, durationMs: 1, errors: [], steps: [], attachments };
}
function result(...attempts: Attempt[]): TestResult {
  return { id: 'a', file: 'a.spec.ts', titlePath: ['fails'], tags: [], annotations: [], attempts };
}
const names = (t: TestResult, c: AttachmentChoice) =>
  filesToSend(t, c).map((f) => [f.attachment.name, f.errorContext ?? false]);

describe('filesToSend: the failure context', () => {
  it('goes with a failed result under the default config (screenshots on failure only), after the chosen files', () => {
    const t = result(attempt('failed', [context, shot, log]));
    expect(names(t, DEFAULT)).toEqual([
      ['screenshot', false],
      ['error-context', true],
    ]);
  });

  it('goes with a timed-out or interrupted result too, and with screenshots off but other kinds on', () => {
    expect(names(result(attempt('timedOut', [context])), DEFAULT)).toEqual([['error-context', true]]);
    expect(names(result(attempt('interrupted', [context])), DEFAULT)).toEqual([['error-context', true]]);
    expect(names(result(attempt('failed', [context, shot])), { ...NONE, traces: true })).toEqual([
      ['error-context', true],
    ]);
  });

  it('is sent once when the config asks for other files anyway, and still marked for the comment', () => {
    const t = result(attempt('failed', [shot, context, log]));
    expect(names(t, { ...DEFAULT, others: true })).toEqual([
      ['screenshot', false],
      ['error-context', true],
      ['server log', false],
    ]);
  });

  it('is left out when the config asks for no files at all', () => {
    expect(filesToSend(result(attempt('failed', [context, shot])), NONE)).toEqual([]);
  });

  it('is not sent for a passed, flaky, skipped or expected failure: only the last attempt of a failure counts', () => {
    expect(filesToSend(result(attempt('passed', [context])), DEFAULT)).toEqual([]);
    // Flaky: the failed first attempt wrote one, the passing last attempt did not.
    expect(filesToSend(result(attempt('failed', [context]), attempt('passed', [], 1)), DEFAULT)).toEqual([]);
    expect(filesToSend(result(attempt('skipped', [])), DEFAULT)).toEqual([]);
    const expectedToFail = { ...result(attempt('failed', [context])), expectedToFail: true };
    expect(filesToSend(expectedToFail, DEFAULT)).toEqual([]);
  });

  it('takes the last attempt’s own file when every attempt failed', () => {
    const first = { ...context, path: '/p/test-results/a-fails/error-context.md' };
    const second = { ...context, path: '/p/test-results/a-fails-retry1/error-context.md' };
    const chosen = filesToSend(result(attempt('failed', [first]), attempt('failed', [second], 1)), DEFAULT);
    expect(chosen.map((f) => f.attachment.path)).toEqual([second.path]);
  });

  it('is sent from memory too (Playwright 1.51), never when it has neither path nor body', () => {
    const inMemory = { name: 'error-context', contentType: 'text/markdown', body: new TextEncoder().encode('# Page') };
    expect(names(result(attempt('failed', [inMemory])), DEFAULT)).toEqual([['error-context', true]]);
    const empty = { name: 'error-context', contentType: 'text/markdown' };
    expect(filesToSend(result(attempt('failed', [empty])), DEFAULT)).toEqual([]);
  });
});
