import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { HttpError, type RequestInfo } from './errors.js';
import type { TlsSettings } from './tls.js';
import type { TimeoutOptions, TransportOptions } from './transport-types.js';
import { buildProxyDispatcher, proxyFromEnv, undiciExchange } from './undici.js';

/**
 * How a request reaches the service and how its answer is read: a direct keep-alive pool on `node:http` /
 * `node:https`, or undici when a proxy (or a caller's dispatcher) is in play. Neither retries; the transport does.
 */

/** The way to the service: one exchange at a time, and the pool to close at the end. */
export interface Connection {
  exchange: Exchange;
  /** Closes the pool this connection owns (a dispatcher given by the caller is left open). */
  close(): Promise<void>;
}

/** Opens the connection the options ask for; undici is loaded only for proxies and a caller's dispatcher. */
export function openConnection(
  options: Pick<TransportOptions, 'dispatcher' | 'proxy' | 'concurrency'>,
  timeouts: Required<TimeoutOptions>,
  tls: TlsSettings,
): Connection {
  if (options.dispatcher || options.proxy || proxyFromEnv().length > 0) {
    const own = !options.dispatcher;
    const dispatcher =
      options.dispatcher ??
      buildProxyDispatcher({ proxy: options.proxy, concurrency: options.concurrency, timeouts, tls });
    return {
      exchange: (url, init) => undiciExchange(dispatcher, url.href, init),
      close: async () => {
        if (own) await dispatcher.close();
      },
    };
  }
  const sockets = {
    keepAlive: true,
    maxSockets: Math.max(1, options.concurrency ?? 4) * 2,
    // How long an idle connection is kept; shorter when the server announces a shorter Keep-Alive timeout.
    timeout: 30_000,
    scheduling: 'lifo' as const,
  };
  const agents = { http: new HttpAgent(sockets), https: new HttpsAgent({ ...sockets, ...tls }) };
  return {
    exchange: nodeExchange(agents, timeouts),
    close: async () => {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** Reads a whole answer body as UTF-8, destroying it and failing with HttpError once it passes `maxBytes`. */
export async function readText(res: OpenResponse, maxBytes: number, info: RequestInfo): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      res.body.destroy();
      throw new HttpError(
        `The response is larger than maxResponseBytes (${maxBytes})`,
        { ...info, status: res.status },
        false,
      );
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A response whose body is still to be read. */
export interface OpenResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Buffer> & { destroy(): void };
}

export type Exchange = (
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string | Buffer | Readable; signal?: AbortSignal },
) => Promise<OpenResponse>;

const failure = (code: string, message: string) => Object.assign(new Error(message), { code });

/**
 * A direct connection on `node:http` / `node:https` with a keep-alive agent, and undici's three timeouts with
 * undici's error codes (the retry policy reads them): connect, headers (from the request's last byte to the answer's
 * headers) and body (the longest silence while a body is sent or read).
 */
function nodeExchange(agents: { http: HttpAgent; https: HttpsAgent }, t: Required<TimeoutOptions>): Exchange {
  return (url, init) =>
    new Promise<OpenResponse>((resolve, reject) => {
      const secure = url.protocol === 'https:';
      let timer: NodeJS.Timeout | undefined;
      let connected = false;
      let sent = false;
      let answered = false;
      const stop = () => {
        clearTimeout(timer);
        timer = undefined;
      };
      const req = (secure ? httpsRequest : httpRequest)(url, {
        method: init.method,
        headers: init.headers,
        agent: secure ? agents.https : agents.http,
        ...(init.signal ? { signal: init.signal } : {}),
      });
      const waitForHeaders = () => {
        if (!connected || !sent || answered) return;
        req.setTimeout(0);
        stop();
        timer = setTimeout(
          () => req.destroy(failure('UND_ERR_HEADERS_TIMEOUT', `No answer within ${t.headersMs} ms`)),
          t.headersMs,
        );
      };
      req.on('socket', (socket) => {
        const ready = () => {
          stop();
          connected = true;
          // While the body goes out: the longest silence allowed.
          req.setTimeout(t.bodyMs);
          waitForHeaders();
        };
        if (!socket.connecting) return ready();
        timer = setTimeout(
          () => req.destroy(failure('UND_ERR_CONNECT_TIMEOUT', `Could not connect within ${t.connectMs} ms`)),
          t.connectMs,
        );
        socket.once(secure ? 'secureConnect' : 'connect', ready);
      });
      req.on('finish', () => {
        sent = true;
        waitForHeaders();
      });
      let response: IncomingMessage | undefined;
      req.on('timeout', () => {
        const err = failure('UND_ERR_BODY_TIMEOUT', `Nothing was sent or received for ${t.bodyMs} ms`);
        // Once answered, the error must reach whoever reads the body.
        if (response) response.destroy(err);
        else req.destroy(err);
      });
      req.on('error', (err) => {
        stop();
        if (!answered) reject(err);
      });
      req.on('response', (res) => {
        answered = true;
        response = res;
        stop();
        req.setTimeout(t.bodyMs);
        res.on('end', () => req.setTimeout(0));
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      const body = init.body;
      if (body === undefined) req.end();
      else if (typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
      else {
        body.once('error', (err) => req.destroy(err));
        body.pipe(req);
      }
    });
}
