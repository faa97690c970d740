import { describe, expect, it } from 'vitest';
import { TM_GROUPS, TM_UPLOADS } from '../src/client/tm.js';
import { tmOperations } from '../src/contract/index.js';

describe('test-management client groups', () => {
  it('offer every operation of the contract exactly once', () => {
    const grouped = [...Object.values(TM_GROUPS), ...Object.values(TM_UPLOADS)].flatMap((g) =>
      Object.values(g).map((op) => op.id),
    );
    expect(tmOperations).toHaveLength(72);
    expect(new Set(grouped).size).toBe(grouped.length);
    expect([...grouped].sort()).toEqual(tmOperations.map((op) => op.id).sort());
  });
});
