import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { handlers } from '../src/handlers/index.js';
import { FileReply } from '../src/service/context.js';
import { ADMIN, basic, call, enc, REPO, TM, useEmulator } from './helpers.js';

/**
 * Hostile and odd input, over real HTTP: every request gets the service's status and a clear message, and the
 * emulator keeps serving. Only test-plan operations are used.
 */

const PLAN = `${TM}/testPlan/DEMO-1`;
const JSON_TYPE = { 'content-type': 'application/json' };

describe('robustness', () => {
  const emu = useEmulator();
  const cycleNames = () =>
    emu()
      .store.cycles.all()
      .map((c) => c.name);

  afterAll(async () => {
    // After everything below, a normal request still works.
    const r = await call(emu(), 'GET', `${PLAN}/members`);
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(6);
  });

  describe('bodies', () => {
    it('malformed JSON: 500 saying the body is not valid JSON', async () => {
      for (const raw of ['{"name": ', '{name: "x"}', "{'name': 'x'}", '{"name": "x"} trailing', '\u0000']) {
        const r = await call(emu(), 'POST', `${PLAN}/addCycle`, { raw, headers: JSON_TYPE });
        expect(r.status, raw).toBe(500);
        expect(r.json.message, raw).toMatch(/not valid JSON/);
      }
    });

    it('bytes that are not UTF-8 and deeply nested JSON are refused the same way', async () => {
      const binary = await call(emu(), 'POST', `${PLAN}/addCycle`, {
        raw: new Uint8Array([0xff, 0xfe, 0x00, 0x7b]),
        headers: JSON_TYPE,
      });
      expect(binary.status).toBe(500);
      expect(binary.json.message).toMatch(/not valid JSON/);
      const deep = await call(emu(), 'POST', `${PLAN}/addCycle`, {
        raw: `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
        headers: JSON_TYPE,
      });
      expect(deep.status).toBe(500);
      expect(deep.json.message).toMatch(/body/);
    });

    it('JSON of the wrong type: 500 naming what was expected', async () => {
      const cases: [unknown, RegExp][] = [
        [[], /expected object, received array/],
        ['DEMO-2', /expected object, received string/],
        [null, /expected object, received null/],
        [42, /expected object, received number/],
      ];
      for (const [body, message] of cases) {
        const r = await call(emu(), 'POST', `${PLAN}/addMembers`, { body });
        expect(r.status, JSON.stringify(body)).toBe(500);
        expect(r.json.message).toMatch(message);
      }
      const notArray = await call(emu(), 'POST', `${PLAN}/addMembers`, { body: { testCaseKeys: 'DEMO-2' } });
      expect(notArray.status).toBe(500);
      expect(notArray.json).toMatchObject({ field: 'testCaseKeys' });
      expect(notArray.json.message).toMatch(/testCaseKeys.*expected array/);
      const stringId = await call(emu(), 'PUT', `${PLAN}/assignTesterToTestCase`, {
        body: { memberId: '1', userName: 'tester' },
      });
      expect(stringId.status).toBe(500);
      expect(stringId.json).toMatchObject({ field: 'memberId' });
      expect(stringId.json.message).toMatch(/memberId.*expected number, received string/);
      const numberName = await call(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: 12 } });
      expect(numberName.json).toMatchObject({ field: 'name' });
    });

    it('unknown keys: 500 naming them, and nothing is written', async () => {
      const r = await call(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: 'with colour', colour: 'red' } });
      expect(r.status).toBe(500);
      expect(r.json.message).toMatch(/unknown field\(s\) "colour"/);
      expect(cycleNames()).not.toContain('with colour');
    });

    it('a 20 MB body (over the 10 MiB limit): 500 naming the limit, and the emulator carries on', async () => {
      const raw = `{"name": "${'x'.repeat(20 * 1024 * 1024)}"}`;
      const r = await call(emu(), 'POST', `${PLAN}/addCycle`, { raw, headers: JSON_TYPE });
      expect(r.status).toBe(500);
      expect(r.json.message).toMatch(/exceeds the limit of 10485760 bytes/);
      expect((await call(emu(), 'GET', `${PLAN}/members`)).status).toBe(200);
    });

    it('empty body where one is required: 500 saying so', async () => {
      for (const raw of [undefined, '', '  \n']) {
        const r = await call(emu(), 'POST', `${PLAN}/addMembers`, { raw, headers: JSON_TYPE });
        expect(r.status).toBe(500);
        expect(r.json.message).toMatch(/body is empty.*requires a JSON body/);
      }
    });

    it('the content type is not checked: JSON is read as JSON, anything else fails as JSON', async () => {
      const plain = await call(emu(), 'POST', `${PLAN}/addCycle`, {
        raw: JSON.stringify({ name: 'sent as text/plain' }),
        headers: { 'content-type': 'text/plain' },
      });
      expect(plain.status).toBe(200);
      expect(cycleNames()).toContain('sent as text/plain');
      const xml = await call(emu(), 'POST', `${PLAN}/addCycle`, {
        raw: '<cycle><name>x</name></cycle>',
        headers: { 'content-type': 'application/xml' },
      });
      expect(xml.status).toBe(500);
      expect(xml.json.message).toMatch(/not valid JSON/);
      const form = await call(emu(), 'POST', `${PLAN}/addCycle`, {
        raw: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status).toBe(500);
    });

    it('a body on an operation that takes none is ignored', async () => {
      // fetch refuses a GET with a body; node:http sends one.
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          `${emu().url}${PLAN}/members`,
          {
            method: 'GET',
            headers: { authorization: basic(ADMIN.user, ADMIN.password), 'content-length': '17', ...JSON_TYPE },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end('{"ignored": true}');
      });
      expect(status).toBe(200);
    });
  });

  describe('paths', () => {
    it('malformed percent-encoding is kept as written and fails validation with the parameter named', async () => {
      const r = await call(emu(), 'GET', `${TM}/testPlan/%E0%A4%A/members`);
      expect(r.status).toBe(500);
      expect(r.json.message).toMatch(/testPlanIssueKey/);
      expect((await call(emu(), 'GET', `${TM}/%E0%A4%A`)).status).toBe(404);
      expect((await call(emu(), 'GET', `${TM}/testPlan/DEMO-1%/members`)).status).toBe(500);
    });

    it('encoded keys are decoded before use', async () => {
      const r = await call(emu(), 'GET', `${TM}/testPlan/${enc('DEMO-1')}/members`.replace('DEMO', '%44EMO'));
      expect(r.status).toBe(200);
    });

    it('a 10 kB path segment: 404 for a well-formed key that does not exist', async () => {
      const key = `${'A'.repeat(10_000)}-1`;
      const r = await call(emu(), 'GET', `${TM}/testPlan/${key}/members`);
      expect(r.status).toBe(404);
      expect(r.json.message).toContain(key);
    });

    it('a path over the header size limit gets 431 from the HTTP layer', async () => {
      const r = await call(emu(), 'GET', `${TM}/testPlan/${'A'.repeat(20_000)}-1/members`);
      expect(r.status).toBe(431);
    });

    it('unicode, emoji and right-to-left cycle names round-trip', async () => {
      const names = [
        'שלום עולם',
        'اختبار الدورة ١٢',
        '🚀🔥 ünïcödé',
        '👩‍💻 zero width joiner',
        'e\u0301 combining',
        '\u202eRTL override',
        '中文 日本語 한국어',
        'tab\tand "quotes" \\ backslash',
        `long ${'ℵ'.repeat(240)}`,
      ];
      for (const name of names) {
        const r = await call(emu(), 'POST', `${PLAN}/addCycle`, { body: { name } });
        expect(r.status, name).toBe(200);
      }
      const listed = ((await call(emu(), 'GET', `${PLAN}/cycles`)).json as { name: string }[]).map((c) => c.name);
      for (const name of names) expect(listed).toContain(name);
      // Over the 255-character limit: refused naming the field.
      const tooLong = await call(emu(), 'POST', `${PLAN}/addCycle`, { body: { name: 'n'.repeat(10_000) } });
      expect(tooLong.status).toBe(500);
      expect(tooLong.json.field).toBe('name');
    });

    it('unknown routes: 404 in each service’s error shape', async () => {
      const tm = await call(emu(), 'GET', `${TM}/testPlan/DEMO-1/nothing`);
      expect(tm.status).toBe(404);
      expect(tm.json.message).toMatch(/No operation at GET .*\/nothing/);
      const jira = await call(emu(), 'GET', '/no/such/page');
      expect(jira.status).toBe(404);
      expect(jira.json.errorMessages[0]).toMatch(/No operation/);
      const repo = await call(emu(), 'GET', `${REPO}/no/such/endpoint`);
      expect(repo.status).toBe(404);
      expect(repo.json).toMatchObject({ error: expect.stringMatching(/Exception/), message: /No operation/ });
    });

    it('wrong method: 405 with an Allow header', async () => {
      const r = await call(emu(), 'DELETE', `${PLAN}/members`);
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
      expect(r.json.message).toMatch(/DELETE is not allowed here; use GET/);
      const post = await call(emu(), 'GET', `${PLAN}/addCycle`);
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('POST, OPTIONS');
    });

    it('HEAD answers like GET without a body; OPTIONS lists the methods', async () => {
      const get = await call(emu(), 'GET', `${PLAN}/members`);
      const head = await call(emu(), 'HEAD', `${PLAN}/members`);
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)));
      expect(head.headers.get('content-type')).toMatch(/^application\/json/);
      expect((await call(emu(), 'HEAD', `${PLAN}/members`, { auth: null })).status).toBe(401);
      expect((await call(emu(), 'HEAD', `${TM}/testPlan/DEMO-404/members`)).status).toBe(404);
      expect((await call(emu(), 'HEAD', `${PLAN}/addCycle`)).status).toBe(405);

      const options = await call(emu(), 'OPTIONS', `${PLAN}/members`, { auth: null });
      expect(options.status).toBe(200);
      expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
      expect(options.text).toBe('');
      expect((await call(emu(), 'OPTIONS', `${PLAN}/addCycle`)).headers.get('allow')).toBe('POST, OPTIONS');
      expect((await call(emu(), 'OPTIONS', `${TM}/nothing`)).status).toBe(404);
    });
  });

  describe('load and broken clients', () => {
    it('answers 200 concurrent requests', async () => {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => {
          if (i % 3 === 0) return call(emu(), 'GET', `${PLAN}/members`);
          if (i % 3 === 1) return call(emu(), 'GET', `${PLAN}/cycles`);
          return call(emu(), 'POST', `${PLAN}/addMembers`, { body: { testCaseKeys: ['DEMO-2', 'DEMO-3'] } });
        }),
      );
      expect(results.map((r) => r.status)).toEqual(Array(200).fill(200));
      expect(results.filter((_, i) => i % 3 === 0).every((r) => r.json.length === 6)).toBe(true);
    });

    it('survives a client that disconnects mid-body and one that disconnects mid-headers', async () => {
      const body = JSON.stringify({ name: 'half sent' });
      const auth = basic(ADMIN.user, ADMIN.password);
      const { port } = emu();
      await new Promise<void>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(
            `POST ${PLAN}/addCycle HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\n` +
              `Content-Type: application/json\r\nContent-Length: ${body.length + 1000}\r\n\r\n${body}`,
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
        socket.on('error', reject);
      });
      await new Promise<void>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(`POST ${PLAN}/addCycle HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le`);
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
        socket.on('error', reject);
      });
      await new Promise((r) => setTimeout(r, 100));
      expect(cycleNames()).not.toContain('half sent');
      expect((await call(emu(), 'GET', `${PLAN}/members`)).status).toBe(200);
    });

    it('answers garbage on the socket with 400 and keeps serving', async () => {
      const reply = await new Promise<string>((resolve, reject) => {
        let got = '';
        const socket = connect(emu().port, '127.0.0.1', () => socket.write('THIS IS NOT HTTP\r\n\r\n'));
        socket.on('data', (d) => {
          got += d;
        });
        socket.on('close', () => resolve(got));
        socket.on('error', reject);
      });
      expect(reply).toMatch(/^HTTP\/1\.1 400/);
      expect((await call(emu(), 'GET', `${PLAN}/members`)).status).toBe(200);
    });

    it('a file answer whose stored bytes are missing is a 500, not a crash', async () => {
      // No operation of the test-plan group answers a file: stand one in for the length of this test.
      const original = handlers['defects.ofPlan'];
      handlers['defects.ofPlan'] = () => new FileReply('no-such-blob', 'image/png', 'shot.png', 10);
      try {
        const r = await call(emu(), 'GET', `${PLAN}/defects`);
        expect(r.status).toBe(500);
        expect(r.json.message).toMatch(/stored bytes of "shot\.png" cannot be read/);
      } finally {
        if (original) handlers['defects.ofPlan'] = original;
      }
      expect((await call(emu(), 'GET', `${PLAN}/defects`)).status).toBe(200);
    });

    it('a malformed Authorization header is a 401, not a crash', async () => {
      for (const auth of [
        'Basic',
        'Basic !!!not-base64',
        `Basic ${Buffer.from('no-colon').toString('base64')}`,
        'Negotiate x',
      ]) {
        const r = await call(emu(), 'GET', `${PLAN}/members`, { auth });
        expect(r.status, auth).toBe(401);
        expect(r.json.message).toMatch(/credentials/);
      }
    });
  });
});
