import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { caseIdentity, caseSummary, identityInDescription } from '../../src/engine/cases/registry.js';
import { statusRanker } from '../../src/engine/kernel/status-rank.js';
import { pipelineId, pipelineMarker } from '../../src/engine/kernel/text.js';

const rank = statusRanker();
const isWorse = (a: string, b: string) => rank(a) > rank(b);

/** Pure logic of a first run on a real suite: test identity, case summaries, batching, the pipeline rule. */

describe('test identity', () => {
  const t = (file: string, ...titlePath: string[]) => ({ file, titlePath });

  it('is exact: a title that is a prefix of another, or repeated in another file or describe, is another test', () => {
    const ids = [
      t('a/utils.test.ts', 'parses'),
      t('a/utils.test.ts', 'parses dates'),
      t('b/utils.test.ts', 'parses'),
      t('a/utils.test.ts', 'dates', 'parses'),
      t('ui/frame.spec.ts', 'clicks inside frame'),
      t('ui/frame.spec.ts', 'clicks inside frame submits a single request'),
      t('a/utils.test.ts', ''),
      t('a/utils.test.ts', 'x', ''),
    ].map(caseIdentity);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{20}$/);
    // Identical file and title path: one test, one case.
    expect(caseIdentity(t('a/utils.test.ts', 'parses'))).toBe(ids[0]);
  });

  it('is read back from a description line, never from a substring; cases of earlier versions by their name line', () => {
    const id = caseIdentity(t('a.test.ts', 'parses dates'));
    expect(identityInDescription(`Created by casebridge for a.test.ts\ncasebridge-test: x\ncasebridge-id: ${id}`)).toBe(
      id,
    );
    expect(identityInDescription(`casebridge-id: ${id}0`)).toBeUndefined();
    expect(identityInDescription('a case a person wrote')).toBeUndefined();
    const legacy = createHash('sha256').update('a.test.ts > parses').digest('hex').slice(0, 20);
    expect(identityInDescription('Created by casebridge for a.test.ts\ncasebridge-test: a.test.ts > parses')).toBe(
      legacy,
    );
    expect(legacy).toBe(caseIdentity(t('a.test.ts', 'parses')));
    expect(legacy).not.toBe(caseIdentity(t('a.test.ts', 'parses dates')));
  });
});

describe('case summaries Jira accepts for any title', () => {
  it('a blank title takes its describe path and file; never empty, one line, at most 255 characters', () => {
    expect(caseSummary({ file: 'tests/cart.spec.ts', titlePath: ['cart', '  '] })).toBe(
      'cart > (untitled test) in tests/cart.spec.ts',
    );
    expect(caseSummary({ file: 'tests/cart.spec.ts', titlePath: [''] })).toBe('(untitled test) in tests/cart.spec.ts');
    expect(caseSummary({ file: 'a.ts', titlePath: ['two\nlines\tand  spaces'] })).toBe('two lines and spaces');
    const long = caseSummary({ file: 'a.ts', titlePath: ['x'.repeat(300)] });
    expect(long.length).toBe(255);
    for (const odd of ['"quoted" \\ ~ AND OR ORDER BY', '🚀 emoji', 'שלום עולם', 'NOT IN (a, b) [x] {y}: *?']) {
      expect(caseSummary({ file: 'a.ts', titlePath: [odd] })).toBe(odd);
    }
  });
});

describe('the pipeline rule', () => {
  it('names one pipeline run across its machines, and a new attempt differently', () => {
    expect(pipelineId({ GITHUB_RUN_ID: '77', GITHUB_RUN_ATTEMPT: '2' })).toBe('gh-77-2');
    expect(pipelineId({ GITHUB_RUN_ID: '77', GITHUB_RUN_ATTEMPT: '3' })).toBe('gh-77-3');
    expect(pipelineId({ CI_PIPELINE_ID: '5' })).toBe('gl-5');
    expect(pipelineId({ CASEBRIDGE_PIPELINE_ID: 'nightly 12', GITHUB_RUN_ID: '1' })).toBe('nightly-12');
    expect(pipelineId({})).toBeUndefined();
    expect(pipelineMarker('gh-77-2')).toBe('casebridge-pipeline: gh-77-2');
  });

  it('orders statuses by badness, whatever their case', () => {
    expect(isWorse('Failed', 'Passed')).toBe(true);
    expect(isWorse('FAILED', 'passed')).toBe(true);
    expect(isWorse('Blocked', 'Not Tested')).toBe(true);
    expect(isWorse('Passed', 'Failed')).toBe(false);
    expect(isWorse('Failed', 'Failed')).toBe(false);
  });
});
