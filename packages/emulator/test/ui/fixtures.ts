import { deflateSync } from 'node:zlib';
import { expect } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { basic, call, enc, TM } from '../helpers.js';

/**
 * What the UI tests share: a cycle filled through the REST API the way a reporter fills it (a failed run with a
 * screenshot, a log file and a defect), a small real PNG, and a browser-like fetch that keeps the session cookie.
 */

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A valid RGB PNG of `width` × `height`: red with a white diagonal, enough for a browser to decode. */
export function png(width = 48, height = 32): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) {
      const white = Math.abs(x - y) < 2;
      row.set(white ? [255, 255, 255] : [208, 68, 55], 1 + x * 3);
    }
    rows.push(row);
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export interface FilledCycle {
  cycleId: number;
  name: string;
  /** Run id per test case key. */
  runs: Record<string, number>;
  failedRun: number;
  bugKey: string;
  imageAttachment: number;
  logAttachment: number;
}

async function ok(r: Promise<{ status: number; text: string; json: any }>, what: string) {
  const res = await r;
  expect(res.status, `${what}: ${res.text}`).toBe(200);
  return res.json;
}

/**
 * A started cycle of DEMO-1 with a run per member: DEMO-2 Passed, DEMO-5 Failed (comment, a failed step with an
 * actual result, a PNG screenshot, a log file, a new Bug), DEMO-4 Blocked; the rest Not Tested.
 */
export async function fillCycle(
  emu: RunningEmulator,
  name: string,
  screenshot: Buffer = png(),
  o: { environment?: string; build?: string } = {},
): Promise<FilledCycle> {
  const plan = `${TM}/testPlan/DEMO-1`;
  await ok(
    call(emu, 'POST', `${plan}/addCycle`, {
      body: {
        name,
        preloadRuns: 'yes',
        environment: o.environment ?? 'staging',
        build: o.build ?? '1.0.3',
        plannedStartDate: '2026-03-02',
        plannedEndDate: '2026-03-06',
      },
    }),
    'addCycle',
  );
  await ok(call(emu, 'PUT', `${plan}/cycle/${enc(name)}/wf/Start`), 'start the cycle');
  const list = (await ok(call(emu, 'GET', `${plan}/cycle/${enc(name)}/testRuns`), 'runs')) as {
    id: number;
    testCaseKey: string;
  }[];
  const runs = Object.fromEntries(list.map((r) => [r.testCaseKey, r.id]));
  const cycles = (await ok(call(emu, 'GET', `${plan}/cycles`), 'cycles')) as { id: number; name: string }[];
  const cycleId = cycles.find((c) => c.name === name)?.id as number;
  const failedRun = runs['DEMO-5'] as number;

  await ok(call(emu, 'POST', `${TM}/testRun/update`, { body: { runId: runs['DEMO-2'], result: 'Passed' } }), 'pass');
  await ok(call(emu, 'POST', `${TM}/testRun/update`, { body: { runId: runs['DEMO-4'], result: 'Blocked' } }), 'block');
  const details = await ok(call(emu, 'GET', `${TM}/testRun/${failedRun}`), 'run details');
  const step3 = details.testRunDetails.testRunSteps[2].id as number;
  await ok(
    call(emu, 'POST', `${TM}/testRun/updateStep/`, {
      body: { runStepId: step3, result: 'Failed', actualResult: 'Payment declined: card expired' },
    }),
    'fail a step',
  );
  await ok(
    call(emu, 'POST', `${TM}/testRun/update`, {
      body: { runId: String(failedRun), result: 'Failed', comment: 'expected "valid", got "expired"' },
    }),
    'fail the run',
  );
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(screenshot)], { type: 'image/png' }), 'failure.png');
  form.append('file', new Blob(['line 1\nline 2\n'], { type: 'text/plain' }), 'console.log');
  await ok(call(emu, 'POST', `${TM}/attachment/${failedRun}/testrun`, { raw: form }), 'attach');
  const attachments = (await ok(call(emu, 'GET', `${TM}/attachment/${failedRun}/getAttachmentDetails`), 'files')) as {
    id: number;
    fileName: string;
  }[];
  const bug = await ok(
    call(emu, 'POST', `${TM}/testRun/createRunBug`, {
      body: {
        runId: failedRun,
        fields: {
          project: { key: 'DEMO' },
          summary: 'Checkout refuses a saved card',
          description: 'Seen in the nightly run.',
          issuetype: { name: 'Bug' },
        },
      },
    }),
    'create the bug',
  );
  return {
    cycleId,
    name,
    runs,
    failedRun,
    bugKey: bug.key as string,
    imageAttachment: attachments.find((a) => a.fileName === 'failure.png')?.id as number,
    logAttachment: attachments.find((a) => a.fileName === 'console.log')?.id as number,
  };
}

/** Sets a run's result through the REST API, as a reporter does. */
export async function setResult(emu: RunningEmulator, runId: number, result: string, comment?: string) {
  await ok(
    call(emu, 'POST', `${TM}/testRun/update`, {
      body: { runId, result, ...(comment === undefined ? {} : { comment }) },
    }),
    `set run ${runId} to ${result}`,
  );
}

export const ADMIN_BASIC = basic('admin', 'admin');

/** A page request as a browser makes it: no redirects followed, the cookie jar kept by the caller. */
export async function page(
  base: string,
  path: string,
  o: {
    cookie?: string;
    method?: string;
    form?: Record<string, string | string[]>;
    headers?: Record<string, string>;
  } = {},
) {
  const headers: Record<string, string> = { accept: 'text/html', ...o.headers };
  if (o.cookie) headers.cookie = o.cookie;
  let body: string | undefined;
  if (o.form) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(o.form)) for (const one of [v].flat()) params.append(k, one);
    body = params.toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  const res = await fetch(base + path, {
    method: o.method ?? (o.form ? 'POST' : 'GET'),
    headers,
    body,
    redirect: 'manual',
  });
  const text = await res.text();
  const setCookie = res.headers.get('set-cookie');
  const session = setCookie ? /JSESSIONID=([^;]*)/.exec(setCookie)?.[1] : undefined;
  return { status: res.status, headers: res.headers, text, cookie: session ? `JSESSIONID=${session}` : undefined };
}

/** The HTML of one run card (`<article id="run-N"> ... </article>`) in a page. */
export function runCardHtml(text: string, runId: number): string {
  const start = text.indexOf(`id="run-${runId}"`);
  if (start < 0) return '';
  const end = text.indexOf('</article>', start);
  return text.slice(start, end);
}

const CODE_HOST_TOKEN = 'Bearer casebridge-dev-token';
export const REVIEW_COMMIT = '0123456789abcdef0123456789abcdef01234567';
const INSIGHTS = `/rest/insights/latest/projects/DEMO/repos/shop/commits/${REVIEW_COMMIT}/reports/casebridge`;

/** Posts what a reporter posts for a failed cycle: a report, three annotations, a build status, a note, a comment. */
export async function postReview(emu: RunningEmulator): Promise<{ noteId: number; commentId: number }> {
  const ok = (r: { status: number; text: string }, status: number) => expect(r.status, r.text).toBe(status);
  ok(
    await call(emu, 'PUT', INSIGHTS, {
      auth: CODE_HOST_TOKEN,
      body: {
        title: 'casebridge: FAIL <b>2 new</b>',
        details: 'Nightly 42: 2 new failures, 1 flaky.\nSee the cycle.',
        result: 'FAIL',
        reporter: 'casebridge',
        link: 'http://jira.example.test/browse/DEMO-1?cycle=7',
        data: [
          { title: 'Failed', type: 'NUMBER', value: 3 },
          { title: 'Pass rate', type: 'PERCENTAGE', value: 62.5 },
          { title: 'Duration', type: 'DURATION', value: 200_000 },
          { title: 'Cycle', type: 'LINK', value: { linktext: 'Nightly 42', href: 'http://jira.example.test/c/7' } },
          { title: 'Quarantined', type: 'BOOLEAN', value: true },
          { title: 'Evil', type: 'LINK', value: { linktext: 'click', href: 'javascript:alert(1)' } },
        ],
      },
    }),
    200,
  );
  ok(
    await call(emu, 'POST', `${INSIGHTS}/annotations`, {
      auth: CODE_HOST_TOKEN,
      body: {
        annotations: [
          {
            message: 'expected "valid", got <script>alert(1)</script>',
            severity: 'HIGH',
            path: 'tests/checkout.spec.ts',
            line: 42,
            type: 'BUG',
            externalId: 'DEMO-5',
            link: 'http://jira.example.test/browse/DEMO-11',
          },
          { message: 'flaky: passed on retry', severity: 'LOW', path: 'tests/login.spec.ts', line: 7, type: 'BUG' },
          { message: 'known failure', severity: 'MEDIUM', path: 'tests/checkout.spec.ts', line: 12, type: 'BUG' },
        ],
      },
    }),
    204,
  );
  ok(
    await call(emu, 'POST', `/rest/build-status/1.0/commits/${REVIEW_COMMIT}`, {
      auth: CODE_HOST_TOKEN,
      body: {
        state: 'FAILED',
        key: 'casebridge',
        name: 'casebridge tests',
        url: 'http://jira.example.test/c/7',
        description: '3 failed',
      },
    }),
    204,
  );
  const note = await call(emu, 'POST', '/api/v4/projects/1/merge_requests/1/notes', {
    auth: CODE_HOST_TOKEN,
    body: { body: '## casebridge: FAIL\n<img src=x onerror=alert(1)>' },
  });
  ok(note, 201);
  const comment = await call(emu, 'POST', '/api/v3/repos/demo/shop/issues/1/comments', {
    auth: CODE_HOST_TOKEN,
    body: { body: '## casebridge: FAIL\n| test | result |' },
  });
  ok(comment, 201);
  return { noteId: note.json.id, commentId: comment.json.id };
}
