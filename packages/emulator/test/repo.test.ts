import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setRepoQuota } from '../src/handlers/repo.js';
import type { RunningEmulator } from '../src/index.js';
import { basic, type CallOptions, call, enc, expectShape, REPO, REPO_ALIAS, useEmulator } from './helpers.js';

const ADMIN_AUTH = basic('admin', 'admin');
const TESTER_AUTH = basic('tester', 'tester');
const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';

/** The edu-sharing error body: exception class, message, and the fixed rest. */
function expectRepoError(json: any, errorClass: string): void {
  expect(json).toMatchObject({ error: errorClass, logLevel: 'INFO', stacktraceArray: null, details: {} });
  expect(typeof json.message).toBe('string');
}

function createChild(
  emu: RunningEmulator,
  prefix: string,
  parent: string,
  name: string | undefined,
  o: CallOptions = {},
) {
  return call(emu, 'POST', `${prefix}/node/v1/nodes/-home-/${enc(parent)}/children`, {
    body: name === undefined ? {} : { 'cm:name': [name] },
    ...o,
    query: { type: 'ccm:io', ...o.query },
  });
}

function upload(
  emu: RunningEmulator,
  prefix: string,
  nodeId: string,
  bytes: Uint8Array | string,
  fileName: string,
  mimetype: string,
  auth: string | null = ADMIN_AUTH,
) {
  const form = new FormData();
  form.append('file', new Blob([bytes]), fileName);
  return call(emu, 'POST', `${prefix}/node/v1/nodes/-home-/${enc(nodeId)}/content`, {
    raw: form,
    query: { mimetype },
    auth,
  });
}

async function sha256OfDownload(url: string, auth: string): Promise<{ status: number; sha: string; size: number }> {
  const res = await fetch(url, { headers: { authorization: auth } });
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { status: res.status, sha: hash.digest('hex'), size };
}

for (const prefix of [REPO, REPO_ALIAS]) {
  describe(`content repository (${prefix})`, () => {
    const emu = useEmulator();
    const root = prefix.replace(/\/rest$/, '');

    describe('validateSession', () => {
      it('accepts Basic (scheme case-insensitive), opens a session, and the cookie alone authenticates', async () => {
        for (const auth of [ADMIN_AUTH, ADMIN_AUTH.replace('Basic', 'bASIC')]) {
          const r = await call(emu(), 'GET', `${prefix}/authentication/v1/validateSession`, { auth });
          expect(r.status).toBe(200);
          expectShape('repo.validateSession', 'id', r.json);
          expect(r.json).toMatchObject({
            isValidLogin: true,
            statusCode: 'OK',
            authorityName: 'admin',
            isGuest: false,
            isAdmin: true,
            sessionTimeout: 3600,
            currentScope: null,
          });
          expect(r.json.toolPermissions.length).toBeGreaterThan(0);
          expect(r.headers.get('set-cookie')).toMatch(/^JSESSIONID=[0-9A-F]+; Path=\/; HttpOnly$/);
        }
        const login = await call(emu(), 'GET', `${prefix}/authentication/v1/validateSession`, {
          auth: TESTER_AUTH,
        });
        const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
        const again = await call(emu(), 'GET', `${prefix}/authentication/v1/validateSession`, {
          auth: null,
          headers: { cookie },
        });
        expect(again.json).toMatchObject({ isValidLogin: true, statusCode: 'OK', authorityName: 'tester' });
        expect(again.json.isAdmin).toBe(false);
        // The session already exists: no new cookie.
        expect(again.headers.get('set-cookie')).toBeNull();
        const created = await createChild(emu(), prefix, '-userhome-', 'via-cookie.txt', {
          auth: null,
          headers: { cookie },
        });
        expect(created.status).toBe(200);
        expect(created.json.node.owner.firstName).toBe('Tess');
        // Home is reported once it exists.
        const home = await call(emu(), 'GET', `${prefix}/authentication/v1/validateSession`, {
          auth: null,
          headers: { cookie },
        });
        expect(home.json.userHome).toBe(created.json.node.parent.id);
      });

      it('accepts a Bearer token (scheme case-insensitive)', async () => {
        for (const scheme of ['Bearer', 'bearer']) {
          const r = await call(emu(), 'GET', `${prefix}/authentication/v1/validateSession`, {
            auth: `${scheme} casebridge-dev-token`,
          });
          expect(r.json).toMatchObject({ isValidLogin: true, statusCode: 'OK', authorityName: 'admin' });
        }
      });

      it('answers 200 INVALID_CREDENTIALS for wrong credentials, an unknown cookie or none (no guest)', async () => {
        for (const o of [
          { auth: basic('admin', 'wrong') },
          { auth: 'Bearer nope' },
          { auth: 'EDU-TICKET TICKET_nope' },
          { auth: null, headers: { cookie: 'JSESSIONID=UNKNOWN' } },
          { auth: null },
        ] as CallOptions[]) {
          const r = await call(emu(), 'GET', `${prefix}/authentication/v1/validateSession`, o);
          expect(r.status).toBe(200);
          expectShape('repo.validateSession', 'id', r.json);
          expect(r.json).toMatchObject({ isValidLogin: false, statusCode: 'INVALID_CREDENTIALS', isGuest: false });
          expect(r.headers.get('set-cookie')).toBeNull();
        }
      });
    });

    describe('authentication of protected operations', () => {
      it('answers 401 with an empty body without or with wrong credentials', async () => {
        for (const o of [
          { auth: null },
          { auth: basic('admin', 'wrong') },
          { auth: 'EDU-TICKET TICKET_nope' },
          { auth: null, headers: { cookie: 'JSESSIONID=UNKNOWN' } },
        ] as CallOptions[]) {
          const r = await createChild(emu(), prefix, '-userhome-', 'x.txt', o);
          expect(r.status).toBe(401);
          expect(r.text).toBe('');
        }
      });

      it('issues EDU-TICKETs to administrators only; a ticket authenticates as its user', async () => {
        const issued = await call(emu(), 'POST', `${prefix}/authentication/v1/appauth/tester`);
        expect(issued.status).toBe(200);
        const t = expectShape('repo.appAuth', 'id', issued.json);
        expect(t.userId).toBe('tester');
        expect(t.ticket).toMatch(/^TICKET_[0-9a-f]{40}$/);
        for (const scheme of ['EDU-TICKET', 'edu-ticket']) {
          const r = await call(emu(), 'GET', `${prefix}/authentication/v1/validateSession`, {
            auth: `${scheme} ${t.ticket}`,
          });
          expect(r.json).toMatchObject({ isValidLogin: true, authorityName: 'tester' });
        }
        const created = await createChild(emu(), prefix, '-userhome-', 'by-ticket.txt', {
          auth: `EDU-TICKET ${t.ticket}`,
        });
        expect(created.status).toBe(200);
        expect(created.json.node.createdBy.firstName).toBe('Tess');

        const byTester = await call(emu(), 'POST', `${prefix}/authentication/v1/appauth/admin`, { auth: TESTER_AUTH });
        expect(byTester.status).toBe(403);
        expectRepoError(byTester.json, 'org.edu_sharing.restservices.DAOSecurityException');
        const unknown = await call(emu(), 'POST', `${prefix}/authentication/v1/appauth/nobody`);
        expect(unknown.status).toBe(404);
        expectRepoError(unknown.json, 'org.edu_sharing.restservices.DAOMissingException');
        expect(unknown.json.message).toContain('nobody');
      });
    });

    describe('createChild', () => {
      it('creates a node in the user home with the documented fields', async () => {
        const before = Date.now();
        const r = await createChild(emu(), prefix, '-userhome-', 'screenshot.png', {
          query: { versionComment: 'first', aspects: 'ccm:educontext' },
        });
        expect(r.status).toBe(200);
        const node = expectShape('repo.createChild', 'id', r.json).node;
        expect(node).toMatchObject({
          isDirectory: false,
          commentCount: 0,
          ref: { repo: 'local', archived: false, isHomeRepo: true },
          parent: { repo: 'local', archived: false, isHomeRepo: true },
          type: 'ccm:io',
          name: 'screenshot.png',
          title: null,
          description: null,
          metadataset: 'default',
          repositoryType: 'ALFRESCO',
          createdBy: { profile: null, firstName: 'Admin', lastName: '', mailbox: 'admin@example.test' },
          owner: { firstName: 'Admin' },
          contentVersion: null,
          downloadUrl: null,
          size: null,
          mimetype: 'image/png',
          mediatype: 'file-image',
          preview: { isIcon: true, isGenerated: false, width: null, height: null },
          collection: null,
        });
        expect(node.aspects).toContain('ccm:educontext');
        expect(node.access).toEqual([
          'ReadAll',
          'Comment',
          'AddChildren',
          'ChangePermissions',
          'Write',
          'Delete',
          'CCPublish',
        ]);
        expect(node.properties['cm:name']).toEqual(['screenshot.png']);
        expect(node.properties['ccm:versioncomment']).toEqual(['first']);
        expect(node.contentUrl).toBe(`${emu().url}${root}/components/render/${node.ref.id}`);
        expect(node.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
        expect(Date.parse(node.createdAt)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
        // The home is a folder of the user's own.
        const home = emu().store.nodes.get(node.parent.id);
        expect(home).toMatchObject({ isDirectory: true, name: 'admin' });
      });

      it('accepts the -inbox- alias, odd names and more properties; refuses a child of a file', async () => {
        const name = 'Bericht 1 ünï 🚀 (final) #2.pdf';
        const r = await call(emu(), 'POST', `${prefix}/node/v1/nodes/-home-/-inbox-/children`, {
          query: { type: 'ccm:io' },
          body: { 'cm:name': [name], 'cm:title': ['Title'], 'cm:description': ['Desc'] },
        });
        expect(r.status).toBe(200);
        expect(r.json.node).toMatchObject({ name, title: 'Title', description: 'Desc', mimetype: 'application/pdf' });
        const inbox = emu().store.nodes.get(r.json.node.parent.id);
        expect(inbox?.name).toBe('Inbox');
        const home = emu().store.nodes.get(inbox?.parentId ?? '');
        expect(home?.name).toBe('admin');

        const folder = await call(emu(), 'POST', `${prefix}/node/v1/nodes/local/-userhome-/children`, {
          query: { type: 'ccm:map' },
          body: { 'cm:name': [`reports ${prefix.length}`] },
        });
        expect(folder.json.node).toMatchObject({ isDirectory: true, mimetype: null, mediatype: 'folder' });
        const inFolder = await createChild(emu(), prefix, folder.json.node.ref.id, 'inner.txt');
        expect(inFolder.status).toBe(200);
        expect(inFolder.json.node.parent.id).toBe(folder.json.node.ref.id);
        const underFile = await createChild(emu(), prefix, inFolder.json.node.ref.id, 'nested.txt');
        expect(underFile.status).toBe(400);
        expectRepoError(underFile.json, 'org.edu_sharing.restservices.DAOValidationException');
      });

      it('answers 409 on a name clash (case-insensitive) and renames with renameIfExists', async () => {
        expect((await createChild(emu(), prefix, '-userhome-', 'trace.zip')).status).toBe(200);
        const clash = await createChild(emu(), prefix, '-userhome-', 'TRACE.zip');
        expect(clash.status).toBe(409);
        expectRepoError(clash.json, 'org.edu_sharing.restservices.DAODuplicateNodeNameException');
        expect(clash.json.message).toContain('TRACE.zip');
        const explicitFalse = await createChild(emu(), prefix, '-userhome-', 'trace.zip', {
          query: { renameIfExists: 'false' },
        });
        expect(explicitFalse.status).toBe(409);
        const names: string[] = [];
        for (let i = 0; i < 2; i++) {
          const r = await createChild(emu(), prefix, '-userhome-', 'trace.zip', { query: { renameIfExists: 'true' } });
          expect(r.status).toBe(200);
          names.push(r.json.node.name);
        }
        expect(names).toEqual(['trace - 2.zip', 'trace - 3.zip']);
        await createChild(emu(), prefix, '-userhome-', 'README');
        const noExt = await createChild(emu(), prefix, '-userhome-', 'README', { query: { renameIfExists: 'true' } });
        expect(noExt.json.node.name).toBe('README - 2');
        expect(noExt.json.node.properties['cm:name']).toEqual(['README - 2']);
      });

      it('validates: cm:name missing 500, type missing or unknown 400, bad names 400', async () => {
        const noName = await createChild(emu(), prefix, '-userhome-', undefined);
        expect(noName.status).toBe(500);
        expect(noName.json.message).toContain('cm:name');
        expect(noName.json.logLevel).toBe('INFO');
        const blankName = await createChild(emu(), prefix, '-userhome-', '  ');
        expect(blankName.status).toBe(500);

        const noType = await call(emu(), 'POST', `${prefix}/node/v1/nodes/-home-/-userhome-/children`, {
          body: { 'cm:name': ['a.txt'] },
        });
        expect(noType.status).toBe(400);
        expectRepoError(noType.json, 'org.edu_sharing.restservices.DAOValidationException');
        expect(noType.json.message).toContain('type');
        const badType = await createChild(emu(), prefix, '-userhome-', 'a.txt', { query: { type: 'ccm:nope' } });
        expect(badType.status).toBe(400);
        expect(badType.json.message).toContain('ccm:nope');
        for (const bad of ['a/b.txt', 'what?.txt', 'trailing.']) {
          const r = await createChild(emu(), prefix, '-userhome-', bad);
          expect(r.status, bad).toBe(400);
          expect(r.json.message).toContain('cm:name');
        }
        const badBody = await call(emu(), 'POST', `${prefix}/node/v1/nodes/-home-/-userhome-/children`, {
          query: { type: 'ccm:io' },
          body: { 'cm:name': 'not-an-array.txt' },
        });
        expect(badBody.status).toBe(400);
        const badRename = await createChild(emu(), prefix, '-userhome-', 'a.txt', {
          query: { renameIfExists: 'maybe' },
        });
        expect(badRename.status).toBe(400);
      });

      it('answers 404 for an unknown repository or parent, 403 for a folder of someone else', async () => {
        const repo = await call(emu(), 'POST', `${prefix}/node/v1/nodes/elsewhere/-userhome-/children`, {
          query: { type: 'ccm:io' },
          body: { 'cm:name': ['a.txt'] },
        });
        expect(repo.status).toBe(404);
        expectRepoError(repo.json, 'org.edu_sharing.restservices.DAOMissingException');
        expect(repo.json.message).toContain('elsewhere');
        const parent = await createChild(emu(), prefix, '00000000-0000-0000-0000-000000000000', 'a.txt');
        expect(parent.status).toBe(404);
        expectRepoError(parent.json, 'org.edu_sharing.restservices.DAOMissingException');

        const adminNode = await createChild(emu(), prefix, '-userhome-', `admins-${Math.random()}.txt`);
        const adminHome = adminNode.json.node.parent.id as string;
        const denied = await createChild(emu(), prefix, adminHome, 'intruder.txt', { auth: TESTER_AUTH });
        expect(denied.status).toBe(403);
        expectRepoError(denied.json, 'org.edu_sharing.restservices.DAOSecurityException');
        // Administrators may write anywhere.
        const testerNode = await createChild(emu(), prefix, '-userhome-', `testers-${Math.random()}.txt`, {
          auth: TESTER_AUTH,
        });
        const byAdmin = await createChild(emu(), prefix, testerNode.json.node.parent.id, 'from-admin.txt');
        expect(byAdmin.status).toBe(200);
        expect(byAdmin.json.node.owner.firstName).toBe('Admin');
      });
    });

    describe('uploadContent and download', () => {
      it('uploads content, fills size and downloadUrl, and serves the bytes there', async () => {
        const created = await createChild(emu(), prefix, '-userhome-', 'shot.png');
        const id = created.json.node.ref.id as string;
        const bytes = randomBytes(4096);
        const r = await upload(emu(), prefix, id, bytes, 'shot.png', 'image/png');
        expect(r.status).toBe(200);
        const node = expectShape('repo.uploadContent', 'id', r.json).node;
        expect(node).toMatchObject({
          size: '4096',
          mimetype: 'image/png',
          mediatype: 'file-image',
          contentVersion: '1.0',
          preview: { isIcon: false },
        });
        expect(r.json.node.size).toBe('4096');
        expect(node.downloadUrl).toBe(`${emu().url}${root}/eduservlet/download?nodeId=${id}`);

        const res = await fetch(node.downloadUrl, { headers: { authorization: ADMIN_AUTH } });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('image/png');
        expect(res.headers.get('content-disposition')).toContain('shot.png');
        expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);

        // Replacing the content bumps the version and serves the new bytes.
        const again = await upload(emu(), prefix, id, 'tiny', 'shot.png', 'application/octet-stream');
        expect(again.json.node).toMatchObject({ size: '4', contentVersion: '1.1' });
        const res2 = await fetch(node.downloadUrl, { headers: { authorization: 'Bearer casebridge-dev-token' } });
        expect(await res2.text()).toBe('tiny');

        const anon = await fetch(node.downloadUrl);
        expect(anon.status).toBe(401);
        expect(await anon.text()).toBe('');
        const other = await fetch(node.downloadUrl, { headers: { authorization: TESTER_AUTH } });
        expect(other.status).toBe(403);
        expectRepoError(await other.json(), 'org.edu_sharing.restservices.DAOSecurityException');
        const missing = await fetch(`${emu().url}${root}/eduservlet/download?nodeId=nope`, {
          headers: { authorization: ADMIN_AUTH },
        });
        expect(missing.status).toBe(404);
        const empty = await createChild(emu(), prefix, '-userhome-', 'empty.png');
        const noContent = await fetch(`${emu().url}${root}/eduservlet/download?nodeId=${empty.json.node.ref.id}`, {
          headers: { authorization: ADMIN_AUTH },
        });
        expect(noContent.status).toBe(404);
        expect(((await noContent.json()) as { message: string }).message).toContain('no content');
      });

      it('refuses aliases and unknown nodes (404), folders and missing parts (400), strangers (403)', async () => {
        const alias = await upload(emu(), prefix, '-userhome-', 'x', 'x.txt', 'text/plain');
        expect(alias.status).toBe(404);
        expect(alias.json.message).toContain('alias');
        const unknown = await upload(emu(), prefix, 'no-such-node', 'x', 'x.txt', 'text/plain');
        expect(unknown.status).toBe(404);
        expectRepoError(unknown.json, 'org.edu_sharing.restservices.DAOMissingException');

        const folder = await call(emu(), 'POST', `${prefix}/node/v1/nodes/-home-/-userhome-/children`, {
          query: { type: 'cm:folder' },
          body: { 'cm:name': ['a folder'] },
        });
        const toFolder = await upload(emu(), prefix, folder.json.node.ref.id, 'x', 'x.txt', 'text/plain');
        expect(toFolder.status).toBe(400);

        const node = await createChild(emu(), prefix, '-userhome-', 'notes.txt');
        const id = node.json.node.ref.id as string;
        const form = new FormData();
        form.append('attachment', new Blob(['x']), 'notes.txt');
        const wrongPart = await call(emu(), 'POST', `${prefix}/node/v1/nodes/-home-/${id}/content`, {
          raw: form,
          query: { mimetype: 'text/plain' },
        });
        expect(wrongPart.status).toBe(400);
        expect(wrongPart.json.message).toContain('"file"');
        const noMimetype = await call(emu(), 'POST', `${prefix}/node/v1/nodes/-home-/${id}/content`, { raw: form });
        expect(noMimetype.status).toBe(400);
        expect(noMimetype.json.message).toContain('mimetype');

        const stranger = await upload(emu(), prefix, id, 'x', 'notes.txt', 'text/plain', TESTER_AUTH);
        expect(stranger.status).toBe(403);
        const anon = await upload(emu(), prefix, id, 'x', 'notes.txt', 'text/plain', null);
        expect(anon.status).toBe(401);
        expect(anon.text).toBe('');
        // Nothing of the refused uploads was kept.
        expect(emu().store.nodes.get(id)?.size).toBeNull();
      });

      it('answers 415 when the mimetype does not fit the extension, 422 for a virus', async () => {
        const node = await createChild(emu(), prefix, '-userhome-', 'photo.jpg');
        const id = node.json.node.ref.id as string;
        const wrong = await upload(emu(), prefix, id, 'x', 'photo.jpg', 'image/png');
        expect(wrong.status).toBe(415);
        expectRepoError(wrong.json, 'org.edu_sharing.restservices.DAOMimetypeVerificationException');
        expect(wrong.json.message).toContain('image/jpeg');
        const partName = await upload(emu(), prefix, id, 'x', 'photo.pdf', 'image/jpeg');
        expect(partName.status).toBe(415);
        const malformed = await upload(emu(), prefix, id, 'x', 'photo.jpg', 'jpeg');
        expect(malformed.status).toBe(415);
        const withParams = await upload(emu(), prefix, id, 'x', 'photo.jpg', 'IMAGE/JPEG; q=1');
        expect(withParams.status).toBe(200);

        const virus = await upload(emu(), prefix, id, EICAR, 'photo.jpg', 'image/jpeg');
        expect(virus.status).toBe(422);
        expectRepoError(virus.json, 'org.edu_sharing.restservices.DAOVirusDetectedException');
        expect(emu().store.nodes.get(id)?.size).toBe(1);
      });
    });
  });
}

describe('content repository: quota, file size limit and a 30 MB upload', () => {
  const emu = useEmulator({ maxFileBytes: 40 * 1024 * 1024 });

  it('streams a 30 MB upload and serves the same bytes back', async () => {
    const bytes = randomBytes(30 * 1024 * 1024);
    const sha = createHash('sha256').update(bytes).digest('hex');
    const node = await createChild(emu(), REPO, '-userhome-', 'video.webm');
    const r = await upload(emu(), REPO, node.json.node.ref.id, bytes, 'video.webm', 'video/webm');
    expect(r.status).toBe(200);
    expect(r.json.node.size).toBe(String(bytes.length));
    expect(r.json.node.mediatype).toBe('file-video');
    const down = await sha256OfDownload(r.json.node.downloadUrl, ADMIN_AUTH);
    expect(down).toEqual({ status: 200, sha, size: bytes.length });
  }, 60_000);

  // Skipped until server.ts drains the multipart stream after the blob store refuses a file: today busboy stalls
  // once pipeline() destroys its file stream, so the request is never answered (see the helper's report).
  it('answers 500 for a file above the size limit', async () => {
    const node = await createChild(emu(), REPO_ALIAS, '-userhome-', 'huge.bin');
    const r = await upload(
      emu(),
      REPO_ALIAS,
      node.json.node.ref.id,
      new Uint8Array(41 * 1024 * 1024),
      'huge.bin',
      'application/octet-stream',
    );
    expect(r.status).toBe(500);
    expect(r.json.message).toContain('size limit');
  }, 60_000);

  describe('quota', () => {
    let previous = 0;
    beforeAll(() => {
      previous = setRepoQuota(10_000);
    });
    afterAll(() => {
      setRepoQuota(previous);
    });

    it("answers 503 when an upload would exceed the owner's quota; replacing content counts once", async () => {
      const a = await createChild(emu(), REPO, '-userhome-', 'a.bin', { auth: TESTER_AUTH });
      const b = await createChild(emu(), REPO, '-userhome-', 'b.bin', { auth: TESTER_AUTH });
      const first = await upload(
        emu(),
        REPO,
        a.json.node.ref.id,
        new Uint8Array(6000),
        'a.bin',
        'application/octet-stream',
        TESTER_AUTH,
      );
      expect(first.status).toBe(200);
      const over = await upload(
        emu(),
        REPO,
        b.json.node.ref.id,
        new Uint8Array(5000),
        'b.bin',
        'application/octet-stream',
        TESTER_AUTH,
      );
      expect(over.status).toBe(503);
      expectRepoError(over.json, 'org.edu_sharing.restservices.DAOQuotaException');
      expect(over.json.message).toContain('quota');
      // Replacing a.bin's 6000 bytes by 9000 fits: the old content no longer counts.
      const replace = await upload(
        emu(),
        REPO,
        a.json.node.ref.id,
        new Uint8Array(9000),
        'a.bin',
        'application/octet-stream',
        TESTER_AUTH,
      );
      expect(replace.status).toBe(200);
      // Another user's quota is separate.
      const other = basic('nolicense', 'nolicense');
      const theirs = await createChild(emu(), REPO, '-userhome-', 'c.bin', { auth: other });
      const own = await upload(
        emu(),
        REPO,
        theirs.json.node.ref.id,
        new Uint8Array(5000),
        'c.bin',
        'application/octet-stream',
        other,
      );
      expect(own.status).toBe(200);
    });

    it('refuses a quota that is not a byte count', () => {
      expect(() => setRepoQuota(-1)).toThrow(/non-negative integer/);
    });
  });
});

describe('content repository with a guest user', () => {
  const emu = useEmulator({ repoGuest: true });

  it('validates an anonymous session as GUEST, without a cookie', async () => {
    const r = await call(emu(), 'GET', `${REPO}/authentication/v1/validateSession`, { auth: null });
    expect(r.status).toBe(200);
    expectShape('repo.validateSession', 'id', r.json);
    expect(r.json).toMatchObject({ isValidLogin: true, statusCode: 'GUEST', isGuest: true, isAdmin: false });
    expect(r.headers.get('set-cookie')).toBeNull();
  });

  it('honours DisableGuest: true (INVALID_CREDENTIALS, 401 empty)', async () => {
    const headers = { DisableGuest: 'true' };
    const r = await call(emu(), 'GET', `${REPO_ALIAS}/authentication/v1/validateSession`, { auth: null, headers });
    expect(r.json).toMatchObject({ isValidLogin: false, statusCode: 'INVALID_CREDENTIALS' });
    const denied = await createChild(emu(), REPO_ALIAS, '-userhome-', 'x.txt', { auth: null, headers });
    expect(denied.status).toBe(401);
    expect(denied.text).toBe('');
  });

  it('never falls back to the guest for wrong credentials', async () => {
    const r = await call(emu(), 'GET', `${REPO}/authentication/v1/validateSession`, { auth: basic('admin', 'no') });
    expect(r.json).toMatchObject({ isValidLogin: false, statusCode: 'INVALID_CREDENTIALS' });
    const denied = await createChild(emu(), REPO, '-userhome-', 'x.txt', { auth: basic('admin', 'no') });
    expect(denied.status).toBe(401);
  });

  it('lets the guest in but not write: no home folder, no tickets', async () => {
    const home = await createChild(emu(), REPO, '-userhome-', 'x.txt', { auth: null });
    expect(home.status).toBe(403);
    expectRepoError(home.json, 'org.edu_sharing.restservices.DAOSecurityException');
    const adminNode = await createChild(emu(), REPO, '-userhome-', 'mine.txt');
    const intoAdmin = await createChild(emu(), REPO, adminNode.json.node.parent.id, 'guest.txt', { auth: null });
    expect(intoAdmin.status).toBe(403);
    const ticket = await call(emu(), 'POST', `${REPO}/authentication/v1/appauth/admin`, { auth: null });
    expect(ticket.status).toBe(403);
    const upload1 = await upload(emu(), REPO, adminNode.json.node.ref.id, 'x', 'mine.txt', 'text/plain', null);
    expect(upload1.status).toBe(403);
  });
});
