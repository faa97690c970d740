import { describe, expect, it } from 'vitest';
import { caseIdentity } from '../../src/engine/cases/identity.js';
import { base, ctx, project, report, result, useEngineWorld } from '../support/engine-world.js';

/**
 * A quarantined case of a test without a key (autoCreate found its case by the identity casebridge wrote in it):
 * when the test passes, the summary names the case as a quarantined one that passed, as it does for a keyed test.
 */

const world = useEngineWorld();

describe('quarantine and tests without a key', () => {
  it('a quarantined case found by its identity that passes is named in the summary', async () => {
    const passing = result('checkout works', 'passed');
    const tm = world.admin();
    let key = '';
    try {
      ({ key } = await tm.jira.createIssue({
        fields: {
          project: { key: 'DEMO' },
          issuetype: { name: 'Test Case' },
          summary: 'checkout works',
          description: `Created by casebridge.\ncasebridge-id: ${caseIdentity(passing)}`,
          labels: ['casebridge-quarantine'],
        },
      }));
    } finally {
      await tm.close();
    }
    const lines: string[] = [];
    // Jest reads the quarantined set at the first failure: DEMO-2's, keyed.
    const end = await report(
      base(world.emulator().url, { autoCreate: true, defects: { enabled: false } }),
      [result('DEMO-2 logs in', 'failed'), passing],
      { ...ctx(project(), lines), runner: { name: 'jest' } },
    );
    expect(end.summary.quarantine?.passed).toEqual([key]);
    expect(end.summary.quarantine?.failed).toEqual([]);
    expect(lines.join('\n')).toContain(key);
  });
});
