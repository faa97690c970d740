import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine, type TestResult } from '../../src/index.js';
import { setFaults } from '../support/emulator.js';
import {
  base,
  ctx,
  FAST,
  last,
  png,
  project,
  report,
  result,
  step,
  TM_PREFIX,
  useEngineWorld,
} from '../support/engine-world.js';

/**
 * The engine delivers results with their files, against the real emulator over real HTTP: files of a step, several
 * tests of one case, refused plan members and keys that are not cases, the early bulk update, screenshots of passing
 * tests, the size limit, the content repository (and its refusal), files outside the project. Each test asserts the
 * emulator's final state.
 */

const world = useEngineWorld();
const { runsOfCycle, adhocRuns, ops } = world;
let emu: RunningEmulator;
beforeAll(() => {
  emu = world.emulator();
});

describe('attachments', () => {
  it('files of a step go to that run step', async () => {
    const dir = project();
    const t = result('DEMO-5 checkout', 'failed');
    last(t).steps = [
      step('Add a product to the cart', 'passed'),
      step('Open checkout', 'failed', {
        error: { message: 'card missing' },
        attachments: [{ name: 'screenshot', contentType: 'image/png', path: join(dir, 'shot.png') }],
      }),
    ];
    const end = await report(base(emu.url, { defects: { enabled: false } }), [t], ctx(dir, []));
    expect(end.summary.problems).toEqual([]);
    const [run] = adhocRuns('DEMO-5');
    const stepTwo = emu.store.runSteps.find((s) => s.runId === run?.id && s.seq === 2);
    const files = emu.store.attachments.filter((a) => a.runId === run?.id);
    expect(files.map((f) => [f.fileName, f.runStepId, f.sha256])).toEqual([
      ['screenshot.png', stepTwo?.id, createHash('sha256').update(png).digest('hex')],
    ]);
    expect(ops('attachments.addToRunStep')).toHaveLength(1);
  });

  it('several tests of one case: the worse status stays, in whichever order their deliveries finish', async () => {
    for (const order of ['failed first', 'passed first']) {
      const cycle = `CI one case ${order}`;
      const failed = result('DEMO-2 logs in with a wrong password', 'failed');
      const passed = result('DEMO-2 logs in', 'passed');
      const tests = order === 'failed first' ? [failed, passed] : [passed, failed];
      const end = await report(
        base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle, defects: { enabled: false } }),
        tests,
      );
      expect(end.summary.problems).toEqual([]);
      expect(runsOfCycle(cycle).map((r) => [r.key, r.status])).toEqual([['DEMO-2', 'Failed']]);
    }
  });

  it('a plan member the cycle refuses (not a test case) is named; the other results of the batch still arrive', async () => {
    const plan = emu.store.issues.find((i) => i.key === 'DEMO-1');
    const requirement = emu.store.issues.find((i) => i.key === 'DEMO-8');
    // A plan that lists a non-case among its members (a data error in a real project).
    emu.store.planMembers.insert({ tpId: plan?.id as number, tcId: requirement?.id as number, tester: null } as never);
    const tests = [result('DEMO-2 a', 'passed'), result('DEMO-8 not a case', 'passed'), result('DEMO-4 c', 'passed')];
    const end = await report(base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI refused member' }), tests);
    expect(
      runsOfCycle('CI refused member')
        .map((r) => [r.key, r.status])
        .sort(),
    ).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-4', 'Passed'],
    ]);
    expect(end.summary.problems).toHaveLength(1);
    expect(end.summary.problems[0]).toMatch(/^DEMO-8: not a test case/);
    expect(end.summary.delivered).toBe(2);
  });

  it('status-only results go in one bulk update as soon as the last planned test reports, before the run ends', async () => {
    const tests = [result('DEMO-2 a', 'passed'), result('DEMO-3 b', 'passed'), result('DEMO-4 c', 'passed')];
    const engine = Engine.create(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI early bulk' }),
      ctx(project(), []),
    );
    engine.begin({ tests });
    for (const t of tests.slice(0, 2)) engine.add(t);
    await new Promise((r) => setTimeout(r, 400));
    expect(ops('runs.bulkStatusUpdate'), 'not before the last planned test').toHaveLength(0);
    engine.add(tests[2] as TestResult);
    const deadline = Date.now() + 5_000;
    while (ops('runs.bulkStatusUpdate').length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(ops('runs.bulkStatusUpdate'), 'sent before end()').toHaveLength(1);
    await engine.end();
    expect(ops('runs.bulkStatusUpdate')).toHaveLength(1);
    expect(runsOfCycle('CI early bulk').map((r) => r.status)).toEqual(['Passed', 'Passed', 'Passed']);
  });

  it('a key that is not a test case: one problem line, not counted as delivered, the other results arrive', async () => {
    const options = base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI bad key' });
    const tests = [
      result('DEMO-2 logs in', 'passed'),
      result('DEMO-999 ghost', 'passed'),
      result('DEMO-999 ghost again', 'passed'),
      result('DEMO-3 logs out', 'failed'),
    ];
    const end = await report(options, tests);
    expect(
      runsOfCycle('CI bad key')
        .map((r) => [r.key, r.status])
        .sort(),
    ).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Failed'],
    ]);
    expect(end.summary.problems).toEqual([
      "DEMO-999: not a test case that can be added to test plan DEMO-1: check the key in the test's title or the mapping file",
    ]);
    expect(end.summary.delivered).toBe(2);
    expect(end.summary.journaled).toBe(0);
  });

  it("screenshots: 'all' uploads screenshots of passing tests, which are then delivered one by one", async () => {
    const dir = project();
    const shot = result('DEMO-2 logs in', 'passed');
    last(shot).attachments = [{ name: 'screenshot', contentType: 'image/png', path: join(dir, 'shot.png') }];
    const plain = result('DEMO-3 logs out', 'passed');
    const options = base(emu.url, {
      mode: 'cycle',
      testPlan: 'DEMO-1',
      cycle: 'CI shots',
      attachments: { screenshots: 'all' },
    });
    const end = await report(options, [shot, plain], ctx(dir, []));
    expect(end.summary.problems).toEqual([]);
    expect(end.summary.attachments.uploaded).toBe(1);
    const runs = runsOfCycle('CI shots');
    expect(runs.map((r) => [r.key, r.status]).sort()).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Passed'],
    ]);
    const withShot = runs.find((r) => r.key === 'DEMO-2')?.run;
    expect(emu.store.attachments.filter((a) => a.runId === withShot?.id).map((a) => a.fileName)).toEqual([
      'screenshot.png',
    ]);
    expect(ops('runs.update')).toHaveLength(1);
    expect(ops('runs.bulkStatusUpdate')).toHaveLength(1);

    // The default (on-failure) leaves the passing test's screenshot alone.
    emu.clearRequests();
    await report({ ...options, cycle: 'CI no shots', attachments: {} }, [shot, plain], ctx(dir, []));
    const noShot = runsOfCycle('CI no shots').find((r) => r.key === 'DEMO-2')?.run;
    expect(noShot?.status).toBe('Passed');
    expect(emu.store.attachments.filter((a) => a.runId === noShot?.id)).toEqual([]);
    expect(ops('runs.update')).toHaveLength(0);
  });

  it("a failed test's screenshot and failure context go in one upload; after a lost answer, none is sent twice", async () => {
    const dir = project();
    writeFileSync(join(dir, 'error-context.md'), '# Page snapshot\n- button "Pay"');
    const failure = () => {
      const t = result('DEMO-4 searches', 'failed');
      last(t).attachments = [
        { name: 'screenshot', contentType: 'image/png', path: join(dir, 'shot.png') },
        { name: 'error-context', contentType: 'text/markdown', path: join(dir, 'error-context.md') },
      ];
      return t;
    };
    const options = base(emu.url, { defects: { enabled: false } });
    const end = await report(options, [failure()], ctx(dir, []));
    expect(end.summary.attachments.uploaded).toBe(2);
    // The emulator stores the parts of one upload as each finishes writing: in any order.
    const filesOf = (runId: number | undefined) =>
      emu.store.attachments
        .filter((a) => a.runId === runId)
        .map((a) => a.fileName)
        .sort();
    const [run] = adhocRuns('DEMO-4');
    expect(filesOf(run?.id)).toEqual(['error-context.md', 'screenshot.png']);
    expect(ops('attachments.addToRun')).toHaveLength(1);
    expect(run?.comment).toContain('error-context.md (attached)');

    // The upload commits, then its answer is lost: the run's files are read, and nothing is sent again.
    emu.clearRequests();
    await setFaults(emu, [{ route: `${TM_PREFIX}/attachment/*/testrun`, resetRate: 1, times: 1, phase: 'after' }]);
    const again = await report(options, [failure()], ctx(dir, []));
    expect(again.summary.problems).toEqual([]);
    const second = adhocRuns('DEMO-4').find((r) => r.id !== run?.id);
    expect(filesOf(second?.id)).toEqual(['error-context.md', 'screenshot.png']);
    expect(ops('attachments.getAttachmentDetails')).toHaveLength(1);
    expect(ops('attachments.addToRun')).toHaveLength(1);
  });

  it('a file over attachments.maxBytes is not uploaded and the run comment names it', async () => {
    const dir = project();
    const t = result('DEMO-4 searches', 'failed');
    last(t).attachments = [{ name: 'screenshot', contentType: 'image/png', path: join(dir, 'shot.png') }];
    const end = await report(base(emu.url, { attachments: { maxBytes: 10 } }), [t], ctx(dir, []));
    expect(end.summary.attachments.skipped).toEqual(['screenshot.png']);
    const [run] = adhocRuns('DEMO-4');
    expect(run?.status).toBe('Failed');
    expect(emu.store.attachments.filter((a) => a.runId === run?.id)).toEqual([]);
    expect(run?.comment).toMatch(/screenshot\.png not uploaded: .* over attachments\.maxBytes/);
  });

  it('a large video goes to the content repository and the run comment links it', async () => {
    const dir = project();
    const video = Buffer.alloc(64 * 1024);
    for (let i = 0; i < video.length; i++) video[i] = (i * 31 + 7) % 251;
    writeFileSync(join(dir, 'video.webm'), video);
    const t = result('DEMO-6 shows the profile', 'failed');
    last(t).attachments = [
      { name: 'video', contentType: 'video/webm', path: join(dir, 'video.webm') },
      { name: 'screenshot', contentType: 'image/png', path: join(dir, 'shot.png') },
    ];
    const options = base(emu.url, {
      defects: { enabled: false },
      repository: { url: emu.url, user: 'admin', password: 'admin' },
      attachments: { videos: true, repositoryMinBytes: 1024 },
    });
    const end = await report(options, [t], ctx(dir, []));
    expect(end.summary.problems).toEqual([]);
    expect(end.summary.attachments.stored).toEqual(['video.webm']);
    const [run] = adhocRuns('DEMO-6');
    // The small screenshot is attached to the run; the video is not.
    expect(emu.store.attachments.filter((a) => a.runId === run?.id).map((a) => a.fileName)).toEqual(['screenshot.png']);
    const link = /video\.webm: (\S+)/.exec(run?.comment ?? '')?.[1];
    expect(link, run?.comment ?? '').toMatch(/^http:\/\/127\.0\.0\.1:\d+\/edu-sharing\/eduservlet\/download\?nodeId=/);
    const res = await fetch(link as string, {
      headers: { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` },
    });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(video)).toBe(true);
  });
  it('files outside the project folder are named, not sent: a path elsewhere, a symlink out of the project', async () => {
    const dir = project();
    const outside = mkdtempSync(join(homedir(), '.cb-outside-'));
    writeFileSync(join(outside, 'secret.txt'), 'not for the service');
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'link.txt'));
    try {
      const t = result('DEMO-6 shows the profile', 'failed');
      last(t).attachments = [
        { name: 'screenshot', contentType: 'image/png', path: join(dir, 'shot.png') },
        { name: 'stolen', contentType: 'text/plain', path: join(outside, 'secret.txt') },
        { name: 'linked', contentType: 'text/plain', path: join(dir, 'link.txt') },
      ];
      const end = await report(
        base(emu.url, { defects: { enabled: false }, attachments: { others: true } }),
        [t],
        ctx(dir, []),
      );
      expect(end.summary.problems).toEqual([]);
      const [run] = adhocRuns('DEMO-6');
      expect(emu.store.attachments.filter((a) => a.runId === run?.id).map((a) => a.fileName)).toEqual([
        'screenshot.png',
      ]);
      expect(run?.comment).toContain('stolen.txt not uploaded:');
      expect(run?.comment).toContain('linked.txt not uploaded:');
      expect(run?.comment).toContain('is outside the project folder (allow its folder with attachments.roots)');
      // Allowed explicitly: sent.
      emu.clearRequests();
      await report(
        base(emu.url, { defects: { enabled: false }, attachments: { others: true, roots: [outside] } }),
        [t],
        ctx(dir, []),
      );
      const runs = adhocRuns('DEMO-6');
      const latest = runs[runs.length - 1];
      expect(
        emu.store.attachments
          .filter((a) => a.runId === latest?.id)
          .map((a) => a.fileName)
          .sort(),
      ).toEqual(['linked.txt', 'screenshot.png', 'stolen.txt']);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('a content repository that refuses uploads (503 quota): the file goes to the run, one problem line, nothing journalled', async () => {
    const dir = project();
    writeFileSync(join(dir, 'video.webm'), Buffer.alloc(4096, 7));
    const t = result('DEMO-6 shows the profile', 'failed');
    last(t).attachments = [{ name: 'video', contentType: 'video/webm', path: join(dir, 'video.webm') }];
    await setFaults(emu, [{ route: '/edu-sharing/rest/**', errors: { '503': 1 }, retryAfterSeconds: 0 }]);
    const options = base(emu.url, {
      defects: { enabled: false },
      repository: { url: emu.url, user: 'admin', password: 'admin' },
      attachments: { videos: true, repositoryMinBytes: 1024 },
    });
    // The client's waits between tries on the fast clock (support/engine-world.ts): the same tries, not their seconds.
    const end = await report(options, [t], ctx(dir, [], {}, FAST));
    expect(end.summary.journaled).toBe(0);
    expect(end.summary.attachments.stored).toEqual([]);
    expect(end.summary.problems).toHaveLength(1);
    expect(end.summary.problems[0]).toMatch(
      /^the content repository refused files \(.*503.*\): they went to the runs$/,
    );
    const [run] = adhocRuns('DEMO-6');
    expect(run?.status).toBe('Failed');
    expect(emu.store.attachments.filter((a) => a.runId === run?.id).map((a) => a.fileName)).toEqual(['video.webm']);
  });
});
