import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { operations } from '@casebridge/core/contract';
import { FaultController } from './behaviour/faults.js';
import { lagOf, resolveBehaviour } from './behaviour/profile.js';
import { RateLimiter } from './behaviour/ratelimit.js';
import type { EmulatorOptions, RequestLogEntry, RunningEmulator } from './kernel/emulator.js';
import type { Env } from './kernel/exchange.js';
import { handleRequest } from './pipeline/index.js';
import { applyCodeHosts, applySeed, demoSeed, loadSeedFile, type Seed, type SeedInput } from './seed/seed.js';
import { openSession, setCaptchaDefault } from './service/auth.js';
import { Cluster } from './service/cluster.js';
import { variantFor } from './service/context.js';
import { Router } from './service/router.js';
import { BlobStore } from './store/blobs.js';
import { Persistence } from './store/persist.js';
import { SearchIndex } from './store/search-index.js';
import { Store } from './store/store.js';
import { uiChanged } from './ui/index.js';

export const DEFAULT_PORT = 8990;

function resolveSeed(seed: EmulatorOptions['seed']): SeedInput | Seed {
  if (seed === undefined || seed === 'demo') return demoSeed;
  if (seed === 'empty') return { users: demoSeed.users };
  if (typeof seed === 'string') return loadSeedFile(seed);
  return seed;
}

/** Starts the emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const now = options.now ?? Date.now;
  const variant = variantFor(options.variant ?? 'id', options.timestamps);
  const seed = resolveSeed(options.seed);
  // Options that can be refused are checked before a folder or a database is opened.
  const faults = new FaultController(options.faults ?? [], options.faultSeed ?? 1);
  const jira = resolveBehaviour(options.profile, options.jira);
  const limiter = options.rateLimit ? new RateLimiter(options.rateLimit) : undefined;
  const store = new Store();
  setCaptchaDefault(store, jira.captchaAfterFailedLogins);
  const maxLag = () => Math.max(...Array.from({ length: jira.nodes }, (_, n) => lagOf(jira, n)));
  const index = new SearchIndex(maxLag);
  // The data file before the blob folder: a folder it refuses (an older emulator's SQLite) is left as it was.
  const persistence = options.dataDir ? Persistence.open(options.dataDir, store) : undefined;
  const blobs = await BlobStore.open(options.dataDir ? `${options.dataDir}/blobs` : undefined).catch((err) => {
    persistence?.close();
    throw err;
  });
  if (persistence?.seeded) {
    store.takeChanges();
    // A data folder written before the emulator served the code hosts holds none of their repositories.
    if (store.codeRepos.size === 0) {
      applyCodeHosts(store, seed);
      persistence.commit(store.takeChanges());
    }
  } else {
    applySeed(store, seed, now());
    persistence?.commitSeed(store.takeChanges());
  }
  index.rebase(store);
  const logSize = options.requestLogSize ?? 100_000;
  let log: RequestLogEntry[] = [];
  let seq = 0;
  const sockets = new Set<Socket>();
  const closing = new AbortController();

  // Changes are taken in memory too (they used to pile up there): open cycle pages of the UI learn from them.
  const commit = () => {
    const changes = store.takeChanges();
    uiChanged(env, changes);
    index.record(changes, now());
    persistence?.commit(changes);
  };

  const emu: RunningEmulator = {
    url: '',
    port: 0,
    store,
    faults,
    variant,
    options,
    notes: persistence?.notes ?? [],
    jira,
    setJira: (knobs) => {
      const next = resolveBehaviour(options.profile, { ...jira, ...knobs });
      const lagged = maxLag() > 0;
      Object.assign(jira, next);
      // Turning a lag on: what the store holds now is what every node has indexed.
      if (!lagged && maxLag() > 0) index.rebase(store);
      setCaptchaDefault(store, jira.captchaAfterFailedLogins);
      return jira;
    },
    catchUpIndex: () => {
      commit();
      index.rebase(store);
    },
    requests: () => log.slice(),
    clearRequests: () => {
      log = [];
    },
    reset: async () => {
      for (const t of store.tables()) t.clear();
      applySeed(store, seed, now());
      commit();
      // The Jira knobs go back to the options' too, and the seed is indexed at once, on every node.
      Object.assign(jira, resolveBehaviour(options.profile, options.jira));
      setCaptchaDefault(store, jira.captchaAfterFailedLogins);
      index.rebase(store);
      faults.clear();
      log = [];
    },
    close: async () => {
      closing.abort();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // Writes made through `store` outside a request (embedding code, tests) are committed too.
      commit();
      persistence?.close();
      blobs.close();
    },
  };

  const env: Env = {
    emu,
    store,
    blobs,
    variant,
    faults,
    limiter,
    jira,
    cluster: new Cluster(() => jira),
    index,
    router: new Router(operations),
    now,
    host: options.host ?? '127.0.0.1',
    repoGuest: options.repoGuest ?? false,
    maxJson: options.maxJsonBytes ?? 10 * 1024 * 1024,
    maxFile: options.maxFileBytes ?? 4 * 1024 ** 3,
    closing: closing.signal,
    commit,
  };

  const server: Server = createServer((req, res) => {
    const started = performance.now();
    const entry: RequestLogEntry = {
      seq: ++seq,
      at: now(),
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0] ?? '/',
      service: null,
      op: null,
      status: 0,
      ms: 0,
      user: null,
      fault: null,
      node: null,
    };
    res.on('close', () => {
      entry.status = res.headersSent ? res.statusCode : 0;
      entry.ms = Math.round((performance.now() - started) * 100) / 100;
      if (entry.service === 'admin' || entry.service === 'ui') return;
      log.push(entry);
      if (log.length > logSize) log = log.slice(-Math.floor(logSize / 2));
    });
    handleRequest(env, req, res, entry).catch((err) => {
      // Last line of defence: the emulator never crashes on a request.
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `internal emulator error: ${(err as Error).message}` }));
      } else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 0;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_PORT, options.host ?? '127.0.0.1', () => resolve());
  }).catch((err) => {
    // A port in use must not leave the data file open or a temporary folder behind.
    persistence?.close();
    blobs.close();
    throw err;
  });
  const addr = server.address() as AddressInfo;
  emu.port = addr.port;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  emu.url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${addr.port}`;
  return emu;
}

export { openSession };
