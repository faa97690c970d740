import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { setImmediate as turn } from 'node:timers/promises';
import type { Dispatcher, FormData } from 'undici';
import { ConfigError, HttpError, type RequestInfo } from './errors.js';
import { redactedMessage, registerSecret, safeUrl } from './secrets.js';
import type { TlsSettings } from './tls.js';
import type { TimeoutOptions, TransportOptions } from './transport-types.js';

/**
 * How a request reaches the service on undici (an Agent, a ProxyAgent or an EnvHttpProxyAgent); nothing retries here.
 */

type Undici = typeof import('undici');
let loaded: Undici | undefined;
/** undici, required on first use (a request, a proxy, an upload): a client that never sends does not load it. */
export function undici(): Undici {
  loaded ??= createRequire(import.meta.url)('undici') as Undici;
  return loaded;
}

/** The way to the service: one exchange at a time, and the pool to close at the end. */
export interface Connection {
  exchange: Exchange;
  /** Closes the pool this connection owns (a dispatcher given by the caller is left open). */
  close(): Promise<void>;
}

/** A response whose body is still to be read. */
export interface OpenResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Buffer> & { destroy(): void };
}

export type Exchange = (
  url: URL,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: string | Buffer | Readable | FormData;
    signal?: AbortSignal;
  },
) => Promise<OpenResponse>;

/** The connection the options ask for; a proxy's dispatcher is built now, so a bad proxy fails the construction. */
export function openConnection(
  options: Pick<TransportOptions, 'dispatcher' | 'proxy' | 'concurrency'>,
  timeouts: Required<TimeoutOptions>,
  tls: TlsSettings,
): Connection {
  const own = !options.dispatcher;
  const settings = { concurrency: options.concurrency, timeouts, tls };
  let dispatcher =
    options.dispatcher ??
    (options.proxy || proxyFromEnv().length > 0 ? proxyDispatcher({ ...settings, proxy: options.proxy }) : undefined);
  // undici returns a connection to its pool one loop turn after its answer ended: waiting that turn reuses it.
  let ending = false;
  const ended = () => {
    ending = true;
    setImmediate(() => {
      ending = false;
    });
  };
  return {
    exchange: async (url, init) => {
      if (ending) await turn();
      dispatcher ??= new (undici().Agent)(agentOptions(settings));
      const res = await dispatcher.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: init.method as Dispatcher.HttpMethod,
        headers: init.headers,
        body: init.body ?? null,
        signal: init.signal ?? null,
      });
      res.body.once('end', ended);
      return { status: res.statusCode, headers: res.headers, body: res.body };
    },
    close: async () => {
      if (own) await dispatcher?.close();
    },
  };
}

/** Reads a whole answer body as UTF-8, destroying it and failing with HttpError once it passes `maxBytes`. */
export async function readText(res: OpenResponse, maxBytes: number, info: RequestInfo): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.length;
    if (size > maxBytes) {
      res.body.destroy();
      throw new HttpError(
        `The response is larger than maxResponseBytes (${maxBytes})`,
        { ...info, status: res.status },
        false,
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The proxy variables set in the environment (HTTPS_PROXY, HTTP_PROXY, either case). */
function proxyFromEnv(): string[] {
  const env = process.env;
  return [env.HTTPS_PROXY, env.https_proxy, env.HTTP_PROXY, env.http_proxy].filter((v): v is string => !!v);
}

interface PoolSettings {
  concurrency?: number | undefined;
  timeouts: Required<TimeoutOptions>;
  tls: TlsSettings;
}

/** Pool settings: the client's timeouts (body is the longest silence while reading) and TLS for every connect. */
function agentOptions(o: PoolSettings) {
  const t = o.timeouts;
  return {
    connections: Math.max(1, o.concurrency ?? 4) * 2,
    // Below the server's Keep-Alive by undici's 2 s margin, so a reused connection is not reset under a create.
    keepAliveTimeout: 30_000,
    headersTimeout: t.headersMs,
    bodyTimeout: t.bodyMs,
    connect: { timeout: t.connectMs, ...o.tls },
  };
}

/** Percent-decoding that keeps a malformed sequence as it is, as the URL parser does. */
function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The pool that talks to the proxy. undici 7 loops forever on a dropped CONNECT (nodejs/undici#3897) and waits 300 s
 * on a silent proxy; both now fail as UND_ERR_PRX_CONN, retried as not sent.
 */
function proxyPool(headersMs: number) {
  return (origin: URL, options: object): Dispatcher => {
    const pool = new (undici().Pool)(origin, { ...options, headersTimeout: headersMs });
    const connect = pool.connect.bind(pool) as (o: Dispatcher.ConnectOptions) => Promise<Dispatcher.ConnectData>;
    (pool as { connect: unknown }).connect = async (o: Dispatcher.ConnectOptions) => {
      try {
        return await connect(o);
      } catch (err) {
        const code = (err as { code?: unknown })?.code;
        if (code !== 'UND_ERR_SOCKET' && code !== 'UND_ERR_HEADERS_TIMEOUT') throw err;
        throw Object.assign(new Error(`The proxy failed while opening the tunnel: ${redactedMessage(err)}`), {
          code: 'UND_ERR_PRX_CONN',
        });
      }
    };
    return pool;
  };
}

/** A dispatcher through the explicit proxy, else through the environment's proxy variables (which honour NO_PROXY). */
function proxyDispatcher(o: PoolSettings & { proxy?: string | undefined }): Dispatcher {
  const { EnvHttpProxyAgent, ProxyAgent } = undici();
  const options = {
    ...agentOptions(o),
    requestTls: o.tls,
    proxyTls: o.tls,
    clientFactory: proxyPool(o.timeouts.headersMs),
  };
  if (o.proxy) {
    let uri: URL;
    try {
      uri = new URL(o.proxy);
    } catch {
      throw new ConfigError(`proxy ${safeUrl(o.proxy)} is not a URL such as http://proxy.example.com:3128`);
    }
    // The password as typed (decoded) and as the URL spells it, and the Basic value built from it, are secrets.
    const user = decoded(uri.username);
    const password = decoded(uri.password);
    registerSecret(uri.password);
    registerSecret(password);
    const credentials = user || password ? Buffer.from(`${user}:${password}`).toString('base64') : undefined;
    registerSecret(credentials);
    uri.username = '';
    uri.password = '';
    return proxyAgent(
      'the proxy option',
      () =>
        new ProxyAgent({ ...options, uri: uri.toString(), ...(credentials ? { token: `Basic ${credentials}` } : {}) }),
    );
  }
  for (const value of proxyFromEnv()) {
    try {
      registerSecret(decoded(new URL(value).password));
    } catch {
      // Not a URL: undici refuses it below, and the message does not echo it.
    }
  }
  return proxyAgent('HTTPS_PROXY / HTTP_PROXY', () => new EnvHttpProxyAgent(options));
}

/** Builds a proxy agent; undici's refusal (a scheme other than http/https, ...) becomes a ConfigError. */
function proxyAgent(where: string, build: () => Dispatcher): Dispatcher {
  try {
    return build();
  } catch (err) {
    // The value is not echoed: one that is not a URL may still hold credentials.
    throw new ConfigError(
      `${where} cannot be used: ${redactedMessage(err)}. Expected a URL such as http://proxy.example.com:3128`,
    );
  }
}
