import { describe, expect, it } from 'vitest';
import { applySeed, demoSeed } from '../src/seed/seed.js';
import { Store } from '../src/store/store.js';
import { call, useEmulator } from './helpers.js';

/**
 * The Jira version switch (seed `jiraVersion`): the old `issue/createmeta` exists before 9.0 (JRASERVER-74965), the
 * paged `issue/createmeta/{project}/issuetypes[/{id}]` from 8.4 (JRASERVER-69898). Default: 10.3.
 */

const API = '/rest/api/2';
const OLD = `${API}/issue/createmeta`;
const PAGED = `${API}/issue/createmeta/DEMO/issuetypes`;

const cases: [string | undefined, { old: number; paged: number }][] = [
  ['8.3', { old: 200, paged: 404 }],
  ['8.20', { old: 200, paged: 200 }],
  ['9.12', { old: 404, paged: 200 }],
  ['10.3', { old: 404, paged: 200 }],
  [undefined, { old: 404, paged: 200 }],
];

for (const [version, expected] of cases) {
  describe(`Jira ${version ?? 'default (10.3)'}`, () => {
    const emu = useEmulator({ seed: version ? { ...demoSeed, jiraVersion: version } : demoSeed });

    it(`old createmeta ${expected.old}, paged createmeta ${expected.paged}`, async () => {
      const old = await call(emu(), 'GET', OLD, { query: { projectKeys: 'DEMO' } });
      expect(old.status).toBe(expected.old);
      const paged = await call(emu(), 'GET', PAGED);
      expect(paged.status).toBe(expected.paged);
      const bugId = '1';
      expect((await call(emu(), 'GET', `${PAGED}/${bugId}`)).status).toBe(expected.paged);
      for (const r of [old, paged].filter((x) => x.status === 404)) {
        // Jira's error shape, saying why the resource is missing on this version.
        expect(r.json.errors).toEqual({});
        expect(r.json.errorMessages[0]).toMatch(
          /^No operation at GET \/rest\/api\/2\/issue\/createmeta.*(removed in Jira 9\.0|added in Jira 8\.4)/,
        );
      }
    });
  });
}

describe('jiraVersion in the seed', () => {
  it('refuses a version that is not major.minor', () => {
    expect(() => applySeed(new Store(), { ...demoSeed, jiraVersion: 'ten' })).toThrow(/major\.minor/);
  });
});
