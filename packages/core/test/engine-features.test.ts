import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  contract,
  type EndResult,
  Engine,
  type EngineContext,
  type ResultStep,
  TestManagementClient,
  type TestResult,
} from '../src/index.js';
import { clearFaults, closedPort, setFaults } from './support/emulator.js';

/**
 * The engine's features one by one, against the real emulator over real HTTP: defects (regressions, flaky tests,
 * templates, step defects), attachments (steps, screenshots of passing tests, the size limit, the content
 * repository), the step summary and the dry-run file, secrets in everything the engine writes, cycles completed at
 * the end or by someone else mid-run, ambiguous ad hoc creates, and the older service variant. Each test asserts the
 * emulator's final state.
 */

let emu: RunningEmulator;
beforeAll(async () => {
  // The kind Jira (one node, no index lag, substring search): these tests are about the engine's own paths; the
  // realistic profile's lag and workflows have their own tests (engine-faults, first-run, test/harsh.e2e).
  emu = await startEmulator({ port: 0, profile: 'ideal' });
});
afterAll(async () => {
  await emu?.close();
});
beforeEach(async () => {
  await emu.reset();
});
afterEach(async () => {
  await clearFaults(emu);
});

const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
const TM_PREFIX = '/rest/synapse/latest/public';

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cb-features-'));
  writeFileSync(join(dir, 'shot.png'), png);
  return dir;
}

function ctx(cwd: string, lines: string[], env: NodeJS.ProcessEnv = {}): EngineContext {
  return { cwd, runner: { name: 'playwright', version: 'test' }, env, out: (t) => lines.push(t) };
}

function result(
  title: string,
  status: 'passed' | 'failed' | 'flaky' | 'interrupted',
  extra: Partial<TestResult> = {},
): TestResult {
  const fail = {
    retry: 0,
    status: status === 'interrupted' ? ('interrupted' as const) : ('failed' as const),
    durationMs: 5,
    errors: [{ message: `expected 200, got 500 for ${title}`, stack: 'Error\n at t.spec.ts:7:3' }],
    steps: [],
    attachments: [],
  };
  const pass = {
    retry: status === 'flaky' ? 1 : 0,
    status: 'passed' as const,
    durationMs: 5,
    errors: [],
    steps: [],
    attachments: [],
  };
  return {
    id: `t.spec.ts>${title}`,
    file: 't.spec.ts',
    titlePath: [title],
    tags: [],
    annotations: [],
    attempts: status === 'passed' ? [pass] : status === 'flaky' ? [fail, pass] : [fail],
    ...extra,
  };
}

function step(title: string, status: ResultStep['status'], extra: Partial<ResultStep> = {}): ResultStep {
  return { title, status, durationMs: 1, steps: [], attachments: [], ...extra };
}

/** The last attempt of a result, to add steps and files to. */
function last(t: TestResult) {
  const a = t.attempts[t.attempts.length - 1];
  if (!a) throw new Error('no attempt');
  return a;
}

const base = (url: string, extra: Record<string, unknown> = {}) => ({
  url,
  token: 'casebridge-dev-token',
  projectKey: 'DEMO',
  flushTimeoutMs: 20_000,
  ...extra,
});

/** One run of the engine: create, begin (with the tests as the plan unless `plan` is false), add each, end. */
async function report(
  options: Record<string, unknown>,
  tests: TestResult[],
  context: EngineContext = ctx(project(), []),
  plan = true,
): Promise<EndResult> {
  const engine = Engine.create(options, context);
  expect(engine.enabled).toBe(true);
  engine.begin(plan ? { tests } : {});
  for (const t of tests) engine.add(t);
  return engine.end();
}

const keyOf = (issueId: number) => emu.store.issues.get(issueId)?.key;

function runsOfCycle(name: string, server = emu) {
  const cycle = server.store.cycles.find((c) => c.name === name);
  if (!cycle) return [];
  return server.store.runs
    .filter((r) => r.cycleId === cycle.id)
    .map((r) => ({ key: server.store.issues.get(r.tcId)?.key, status: r.status, run: r }));
}

/** Ad hoc runs of a case, oldest first. */
function adhocRuns(key: string) {
  return emu.store.runs
    .filter((r) => emu.store.cycles.get(r.cycleId)?.adhocTcId != null && keyOf(r.tcId) === key)
    .sort((a, b) => a.id - b.id);
}

const bugs = () => emu.store.issues.filter((i) => i.type === 'Bug').sort((a, b) => a.id - b.id);
const bugKeysOfRun = (runId: number) =>
  emu.store.bugLinks.filter((l) => l.runId === runId).map((l) => keyOf(l.issueId));
const ops = (name: string) => emu.requests().filter((r) => r.op === name);

function admin(url = emu.url): TestManagementClient {
  return new TestManagementClient({ baseUrl: url, auth: { type: 'bearer', token: 'casebridge-dev-token' } });
}

/** Polls `done` every 20 ms, or with `tick` (a test with a faked setTimeout polls on setImmediate). */
async function until(
  what: string,
  done: () => boolean,
  ms = 10_000,
  tick = () => new Promise((r) => setTimeout(r, 20)),
): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await tick();
  }
}

describe('defects', () => {
  it('a failure whose only matching defect is closed files a new defect that names the old one as a regression', async () => {
    const failing = () => result('DEMO-3 logs out', 'failed');
    const first = await report(base(emu.url), [failing()]);
    expect(first.summary.problems).toEqual([]);
    const [old] = bugs();
    expect(old?.summary).toMatch(/\[cb-[0-9a-f]{16}\]$/);
    expect(first.summary.defects.created).toEqual([old?.key]);

    // Someone closes it (in the store: the transitions a workflow offers are not what this test is about).
    const closed = emu.store.issues.find((i) => i.key === old?.key);
    if (!closed) throw new Error('defect not found');
    emu.store.issues.update({ ...closed, status: 'Done', resolution: 'Done' });
    expect(emu.store.issues.find((i) => i.key === old?.key)?.resolution).toBe('Done');

    const second = await report(base(emu.url), [failing()]);
    expect(second.summary.problems).toEqual([]);
    const all = bugs();
    expect(all).toHaveLength(2);
    const fresh = all[1];
    expect(second.summary.defects.created).toEqual([fresh?.key]);
    expect(fresh?.summary).toBe(old?.summary);
    expect(fresh?.description).toContain(`Regression: ${old?.key}`);
    const runs = adhocRuns('DEMO-3');
    expect(runs.map((r) => r.status)).toEqual(['Failed', 'Failed']);
    expect(bugKeysOfRun(runs[1]?.id as number)).toEqual([fresh?.key]);
  });

  it('a flaky test files a defect with defects.onFlaky, and none by default', async () => {
    await report(base(emu.url), [result('DEMO-2 logs in', 'flaky')]);
    expect(bugs()).toEqual([]);
    expect(adhocRuns('DEMO-2').map((r) => r.status)).toEqual(['Passed']);

    const end = await report(base(emu.url, { defects: { onFlaky: true } }), [result('DEMO-2 logs in', 'flaky')]);
    expect(end.summary.problems).toEqual([]);
    const filed = bugs();
    expect(filed).toHaveLength(1);
    // The defect describes the failure of the failed attempt, not the passing retry.
    expect(filed[0]?.summary).toMatch(/^DEMO-2 logs in: expected 200, got 500 for DEMO-2 logs in \[cb-/);
    expect(filed[0]?.description).toContain('expected 200, got 500');
    const runs = adhocRuns('DEMO-2');
    expect(runs.map((r) => r.status)).toEqual(['Passed', 'Passed']);
    expect(bugKeysOfRun(runs[1]?.id as number)).toEqual([filed[0]?.key]);
  });

  it('defects.enabled false files none; defects.summaryTemplate shapes the summary', async () => {
    await report(base(emu.url, { defects: { enabled: false } }), [result('DEMO-4 searches', 'failed')]);
    expect(bugs()).toEqual([]);
    expect(adhocRuns('DEMO-4').map((r) => r.status)).toEqual(['Failed']);

    await report(base(emu.url, { defects: { summaryTemplate: '${key} in ${file}: ${error}' } }), [
      result('DEMO-4 searches', 'failed'),
    ]);
    const [bug] = bugs();
    expect(bug?.summary).toMatch(
      /^DEMO-4 in t\.spec\.ts: expected 200, got 500 for DEMO-4 searches \[cb-[0-9a-f]{16}\]$/,
    );
  });

  it('a failing step files the defect from the run step (createRunStepBug)', async () => {
    const t = result('DEMO-5 checkout', 'failed');
    last(t).steps = [
      step('Add a product to the cart', 'passed'),
      step('Open checkout', 'failed', { error: { message: 'card missing' } }),
    ];
    const end = await report(base(emu.url), [t]);
    expect(end.summary.problems).toEqual([]);
    expect(ops('defects.createRunStepBug')).toHaveLength(1);
    expect(ops('defects.createRunBug')).toHaveLength(0);
    const [run] = adhocRuns('DEMO-5');
    const failedStep = emu.store.runSteps.find((s) => s.runId === run?.id && s.seq === 2);
    expect(failedStep?.status).toBe('Failed');
    const [bug] = bugs();
    const links = emu.store.bugLinks.filter((l) => l.issueId === bug?.id);
    expect(links.map((l) => [l.runId, l.runStepId])).toContainEqual([run?.id, failedStep?.id]);
    expect(run?.status).toBe('Failed');
  });
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
    const end = await report(options, [t], ctx(dir, []));
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

describe('summary and dry run', () => {
  it('writes the markdown summary to $GITHUB_STEP_SUMMARY of the context, after what is there', async () => {
    const dir = project();
    const file = join(dir, 'step-summary.md');
    writeFileSync(file, 'earlier step\n');
    const options = base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI summary' });
    const end = await report(
      options,
      [result('DEMO-2 a', 'passed'), result('DEMO-5 b', 'failed'), result('no key', 'passed')],
      ctx(dir, [], { GITHUB_STEP_SUMMARY: file }),
    );
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('earlier step\n### casebridge\n')).toBe(true);
    const id = end.summary.cycle?.id;
    expect(text).toContain(
      `Cycle [CI summary](${emu.url}/browse/DEMO-1?cycle=${id}) (id ${id}) of test plan [DEMO-1](${emu.url}/browse/DEMO-1)`,
    );
    expect(text).toContain('| passed | 2 |');
    expect(text).toContain('| failed | 1 |');
    const bug = end.summary.defects.created[0] as string;
    expect(text).toContain(`Defects created: [${bug}](${emu.url}/browse/${bug})`);
    expect(text).toContain('1 test(s) without a case key');
  });

  it('links the cycle and each failure (case, run, defect) in the console, the step summary and annotations', async () => {
    const dir = project();
    const file = join(dir, 'step-summary.md');
    const lines: string[] = [];
    const failing = result('DEMO-5 pays | with a card', 'failed');
    last(failing).errors = [{ message: 'expected 200\nreceived 500', location: { file: failing.file, line: 17 } }];
    const options = base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI links', annotations: true });
    const end = await report(
      options,
      [result('DEMO-2 a', 'passed'), failing],
      ctx(dir, lines, { GITHUB_STEP_SUMMARY: file, GITHUB_ACTIONS: 'true' }),
    );
    const s = end.summary;
    const cycle = `${emu.url}/browse/DEMO-1?cycle=${s.cycle?.id}`;
    const bug = s.defects.created[0] as string;
    const tc = emu.store.issues.find((i) => i.key === 'DEMO-5');
    const run = emu.store.runs.find((r) => r.cycleId === s.cycle?.id && r.tcId === tc?.id);
    expect(run).toBeDefined();
    expect(s.cycle?.url).toBe(cycle);
    expect(s.failures).toEqual([
      {
        test: `${failing.file} > DEMO-5 pays | with a card`,
        file: failing.file,
        line: 17,
        key: 'DEMO-5',
        message: 'expected 200',
        runId: run?.id,
        defect: bug,
        defectCreated: true,
        caseUrl: `${emu.url}/browse/DEMO-5`,
        runUrl: `${cycle}&run=${run?.id}#run-${run?.id}`,
        defectUrl: `${emu.url}/browse/${bug}`,
      },
    ]);
    const printed = lines.join('\n');
    expect(printed).toContain(`cycle "CI links" (id ${s.cycle?.id}) of test plan DEMO-1: ${cycle}`);
    expect(printed).toContain(`    ${bug}  ${emu.url}/browse/${bug}`);
    const annotation = lines.find((l) => l.startsWith('::error '));
    expect(annotation).toBe(
      `::error file=${failing.file},line=17,title=casebridge%3A DEMO-5 failed::expected 200%0Atest: ${failing.file} > DEMO-5 pays | with a card%0Acase: ${emu.url}/browse/DEMO-5%0Arun: ${cycle}&run=${run?.id}#run-${run?.id}%0Anew defect: ${emu.url}/browse/${bug}`,
    );
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('#### Failures (1)');
    expect(text).toContain(
      `| t.spec.ts \\> DEMO-5 pays \\| with a card<br>expected 200<br>t.spec.ts:17 | [DEMO-5](${emu.url}/browse/DEMO-5) | [run ${run?.id}](${cycle}&run=${run?.id}#run-${run?.id}) | [${bug}](${emu.url}/browse/${bug}) (new) |`,
    );
  });

  it('prints no annotations unless asked, and none outside GitHub Actions', async () => {
    const dir = project();
    for (const [annotations, env] of [
      [false, { GITHUB_ACTIONS: 'true' }],
      [true, {}],
    ] as const) {
      const lines: string[] = [];
      const options = base(emu.url, { defects: { enabled: false }, annotations });
      await report(options, [result('DEMO-5 b', 'failed')], ctx(dir, lines, env));
      expect(lines.some((l) => l.startsWith('::error'))).toBe(false);
    }
  });

  it('dryRun with a path writes the calls it would make there as JSON and sends nothing', async () => {
    const dir = project();
    emu.clearRequests();
    const end = await report(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI dry', dryRun: 'calls.json' }),
      [result('DEMO-2 a', 'passed'), result('DEMO-5 b', 'failed')],
      ctx(dir, []),
    );
    expect(emu.requests().filter((r) => !r.path.startsWith('/__emulator'))).toEqual([]);
    const written = JSON.parse(readFileSync(join(dir, 'calls.json'), 'utf8')) as { calls: string[] };
    expect(written.calls).toEqual(end.summary.calls);
    const names = written.calls.map((c) => c.split(' ')[0]);
    expect(names).toEqual(
      expect.arrayContaining(['plans.addCycle', 'cycles.workflow', 'runs.bulkStatusUpdate', 'runs.update']),
    );
    expect(written.calls.find((c) => c.startsWith('runs.update'))).toContain('"result":"Failed"');
    expect(emu.store.cycles.filter((c) => c.name === 'CI dry')).toEqual([]);
  });
});

describe('secrets', () => {
  const password = 'Pw-7d1e93c0b4aa';
  const token = 'repo-token-5f0c2e6b9d';
  const basic = Buffer.from(`ci-bot:${password}`).toString('base64');

  function addUser() {
    emu.store.users.insert({
      name: 'ci-bot',
      displayName: 'CI bot',
      email: 'ci-bot@example.test',
      password,
      tokens: [token],
      licensed: true,
      admin: false,
    });
  }

  /** A failing test whose error and output carry the password, with a screenshot. */
  function leaky(dir: string): TestResult {
    const t = result('DEMO-5 checkout as ci-bot', 'failed');
    const a = last(t);
    a.errors = [{ message: `login as ci-bot/${password} refused`, stack: `Error: ${password}\n at t.spec.ts:7:3` }];
    a.stdout = `password=${password}`;
    a.attachments = [
      { name: 'screenshot', contentType: 'image/png', path: join(dir, 'shot.png') },
      { name: 'log', contentType: 'text/plain', body: Buffer.from('GET /cart 500') },
    ];
    return t;
  }

  function expectClean(what: string, text: string) {
    for (const secret of [password, token, basic]) expect(text, `${what} holds a secret`).not.toContain(secret);
  }

  const options = (url: string, extra: Record<string, unknown> = {}) => ({
    url,
    user: 'ci-bot',
    password,
    projectKey: 'DEMO',
    mode: 'cycle',
    testPlan: 'DEMO-1',
    cycle: 'CI secrets',
    debug: true,
    repository: { url, token },
    attachments: { repositoryMinBytes: 1, others: true },
    ...extra,
  });

  it('with debug on, nothing printed, journaled or summarised holds the password, the token or the Basic value', async () => {
    addUser();
    const dir = project();
    const file = join(dir, 'step-summary.md');
    const lines: string[] = [];
    const up = await report(
      options(emu.url, { flushTimeoutMs: 20_000 }),
      [leaky(dir), result('DEMO-2 a', 'passed')],
      ctx(dir, lines, { GITHUB_STEP_SUMMARY: file }),
    );
    expect(up.summary.problems).toEqual([]);
    expect(
      runsOfCycle('CI secrets')
        .map((r) => [r.key, r.status])
        .sort(),
    ).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-5', 'Failed'],
    ]);
    expect(lines.some((l) => l.startsWith('casebridge debug:'))).toBe(true);
    // What went to the service: the run comment and the defect filed for the failure.
    const failedRun = runsOfCycle('CI secrets').find((r) => r.key === 'DEMO-5')?.run;
    expect(failedRun?.comment).toContain('refused');
    expectClean('the run comment', JSON.stringify(failedRun));
    expect(bugs().length).toBeGreaterThan(0);
    expectClean('the defect', JSON.stringify(bugs()));

    const down = `http://127.0.0.1:${await closedPort()}`;
    const downLines: string[] = [];
    const off = await report(
      options(down, { flushTimeoutMs: 1_500, cycle: 'CI secrets down' }),
      [leaky(dir), result('DEMO-2 a', 'passed')],
      ctx(dir, downLines, { GITHUB_STEP_SUMMARY: file }),
    );
    expect(off.summary.journaled).toBe(2);
    const journalDir = join(dir, '.casebridge/journal');
    const entries = readdirSync(journalDir).filter((f) => f.endsWith('.json'));
    expect(entries).toHaveLength(2);
    for (const e of entries) expectClean(`journal entry ${e}`, readFileSync(join(journalDir, e), 'utf8'));
    expect(readdirSync(join(journalDir, 'blobs'))).toHaveLength(1);
    expectClean('printed lines', [...lines, ...downLines].join('\n'));
    expectClean('summaries', JSON.stringify([up.summary, off.summary]));
    expectClean('step summary', readFileSync(file, 'utf8'));
  });
});

describe('cycles', () => {
  it('completeCycle completes the cycle at the end', async () => {
    const end = await report(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI done', completeCycle: true }),
      [result('DEMO-2 a', 'passed'), result('DEMO-3 b', 'failed')],
    );
    expect(end.summary.problems).toEqual([]);
    expect(emu.store.cycles.find((c) => c.name === 'CI done')?.status).toBe('Completed');
    expect(
      runsOfCycle('CI done')
        .map((r) => [r.key, r.status])
        .sort(),
    ).toEqual([
      ['DEMO-2', 'Passed'],
      ['DEMO-3', 'Failed'],
    ]);
  });

  for (const planned of [true, false]) {
    it(`a cycle completed by someone else mid-run is resumed, gets the result and is completed again (${
      planned ? 'planned' : 'unplanned'
    } tests)`, async () => {
      const name = `CI interrupted ${planned}`;
      const first = result('DEMO-2 first', 'failed');
      const second = result('DEMO-3 second', 'failed');
      const lines: string[] = [];
      const engine = Engine.create(
        base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: name }),
        ctx(project(), lines),
      );
      engine.begin(planned ? { tests: [first, second] } : {});
      engine.add(first);
      const firstRun = () => runsOfCycle(name).find((r) => r.key === 'DEMO-2')?.run;
      await until('the first result', () => {
        const run = firstRun();
        return run?.status === 'Failed' && bugKeysOfRun(run.id).length === 1;
      });
      const tm = admin();
      await tm.cycles.workflow({ testPlanIssueKey: 'DEMO-1', cycleName: name, action: 'Complete' });
      await tm.close();
      expect(emu.store.cycles.find((c) => c.name === name)?.status).toBe('Completed');

      engine.add(second);
      const end = await engine.end();
      expect(end.summary.problems).toEqual([]);
      expect(end.summary.journaled, lines.join('\n')).toBe(0);
      expect(emu.store.cycles.find((c) => c.name === name)?.status).toBe('Completed');
      const runs = runsOfCycle(name);
      expect(runs.map((r) => [r.key, r.status]).sort()).toEqual([
        ['DEMO-2', 'Failed'],
        ['DEMO-3', 'Failed'],
      ]);
      const secondRun = runs.find((r) => r.key === 'DEMO-3')?.run;
      expect(secondRun?.comment).toContain('expected 200, got 500 for DEMO-3 second');
      expect(bugKeysOfRun(secondRun?.id as number)).toHaveLength(1);
      expect(ops('cycles.workflow').map((r) => r.status)).toEqual([200, 200, 200, 200]);
    });
  }
});

describe('bulk updates of a long run', () => {
  it('an unplanned run sends status-only results after 30 s, then after 60 s: each wait that runs out doubles', async () => {
    // Only setTimeout is faked: HTTP and the emulator run on real sockets, so waiting for an answer is real time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const bulks = () => ops('runs.bulkStatusUpdate').length;
    const immediate = () => new Promise((r) => setImmediate(r));
    const waitFor = (what: string, done: () => boolean) => until(what, done, 10_000, immediate);
    const settleFor = async (ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end) await immediate();
    };
    try {
      const engine = Engine.create(
        base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI long' }),
        ctx(project(), []),
      );
      engine.begin({});
      engine.add(result('DEMO-2 first', 'passed'));
      vi.advanceTimersByTime(29_000);
      await settleFor(100);
      expect(bulks()).toBe(0);
      vi.advanceTimersByTime(1_000);
      await waitFor('the first bulk', () => bulks() === 1);
      // The emulator counts a request when it answers: let the client read the answer before the clock jumps again
      // (a jump of 30 s while the answer is on its way fires the request's own timeout).
      await settleFor(300);

      engine.add(result('DEMO-3 second', 'passed'));
      vi.advanceTimersByTime(30_000);
      await settleFor(200);
      expect(bulks()).toBe(1);
      vi.advanceTimersByTime(30_000);
      await waitFor('the second bulk, 60 s after the first', () => bulks() === 2);
      vi.useRealTimers();
      const end = await engine.end();
      expect(end.summary.problems).toEqual([]);
      expect(bulks()).toBe(2);
      expect(
        runsOfCycle('CI long')
          .map((r) => [r.key, r.status])
          .sort(),
      ).toEqual([
        ['DEMO-2', 'Passed'],
        ['DEMO-3', 'Passed'],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('ad hoc mode', () => {
  it('an ad hoc create whose answer is lost still gives exactly one run per result', async () => {
    await setFaults(emu, [
      { route: `${TM_PREFIX}/testRun/adhoc/create/*`, methods: ['PUT'], resetRate: 1, phase: 'after', times: 1 },
    ]);
    const end = await report(base(emu.url), [result('DEMO-2 a', 'passed'), result('DEMO-3 b', 'failed')]);
    expect(end.summary.problems).toEqual([]);
    expect(emu.requests().filter((r) => r.fault === 'reset')).toHaveLength(1);
    expect(adhocRuns('DEMO-2').map((r) => r.status)).toEqual(['Passed']);
    expect(adhocRuns('DEMO-3').map((r) => r.status)).toEqual(['Failed']);
  });

  it('the same, with two results for one case delivered at once', async () => {
    await setFaults(emu, [
      { route: `${TM_PREFIX}/testRun/adhoc/create/*`, methods: ['PUT'], resetRate: 1, phase: 'after', times: 1 },
    ]);
    const tests = ['a', 'b', 'c'].map((n) => result(`DEMO-4 search ${n}`, 'passed'));
    const end = await report(base(emu.url), tests);
    expect(end.summary.problems).toEqual([]);
    expect(emu.requests().filter((r) => r.fault === 'reset')).toHaveLength(1);
    expect(adhocRuns('DEMO-4').map((r) => r.status)).toEqual(['Passed', 'Passed', 'Passed']);
  });
});

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
