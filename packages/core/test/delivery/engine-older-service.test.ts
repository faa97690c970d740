import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { describe, expect, it } from 'vitest';
import { contract } from '../../src/index.js';
import { base, ctx, last, project, report, result, runsOfCycle, TM_PREFIX } from '../support/engine-world.js';

/**
 * The engine against the older variant of the service, a real emulator over real HTTP: per-run updates where there
 * is no bulk update, the file named in the run comment, the defect linked by the run update. This file needs no
 * emulator of its own: the test starts the older one.
 */

describe('older service variant', () => {
  /**
   * The older variant of the service: identifiers spelled `ID` (the emulator's `ID` variant) and none of the
   * operations the spec lists for the newer variant only (bulk updates, attachments, defect creation...). The
   * emulator serves those in both variants, so a small front answers 404 for them, as a server without the route
   * does, and forwards everything else.
   */
  async function olderService(target: RunningEmulator) {
    const missing = contract.tmOperations
      .filter((op) => op.variants?.length === 1 && op.variants[0] === 'id')
      .map((op) => ({
        method: op.method,
        re: new RegExp(`^${TM_PREFIX}${op.path.replace(/\{[^}]+\}/g, '[^/]+')}/?(\\?.*)?$`),
      }));
    const refused: string[] = [];
    const server = createServer((req, res) => {
      if (missing.some((m) => m.method === req.method && m.re.test(req.url ?? ''))) {
        refused.push(`${req.method} ${req.url}`);
        req.resume();
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `null for uri: ${req.url}`, 'status-code': 404 }));
        return;
      }
      const up = new URL(target.url);
      const forward = request(
        { host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      refused,
      close: () =>
        new Promise<void>((r) => {
          server.close(() => r());
          server.closeAllConnections();
        }),
    };
  }

  it('cycle mode reports every status with per-run updates when the service has no bulk update', async () => {
    const old = await startEmulator({ port: 0, variant: 'ID', profile: 'ideal' });
    const front = await olderService(old);
    try {
      const dir = project();
      // A failing test with a screenshot, as Playwright reports one: no upload and no defect operation there.
      const failing = result('DEMO-4 c', 'failed');
      last(failing).attachments = [{ name: 'screenshot', contentType: 'image/png', path: join(dir, 'shot.png') }];
      const end = await report(
        base(front.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI old' }),
        [
          result('DEMO-2 a', 'passed'),
          result('DEMO-3 b', 'passed'),
          failing,
          result('DEMO-5 d', 'interrupted'),
          result('DEMO-6 e', 'flaky'),
          result('DEMO-7 f', 'passed'),
        ],
        ctx(dir, []),
      );
      expect(front.refused.map((r) => r.split('?')[0]?.replace(/\/\d+\//, '/N/')).sort()).toEqual([
        `POST ${TM_PREFIX}/attachment/N/testrun`,
        `POST ${TM_PREFIX}/testPlan/DEMO-1/bulkStatusUpdate`,
        `POST ${TM_PREFIX}/testRun/createRunBug`,
      ]);
      const runs = runsOfCycle('CI old', old);
      expect(runs.map((r) => [r.key, r.status]).sort()).toEqual([
        ['DEMO-2', 'Passed'],
        ['DEMO-3', 'Passed'],
        ['DEMO-4', 'Failed'],
        ['DEMO-5', 'Blocked'],
        ['DEMO-6', 'Passed'],
        ['DEMO-7', 'Passed'],
      ]);
      expect(end.summary.problems).toEqual([]);
      expect(end.summary.journaled).toBe(0);
      expect(end.summary.serviceDown).toBeUndefined();
      // The defect is created in Jira and linked by the run update; the comment names the file it could not send.
      const failedRun = runs.find((r) => r.key === 'DEMO-4')?.run;
      const bug = old.store.issues.find((i) => i.type === 'Bug');
      expect(bug?.summary).toMatch(/^DEMO-4 c: expected 200, got 500 for DEMO-4 c \[cb-[0-9a-f]{16}\]$/);
      expect(old.store.bugLinks.filter((l) => l.runId === failedRun?.id).map((l) => l.issueId)).toEqual([bug?.id]);
      expect(failedRun?.comment).toContain('screenshot.png not uploaded: the service has no attachment upload');
    } finally {
      await front.close();
      await old.close();
    }
  });
});
