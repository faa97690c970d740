import { afterEach, describe, expect, it } from 'vitest';
import { demoSeed, type EmulatorOptions, type RunningEmulator, startEmulator } from '../src/index.js';
import { ADMIN, basic, call, TM } from './helpers.js';

/**
 * Two simulated Jira Data Center nodes behind a sticky load balancer: a login's session lives on the node that
 * made it, found again by the balancer's ROUTEID cookie; a request without the cookie goes to the next node in
 * turn. Personal access tokens work as Bearer only, and failed Basic and session logins lead to the CAPTCHA.
 */

const SESSION = '/rest/auth/1/session';
const MYSELF = '/rest/api/2/myself';
let emu: RunningEmulator | undefined;

async function start(options: EmulatorOptions): Promise<RunningEmulator> {
  emu = await startEmulator({ port: 0, ...options });
  return emu;
}

afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/** The cookies of a login answer, as `name=value` by name. */
function cookiesOf(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of headers.getSetCookie()) {
    const pair = c.split(';')[0] ?? '';
    out[pair.slice(0, pair.indexOf('='))] = pair;
  }
  return out;
}

const login = (e: RunningEmulator, username = ADMIN.user, password = ADMIN.password, headers = {}) =>
  call(e, 'POST', SESSION, { body: { username, password }, auth: null, headers });

describe('two nodes behind a sticky load balancer (realistic)', () => {
  it('a session login sets JSESSIONID and ROUTEID; with both every request is answered', async () => {
    const e = await start({ profile: 'realistic', jira: { nodes: 2 } });
    const r = await login(e);
    expect(r.status).toBe(200);
    const cookies = cookiesOf(r.headers);
    expect(cookies.JSESSIONID).toMatch(/^JSESSIONID=[0-9A-F]{32}$/);
    expect(cookies.ROUTEID).toMatch(/^ROUTEID=node[12]$/);
    const both = `${cookies.JSESSIONID}; ${cookies.ROUTEID}`;
    for (let i = 0; i < 6; i++) {
      const me = await call(e, 'GET', MYSELF, { auth: null, headers: { cookie: both } });
      expect(me.status).toBe(200);
      expect(me.headers.getSetCookie()).toEqual([]);
    }
    expect(
      (await call(e, 'GET', `${TM}/testPlan/DEMO-1/members`, { auth: null, headers: { cookie: both } })).status,
    ).toBe(200);
  });

  it('without ROUTEID the session is unknown on the other node: 401 about every other request', async () => {
    const e = await start({ profile: 'realistic', jira: { nodes: 2 } });
    const cookies = cookiesOf((await login(e)).headers);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      statuses.push(
        (await call(e, 'GET', MYSELF, { auth: null, headers: { cookie: cookies.JSESSIONID ?? '' } })).status,
      );
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    const other = cookies.ROUTEID === 'ROUTEID=node1' ? 'ROUTEID=node2' : 'ROUTEID=node1';
    const wrong = await call(e, 'GET', MYSELF, { auth: null, headers: { cookie: `${cookies.JSESSIONID}; ${other}` } });
    expect(wrong.status).toBe(401);
  });

  it('Basic and Bearer without cookies land on any node, and the balancer offers its cookie', async () => {
    const e = await start({ profile: 'realistic', jira: { nodes: 2 } });
    e.clearRequests();
    for (let i = 0; i < 4; i++) {
      const r = await call(e, 'GET', MYSELF, i % 2 ? { auth: 'Bearer casebridge-dev-token' } : {});
      expect(r.status).toBe(200);
      expect(r.headers.getSetCookie()[0]).toMatch(/^ROUTEID=node[12]; Path=\/$/);
    }
    expect(e.requests().map((l) => l.node)).toEqual(['node1', 'node2', 'node1', 'node2']);
  });

  it("the web UI's login binds its session to a node and sets ROUTEID too", async () => {
    const e = await start({ profile: 'realistic', jira: { nodes: 2 } });
    const r = await fetch(`${e.url}/login.jsp`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'os_username=tester&os_password=tester&os_destination=%2F',
    });
    expect(r.status).toBe(303);
    const cookies = cookiesOf(r.headers);
    expect(cookies.ROUTEID).toMatch(/^ROUTEID=node[12]$/);
    const both = `${cookies.JSESSIONID}; ${cookies.ROUTEID}`;
    expect((await call(e, 'GET', MYSELF, { auth: null, headers: { cookie: both } })).json.name).toBe('tester');
  });

  it('one node (the ideal profile) sets no ROUTEID and keeps a session everywhere', async () => {
    const e = await start({ profile: 'ideal' });
    const r = await login(e);
    expect(Object.keys(cookiesOf(r.headers))).toEqual(['JSESSIONID']);
    for (let i = 0; i < 4; i++) {
      const me = await call(e, 'GET', MYSELF, {
        auth: null,
        headers: { cookie: cookiesOf(r.headers).JSESSIONID ?? '' },
      });
      expect(me.status).toBe(200);
    }
  });
});

describe('personal access tokens and the CAPTCHA (realistic)', () => {
  it('a token works as Bearer; as a Basic password it is a failed login that counts towards the CAPTCHA', async () => {
    const e = await start({ profile: 'realistic' });
    expect((await call(e, 'GET', MYSELF, { auth: 'Bearer casebridge-dev-token' })).status).toBe(200);
    const asBasic = basic('admin', 'casebridge-dev-token');
    expect((await call(e, 'GET', MYSELF, { auth: asBasic })).status).toBe(401);
    expect((await call(e, 'GET', `${TM}/testPlan/DEMO-1/members`, { auth: asBasic })).status).toBe(401);
    expect((await call(e, 'GET', MYSELF, { auth: asBasic })).status).toBe(401);
    // Three failed logins in a row (Jira's default): the right password is refused too, until a browser login.
    const locked = await call(e, 'GET', MYSELF);
    expect(locked.status).toBe(403);
    expect(locked.headers.get('x-authentication-denied-reason')).toMatch(/^CAPTCHA_CHALLENGE; login-url=/);
    expect((await call(e, 'GET', MYSELF, { auth: 'Bearer casebridge-dev-token' })).status).toBe(200);
    const session = await login(e);
    expect(session.status).toBe(403);
    expect(session.headers.get('x-authentication-denied-reason')).toMatch(/^CAPTCHA_CHALLENGE/);
  });

  it('failed session logins count too; a successful one starts the count again', async () => {
    const e = await start({ profile: 'realistic' });
    expect((await login(e, 'tester', 'wrong')).status).toBe(401);
    expect((await login(e, 'tester', 'wrong')).status).toBe(401);
    expect((await login(e, 'tester', 'tester')).status).toBe(200);
    expect((await login(e, 'tester', 'wrong')).status).toBe(401);
    expect((await call(e, 'GET', MYSELF, { auth: basic('tester', 'nope') })).status).toBe(401);
    expect((await call(e, 'GET', MYSELF, { auth: basic('tester', 'nope') })).status).toBe(401);
    expect((await call(e, 'GET', MYSELF, { auth: basic('tester', 'tester') })).status).toBe(403);
  });

  it("the seed's captchaAfterFailedLogins wins over the knob; null turns it off; ideal takes a token as Basic", async () => {
    const off = await start({ profile: 'realistic', jira: { captchaAfterFailedLogins: null } });
    for (let i = 0; i < 5; i++) expect((await login(off, 'tester', 'wrong')).status).toBe(401);
    expect((await login(off, 'tester', 'tester')).status).toBe(200);
    await off.close();
    const ideal = await start({ profile: 'ideal' });
    expect((await call(ideal, 'GET', MYSELF, { auth: basic('admin', 'casebridge-dev-token') })).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await login(ideal, 'tester', 'wrong')).status).toBe(401);
    expect((await login(ideal, 'tester', 'tester')).status).toBe(200);
    await ideal.close();
    const seeded = await start({ profile: 'realistic', seed: { ...demoSeed, captchaAfterFailedLogins: 5 } });
    for (let i = 0; i < 4; i++) expect((await login(seeded, 'tester', 'wrong')).status).toBe(401);
    expect((await login(seeded, 'tester', 'tester')).status).toBe(200);
  });
});
