import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { redact, registerSecret } from '@casebridge/core';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { UsageError } from '../command-line.js';
import type { Io } from '../output.js';
import { openReader } from '../query/reader.js';
import { buildServer } from './server.js';

/**
 * `casebridge mcp` serving: over stdio, or Streamable HTTP at /mcp. Loaded only by that command (optional.ts
 * `loadMcp`): the MCP SDK is an optional peer of the CLI, so the other commands never load it.
 */

declare const __CASEBRIDGE_VERSION__: string | undefined;
const VERSION = typeof __CASEBRIDGE_VERSION__ === 'string' ? __CASEBRIDGE_VERSION__ : '0.1.0';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * Whether an HTTP request may talk to the server: its Host is the server's own address (`127.0.0.1:PORT`,
 * `localhost:PORT`...), and so is its Origin when it has one (a browser's): a page on another site that points a
 * browser at this port (DNS rebinding) is refused; and the bearer token when one is set (required off loopback).
 */
export function admitted(
  req: Pick<IncomingMessage, 'headers'>,
  o: { token?: string; hosts: ReadonlySet<string> },
): { ok: true } | { ok: false; status: number; why: string } {
  const host = req.headers.host;
  if (host === undefined || !o.hosts.has(host.toLowerCase())) {
    return { ok: false, status: 403, why: `host ${host ?? '(none)'} is not this server's` };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !['http://', 'https://'].some((s) => o.hosts.has(origin.toLowerCase().replace(s, '')))) {
    return { ok: false, status: 403, why: `origin ${origin} is not allowed` };
  }
  if (o.token !== undefined && req.headers.authorization !== `Bearer ${o.token}`) {
    return { ok: false, status: 401, why: 'a bearer token is required (CASEBRIDGE_MCP_TOKEN)' };
  }
  return { ok: true };
}

export interface ServeOptions {
  http?: number;
  host?: string;
  allowWrites: boolean;
}

/** Serves until stdin closes (stdio) or SIGINT/SIGTERM (HTTP); resolves with the exit code. */
export async function serve(values: ServeOptions, io: Io): Promise<number> {
  const opened = await openReader(io.cwd, io.env);
  const opts = { allowWrites: values.allowWrites, env: io.env };
  if (values.http === undefined) {
    const server = buildServer(opened, opts, VERSION);
    await server.connect(new StdioServerTransport());
    await new Promise<void>((done) => (server.server.onclose = done));
    await opened.close();
    return 0;
  }
  const host = values.host ?? '127.0.0.1';
  const token = io.env.CASEBRIDGE_MCP_TOKEN || undefined;
  if (!LOOPBACK.has(host) && !token) {
    throw new UsageError(`--host ${host} is reachable from other machines: set CASEBRIDGE_MCP_TOKEN to a secret first`);
  }
  if (token) registerSecret(token);
  let hosts = new Set<string>();
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const verdict = admitted(req, { ...(token ? { token } : {}), hosts });
    if (!verdict.ok) {
      res.writeHead(verdict.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: verdict.why }, id: null }));
      return;
    }
    // Stateless: a server and a transport per request (no session to keep, any number of clients).
    const server = buildServer(opened, opts, VERSION);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(redact(String(err)));
      });
  });
  await new Promise<void>((done, fail) => {
    http.once('error', fail);
    http.listen(values.http, host, done);
  });
  const address = http.address();
  const shown = typeof address === 'object' && address ? address.port : values.http;
  hosts = new Set(
    ['127.0.0.1', 'localhost', '[::1]', ...(LOOPBACK.has(host) ? [] : [host.includes(':') ? `[${host}]` : host])].map(
      (h) => `${h}:${shown}`.toLowerCase(),
    ),
  );
  io.err(
    `casebridge mcp: Streamable HTTP on http://${host.includes(':') ? `[${host}]` : host}:${shown}/mcp${values.allowWrites ? ' (writes allowed)' : ' (read-only)'}`,
  );
  await new Promise<void>((done) => {
    const stop = () => http.close(() => done());
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await opened.close();
  return 0;
}
