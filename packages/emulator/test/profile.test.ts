import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resolveBehaviour } from '../src/behaviour/profile.js';
import { PROFILES, type RunningEmulator, startEmulator } from '../src/index.js';
import { basic, call } from './helpers.js';
import { ensureBuilt, runCli, startCli, stopCli } from './spawn.js';

/**
 * The Jira behaviour: a profile (realistic or ideal) with knobs over it, from startEmulator's options, the command
 * line and `PUT /__emulator/jira`; a bad knob is refused naming it.
 */

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/** What a profile does to requests, as a client sees it over HTTP (a test clock stands in for the index lag). */
interface Observed {
  /** The page a search for 5,000 answers with. */
  pageCap: number;
  /** A search whose page ends at 10,050: its status (500 past OpenSearch's result window). */
  deepPage: number;
  /** Whether a new issue is found by a search at once, 999 ms later and 1,000 ms later. */
  found: [boolean, boolean, boolean];
  /** The cluster nodes the balancer's ROUTEID cookie named over four requests without cookies. */
  nodes: string[];
  /** Whether `~` finds a word by a piece of it (a substring test) rather than by whole words. */
  substring: boolean;
  /** A personal access token sent as a Basic password: the status. */
  patAsBasic: number;
  /** The right password after three failed Basic logins in a row: the status (403: the CAPTCHA). */
  afterThreeFailures: number;
  /** The largest bulk create taken, by the refusal of one issue more. */
  bulkMax: string;
  /** Whether a bulk create of 10 issues took at least 10 × 25 ms (Jira's time per issue). */
  slowCreates: boolean;
}

const API = '/rest/api/2';

async function observe(profile: 'realistic' | 'ideal' | undefined): Promise<Observed> {
  let clock = Date.UTC(2026, 10, 25, 12, 0);
  emu = await startEmulator({ port: 0, now: () => clock, ...(profile ? { profile } : {}) });
  const e = emu;
  const search = (jql: string, query: Record<string, number> = {}) =>
    call(e, 'GET', `${API}/search`, { query: { jql, ...query } });
  const issue = (summary: string) => ({ fields: { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary } });

  const pageCap = (await search('project = DEMO', { maxResults: 5000 })).json.maxResults;
  const deepPage = (await search('project = DEMO', { startAt: 9_950, maxResults: 100 })).status;

  expect((await call(e, 'POST', `${API}/issue`, { body: issue('Zeppelin checkout fails') })).status).toBe(201);
  const findsIt = async () => (await search('summary ~ zeppelin')).json.total === 1;
  const found: [boolean, boolean, boolean] = [await findsIt(), false, false];
  clock += 999;
  found[1] = await findsIt();
  clock += 1;
  found[2] = await findsIt();
  const substring = (await search('summary ~ "eppeli"')).json.total === 1;

  const nodes = new Set<string>();
  for (let i = 0; i < 4; i++) {
    for (const c of (await call(e, 'GET', `${API}/myself`)).headers.getSetCookie()) {
      const route = /^ROUTEID=(node\d+)/.exec(c)?.[1];
      if (route) nodes.add(route);
    }
  }

  const patAsBasic = (await call(e, 'GET', `${API}/myself`, { auth: basic('admin', 'casebridge-dev-token') })).status;
  for (let i = 0; i < 3; i++) {
    expect((await call(e, 'GET', `${API}/myself`, { auth: basic('tester', 'wrong') })).status).toBe(401);
  }
  const afterThreeFailures = (await call(e, 'GET', `${API}/myself`, { auth: basic('tester', 'tester') })).status;

  const bulk = (n: number) =>
    call(e, 'POST', `${API}/issue/bulk`, {
      body: { issueUpdates: Array.from({ length: n }, (_, i) => issue(`bulk ${i}`)) },
    });
  const cap = (await bulk(51)).status === 400 ? 50 : 1000;
  const refused = await bulk(cap + 1);
  expect(refused.status).toBe(400);
  const bulkMax = /exceeds the maximum of (\d+)/.exec(refused.json.errorMessages[0])?.[1] ?? '?';

  // A lower bound only (a timer never fires early); the kind profile's ten creates take a few milliseconds.
  const started = performance.now();
  expect((await bulk(10)).status).toBe(201);
  const slowCreates = performance.now() - started >= 10 * 25 - 1;

  return {
    pageCap,
    deepPage,
    found,
    nodes: [...nodes].sort(),
    substring,
    patAsBasic,
    afterThreeFailures,
    bulkMax,
    slowCreates,
  };
}

describe('profiles and knobs', () => {
  it('realistic (the default) acts as Jira Data Center does; ideal is the kind stand-in', async () => {
    const realistic: Observed = {
      pageCap: 100,
      deepPage: 500,
      found: [false, false, true],
      nodes: ['node1', 'node2'],
      substring: false,
      patAsBasic: 401,
      afterThreeFailures: 403,
      bulkMax: '50',
      slowCreates: true,
    };
    expect(await observe(undefined), 'no profile: the realistic one').toEqual(realistic);
    await emu?.close();
    expect(await observe('realistic')).toEqual(realistic);
    await emu?.close();
    expect(await observe('ideal')).toEqual({
      pageCap: 1000,
      deepPage: 200,
      found: [true, true, true],
      nodes: [],
      substring: true,
      patAsBasic: 200,
      afterThreeFailures: 200,
      bulkMax: '1000',
      slowCreates: false,
    });
  });

  it('a knob wins over its profile; a bad profile or knob is refused naming it', () => {
    expect(resolveBehaviour('ideal', { nodes: 3, indexLagMs: undefined })).toEqual({ ...PROFILES.ideal, nodes: 3 });
    expect(() => resolveBehaviour('harsh')).toThrow(`profile must be 'realistic' or 'ideal', got "harsh"`);
    expect(() => resolveBehaviour('realistic', { nodes: 0 })).toThrow(/invalid Jira behaviour: jira.nodes: .*>=1/);
    expect(() => resolveBehaviour('realistic', { colour: 'red' } as never)).toThrow(/colour/);
  });

  it('startEmulator refuses a bad knob; GET and PUT /__emulator/jira read and change knobs; a reset restores them', async () => {
    await expect(startEmulator({ port: 0, jira: { resultWindowMode: 'quiet' as never } })).rejects.toThrow(
      /jira.resultWindowMode/,
    );
    emu = await startEmulator({ port: 0, profile: 'realistic', jira: { indexLagMs: 250 } });
    expect((await call(emu, 'GET', '/__emulator/jira')).json).toEqual({ ...PROFILES.realistic, indexLagMs: 250 });
    const put = await call(emu, 'PUT', '/__emulator/jira', { body: { indexLagMs: [0, 2500], resultWindow: null } });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ indexLagMs: [0, 2500], resultWindow: null, nodes: 2 });
    expect(emu.jira.indexLagMs).toEqual([0, 2500]);
    const bad = await call(emu, 'PUT', '/__emulator/jira', { body: { nodes: 'two' } });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toMatch(/jira.nodes/);
    await emu.reset();
    expect(emu.jira).toEqual({ ...PROFILES.realistic, indexLagMs: 250 });
  });
});

describe('command line', () => {
  beforeAll(ensureBuilt, 240_000);

  it('--profile and the Jira flags set the behaviour; a bad value exits 2 naming the flag', async () => {
    const cli = await startCli([
      '--port',
      '0',
      '--profile',
      'realistic',
      '--index-lag',
      '100,900',
      '--search-max-results',
      '20',
      '--result-window',
      'off',
      '--pat-as-basic',
      'on',
      '--captcha-after',
      'off',
      '--rate-limit',
      '50/60',
      '--rate-limit-per-user',
      '--retry-after',
      '0',
    ]);
    try {
      expect(cli.stdout()).toContain('Jira: realistic profile, 2 node(s), index lag 100,900 ms');
      const knobs = (await call({ url: cli.url } as RunningEmulator, 'GET', '/__emulator/jira')).json;
      expect(knobs).toMatchObject({
        indexLagMs: [100, 900],
        searchMaxResults: 20,
        resultWindow: null,
        patAsBasic: true,
        captchaAfterFailedLogins: null,
      });
      const r = await call({ url: cli.url } as RunningEmulator, 'GET', '/rest/api/2/myself');
      expect(r.headers.get('x-ratelimit-limit')).toBe('50');
      expect(r.headers.get('x-ratelimit-interval-seconds')).toBe('60');
    } finally {
      await stopCli(cli);
    }
    for (const [args, message] of [
      [['--profile', 'harsh'], /profile must be 'realistic' or 'ideal', got "harsh"/],
      [['--nodes', 'two'], /--nodes expects a number, got "two"/],
      [['--pat-as-basic', 'yes'], /--pat-as-basic expects on or off, got "yes"/],
      [['--result-window-mode', 'quiet'], /jira.resultWindowMode/],
      [
        ['--rate-limit', '10/0'],
        /--rate-limit expects requests per second above 0, got "10\/0" \(or N\/SECONDS above 0, e.g. 100\/60\)/,
      ],
    ] as [string[], RegExp][]) {
      const r = await runCli(['--port', '0', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
