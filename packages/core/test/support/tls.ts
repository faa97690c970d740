import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private CA and a server certificate for 127.0.0.1, made with `openssl` at test time (Node cannot issue X.509
 * certificates by itself), and an HTTPS front that forwards every request to an HTTP server (the emulator).
 */

/** Whether `openssl` can be run; the TLS tests are skipped without it. */
export const opensslAvailable = spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;

export interface Pki {
  dir: string;
  /** PEM file of the CA that signed the server certificate. */
  caFile: string;
  /** PEM file of another CA, which signed nothing the server shows. */
  otherCaFile: string;
  key: string;
  cert: string;
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-subj',
    `/CN=casebridge test ${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

/** Creates the CA, another CA and a server certificate (127.0.0.1 and localhost) in a temporary folder. */
export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'casebridge-tls-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  openssl(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=127.0.0.1',
  ]);
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-set_serial',
    '0x1001',
    '-days',
    '2',
    '-sha256',
    '-extfile',
    'server.ext',
    '-out',
    'server.pem',
  ]);
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    otherCaFile: join(dir, 'other-ca.pem'),
    key: readFileSync(join(dir, 'server.key'), 'utf8'),
    cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsFront {
  /** `https://127.0.0.1:PORT` */
  url: string;
  /** TLS handshakes completed. */
  handshakes(): number;
  close(): Promise<void>;
}

/** An HTTPS server with the PKI's certificate that forwards every request to `target` (an http:// origin). */
export async function startTlsFront(pki: Pki, target: string): Promise<TlsFront> {
  const upstream = new URL(target);
  let handshakes = 0;
  const server: Server = createServer({ key: pki.key, cert: pki.cert }, (req, res) => {
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  server.on('secureConnection', () => {
    handshakes += 1;
  });
  // A refused handshake is the point of some tests; it must not be an unhandled error.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    handshakes: () => handshakes,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
