import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { doctor } from '../src/doctor.js';

/**
 * What `casebridge doctor` says about the auth scheme: a personal access token given as the password is refused
 * before anything is sent, and a refused password's fix names the token variable. A raw server on port 0 answers 401
 * and counts the requests.
 */

/** A Jira DC personal access token's shape: base64 of `<12-digit id>:<20 random bytes>`. */
const PAT = Buffer.from('716821684788:k3Jq9x2LmP0aZr8sVt4w').toString('base64');
const cwd = () => mkdtempSync(join(tmpdir(), 'cb-doctor-auth-'));

let requests = 0;
const server: Server = createServer((req, res) => {
  requests += 1;
  req.resume();
  res.writeHead(401, { 'content-type': 'application/json' });
  res.end('{"errorMessages":["You are not authenticated."]}');
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

async function url(): Promise<string> {
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('doctor and the auth scheme', () => {
  it('a personal access token as CASEBRIDGE_PASSWORD: ✗ config, the fix names CASEBRIDGE_TOKEN, nothing sent', async () => {
    const env = {
      CASEBRIDGE_URL: await url(),
      CASEBRIDGE_PROJECT: 'DEMO',
      CASEBRIDGE_USER: 'ci',
      CASEBRIDGE_PASSWORD: PAT,
    };
    const before = requests;
    const checks = await doctor(cwd(), env);
    const config = checks.find((c) => c.name === 'config');
    expect(config).toMatchObject({ ok: false });
    expect(config?.detail).toMatch(/a personal access token goes in token, sent as Bearer/);
    expect(config?.fix).toMatch(/^put the personal access token in CASEBRIDGE_TOKEN/);
    expect(JSON.stringify(checks)).not.toContain(PAT);
    expect(requests).toBe(before);
  });

  it('a password refused with 401: the fix says a token goes in CASEBRIDGE_TOKEN, as Bearer', async () => {
    const env = {
      CASEBRIDGE_URL: await url(),
      CASEBRIDGE_PROJECT: 'DEMO',
      CASEBRIDGE_USER: 'ci',
      CASEBRIDGE_PASSWORD: 'wrong-password',
    };
    const credentials = (await doctor(cwd(), env)).find((c) => c.name === 'credentials');
    expect(credentials).toMatchObject({ ok: false, detail: 'the service refused the credentials (HTTP 401)' });
    expect(credentials?.fix).toMatch(/A personal access token goes in token \(CASEBRIDGE_TOKEN\), sent as Bearer/);
  });
});
