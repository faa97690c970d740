/**
 * Small stand-ins of the Qase API and of testomat.io's reporter API for the peers cell (issue 25): plain node:http
 * servers on port 0 that answer exactly the calls `playwright-qase-reporter` 2.7 (through qase-javascript-commons
 * 2.9) and `@testomatio/reporter` 2.17 make in a run like the bench's (no attachments, no environment, no
 * configurations, no filter), with the smallest answer those clients accept, and count every request. Every answer
 * waits `latencyMs` first, as the emulator's `{ route: '**', latencyMs }` fault does for casebridge; with
 * `rateLimit` a token bucket of the emulator's shape (burst = one second's tokens) answers 429 with `Retry-After`.
 * A call they do not know is answered 404 and counted under `unknown`, so a reporter that starts calling something
 * new shows in the figures instead of passing unseen. Nothing is stored: a stand-in does not check results, it only
 * answers (their servers create cases and tests from the results; here nothing does).
 */
import { createServer } from 'node:http';

/**
 * The routes of a stand-in: `[method, pattern, name, answer(match, n, base), items?(body)]`, `n` counting the
 * requests of that route from 1; `answer` returns `[status, body]`; `items` says how many test results a request's
 * JSON body carries (what the stand-in received, the peers' "delivered").
 */
const QASE_ROUTES = [
  // RunService.createRun → qase-api-client RunsApi.createRun; the client needs `result.id`.
  ['POST', /^\/v1\/run\/([^/]+)$/, 'run.create', (_m, n) => [200, { status: true, result: { id: n } }]],
  // ClientV2.uploadResults → qase-api-v2-client ResultsApi.createResultsV2, up to 200 results each (DEFAULT_BATCH_SIZE).
  [
    'POST',
    /^\/v2\/([^/]+)\/run\/(\d+)\/results$/,
    'results.create',
    () => [200, { status: true }],
    (body) => body?.results?.length ?? 0,
  ],
  // RunService.completeRun (run.complete is on by default).
  ['POST', /^\/v1\/run\/([^/]+)\/(\d+)\/complete$/, 'run.complete', () => [200, { status: true }]],
];

const TESTOMATIO_ROUTES = [
  // TestomatioPipe.createRun: reads `uid` and `url` (it splits the URL's path off), `public_url` optional.
  [
    'POST',
    /^\/api\/reporter$/,
    'run.create',
    (_m, n, base) => [200, { uid: `run-${n}`, url: `${base}/projects/bench/runs/run-${n}`, public_url: null }],
  ],
  // #batchUpload every 6 s while tests end, and once more at finishRun: `{ api_key, tests, batch_index }`.
  // (With batching off it sends one test per request, without `tests`.)
  [
    'POST',
    /^\/api\/reporter\/([^/]+)\/testrun$/,
    'tests.batch',
    () => [200, {}],
    (body) => (Array.isArray(body?.tests) ? body.tests.length : body?.title ? 1 : 0),
  ],
  // finishRun: `{ api_key, duration, status_event }`.
  ['PUT', /^\/api\/reporter\/([^/]+)$/, 'run.finish', () => [200, {}]],
];

/**
 * A token bucket of the emulator's shape (packages/emulator/src/behaviour/ratelimit.ts): holds at most one second's tokens,
 * gains `requestsPerSecond` a second; an empty bucket means 429 with `Retry-After` = seconds to the next token, at
 * least 1. One bucket: each stand-in has one caller (one API key).
 */
function bucket(requestsPerSecond) {
  const burst = Math.max(1, Math.ceil(requestsPerSecond));
  let tokens = burst;
  let last;
  return () => {
    const now = performance.now();
    if (last !== undefined) tokens = Math.min(burst, tokens + ((now - last) / 1000) * requestsPerSecond);
    last = now;
    if (tokens >= 1) {
      tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - tokens) / requestsPerSecond));
  };
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Starts one stand-in. Resolves with `{ url, requests(), clear(), set({ latencyMs, rateLimit }), close() }`;
 * `requests()` lists `{ method, path, op, status, at, ms, items }` (epoch ms, as the emulator's log), `op` the
 * route's name or `unknown`, `items` the test results the request carried.
 */
async function startStandIn(routes, { latencyMs = 0, rateLimit } = {}) {
  let log = [];
  let latency = latencyMs;
  let take = rateLimit ? bucket(rateLimit.requestsPerSecond) : undefined;
  const counts = new Map();
  const server = createServer((req, res) => {
    const at = performance.timeOrigin + performance.now();
    const path = (req.url ?? '/').split('?')[0];
    // The body is read to its end and only counted: nothing is checked or stored.
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const route = routes.find(([method, pattern]) => method === req.method && pattern.test(path));
      const op = route ? route[2] : 'unknown';
      let status = 404;
      let body = { message: `the stand-in does not know ${req.method} ${path}` };
      const headers = { 'content-type': 'application/json' };
      let items = 0;
      const retryAfter = take ? take() : 0;
      if (retryAfter > 0) {
        status = 429;
        body = { message: 'rate limit' };
        headers['retry-after'] = String(retryAfter);
      } else if (route) {
        const n = (counts.get(op) ?? 0) + 1;
        counts.set(op, n);
        [status, body] = route[3](path.match(route[1]), n, base());
        if (route[4]) items = route[4](parseJson(Buffer.concat(chunks).toString('utf8')));
      }
      // Logged on arrival, not on answer: a runner that exits with a request in flight (a reporter that does not
      // await its last call) still made it. Such a request keeps status 0.
      const entry = { method: req.method, path, op, status: 0, at, ms: null, items };
      log.push(entry);
      setTimeout(() => {
        res.writeHead(status, headers).end(JSON.stringify(body));
        entry.status = status;
        entry.ms = performance.timeOrigin + performance.now() - at;
      }, latency);
    });
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const base = () => `http://127.0.0.1:${server.address().port}`;
  return {
    url: base(),
    requests: () => [...log],
    clear() {
      log = [];
    },
    /** New latency and rate limit for the next run (the bucket starts full). */
    set({ latencyMs: ms = 0, rateLimit: limit } = {}) {
      latency = ms;
      take = limit ? bucket(limit.requestsPerSecond) : undefined;
    },
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/**
 * The Qase stand-in. Point the reporter at it with `QASE_TESTOPS_API_HOST=<url>`: a value with a scheme is used as
 * the base URL as given, `/v1` and `/v2` appended (qase-javascript-commons' api-config-builder).
 */
export const startQase = (opts) => startStandIn(QASE_ROUTES, opts);

/** The testomat.io stand-in. Point the reporter at it with `TESTOMATIO_URL=<url>` (and any `TESTOMATIO` key). */
export const startTestomatio = (opts) => startStandIn(TESTOMATIO_ROUTES, opts);

/**
 * Requests of a stand-in's log: the count, by operation, the failed ones (status ≥ 400, or 0: not answered before the runner exited), the 429s, and the test
 * results received in answered requests (`delivered`).
 */
export function countOf(list) {
  const byOp = {};
  for (const r of list) byOp[r.op] = (byOp[r.op] ?? 0) + 1;
  return {
    requests: list.length,
    byOp,
    failedRequests: list.filter((r) => r.status === 0 || r.status >= 400).length,
    rateLimited: list.filter((r) => r.status === 429).length,
    delivered: list.filter((r) => r.status > 0 && r.status < 400).reduce((n, r) => n + r.items, 0),
  };
}
