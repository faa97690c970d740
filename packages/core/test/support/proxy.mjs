// A small forward proxy for the client's tests, run as a child process: absolute-URI HTTP requests
// (`GET http://host/path`) are forwarded, CONNECT opens a TCP tunnel. With PROXY_AUTH=user:pass in its environment
// it answers 407 unless Proxy-Authorization carries those credentials. It counts what it served; a request for
// `/__proxy/stats` (origin form, made to the proxy itself) returns the counts as JSON. Prints `{"port": N}` once it
// listens. It never prints a header.
import { createServer, request } from 'node:http';
import { connect } from 'node:net';

const expected = process.env.PROXY_AUTH
  ? `Basic ${Buffer.from(process.env.PROXY_AUTH, 'utf8').toString('base64')}`
  : undefined;
const stats = { forwarded: 0, tunnels: 0, refused: 0, targets: [] };

const authorized = (req) => expected === undefined || req.headers['proxy-authorization'] === expected;

const server = createServer((req, res) => {
  if (req.url === '/__proxy/stats') {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stats));
    return;
  }
  if (!/^https?:\/\//i.test(req.url ?? '')) {
    req.resume();
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end('This is a proxy: send an absolute URI or CONNECT');
    return;
  }
  if (!authorized(req)) {
    stats.refused += 1;
    req.resume();
    res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test proxy"', 'content-length': '0' });
    res.end();
    return;
  }
  stats.forwarded += 1;
  const target = new URL(req.url);
  stats.targets.push(target.host);
  const headers = { ...req.headers };
  delete headers['proxy-authorization'];
  delete headers['proxy-connection'];
  const upstream = request(
    { host: target.hostname, port: target.port, method: req.method, path: target.pathname + target.search, headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});

server.on('connect', (req, socket, head) => {
  socket.on('error', () => {});
  if (!authorized(req)) {
    stats.refused += 1;
    socket.end(
      'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test proxy"\r\nContent-Length: 0\r\n\r\n',
    );
    return;
  }
  stats.tunnels += 1;
  const at = (req.url ?? '').lastIndexOf(':');
  const host = (req.url ?? '').slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number((req.url ?? '').slice(at + 1));
  stats.targets.push(req.url);
  let established = false;
  const upstream = connect(port, host, () => {
    established = true;
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  // As squid does: a target that cannot be reached is a 502 answer to the CONNECT.
  upstream.on('error', () => {
    if (established) socket.destroy();
    else socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
  });
  socket.on('close', () => upstream.destroy());
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
// The test process holds our stdin: when it ends (even killed), so does the proxy.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
