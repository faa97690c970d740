import { describe, expect, it } from 'vitest';
import { TM_GROUPS } from '../../src/client/tm.js';
import { tmOperations } from '../../src/contract/index.js';

describe('test-management client groups', () => {
  it('offer every operation of the contract exactly once', () => {
    const grouped = Object.entries(TM_GROUPS).flatMap(([group, ops]) =>
      Object.entries(ops).map(([name, op]) => {
        expect(op.id).toBe(`${group}.${name}`);
        expect(op.group).toBe(group);
        return op.id;
      }),
    );
    expect(tmOperations).toHaveLength(72);
    expect(new Set(grouped).size).toBe(grouped.length);
    expect([...grouped].sort()).toEqual(tmOperations.map((op) => op.id).sort());
  });
});
