import { type ChildProcess, spawn } from 'node:child_process';
import { get } from 'node:http';
import { fileURLToPath } from 'node:url';

/** A real forward proxy (`proxy.mjs`) in a child process, and what it counted. */

const SCRIPT = fileURLToPath(new URL('./proxy.mjs', import.meta.url));

export interface ProxyStats {
  /** Absolute-URI requests forwarded. */
  forwarded: number;
  /** CONNECT tunnels opened. */
  tunnels: number;
  /** Requests and CONNECTs answered 407. */
  refused: number;
  /** `host:port` of every forwarded request and tunnel. */
  targets: string[];
}

export interface RunningProxy {
  /** `http://127.0.0.1:PORT`, without credentials. */
  url: string;
  port: number;
  stats(): Promise<ProxyStats>;
  close(): Promise<void>;
}

/** Starts the proxy; with `auth` (`user:pass`) it demands those credentials in Proxy-Authorization. */
export async function startProxy(options: { auth?: string } = {}): Promise<RunningProxy> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
  if (options.auth) env.PROXY_AUTH = options.auth;
  const child: ChildProcess = spawn(process.execPath, [SCRIPT], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`the proxy did not start within 10 s: ${err}`)), 10_000);
    child.stderr?.on('data', (d) => {
      err += d;
    });
    child.stdout?.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the proxy exited (${code}) before listening: ${err}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    // node:http, not fetch: the stats must never travel through a proxy that the environment names.
    stats: () =>
      new Promise((resolve, reject) => {
        get(`${url}/__proxy/stats`, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => resolve(JSON.parse(text) as ProxyStats));
        }).on('error', reject);
      }),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Sets environment variables for the duration of `fn`, then restores them exactly (absent stays absent). */
export async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Every proxy variable unset, so a test starts from a known environment whatever the machine has. */
export const NO_PROXY_ENV = {
  HTTP_PROXY: undefined,
  http_proxy: undefined,
  HTTPS_PROXY: undefined,
  https_proxy: undefined,
  NO_PROXY: undefined,
  no_proxy: undefined,
} as const;
