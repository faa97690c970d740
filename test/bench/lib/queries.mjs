/**
 * Issue 39's cell (`BENCH_ONLY=queries`): what reading back costs at scale. A real Jest run of 1,000 keyed tests, 100
 * of them failing each its own way, reports into a cycle (cycle mode, defects and history on); then, with the
 * service `BENCH_QUERIES_LATENCY` ms away (default 20), core's reads that the CLI and `casebridge mcp` answer from
 * (`cycleSummary`, `listFailures` of all 100, `caseHistory`, `listCycles`) run in this process, each timed and its
 * requests counted from the emulator's log; then the built CLI's `casebridge failures --json` as a process (Node's
 * start included). Targets: `cycleSummary` and `listFailures` each at most 3 requests and under 1 s; coverage of 20
 * requirements 3 requests plus 2 a requirement (its cases, its descendants: the API has no cheaper way to a parent's).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEmulator } from '@casebridge/emulator';
import { keyOf, OUT, PLAN, PROJECT, ROOT, seedFor, TOKEN, writeFixture } from './common.mjs';
import { jest, jestProjectFiles } from './jest.mjs';
import { measure, timedRun } from './measure.mjs';

const TESTS = 1000;
const LATENCY = Number(process.env.BENCH_QUERIES_LATENCY ?? 20);
const REQUIREMENTS = 20;

function suite() {
  const files = jestProjectFiles();
  for (let from = 0, n = 1; from < TESTS; from += 100, n++) {
    const lines = [];
    for (let i = from; i < from + 100; i++) {
      const title = `${keyOf(i)} generated test ${i + 1}`;
      if ((i + 1) % 10 === 0) lines.push(`test('${title}', () => {`, `  expect(${i + 1}).toBe(0);`, '});');
      else lines.push(`test('${title}', () => {});`);
    }
    files[`tests/part-${String(n).padStart(3, '0')}.test.js`] = `${lines.join('\n')}\n`;
  }
  return writeFixture(`bench-queries-jest-${TESTS}`, files);
}

export async function runQueries({ log, environment }) {
  const core = await import(join(ROOT, 'packages', 'core', 'dist', 'internal.js'));
  const { TestManagementClient } = await import(join(ROOT, 'packages', 'core', 'dist', 'index.js'));
  const emu = await startEmulator({ port: 0, seed: seedFor(TESTS) });
  try {
    const dir = suite();
    const cycle = 'Queries';
    const r = await measure({
      runner: jest,
      dir,
      casebridge: true,
      mode: 'cycle',
      latency: 20,
      emu,
      cycle,
      env: { CASEBRIDGE_DEFECTS: 'true' },
      reset: false,
    });
    log(`bench: queries: the run reported ${r.delivered} results (${r.requests} requests)`);
    emu.faults.set([{ route: '**', latencyMs: LATENCY }]);
    const tm = new TestManagementClient({ baseUrl: emu.url, auth: { type: 'bearer', token: TOKEN } });
    const reader = {
      tm,
      baseUrl: emu.url,
      statusMap: { passed: 'Passed', failed: 'Failed', flaky: 'Passed', skipped: null, interrupted: 'Blocked' },
    };
    const timed = async (name, fn) => {
      emu.clearRequests();
      const t0 = performance.now();
      const out = await fn();
      const ms = Math.round(performance.now() - t0);
      const requests = emu.requests().filter((q) => !q.path.startsWith('/__emulator')).length;
      log(`  ${name}: ${requests} request(s), ${ms} ms`);
      return { name, requests, ms, out };
    };
    // Twenty requirements (stories) of fifty cases each, as a person linked them: what coverage costs.
    for (let n = 0; n < REQUIREMENTS; n++) {
      const { key } = await tm.jira.createIssue({
        fields: { project: { key: PROJECT }, issuetype: { name: 'Requirement' }, summary: `Story ${n + 1}` },
      });
      const cases = Array.from({ length: TESTS / REQUIREMENTS }, (_, i) => keyOf(n * (TESTS / REQUIREMENTS) + i));
      await tm.requirements.linkTestCase({ requirementIssueKey: key, testCaseKeys: cases });
    }
    // As a team's stories would be: long in Jira's index, not created a second ago (index lag).
    emu.catchUpIndex();
    const rows = [
      await timed('cycleSummary', () => core.cycleSummary(reader, PLAN, cycle)),
      await timed('listFailures (limit 500)', () => core.listFailures(reader, PLAN, cycle, { limit: 500 })),
      await timed('caseHistory', () => core.caseHistory(reader, keyOf(9))),
      await timed('listCycles', () => core.listCycles(reader, PLAN)),
      await timed(`requirementCoverage (${REQUIREMENTS} requirements)`, () =>
        core.requirementCoverage(reader, PLAN, cycle, PROJECT, { limit: 500 }),
      ),
      await timed('failureDetail', () => core.failureDetail(reader, PLAN, cycle, keyOf(9))),
      await timed('compareCycles (the cycle with itself)', () => core.compareCycles(reader, PLAN, cycle, cycle)),
    ];
    await tm.close();
    emu.clearRequests();
    const cli = await timedRun(
      'node',
      [join(ROOT, 'packages', 'cli', 'dist', 'cli.js'), 'failures', '--json', '--limit', '500'],
      {
        cwd: dir,
        env: {
          ...process.env,
          CASEBRIDGE_URL: emu.url,
          CASEBRIDGE_TOKEN: TOKEN,
          CASEBRIDGE_PROJECT: PROJECT,
          CASEBRIDGE_TEST_PLAN: PLAN,
          CASEBRIDGE_CYCLE: cycle,
        },
        timeoutMs: 60_000,
      },
    );
    const cliRequests = emu.requests().filter((q) => !q.path.startsWith('/__emulator')).length;
    log(
      `  casebridge failures --json (a process): ${cliRequests} request(s), ${Math.round(cli.wallMs)} ms, exit ${cli.code}`,
    );
    const failures = rows[1].out.failures;
    const result = {
      environment,
      latencyMs: LATENCY,
      runs: rows[0].out.total,
      failed: rows[1].out.total,
      classified: Object.fromEntries(
        [...new Set(failures.map((f) => f.classification))].map((c) => [
          c,
          failures.filter((f) => f.classification === c).length,
        ]),
      ),
      reads: rows.map(({ name, requests, ms }) => ({ name, requests, ms })),
      cli: { requests: cliRequests, ms: Math.round(cli.wallMs), code: cli.code },
      targets: [
        ...rows.slice(0, 2).map(({ name, requests, ms }) => ({ name, met: requests <= 3 && ms < 1000 })),
        { name: rows[4].name, met: rows[4].requests <= 3 + 2 * REQUIREMENTS },
      ],
    };
    mkdirSync(OUT, { recursive: true });
    writeFileSync(join(OUT, 'queries.json'), `${JSON.stringify(result, null, 2)}\n`);
    log(`bench: queries: ${JSON.stringify(result.targets)} (bench-results/queries.json)`);
  } finally {
    await emu.close();
  }
}
