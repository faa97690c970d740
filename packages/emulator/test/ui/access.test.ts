import { describe, expect, it } from 'vitest';
import { basic, call, TM, useEmulator } from '../helpers.js';
import { page } from './fixtures.js';

/**
 * Access to the UI and the admin API. On the loopback everything stays open, as `/__emulator/*` was; beyond it
 * (host 0.0.0.0, a team's shared rehearsal server) pages need Jira's login and the rehearsal pages and the admin
 * API an administrator. The emulator listens on 0.0.0.0 port 0 and is reached over the loopback address.
 */

const HTML = 'text/html; charset=utf-8';

describe('access beyond the loopback (host 0.0.0.0)', () => {
  const emu = useEmulator({ host: '0.0.0.0' });
  const base = () => emu().url;

  async function login(user: string, password: string, dest = '/') {
    const r = await page(base(), '/login.jsp', {
      form: { os_username: user, os_password: password, os_destination: dest, login: 'Log In' },
      headers: { origin: base() },
    });
    return r;
  }

  it('sends a browser without a session to /login.jsp with os_destination, scripts get 401', async () => {
    for (const path of ['/', '/browse/DEMO-1', '/browse/DEMO-1?cycle=1&status=Failed', '/rehearsal/faults']) {
      const r = await page(base(), path);
      expect(r.status, path).toBe(303);
      const location = new URL(r.headers.get('location') ?? '', base());
      expect(location.pathname).toBe('/login.jsp');
      expect(location.searchParams.get('os_destination')).toBe(path);
      expect(r.cookie, 'no session is handed out').toBeUndefined();
    }
    for (const path of ['/ui/fragments/cycle?cycle=1', '/ui/events?cycle=1']) {
      const r = await page(base(), path);
      expect(r.status, path).toBe(401);
      expect(r.text).toContain('/login.jsp');
    }
    const form = await page(base(), '/login.jsp?os_destination=%2Fbrowse%2FDEMO-1');
    expect(form.status).toBe(200);
    expect(form.headers.get('content-type')).toBe(HTML);
    expect(form.text).toContain('<label for="login-form-username">Username</label>');
    expect(form.text).toContain('name="os_password" type="password"');
    expect(form.text).toContain('<input type="hidden" name="os_destination" value="/browse/DEMO-1">');
    // The demo passwords are not advertised on a shared server.
    expect(form.text).not.toContain('admin / admin');
  });

  it('logs in with the JSESSIONID session the REST API accepts, and back out', async () => {
    const wrong = await login('tester', 'nope');
    expect(wrong.status).toBe(200);
    expect(wrong.headers.get('x-seraph-loginreason')).toBe('AUTHENTICATED_FAILED');
    expect(wrong.text).toContain('Sorry, your username and password are incorrect');
    expect(wrong.cookie).toBeUndefined();

    const ok = await login('tester', 'tester', '/browse/DEMO-1');
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/browse/DEMO-1');
    // The session lives on one of two nodes; the balancer's ROUTEID cookie keeps the browser there.
    const [session, route] = ok.headers.getSetCookie();
    expect(session).toMatch(/^JSESSIONID=[0-9A-F]{32}; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(route).toMatch(/^ROUTEID=node[12]; Path=\/$/);
    const cookie = ok.cookie as string;
    const plan = await page(base(), '/browse/DEMO-1', { cookie });
    expect(plan.status).toBe(200);
    expect(plan.text).toContain('Logged in as Tess Tester');
    expect(plan.text).toContain('<form method="post" action="/logout">');
    // Not an administrator: no rehearsal entries in the navigation.
    expect(plan.text).not.toContain('href="/rehearsal/requests"');
    const routed = `${cookie}; ${route?.split(';')[0]}`;
    for (let i = 0; i < 2; i++) {
      const rest = await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/members`, {
        auth: null,
        headers: { cookie: routed },
      });
      expect(rest.status).toBe(200);
    }

    const out = await page(base(), '/logout', { cookie, method: 'POST', headers: { origin: base() } });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/login.jsp?logout=true');
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await page(base(), '/', { cookie })).status).toBe(303);
    expect(
      (await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/members`, { auth: null, headers: { cookie } })).status,
    ).toBe(401);
  });

  it('redirects only to paths of this server after a login', async () => {
    for (const dest of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', '/logout']) {
      const r = await login('tester', 'tester', dest);
      expect(r.status, dest).toBe(303);
      expect(r.headers.get('location'), dest).toBe('/');
    }
  });

  it('refuses a login form posted from another site', async () => {
    const r = await page(base(), '/login.jsp', {
      form: { os_username: 'admin', os_password: 'admin' },
      headers: { origin: 'http://evil.example' },
    });
    expect(r.status).toBe(403);
    expect(r.cookie).toBeUndefined();
  });

  it('keeps the rehearsal pages for administrators', async () => {
    const tester = (await login('tester', 'tester')).cookie as string;
    for (const path of ['/rehearsal/requests', '/rehearsal/faults', '/rehearsal/reset']) {
      const r = await page(base(), path, { cookie: tester });
      expect(r.status, path).toBe(403);
      expect(r.text).toContain('need an administrator');
      expect(r.text).toContain('You are logged in as tester');
    }
    const reset = await page(base(), '/rehearsal/reset', {
      cookie: tester,
      form: { confirm: 'yes' },
      headers: { origin: base() },
    });
    expect(reset.status).toBe(403);
    const admin = (await login('admin', 'admin')).cookie as string;
    for (const path of ['/rehearsal/requests', '/rehearsal/faults', '/rehearsal/reset']) {
      expect((await page(base(), path, { cookie: admin })).status, path).toBe(200);
    }
  });

  it('asks an administrator for /__emulator/*: 401 without credentials, 403 for another user', async () => {
    const none = await call(emu(), 'GET', '/__emulator/health', { auth: null });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Basic realm="casebridge emulator"');
    expect(none.json.message).toContain('needs an administrator');
    expect(none.json.message).toContain('0.0.0.0');
    const wrong = await call(emu(), 'GET', '/__emulator/health', { auth: basic('admin', 'nope') });
    expect(wrong.status).toBe(401);
    expect(wrong.json.message).toContain('Invalid credentials');
    const tester = await call(emu(), 'POST', '/__emulator/reset', { auth: basic('tester', 'tester') });
    expect(tester.status).toBe(403);
    expect(tester.json.message).toBe(
      'User tester is not an administrator: the emulator listens on 0.0.0.0, beyond the loopback, so /__emulator/reset needs a user with admin: true in the seed.',
    );
    expect((await call(emu(), 'GET', '/__emulator/health', { auth: basic('admin', 'admin') })).json.ok).toBe(true);
    expect((await call(emu(), 'GET', '/__emulator/faults', { auth: 'Bearer casebridge-dev-token' })).status).toBe(200);
    const cookie = (await login('admin', 'admin')).cookie as string;
    expect((await call(emu(), 'GET', '/__emulator/state', { auth: null, headers: { cookie } })).status).toBe(200);
    // The API itself is unchanged: its own authentication, as before.
    expect(
      (await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/members`, { auth: basic('tester', 'tester') })).status,
    ).toBe(200);
  });
});

describe('access on the loopback (default host)', () => {
  const emu = useEmulator();

  it('opens every page and the admin API without credentials', async () => {
    const home = await page(emu().url, '/');
    expect(home.status).toBe(200);
    expect(home.text).toContain('Viewing as Admin');
    expect(home.text).toContain('href="/rehearsal/requests"');
    for (const path of [
      '/browse/DEMO-1',
      '/rehearsal/requests',
      '/rehearsal/faults',
      '/rehearsal/reset',
      '/login.jsp',
    ]) {
      const r = await page(emu().url, path, { cookie: home.cookie });
      expect(r.status, path).toBe(200);
    }
    const login = await page(emu().url, '/login.jsp');
    expect(login.text).toContain('admin / admin');
    for (const path of ['/__emulator/health', '/__emulator/state', '/__emulator/requests', '/__emulator/faults']) {
      expect((await call(emu(), 'GET', path, { auth: null })).status, path).toBe(200);
    }
    expect((await call(emu(), 'POST', '/__emulator/reset', { auth: null })).json).toEqual({ ok: true });
  });

  it('hands every cookie-less browser the same viewer session, and a new one after a reset', async () => {
    const a = await page(emu().url, '/');
    const b = await page(emu().url, '/browse/DEMO-2');
    expect(a.cookie).toBeDefined();
    expect(b.cookie).toBe(a.cookie);
    const sessions = emu().store.sessions.size;
    await page(emu().url, '/browse/DEMO-3');
    expect(emu().store.sessions.size).toBe(sessions);
    await emu().reset();
    const c = await page(emu().url, '/', { cookie: a.cookie });
    expect(c.status).toBe(200);
    expect(c.cookie).toBeDefined();
    expect(c.cookie).not.toBe(a.cookie);
  });

  it('shows another user after a login on the loopback', async () => {
    const r = await page(emu().url, '/login.jsp', {
      form: { os_username: 'tester', os_password: 'tester', os_destination: '/browse/DEMO-1' },
    });
    expect(r.status).toBe(303);
    const plan = await page(emu().url, '/browse/DEMO-1', { cookie: r.cookie });
    expect(plan.text).toContain('Viewing as Tess Tester');
  });
});
