import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { serverMessage } from '../../src/client/errors.js';
import {
  type ClientOptions,
  ContentRepositoryClient,
  HttpError,
  TestManagementClient,
  ValidationError,
} from '../../src/index.js';
import { ADMIN } from '../support/emulator.js';
import { NO_PROXY_ENV, withEnv } from '../support/proxy.js';

/**
 * HTTP 500 is ambiguous (synapseRT: "a validation error with input data or any unknown Internal Server Error"): a
 * request that does not create is sent again a bounded number of times with a pause, then fails with an uncertain,
 * retryable ValidationError; a create is sent once (the write may have committed) and says so. Raw servers on port
 * 0 play the service, each answering a script of statuses and bodies, and count what they were sent.
 */

interface Answer {
  status: number;
  body?: string;
  type?: string;
}

const servers: Server[] = [];
const clients: TestManagementClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** A server answering `script` in order (the last answer repeats); `seen` lists each request's method and path. */
async function serve(script: Answer[]): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      seen.push(`${req.method} ${req.url?.split('?')[0]}`);
      const a = script[Math.min(seen.length - 1, script.length - 1)] as Answer;
      res.writeHead(a.status, { 'content-type': a.type ?? 'application/json' });
      res.end(a.body ?? '');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function client(baseUrl: string, extra: Partial<ClientOptions> = {}): TestManagementClient {
  const c = new TestManagementClient({
    baseUrl,
    auth: ADMIN,
    retry: { retries: 5, baseDelayMs: 5, maxDelayMs: 20 },
    ...extra,
  });
  clients.push(c);
  return c;
}

async function failure(p: Promise<unknown>): Promise<ValidationError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  return err as ValidationError;
}

const TEXT = { type: 'text/plain' };
const bulk = (c: TestManagementClient) =>
  c.runs.bulkStatusUpdate({ testPlanIssueKey: 'DEMO-1', testCycleId: 7, status: 'Passed', runIds: [1, 2] });

describe('a 500 to a request that does not create', () => {
  it('is sent again with a pause: two 500s then 200 deliver', async () => {
    const s = await serve([
      { status: 500, body: 'Lock wait timeout exceeded', ...TEXT },
      { status: 500, body: '{"message":"Deadlock found"}' },
      { status: 200, body: '{}' },
    ]);
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(s.url);
      await bulk(c);
      expect(c.transport.stats).toEqual({ requests: 3, retries: 2, failures: 0 });
    });
    expect(s.seen).toEqual(Array(3).fill('POST /rest/synapse/latest/public/testPlan/DEMO-1/bulkStatusUpdate'));
  });

  it('500 every time: 3 attempts, then an uncertain, retryable ValidationError with the server message', async () => {
    const s = await serve([{ status: 500, body: 'Run 2 is not in cycle 7', ...TEXT }]);
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(s.url);
      const err = await failure(bulk(c));
      expect(err).toMatchObject({
        kind: 'validation',
        status: 500,
        uncertain: true,
        retryable: true,
        mayHaveApplied: false,
        retries: 2,
        serverMessage: 'Run 2 is not in cycle 7',
        operation: 'runs.bulkStatusUpdate',
      });
      expect(err.message).toMatch(
        /^HTTP 500 \(a refusal or an internal error of the service\) after 3 attempts: Run 2 is not in cycle 7 \[runs\.bulkStatusUpdate POST /,
      );
      expect(err.toJSON()).toMatchObject({ uncertain: true, mayHaveApplied: false, serverMessage: err.serverMessage });
    });
    expect(s.seen).toHaveLength(3);
  });

  it('serverErrorRetries sets the bound (0: sent once), and the pauses are at least half the backoff bound', async () => {
    const once = await serve([{ status: 500, body: '{"message":"no"}' }]);
    const paced = await serve([{ status: 500, body: '{"message":"no"}' }]);
    await withEnv(NO_PROXY_ENV, async () => {
      expect((await failure(bulk(client(once.url, { retry: { serverErrorRetries: 0 } })))).retries).toBe(0);
      const started = performance.now();
      const c = client(paced.url, { retry: { baseDelayMs: 100, maxDelayMs: 1000, serverErrorRetries: 2 } });
      await failure(bulk(c));
      // Waits of at least 50 ms (bound 100) and 100 ms (bound 200): never sent again at once.
      expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    });
    expect(once.seen).toHaveLength(1);
    expect(paced.seen).toHaveLength(3);
  });

  it('a search past the result window is not sent again: the same request would fail the same way', async () => {
    const s = await serve([
      { status: 500, body: '{"errorMessages":["Search limit exceeded. Use a narrower query."],"errors":{}}' },
    ]);
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(s.url);
      const err = await failure(c.jira.search({ jql: 'project = DEMO', startAt: '9900', maxResults: '1000' }));
      expect(err).toMatchObject({ uncertain: true, retryable: true, retries: 0 });
      expect(err.serverMessage).toBe('Search limit exceeded. Use a narrower query.');
    });
    expect(s.seen).toEqual(['GET /rest/api/2/search']);
  });
});

describe('a 500 to a create', () => {
  it('is not sent again: mayHaveApplied, and the message says why', async () => {
    const s = await serve([{ status: 500, body: 'java.sql.SQLTransientException: timeout', ...TEXT }]);
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(s.url);
      const err = await failure(c.runs.adhocCreate({ testCaseIssueKey: 'DEMO-3' }));
      expect(err).toMatchObject({ uncertain: true, retryable: true, mayHaveApplied: true, retries: 0 });
      expect(err.message).toMatch(
        /^HTTP 500 \(a refusal or an internal error of the service; it may have been applied, so it was not sent again\): java\.sql/,
      );
    });
    expect(s.seen).toEqual(['PUT /rest/synapse/latest/public/testRun/adhoc/create/DEMO-3']);
  });
});

describe('a 400 is a certain refusal', () => {
  it('Jira issue create: not retried, not uncertain, the fields named', async () => {
    const s = await serve([
      { status: 400, body: '{"errorMessages":[],"errors":{"labels":"Field \'labels\' cannot be set."}}' },
    ]);
    await withEnv(NO_PROXY_ENV, async () => {
      const c = client(s.url);
      const err = await failure(c.jira.createIssue({ fields: { summary: 'x' } }));
      expect(err).toMatchObject({ status: 400, uncertain: false, retryable: false, mayHaveApplied: false });
      expect(err.serverMessage).toBe("labels: Field 'labels' cannot be set.");
      expect(err.message).toMatch(/^HTTP 400: the service refused the input: labels:/);
    });
    expect(s.seen).toHaveLength(1);
  });
});

describe("the content repository's 500 is its own", () => {
  it('not retried and not a ValidationError: an error it repeats (an upload too large), with its message', async () => {
    const s = await serve([{ status: 500, body: '{"error":"FileSizeLimitExceededException","message":"too large"}' }]);
    await withEnv(NO_PROXY_ENV, async () => {
      const repo = new ContentRepositoryClient({
        baseUrl: s.url,
        auth: { type: 'basic', username: 'u', password: 'p' },
        retry: { retries: 5, baseDelayMs: 5 },
      });
      try {
        const err = await repo.repo.validateSession().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(HttpError);
        expect(err).toMatchObject({ status: 500, retryable: false });
        expect((err as Error).message).toMatch(/too large/);
      } finally {
        await repo.close();
      }
    });
    expect(s.seen).toHaveLength(1);
  });
});

describe('serverMessage reads every body a 500 comes with', () => {
  it('JSON: message, errorMessages and errors together', () => {
    expect(serverMessage('{"message":"Cycle Id is Mandatory"}')).toBe('Cycle Id is Mandatory');
    expect(serverMessage('{"errorMessages":["a","b"],"errors":{"f":"bad"}}')).toBe('a; b; f: bad');
    expect(serverMessage('{"error":"java.lang.NullPointerException","message":""}')).toBe(
      'java.lang.NullPointerException',
    );
  });

  it('plain text, whitespace folded', () => {
    expect(serverMessage('TestCaseId is Mandatory\n')).toBe('TestCaseId is Mandatory');
  });

  it("a servlet container's HTML page: its title and the start of its text, tags and stack dropped", () => {
    const tomcat =
      '<!doctype html><html lang="en"><head><title>HTTP Status 500 – Internal Server Error</title><style>h1 {color:red}</style></head>' +
      '<body><h1>HTTP Status 500 – Internal Server Error</h1><hr class="line" /><p><b>Type</b> Exception Report</p>' +
      '<p><b>Message</b> Lock wait timeout &amp; rollback</p>' +
      `<pre>${'at com.example.Dao.save(Dao.java:42)\n'.repeat(50)}</pre></body></html>`;
    const m = serverMessage(tomcat);
    expect(m).toMatch(
      /^HTML page: HTTP Status 500 – Internal Server Error: Type Exception Report Message Lock wait timeout & rollback/,
    );
    expect(m.length).toBeLessThan(250);
    expect(m).not.toMatch(/<|color:red/);
    expect(serverMessage('<html><body><h1>Bad Gateway</h1></body></html>')).toBe('HTML page: Bad Gateway');
  });
});
