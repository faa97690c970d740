import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';
import { ConfigError } from './errors.js';
import { redactedMessage, registerSecret, safeUrl } from './secrets.js';
import type { TlsSettings } from './tls.js';

/**
 * The proxy path of the transport, on undici: an explicit `proxy` option, or HTTPS_PROXY / HTTP_PROXY (with
 * NO_PROXY) in the environment. undici is loaded only here, on first use: a direct connection goes through
 * `node:http` and costs the runner's process none of undici's ~19 MB.
 */

type Undici = typeof import('undici');
let loaded: Undici | undefined;
function undici(): Undici {
  loaded ??= createRequire(import.meta.url)('undici') as Undici;
  return loaded;
}

/** Percent-decoding that keeps a malformed sequence as it is, as the URL parser does. */
function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The proxy variables set in the environment (HTTPS_PROXY, HTTP_PROXY, either case). */
export function proxyFromEnv(): string[] {
  const env = process.env;
  return [env.HTTPS_PROXY, env.https_proxy, env.HTTP_PROXY, env.http_proxy].filter((v): v is string => !!v);
}

export interface ProxySettings {
  proxy?: string;
  concurrency?: number;
  timeouts: { connectMs: number; headersMs: number; bodyMs: number };
  tls: TlsSettings;
}

/**
 * The pool that talks to the proxy itself. undici 7 keeps a request queued forever, reconnecting in a tight loop,
 * when the proxy drops the connection while the CONNECT tunnel is being opened (nodejs/undici#3897, fixed upstream
 * by #5441), and waits 300 s for a proxy that never answers the CONNECT. Both happen before anything reached the
 * service: such failures get the code UND_ERR_PRX_CONN, which fails the request (and is retried as not sent).
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

/**
 * A dispatcher through the explicit proxy, or through the environment's proxy variables (which honour NO_PROXY), or
 * a plain undici Agent when `direct` (a dispatcher for the proxy-less path, used only when asked for).
 */
export function buildProxyDispatcher(o: ProxySettings): Dispatcher {
  const { Agent, EnvHttpProxyAgent, ProxyAgent } = undici();
  const t = o.timeouts;
  const tls = o.tls;
  const agentOptions = {
    connections: Math.max(1, o.concurrency ?? 4) * 2,
    keepAliveTimeout: 30_000,
    headersTimeout: t.headersMs,
    bodyTimeout: t.bodyMs,
    connect: { timeout: t.connectMs, ...tls },
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
    const token = credentials ? `Basic ${credentials}` : undefined;
    uri.username = '';
    uri.password = '';
    return proxyAgent(
      'the proxy option',
      () =>
        new ProxyAgent({
          ...agentOptions,
          uri: uri.toString(),
          ...(token ? { token } : {}),
          requestTls: tls,
          proxyTls: tls,
          clientFactory: proxyPool(agentOptions.headersTimeout),
        }),
    );
  }
  const fromEnv = proxyFromEnv();
  if (fromEnv.length > 0) {
    for (const value of fromEnv) {
      try {
        registerSecret(decoded(new URL(value).password));
      } catch {
        // Not a URL: undici refuses it below, and the message does not echo it.
      }
    }
    return proxyAgent(
      'HTTPS_PROXY / HTTP_PROXY',
      () =>
        new EnvHttpProxyAgent({
          ...agentOptions,
          requestTls: tls,
          proxyTls: tls,
          clientFactory: proxyPool(agentOptions.headersTimeout),
        }),
    );
  }
  return new Agent(agentOptions);
}

/** One exchange through an undici dispatcher, in the shape the transport reads. */
export async function undiciExchange(
  dispatcher: Dispatcher,
  url: string,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: string | Buffer | import('node:stream').Readable;
    signal?: AbortSignal;
  },
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Buffer> & { destroy(): void };
}> {
  const res = await undici().request(url, {
    method: init.method as Dispatcher.HttpMethod,
    headers: init.headers,
    body: init.body,
    dispatcher,
    signal: init.signal,
  });
  return {
    status: res.statusCode,
    headers: res.headers,
    body: res.body as AsyncIterable<Buffer> & { destroy(): void },
  };
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
