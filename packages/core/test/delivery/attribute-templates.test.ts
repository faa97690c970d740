import { describe, expect, it } from 'vitest';
import { attributeValuesOf, parseRunKey, runKey, unknownVariables } from '../../src/engine/kernel/attributes.js';
import type { TestResult } from '../../src/index.js';

/** The templates of option `attributes` over one result, and the run key of a case and its attribute set. */

const test = (extra: Partial<TestResult> = {}): TestResult => ({
  id: 'a.spec.ts>t>firefox',
  file: 'a.spec.ts',
  titlePath: ['t'],
  project: 'firefox',
  tags: ['smoke', 'os-linux', 'os-'],
  annotations: [{ type: 'env', description: 'staging' }, { type: 'env', description: 'prod' }, { type: 'empty' }],
  params: { locale: 'de' },
  attempts: [],
  ...extra,
});

describe('attribute templates', () => {
  it('fills ${project}, ${tag:<prefix>}, ${annotation:<type>} and ${param.<name>}, first match wins', () => {
    expect(
      attributeValuesOf(test(), {
        Browser: '${project}',
        OS: '${tag:os-}',
        Environment: '${annotation:env}',
        Locale: '${param.locale}',
        Label: ' ${project} on ${tag:@os-} ',
      }),
    ).toEqual({ Browser: 'firefox', OS: 'linux', Environment: 'staging', Locale: 'de', Label: 'firefox on linux' });
  });

  it('a template that gives nothing is "-" (no value): no project, no such tag, an annotation without text', () => {
    expect(
      attributeValuesOf(test({ project: undefined, params: undefined }), {
        Browser: '${project}',
        Device: '${tag:device-}',
        Empty: '${annotation:empty}',
        Locale: '${param.locale}',
      }),
    ).toEqual({ Browser: '-', Device: '-', Empty: '-', Locale: '-' });
  });

  it('names the ${...} that are no variable', () => {
    expect(unknownVariables('${project} ${browser} ${tag:x} ${param.} ${annotation:}')).toEqual([
      '${browser}',
      '${param.}',
      '${annotation:}',
    ]);
  });

  it('a run key is the case and its set without "-" values, in name order: the same set is the same run', () => {
    const a = runKey('DEMO-1', { OS: 'linux', Browser: 'firefox', Device: '-' });
    expect(a).toBe(runKey('DEMO-1', { Browser: 'firefox', OS: 'linux' }));
    expect(parseRunKey(a)).toEqual({ key: 'DEMO-1', set: { Browser: 'firefox', OS: 'linux' } });
    expect(runKey('DEMO-1')).toBe('DEMO-1');
    expect(parseRunKey('DEMO-1')).toEqual({ key: 'DEMO-1' });
  });
});
