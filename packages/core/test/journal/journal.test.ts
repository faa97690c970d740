import { mkdtempSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerSecret } from '../../src/client/secrets.js';
import { Journal } from '../../src/engine/journal/store.js';

const dir = () => join(mkdtempSync(join(tmpdir(), 'cb-journal-')), 'journal');

describe('journal', () => {
  it('keeps entries in order, on disk, readable by a new instance', async () => {
    const d = dir();
    const j = new Journal(d);
    const a = await j.add('result', { key: 'DEMO-2', status: 'passed' });
    const b = await j.add('result', { key: 'DEMO-3', status: 'failed' });
    const again = await new Journal(d).list<{ key: string }>();
    expect(again.entries.map((e) => e.payload.key)).toEqual(['DEMO-2', 'DEMO-3']);
    expect(again.entries.map((e) => e.id)).toEqual([a.id, b.id]);
    await j.remove(a.id);
    expect((await j.list()).entries.map((e) => e.id)).toEqual([b.id]);
  });

  it('writes entries and blobs with mode 0600 and leaves no temporary files', async () => {
    const d = dir();
    const j = new Journal(d);
    const e = await j.add('result', { n: 1 });
    const blob = await j.putBlob(new TextEncoder().encode('screenshot'));
    expect(statSync(join(d, `${e.id}.json`)).mode & 0o777).toBe(0o600);
    expect(statSync(blob).mode & 0o777).toBe(0o600);
    expect(readdirSync(d).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(await j.putBlob(new TextEncoder().encode('screenshot'))).toBe(blob);
  });

  it('moves unreadable files aside instead of failing', async () => {
    const d = dir();
    const j = new Journal(d);
    await j.add('result', { ok: true });
    writeFileSync(join(d, '0000-broken.json'), '{"version":1,"id":');
    const { entries, corrupt } = await j.list();
    expect(entries).toHaveLength(1);
    expect(corrupt).toEqual([join(d, '0000-broken.json')]);
    expect(readdirSync(d)).toContain('0000-broken.json.corrupt');
  });

  it('never writes a registered secret', async () => {
    registerSecret('journal-secret-value-1');
    const d = dir();
    const j = new Journal(d);
    const e = await j.add('result', {
      comment: 'token journal-secret-value-1 leaked',
      nested: ['journal-secret-value-1'],
    });
    const text = readFileSync(join(d, `${e.id}.json`), 'utf8');
    expect(text).not.toContain('journal-secret-value-1');
  });

  it('prunes blobs that no entry uses', async () => {
    const d = dir();
    const j = new Journal(d);
    const kept = await j.putBlob(new TextEncoder().encode('kept'));
    await j.putBlob(new TextEncoder().encode('dropped'));
    await j.add('result', { attachment: kept });
    await j.pruneBlobs();
    expect(readdirSync(join(d, 'blobs'))).toEqual([kept.split(/[\\/]/).pop()]);
  });
});

describe('journal claims', () => {
  it('one process takes an entry; a dead claimer gives it back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-claim-'));
    const j = new Journal(dir);
    const e = await j.add('result', { n: 1 });
    expect(await j.claim(e.id)).toBe(true);
    expect(await j.claim(e.id)).toBe(false);
    expect((await j.list()).entries).toEqual([]);
    // A claim by a process that no longer exists (pid 2^22 + 1 is above Linux's pid_max default).
    renameSync(join(dir, `${e.id}.json.claimed-${process.pid}`), join(dir, `${e.id}.json.claimed-4194305`));
    expect((await j.list()).entries.map((x) => x.id)).toEqual([e.id]);
    expect(await j.claim(e.id)).toBe(true);
    await j.remove(e.id);
    expect(readdirSync(dir).filter((f) => f.includes(e.id))).toEqual([]);
  });
});

describe('write-ahead log', () => {
  type Attached = { name: string; path?: string; body?: Uint8Array };
  type Step = { title: string; attachments: Attached[]; steps: Step[] };
  const attempt = (attachments: Attached[] = [], steps: Step[] = []) => ({
    retry: 0,
    status: 'passed',
    errors: [],
    steps,
    attachments,
  });
  const lines = (d: string) => {
    const wal = readdirSync(d).find((n) => n.startsWith('wal-')) as string;
    return readFileSync(join(d, wal), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { item: { id: string; test: { attempts: unknown[] } } });
  };

  it('logs a result without bytes as it is, and one with bytes in a step with the bytes as a blob', async () => {
    const d = dir();
    const wal = new Journal(d).openWal();
    const plain = { id: 'run-1', key: 'DEMO-2', test: { attempts: [attempt([{ name: 'log', path: '/tmp/x.log' }])] } };
    const body = new TextEncoder().encode('png bytes');
    const shot = { name: 'screenshot', contentType: 'image/png', body };
    const nested = { title: 'pay', attachments: [shot], steps: [] };
    const withBytes = {
      id: 'run-2',
      key: 'DEMO-3',
      test: { attempts: [attempt([], [{ title: 'checkout', attachments: [], steps: [nested] }])] },
    };
    wal.taken(plain);
    wal.taken(withBytes);
    await new Promise((r) => setImmediate(r));
    const [first, second] = lines(d);
    expect(first?.item).toEqual(plain);
    const logged = JSON.stringify(second?.item);
    const path = /"path":"([^"]+)"/.exec(logged)?.[1] as string;
    expect(readFileSync(path, 'utf8')).toBe('png bytes');
    expect(logged).not.toContain('"body"');
    // The result in memory keeps its bytes: only the logged copy names the blob.
    expect(nested.attachments[0]).toBe(shot);
    expect(shot.body).toBe(body);
    await wal.discard();
  });
});
