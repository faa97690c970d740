import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { looksLikePersonalAccessToken } from '../../src/client/auth.js';
import { CookieJar } from '../../src/client/cookies.js';
import { redact } from '../../src/client/secrets.js';
import { loadConfig } from '../../src/engine/config/load.js';
import { type AuthOptions, ConfigError, TestManagementClient, UnauthorizedError } from '../../src/index.js';
import { NO_PROXY_ENV, withEnv } from '../support/proxy.js';

/**
 * Credentials as Jira Data Center takes them: every cookie a session login sets is kept and sent (a load balancer's
 * route cookie pins the session to its node), a personal access token only as Bearer (never as a password: that is a
 * failed login, and failed logins lead to the CAPTCHA), and a 401 that says which scheme to use. A raw server on
 * port 0 plays a two-node cluster behind a load balancer.
 */

/** A Jira DC personal access token's shape: base64 of `<12-digit id>:<20 random bytes>`, 44 characters. */
const PAT = Buffer.concat([Buffer.from('716821684788:'), Buffer.from('k3Jq9x2LmP0aZr8sVt4w')]).toString('base64');

const servers: Server[] = [];
const clients: TestManagementClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

function cookiesOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k) out[k] = v.join('=');
  }
  return out;
}

/**
 * Two nodes behind a load balancer that routes by `ROUTEID` (else round-robin): a session exists only on the node
 * that issued it. Every answer of node 1 rotates a `AWSALB`-style cookie, and `expireTracker` answers drop `tracker`.
 */
async function cluster(): Promise<{ url: string; seen: { path: string; node: number; cookies: string[] }[] }> {
  const sessions = [new Set<string>(), new Set<string>()];
  const seen: { path: string; node: number; cookies: string[] }[] = [];
  let next = 0;
  let issued = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const cookies = cookiesOf(req);
      const routed = cookies.ROUTEID === '.node1' ? 0 : cookies.ROUTEID === '.node2' ? 1 : undefined;
      const node = routed ?? next++ % 2;
      const path = req.url?.split('?')[0] ?? '';
      seen.push({ path, node: node + 1, cookies: Object.keys(cookies).sort() });
      const set: string[] = [`AWSALB=alb-${seen.length}-0123456789; Path=/`];
      if (path === '/rest/auth/1/session' && req.method === 'POST') {
        issued += 1;
        const sid = `SID${issued}-node${node + 1}-0123456789abcdef`;
        sessions[node]?.add(sid);
        set.push(`JSESSIONID=${sid}; Path=/; HttpOnly`, `ROUTEID=.node${node + 1}; Path=/`, 'tracker=t-1; Path=/');
        res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': set });
        res.end(JSON.stringify({ session: { name: 'JSESSIONID', value: sid }, loginInfo: {} }));
        return;
      }
      if (path.endsWith('/members')) set.push('tracker=; Max-Age=0; Path=/');
      if (!sessions[node]?.has(cookies.JSESSIONID ?? '')) {
        res.writeHead(401, { 'content-type': 'application/json', 'set-cookie': set });
        res.end('{"errorMessages":["You are not authenticated."]}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': set });
      res.end(path.endsWith('/myself') ? '{"name":"ci","key":"ci","displayName":"CI"}' : '[]');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function tm(baseUrl: string, auth: AuthOptions): TestManagementClient {
  const c = new TestManagementClient({ baseUrl, auth, retry: { retries: 1, baseDelayMs: 5 } });
  clients.push(c);
  return c;
}

const SESSION: AuthOptions = { type: 'session', username: 'ci', password: 'correct-horse' };
const members = (c: TestManagementClient) => c.plans.members({ testPlanIssueKey: 'DEMO-1' });

describe('sessions keep every cookie', () => {
  it('on a two-node cluster: the route cookie keeps every call on the login node, one login for all', async () => {
    const s = await cluster();
    await withEnv(NO_PROXY_ENV, async () => {
      const c = tm(s.url, SESSION);
      for (let i = 0; i < 6; i += 1) await members(c);
      await Promise.all(Array.from({ length: 6 }, () => c.jira.myself()));
    });
    const [login, ...calls] = s.seen;
    expect(login?.path).toBe('/rest/auth/1/session');
    expect(calls).toHaveLength(12);
    expect(new Set(calls.map((r) => r.node))).toEqual(new Set([login?.node]));
    // JSESSIONID, ROUTEID and the balancer's rotating cookie on every call; `tracker` dropped by Max-Age=0.
    expect(calls[0]?.cookies).toEqual(['AWSALB', 'JSESSIONID', 'ROUTEID', 'tracker']);
    expect(calls.at(-1)?.cookies).toEqual(['AWSALB', 'JSESSIONID', 'ROUTEID']);
  });

  it('a 401 with a session: one new login (the old cookies dropped), then the call succeeds', async () => {
    const s = await cluster();
    await withEnv(NO_PROXY_ENV, async () => {
      const c = tm(s.url, SESSION);
      await members(c);
      // The session is gone from the node (a restart, a timeout): the client still holds a cookie the node refuses.
      const jar = (c as unknown as { authenticator: { jar: CookieJar } }).authenticator.jar;
      jar.update('JSESSIONID=stale-session-000000; Path=/');
      expect((await members(c)).length).toBe(0);
    });
    expect(s.seen.map((r) => r.path.split('/').pop())).toEqual(['session', 'members', 'members', 'session', 'members']);
    expect(s.seen[3]?.cookies).toEqual([]);
  });
});

describe('the cookie jar', () => {
  it('keeps cookies by name, replaces, expires by Max-Age and Expires, and sends the live ones', () => {
    let now = 1_000_000;
    const jar = new CookieJar(() => now);
    jar.update([
      'JSESSIONID=abc123def456ghi; Path=/; HttpOnly; Secure',
      'ROUTEID=.node1; Path=/',
      'short=1; Max-Age=10',
    ]);
    expect(jar.header()).toBe('JSESSIONID=abc123def456ghi; ROUTEID=.node1; short=1');
    jar.update('ROUTEID=.node2');
    jar.update('gone=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT');
    expect(jar.names()).toEqual(['JSESSIONID', 'ROUTEID', 'short']);
    now += 10_000;
    expect(jar.header()).toBe('JSESSIONID=abc123def456ghi; ROUTEID=.node2');
    jar.update('JSESSIONID=deleted; Max-Age=0');
    jar.update('quoted="v a l"; Max-Age=60');
    expect(jar.header()).toBe('ROUTEID=.node2; quoted=v a l');
    jar.setIfAbsent('ROUTEID', 'other');
    expect(jar.get('ROUTEID')).toBe('.node2');
  });

  it("an answer of the old session that arrives after a new login does not put the old node's cookie back", () => {
    const jar = new CookieJar();
    jar.update(['JSESSIONID=old-session-0123456789', 'ROUTEID=.node1']);
    const inFlight = jar.view();
    expect(inFlight.header()).toBe('JSESSIONID=old-session-0123456789; ROUTEID=.node1');
    // A 401 elsewhere: the client logs in again, and the balancer sends it to node 2.
    jar.clear();
    const login = jar.view();
    login.header();
    login.update(['JSESSIONID=new-session-0123456789', 'ROUTEID=.node2']);
    inFlight.update('ROUTEID=.node1');
    expect(jar.header()).toBe('JSESSIONID=new-session-0123456789; ROUTEID=.node2');
    // Sent again (a retry), the same request takes the new cookies and its answers count again.
    expect(inFlight.header()).toBe('JSESSIONID=new-session-0123456789; ROUTEID=.node2');
    inFlight.update('AWSALB=fresh-0123456789');
    expect(jar.names()).toEqual(['JSESSIONID', 'ROUTEID', 'AWSALB']);
  });

  it('session cookie values never reach a message: registered as secrets, and matched by name', () => {
    const jar = new CookieJar();
    jar.update('JSESSIONID=9F2C4B7A1D3E5F60A1B2C3D4');
    expect(redact('lost session 9F2C4B7A1D3E5F60A1B2C3D4')).toBe('lost session ***');
    expect(redact('sent ROUTEID=.node7; AWSALB=xyz; atlassian.xsrf.token=B7Q-1|abc|lin')).toBe(
      'sent ROUTEID=***; AWSALB=***; atlassian.xsrf.token=***',
    );
    expect(redact('Set-Cookie: anything=1')).toBe('Set-Cookie: ***');
  });
});

describe('a personal access token only as Bearer', () => {
  it('recognises the shape of a Jira DC personal access token, and not passwords', () => {
    expect(PAT).toHaveLength(44);
    expect(looksLikePersonalAccessToken(PAT)).toBe(true);
    for (const password of [
      'correct-horse-battery-staple',
      'admin',
      'casebridge-dev-token',
      Buffer.from('not-a-number:0123456789abcdefghij').toString('base64'),
      Buffer.from('123456789012:short').toString('base64'),
      'ATATT3xFfGF0pogUFVOH0_AjBEA8LJcnOJx_Ki4yl_PYkv',
    ]) {
      expect(looksLikePersonalAccessToken(password), password).toBe(false);
    }
  });

  it('the client refuses one as a Basic or session password before sending anything', () => {
    for (const type of ['basic', 'session'] as const) {
      const err = (() => {
        try {
          tm('http://127.0.0.1:9', { type, username: 'ci', password: PAT });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/personal access token goes in token, sent as Bearer/);
      expect((err as Error).message).toMatch(/CAPTCHA/);
      expect((err as Error).message).not.toContain(PAT);
    }
    expect(() => tm('http://127.0.0.1:9', { type: 'bearer', token: PAT })).not.toThrow();
  });

  it('the configuration refuses one as password, naming token and CASEBRIDGE_TOKEN', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cb-pat-'));
    const r = loadConfig(
      { url: 'https://jira.example.com', projectKey: 'DEMO' },
      { env: { CASEBRIDGE_USER: 'ci', CASEBRIDGE_PASSWORD: PAT }, cwd },
    );
    expect(r.ok).toBe(false);
    const text = r.ok ? '' : r.problems.join('\n');
    expect(text).toMatch(/password.*a personal access token goes in token.*CASEBRIDGE_TOKEN/s);
    expect(text).not.toContain(PAT);
    expect(loadConfig({ url: 'https://jira.example.com', projectKey: 'DEMO', token: PAT }, { env: {}, cwd }).ok).toBe(
      true,
    );
  });

  it('a 401 says which scheme to use: Basic points at token, Bearer at a personal access token', async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"errorMessages":["You are not authenticated."]}');
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await withEnv(NO_PROXY_ENV, async () => {
      const basic = await members(tm(url, { type: 'basic', username: 'ci', password: 'wrong' })).catch((e) => e);
      expect(basic).toBeInstanceOf(UnauthorizedError);
      expect(basic.message).toMatch(/^HTTP 401: the user name and password sent as Basic were refused/);
      expect(basic.message).toMatch(/it goes in token \(auth \{ type: 'bearer', token \}, CASEBRIDGE_TOKEN\)/);
      const bearer = await members(tm(url, { type: 'bearer', token: 'expired-token-1234' })).catch((e) => e);
      expect(bearer.message).toMatch(/^HTTP 401: the token sent as Bearer was refused: it must be a personal access/);
    });
  });
});
