import { describe, expect, it } from 'vitest';
import { demoSeed, type SeedInput } from '../src/index.js';
import { parseJql } from '../src/jira/jql.js';
import { call, useEmulator } from './helpers.js';

/**
 * The JQL a requirement-coverage query sends: requirements and stories by project and type, and `fixVersion` (`=`,
 * `!=`, `in`, `not in`, by a version's name or id) over the issues' Fix Version/s, as Jira answers them.
 */

const API = '/rest/api/2';
const demo = demoSeed.projects?.[0];
if (!demo) throw new Error('the demo seed has a project');

const releasesSeed: SeedInput = {
  ...demoSeed,
  projects: [
    {
      ...demo,
      versions: ['2.2', '2.3'],
      createScreens: {
        Requirement: { fields: ['labels', 'fixVersions'] },
        Story: { fields: ['labels', 'fixVersions'] },
      },
    },
  ],
};

describe('parseJql: fixVersion', () => {
  it('reads fixVersion in any letter case, with =, !=, in and not in', () => {
    expect(parseJql('fixVersion = "2.3" AND FIXVERSION in (2.2, 10001) AND fixversion != 2.2').clauses).toEqual([
      { field: 'fixVersion', negated: false, values: ['2.3'] },
      { field: 'fixVersion', negated: false, values: ['2.2', '10001'] },
      { field: 'fixVersion', negated: true, values: ['2.2'] },
    ]);
    expect(parseJql('fixVersion not in (2.2)').clauses).toEqual([
      { field: 'fixVersion', negated: true, values: ['2.2'] },
    ]);
  });

  it('refuses the operators fixVersion does not take', () => {
    expect(() => parseJql('fixVersion ~ 2.3')).toThrow("The operator '~' is not supported by the 'fixVersion' field.");
    expect(() => parseJql('fixVersion > 2.3')).toThrow("The operator '>' is not supported by the 'fixVersion' field.");
  });
});

describe('Jira search: requirements, stories and fix versions', () => {
  const emu = useEmulator({ seed: releasesSeed, jira: { indexLagMs: 0 } });
  const create = async (type: string, summary: string, versions: string[]) => {
    const fields: Record<string, unknown> = { project: { key: 'DEMO' }, issuetype: { name: type }, summary };
    if (versions.length) fields.fixVersions = versions.map((name) => ({ name }));
    const r = await call(emu(), 'POST', `${API}/issue`, { body: { fields } });
    expect(r.status, r.text).toBe(201);
    return r.json.key as string;
  };
  const keys = async (jql: string) => {
    const r = await call(emu(), 'GET', `${API}/search`, { query: { jql, fields: 'fixVersions' } });
    expect(r.status, `${jql}: ${r.text}`).toBe(200);
    return (r.json.issues as { key: string }[]).map((i) => i.key);
  };

  it('finds requirements by project and type, stories by type, and issues by fix version', async () => {
    const story = await create('Story', 'Returns in 2.3', ['2.3']);
    const req23 = await create('Requirement', 'Refunds', ['2.3']);
    const req22 = await create('Requirement', 'Invoices', ['2.2']);
    const both = await create('Requirement', 'Vouchers', ['2.2', '2.3']);

    expect(await keys('project = DEMO AND issuetype = Requirement')).toEqual([
      'DEMO-8',
      'DEMO-9',
      'DEMO-10',
      req23,
      req22,
      both,
    ]);
    expect(await keys('issuetype = Story')).toEqual([story]);
    expect(await keys('fixVersion = "2.3"')).toEqual([story, req23, both]);
    expect(await keys('fixVersion = 2.3 AND issuetype = Story')).toEqual([story]);
    expect(await keys('fixVersion in (2.2, 2.3) AND issuetype = Requirement')).toEqual([req23, req22, both]);
    // By id: the seed numbers versions from 10000 (2.2 is 10000, 2.3 is 10001).
    expect(await keys('fixVersion = 10000')).toEqual([req22, both]);
    // As in Jira, != and not in never match an issue without a fix version (DEMO-8..10 have none).
    expect(await keys('fixVersion != 2.2')).toEqual([story, req23]);
    expect(await keys('fixVersion not in (2.3)')).toEqual([req22]);
    expect(await keys('project = DEMO AND (fixVersion = 2.2 OR issuetype = Story)')).toEqual([story, req22, both]);
  });

  it('answers 400 naming a version no project has', async () => {
    const r = await call(emu(), 'GET', `${API}/search`, { query: { jql: 'fixVersion = "9.9"' } });
    expect(r.status).toBe(400);
    expect(r.json.errorMessages).toEqual(["The value '9.9' does not exist for the field 'fixVersion'."]);
  });
});
