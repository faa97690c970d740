import { describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../src/index.js';
import { basic, call, TM, useEmulator } from './helpers.js';

/** The admin endpoints under `/__emulator/` (no authentication): health, state, request log, reset. */

const PLAN = `${TM}/testPlan/DEMO-1`;

describe('admin endpoints', () => {
  const emu = useEmulator({ variant: 'ID' });

  it('reports health without authentication', async () => {
    const r = await call(emu(), 'GET', '/__emulator/health', { auth: null });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.json).toMatchObject({ ok: true, url: emu().url, variant: { ids: 'ID' } });
    // A trailing slash is tolerated.
    expect((await call(emu(), 'GET', '/__emulator/health/')).json.ok).toBe(true);
  });

  it('dumps the state with passwords, tokens, sessions and tickets masked', async () => {
    emu().store.sessions.insert({ id: 'SESSION-SECRET-1234', userId: 1, createdAt: 0 });
    emu().store.tickets.insert({ id: 'TICKET-SECRET-5678', userId: 1, createdAt: 0 });
    const r = await call(emu(), 'GET', '/__emulator/state');
    expect(r.status).toBe(200);
    const state = r.json as Record<string, Record<string, unknown>[]>;
    for (const t of emu().store.tables()) expect(Object.keys(state)).toContain(t.name);
    const admin = state.users?.find((u) => u.name === 'admin');
    expect(admin).toMatchObject({ name: 'admin', displayName: 'Admin', password: '***', tokens: ['***'] });
    for (const u of state.users ?? []) expect(u.password).toBe('***');
    expect(state.sessions).toEqual([{ id: '***', userId: 1, createdAt: 0 }]);
    expect(state.tickets).toEqual([{ id: '***', userId: 1, createdAt: 0 }]);
    for (const secret of ['casebridge-dev-token', 'SESSION-SECRET-1234', 'TICKET-SECRET-5678']) {
      expect(r.text).not.toContain(secret);
    }
    // The passwords of the other demo users are their names: check the field, not the text.
    expect(state.users?.map((u) => u.password)).toEqual(['***', '***', '***']);
    // Masking works on copies: the store still authenticates.
    expect((await call(emu(), 'GET', `${PLAN}/members`, { auth: 'Bearer casebridge-dev-token' })).status).toBe(200);
    emu().store.sessions.remove('SESSION-SECRET-1234');
    emu().store.tickets.remove('TICKET-SECRET-5678');
  });

  it('shows writes in the state dump', async () => {
    await call(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: 'seen in state' } });
    const state = (await call(emu(), 'GET', '/__emulator/state')).json;
    expect(state.cycles.map((c: { name: string }) => c.name)).toContain('seen in state');
  });

  it('logs service requests (not admin ones), newer than ?since=', async () => {
    await call(emu(), 'DELETE', '/__emulator/requests');
    await call(emu(), 'GET', `${PLAN}/members`, { query: { x: 1 } });
    await call(emu(), 'GET', `${PLAN}/members`, { auth: basic('admin', 'wrong') });
    await call(emu(), 'GET', `${TM}/no/such/thing`);
    await call(emu(), 'GET', '/__emulator/health');
    const log = (await call(emu(), 'GET', '/__emulator/requests')).json as RequestLogEntry[];
    expect(log).toHaveLength(3);
    const [ok, unauthorised, unknown] = log;
    expect(ok).toMatchObject({
      method: 'GET',
      path: `${PLAN}/members`,
      service: 'tm',
      op: 'plans.members',
      status: 200,
      user: 'admin',
      fault: null,
    });
    expect(ok?.ms).toBeGreaterThanOrEqual(0);
    expect(typeof ok?.at).toBe('number');
    expect(unauthorised).toMatchObject({ op: 'plans.members', status: 401, user: null });
    expect(unknown).toMatchObject({ op: null, status: 404, service: 'tm' });
    expect(log.map((e) => e.seq)).toEqual([...log.map((e) => e.seq)].sort((a, b) => a - b));

    const since = (await call(emu(), 'GET', '/__emulator/requests', { query: { since: ok?.seq ?? 0 } }))
      .json as RequestLogEntry[];
    expect(since.map((e) => e.seq)).toEqual([unauthorised?.seq, unknown?.seq]);
    const none = await call(emu(), 'GET', '/__emulator/requests', { query: { since: unknown?.seq ?? 0 } });
    expect(none.json).toEqual([]);
    const bad = await call(emu(), 'GET', '/__emulator/requests', { query: { since: 'yesterday' } });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toMatch(/since.*yesterday/);
  });

  it('clears the request log; sequence numbers keep counting', async () => {
    await call(emu(), 'GET', `${PLAN}/members`);
    const before = (await call(emu(), 'GET', '/__emulator/requests')).json as RequestLogEntry[];
    const last = before.at(-1)?.seq ?? 0;
    const cleared = await call(emu(), 'DELETE', '/__emulator/requests');
    expect(cleared.status).toBe(200);
    expect((await call(emu(), 'GET', '/__emulator/requests')).json).toEqual([]);
    await call(emu(), 'GET', `${PLAN}/members`);
    const after = (await call(emu(), 'GET', '/__emulator/requests')).json as RequestLogEntry[];
    expect(after).toHaveLength(1);
    expect(after[0]?.seq).toBeGreaterThan(last);
  });

  it('resets to the seed: writes undone, faults and the log cleared', async () => {
    await call(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: 'gone after reset' } });
    await call(emu(), 'PUT', '/__emulator/faults', { body: [{ route: '**/cycles', errors: { '503': 1 } }] });
    expect((await call(emu(), 'GET', `${PLAN}/cycles`)).status).toBe(503);

    const r = await call(emu(), 'POST', '/__emulator/reset');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true });
    expect((await call(emu(), 'GET', '/__emulator/faults')).json.rules).toEqual([]);
    expect((await call(emu(), 'GET', '/__emulator/requests')).json).toEqual([]);
    const cycles = await call(emu(), 'GET', `${PLAN}/cycles`);
    expect(cycles.status).toBe(200);
    const names = (cycles.json as { name: string }[]).map((c) => c.name);
    expect(names).not.toContain('gone after reset');
    expect(names).not.toContain('seen in state');
    const members = await call(emu(), 'GET', `${PLAN}/members`);
    expect(members.json).toHaveLength(6);
    // The seed gets the same ids again.
    expect(emu().store.issues.find((i) => i.key === 'DEMO-1')?.id).toBe(1);
  });

  it('answers 404 naming the unknown admin path or method', async () => {
    for (const [method, path] of [
      ['GET', '/__emulator/nothing'],
      ['GET', '/__emulator'],
      ['POST', '/__emulator/health'],
      ['GET', '/__emulator/reset'],
    ] as const) {
      const r = await call(emu(), method, path);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.json.message).toContain(`${method} ${path}`);
    }
  });
});

describe('request log size', () => {
  const emu = useEmulator({ requestLogSize: 10 });

  it('keeps the newest entries when the ring is full', async () => {
    for (let i = 0; i < 25; i++) await call(emu(), 'GET', `${PLAN}/members`, { query: { i } });
    const log = emu().requests();
    expect(log.length).toBeLessThanOrEqual(10);
    expect(log.length).toBeGreaterThanOrEqual(5);
    expect(log.at(-1)?.seq).toBe(25);
  });
});
