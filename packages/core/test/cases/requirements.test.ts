import { describe, expect, it } from 'vitest';
import { requirementsOf } from '../../src/engine/cases/requirements.js';
import type { TestResult } from '../../src/engine/kernel/model.js';
import { fromRecords, mergeRuntime } from '../../src/runtime/channel.js';

const result = (annotations: TestResult['annotations']): TestResult => ({
  id: 't',
  file: 'a.test.ts',
  titlePath: ['a'],
  tags: [],
  annotations,
  attempts: [{ retry: 0, status: 'passed', durationMs: 1, errors: [], steps: [], attachments: [] }],
});

describe('the requirements a test names', () => {
  it("reads requirement annotations and JUnit's requirements property, commas or spaces between keys", () => {
    expect(
      requirementsOf(
        result([
          { type: 'requirement', description: 'PROJ-5' },
          { type: 'requirements', description: 'PROJ-6, PROJ-7 PROJ-5' },
          { type: 'requirement', description: 'not a key' },
          { type: 'testCase', description: 'PROJ-1' },
        ]),
      ),
    ).toEqual(['PROJ-5', 'PROJ-6', 'PROJ-7']);
  });

  it('takes requirement(...) calls recorded in a worker as annotations, each once', () => {
    const data = fromRecords([
      { v: 1, kind: 'requirements', attempt: 0, keys: ['PROJ-5'] },
      { v: 1, kind: 'requirements', attempt: 1, keys: ['PROJ-5', 'PROJ-8'] },
    ]);
    expect(data.requirements).toEqual(['PROJ-5', 'PROJ-8']);
    const merged = mergeRuntime(result([{ type: 'requirement', description: 'PROJ-5' }]), data, '/nowhere');
    expect(requirementsOf(merged)).toEqual(['PROJ-5', 'PROJ-8']);
    expect(merged.annotations.filter((a) => a.type === 'requirement')).toHaveLength(2);
  });
});
