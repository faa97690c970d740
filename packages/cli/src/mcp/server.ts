import {
  type CycleChange,
  caseHistory,
  compareCycles,
  cycleSummary,
  failureDetail,
  flakyCases,
  gateCycle,
  listCycles,
  listFailures,
  moveCycle,
  requirementCoverage,
  rulesOf,
  systemClock,
} from '@casebridge/core/internal';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { cycleOf, type Opened, planOf } from '../query/reader.js';
import { type Answer, CHANGES, failed, ok, READ_ONLY, readOnlyRefusal, type ServerOptions, WRITES } from './answers.js';
import { quarantineTools } from './quarantine.js';

/**
 * `casebridge mcp`: the reads of query/results.ts (core) as MCP tools, for an assistant where a developer works.
 * Every tool has an input and an output schema, a short text answer and structured content (the same shapes as the
 * CLI's `--json`). Read-only unless started with `--allow-writes`: the write tools are listed either way (an
 * assistant learns they exist) and answer a tool error saying how to allow them. A wrong plan, cycle or key is a tool
 * error with the reason, never a crash; answers are paged (`limit`, `cursor`); nothing a tool answers carries a
 * credential (messages go through core's `redact`).
 */

const plan = z.string().optional().describe('a test plan key (default: testPlan of the casebridge configuration)');
const cycle = z
  .string()
  .optional()
  .describe('a cycle name, #ID or id (default: the cycle the configured reporters name)');
const limit = z.number().int().min(1).max(500).optional().describe('at most this many items (default 50)');
const cursor = z.string().optional().describe('the next page: the `next` of the previous answer');

const counts = z.record(z.string(), z.number());
const cycleDigest = z.object({ id: z.number(), name: z.string(), status: z.string(), url: z.string() });
const caseKey = z.string().describe('a test case key, e.g. DEMO-12');
const historyRun = z.object({
  status: z.string(),
  result: z.string().optional(),
  cycle: z.string(),
  plan: z.string().optional(),
  date: z.string().optional(),
  defects: z.array(z.string()),
  classification: z.string().optional(),
  run: z.number(),
});
const failureDigest = z.object({
  classification: z.string(),
  file: z.string().optional(),
  line: z.number().optional(),
  errorLines: z.array(z.string()).optional(),
  signature: z.string().optional(),
  defects: z.array(z.string()),
  run: z.number(),
  url: z.string(),
});
const cycleChange = z.object({
  key: z.string(),
  title: z.string(),
  set: z.string().optional(),
  base: z.string().optional().describe("the run's status in the base; absent: no run there"),
  cycle: z.string().optional().describe("the run's status in the cycle; absent: no run there"),
  failure: failureDigest.optional(),
  before: failureDigest.optional().describe('still failing another way: how it failed in the base'),
});

export function buildServer(o: Opened, opts: ServerOptions, version: string): McpServer {
  const server = new McpServer({ name: 'casebridge', version });
  const r = o.reader;
  const planOr = (asked?: string) => planOf(o.config, asked);
  const cycleOr = (asked?: string) => cycleOf(o.config, asked, opts.env);
  const guard =
    <A>(fn: (a: A) => Promise<Answer>) =>
    async (a: A): Promise<Answer> => {
      try {
        return await fn(a);
      } catch (err) {
        return failed(err);
      }
    };

  server.registerTool(
    'list_cycles',
    {
      title: 'Cycles of a test plan',
      description: "A test plan's cycles, newest first, each with its runs counted by status and its pass rate.",
      inputSchema: { plan, limit, cursor },
      outputSchema: {
        plan: z.string(),
        cycles: z.array(cycleDigest.extend({ counts, total: z.number(), passRate: z.number().optional() })),
        next: z.string().optional(),
      },
      annotations: READ_ONLY,
    },
    guard(async (a) => {
      const out = await listCycles(r, planOr(a.plan), {
        limit: a.limit ?? 10,
        ...(a.cursor ? { cursor: a.cursor } : {}),
      });
      const lines = out.cycles.map(
        (c) => `${c.name} (#${c.id}, ${c.status}): ${c.total} runs, pass rate ${c.passRate ?? '-'}%`,
      );
      return ok(
        [`Cycles of ${out.plan}:`, ...lines, ...(out.next ? [`more: cursor ${out.next}`] : [])].join('\n'),
        out,
      );
    }),
  );

  server.registerTool(
    'cycle_summary',
    {
      title: 'Summary of a cycle',
      description: "A cycle's runs counted by status (and per run attribute set), its pass rate and its link.",
      inputSchema: { plan, cycle },
      outputSchema: {
        plan: z.string(),
        cycle: cycleDigest,
        counts,
        total: z.number(),
        passRate: z.number().optional(),
        bySet: z.array(z.object({ set: z.string(), counts, total: z.number(), passRate: z.number().optional() })),
      },
      annotations: READ_ONLY,
    },
    guard(async (a) => {
      const out = await cycleSummary(r, planOr(a.plan), cycleOr(a.cycle));
      const byStatus = Object.entries(out.counts).map(([s, n]) => `${s} ${n}`);
      return ok(
        `Cycle "${out.cycle.name}" of ${out.plan}: ${out.total} runs (${byStatus.join(', ')}); ${out.cycle.url}`,
        out,
      );
    }),
  );

  server.registerTool(
    'cycle_gate',
    {
      title: 'Quality gate of a cycle',
      description:
        "The verdict `casebridge gate` gives a cycle: each rule with its figure. The configuration's rules (option " +
        'gate; by default no new failure and no regression, known and quarantined failures waived), each argument ' +
        'given above its rule.',
      inputSchema: {
        plan,
        cycle,
        maxNew: z.number().int().min(0).optional().describe('new failures allowed'),
        maxRegressions: z.number().int().min(0).optional().describe('regressions allowed'),
        minPassRate: z.number().min(0).max(100).optional().describe('least pass rate in percent'),
        requireAllPlanned: z.boolean().optional().describe('every case of the plan has a run with a result'),
        requireAttributes: z
          .record(z.string(), z.array(z.string()).min(1))
          .optional()
          .describe('run attribute → values that must each have a run with a result, e.g. {"Browser": ["Chrome"]}'),
        strict: z.boolean().optional().describe('known and quarantined failures count as new'),
        requirements: z
          .enum(['covered', 'passing'])
          .optional()
          .describe('every requirement of the set covered by a case, or covered and passing'),
        requirementsJql: z
          .string()
          .min(1)
          .optional()
          .describe('the requirements judged, e.g. fixVersion = "2.3" AND issuetype = Story'),
      },
      outputSchema: {
        plan: z.string(),
        cycle: cycleDigest,
        pass: z.boolean(),
        rules: z.array(z.object({ rule: z.string(), figure: z.string(), pass: z.boolean() })),
        passRate: z.number().optional(),
        waived: z.number(),
      },
      annotations: READ_ONLY,
    },
    guard(async ({ plan: p, cycle: c, ...asked }) => {
      const where = planOr(p);
      const { cycle: digest, verdict } = await gateCycle(r, where, cycleOr(c), rulesOf(o.config.gate, asked));
      const lines = verdict.rules.map((x) => `- ${x.pass ? 'pass' : 'FAIL'} ${x.rule}: ${x.figure}`);
      return ok(
        [`Gate of cycle "${digest.name}" of ${where}: ${verdict.pass ? 'passed' : 'FAILED'}`, ...lines].join('\n'),
        { plan: where, cycle: digest, ...verdict },
      );
    }),
  );

  server.registerTool(
    'requirement_coverage',
    {
      title: 'Requirement coverage in a cycle',
      description:
        'Each requirement (story, epic) with its test cases (linked by anyone; a parent over its descendants too), ' +
        "each case's status in the cycle, and its state: passing, failing (the failed cases and their defects), " +
        'not run, not covered. The set: the keys given, else the issues of a JQL (which shows the stories no test ' +
        "covers), else the project's requirements linked to a case of the cycle.",
      inputSchema: {
        plan,
        cycle,
        requirements: z.array(z.string()).optional().describe('requirement keys to judge'),
        jql: z
          .string()
          .min(1)
          .optional()
          .describe('the requirements to judge, e.g. fixVersion = "2.3" AND issuetype = Story'),
        limit,
        cursor,
      },
      outputSchema: {
        plan: z.string(),
        cycle: cycleDigest,
        requirements: z.array(
          z.object({
            key: z.string(),
            summary: z.string(),
            url: z.string(),
            state: z.enum(['passing', 'failing', 'not run', 'not covered']),
            cases: z.array(
              z.object({
                key: z.string(),
                status: z.string().optional(),
                result: z.enum(['passed', 'failed']).optional(),
                defects: z.array(z.string()),
                via: z.string().optional(),
              }),
            ),
            children: z.array(z.string()),
          }),
        ),
        counts: z.object({
          passing: z.number(),
          failing: z.number(),
          'not run': z.number(),
          'not covered': z.number(),
        }),
        total: z.number(),
        next: z.string().optional(),
      },
      annotations: READ_ONLY,
    },
    guard(async (a) => {
      const where = planOr(a.plan);
      const out = await requirementCoverage(r, where, cycleOr(a.cycle), o.config.projectKey, {
        ...(a.requirements?.length ? { requirements: a.requirements } : {}),
        ...(a.jql ? { jql: a.jql } : {}),
        ...(a.limit ? { limit: a.limit } : {}),
        ...(a.cursor ? { cursor: a.cursor } : {}),
      });
      const lines = out.requirements.map((x) => {
        const failed = x.cases.filter((c) => c.result === 'failed');
        const named = failed.map((c) => `${c.key}${c.defects.length ? ` (${c.defects.join(', ')})` : ''}`).join(', ');
        return `- ${x.key} ${x.summary}: ${x.state}${named ? `: ${named}` : ''} (${x.cases.length} case(s))`;
      });
      const c = out.counts;
      const head = `${out.total} requirement(s) in cycle "${out.cycle.name}" of ${where}: ${c.passing} passing, ${c.failing} failing, ${c['not run']} not run, ${c['not covered']} not covered`;
      return ok([head, ...lines, ...(out.next ? [`more: cursor ${out.next}`] : [])].join('\n'), out);
    }),
  );

  server.registerTool(
    'list_failures',
    {
      title: 'Failed runs of a cycle',
      description:
        "A cycle's failed runs: case key, test title, the reporter's classification (new, known, flaky, regression, " +
        'quarantined; unclassified when it wrote none), the test file and line, the meaningful lines of the error ' +
        '(Expected and Received), the linked defects, a link.',
      inputSchema: { plan, cycle, limit, cursor },
      outputSchema: {
        plan: z.string(),
        cycle: cycleDigest,
        failures: z.array(
          z.object({
            key: z.string(),
            title: z.string(),
            classification: z.string(),
            reason: z.string().optional(),
            error: z.string().optional(),
            errorLines: z.array(z.string()).optional(),
            file: z.string().optional(),
            line: z.number().optional(),
            context: z.string().optional(),
            defects: z.array(z.string()),
            run: z.number(),
            set: z.string().optional(),
            url: z.string(),
          }),
        ),
        total: z.number(),
        next: z.string().optional(),
      },
      annotations: READ_ONLY,
    },
    guard(async (a) => {
      const out = await listFailures(r, planOr(a.plan), cycleOr(a.cycle), {
        ...(a.limit ? { limit: a.limit } : {}),
        ...(a.cursor ? { cursor: a.cursor } : {}),
      });
      const lines = out.failures.flatMap((f) => [
        `- ${f.key} ${f.title}${f.file ? ` (${f.file}${f.line ? `:${f.line}` : ''})` : ''}: ${f.classification}${
          f.defects.length ? `, defects ${f.defects.join(', ')}` : ''
        }`,
        ...(f.errorLines ?? (f.error ? [f.error] : [])).map((l) => `    ${l}`),
      ]);
      const head = `${out.total} failed run(s) in cycle "${out.cycle.name}" of ${out.plan}`;
      return ok([head, ...lines, ...(out.next ? [`more: cursor ${out.next}`] : [])].join('\n'), out);
    }),
  );

  server.registerTool(
    'case_history',
    {
      title: 'History of a test case',
      description:
        "A test case's last runs across cycles and ad hoc (newest first: status, cycle, date, defects) and how often " +
        'its result flipped between pass and fail over its last 10 executed runs (2 or more: flaky).',
      inputSchema: { key: caseKey, limit, cursor },
      outputSchema: {
        key: z.string(),
        url: z.string(),
        runs: z.array(historyRun),
        flips: z.number(),
        flaky: z.boolean().describe('2 or more flips in its last 10 executed runs: flaky, as the reporters classify'),
        next: z.string().optional(),
      },
      annotations: READ_ONLY,
    },
    guard(async (a) => {
      const out = await caseHistory(r, a.key, {
        ...(a.limit ? { limit: a.limit } : {}),
        ...(a.cursor ? { cursor: a.cursor } : {}),
      });
      const lines = out.runs.map(
        (x) => `- ${x.date ?? '?'} ${x.status} in ${x.cycle}${x.defects.length ? ` (${x.defects.join(', ')})` : ''}`,
      );
      const flaky = out.flaky ? ' (flaky)' : '';
      return ok([`${out.key}: ${out.runs.length} run(s), ${out.flips} flip(s)${flaky}`, ...lines].join('\n'), out);
    }),
  );

  server.registerTool(
    'failure_detail',
    {
      title: "A failure's whole story",
      description:
        "A test case's run in a cycle, told whole: status and link, the reporter's classification, file and line, " +
        'the error as the run comment has it (every line; the stack frames in the project when the comment carries ' +
        'a stack), the run steps with their status, its files with download links (screenshot, error-context.md, ' +
        "trace), each defect with its status and assignee, and the case's last 10 results.",
      inputSchema: { plan, cycle, key: caseKey },
      outputSchema: {
        plan: z.string(),
        cycle: cycleDigest,
        key: z.string(),
        title: z.string(),
        url: z.string(),
        run: z.object({
          id: z.number(),
          status: z.string(),
          result: z.string().optional(),
          set: z.string().optional(),
          url: z.string(),
          comment: z.string().optional(),
        }),
        classification: z.string().optional(),
        reason: z.string().optional(),
        signature: z.string().optional(),
        file: z.string().optional(),
        line: z.number().optional(),
        error: z.array(z.string()).optional().describe('the error, every line as the run comment has it'),
        errorLines: z.array(z.string()).optional().describe("its meaningful lines: a matcher's Expected and Received"),
        stack: z
          .array(z.string())
          .optional()
          .describe("the stack's frames in the project; absent: the run comment carries the message only"),
        steps: z.array(
          z.object({
            step: z.number(),
            text: z.string(),
            expected: z.string(),
            status: z.string(),
            actual: z.string().optional(),
            defects: z.array(z.string()),
          }),
        ),
        attachments: z.array(
          z.object({
            name: z.string(),
            kind: z.enum(['screenshot', 'error-context', 'trace', 'video', 'other']),
            mimeType: z.string().optional(),
            url: z.string().optional(),
            step: z.number().optional(),
            stored: z.boolean().optional(),
          }),
        ),
        defects: z.array(
          z.object({
            key: z.string(),
            summary: z.string().optional(),
            status: z.string().optional(),
            done: z.boolean().optional(),
            assignee: z.string().nullable().optional().describe('null: unassigned'),
            missing: z.boolean().optional(),
            url: z.string(),
          }),
        ),
        history: z.object({ runs: z.array(historyRun), flips: z.number(), flaky: z.boolean() }),
      },
      annotations: READ_ONLY,
    },
    guard(async (a) => {
      const d = await failureDetail(r, planOr(a.plan), cycleOr(a.cycle), a.key);
      const where = d.file ? ` (${d.file}${d.line !== undefined ? `:${d.line}` : ''})` : '';
      const lines = [
        `${d.key} ${d.title}${where}: ${d.run.status} in cycle "${d.cycle.name}"${
          d.classification ? `, ${d.classification}` : ''
        }; ${d.run.url}`,
        ...(d.error ?? []).map((l) => `    ${l}`),
        ...(d.stack ?? []).map((l) => `    ${l}`),
        ...d.steps.map((s) => `- step ${s.step} ${s.status}: ${s.text}`),
        ...d.attachments.map((x) => `- ${x.kind} ${x.name}: ${x.url ?? 'no link'}`),
        ...d.defects.map(
          (x) => `- defect ${x.key}: ${x.missing ? 'not found' : (x.status ?? '?')}, ${x.assignee ?? 'unassigned'}`,
        ),
        `last results: ${d.history.runs.map((x) => x.result ?? x.status).join(', ') || 'none'}`,
      ];
      return ok(lines.join('\n'), d);
    }),
  );

  server.registerTool(
    'compare_cycles',
    {
      title: 'What changed between two cycles',
      description:
        'A cycle against an earlier one (base) of the same plan: newly failing, fixed, still failing the same way or ' +
        "another way (by the failure's signature), new tests, tests not run any more; failures with their " +
        'classification, file and line, error lines and defects.',
      inputSchema: {
        plan,
        base: z.string().describe('the cycle to compare against: a name, #ID or id'),
        cycle,
        limit: z
          .number()
          .int()
          .min(1)
          .max(500)
          .optional()
          .describe('at most this many tests in each list (default 50)'),
      },
      outputSchema: {
        plan: z.string(),
        base: cycleDigest,
        cycle: cycleDigest,
        newlyFailing: z.array(cycleChange),
        fixed: z.array(cycleChange),
        stillFailing: z.object({ same: z.array(cycleChange), other: z.array(cycleChange) }),
        newTests: z.array(cycleChange),
        notRunAnyMore: z.array(cycleChange),
        counts: z.object({
          newlyFailing: z.number(),
          fixed: z.number(),
          stillFailingSame: z.number(),
          stillFailingOther: z.number(),
          newTests: z.number(),
          notRunAnyMore: z.number(),
        }),
      },
      annotations: READ_ONLY,
    },
    guard(async (a) => {
      const d = await compareCycles(r, planOr(a.plan), a.base, cycleOr(a.cycle), a.limit ? { limit: a.limit } : {});
      const names = (list: readonly CycleChange[]) => list.map((c) => `${c.key} ${c.title}`).join('; ') || 'none';
      const n = d.counts;
      return ok(
        [
          `Cycle "${d.cycle.name}" against "${d.base.name}" of ${d.plan}:`,
          `- newly failing (${n.newlyFailing}): ${names(d.newlyFailing)}`,
          `- fixed (${n.fixed}): ${names(d.fixed)}`,
          `- still failing the same way (${n.stillFailingSame}): ${names(d.stillFailing.same)}`,
          `- still failing another way (${n.stillFailingOther}): ${names(d.stillFailing.other)}`,
          `- new tests (${n.newTests}): ${names(d.newTests)}`,
          `- not run any more (${n.notRunAnyMore}): ${names(d.notRunAnyMore)}`,
        ].join('\n'),
        d,
      );
    }),
  );

  server.registerTool(
    'flaky_cases',
    {
      title: 'Flaky cases of a test plan',
      description:
        "A test plan's flaky cases over its last N cycles, most flips first: 2 or more flips between pass and fail in their last 10 results, the rule the reporters classify a failure by.",
      inputSchema: {
        plan,
        cycles: z.number().int().min(2).max(50).optional().describe('how many of the last cycles (default 10)'),
        limit,
        cursor,
      },
      outputSchema: {
        plan: z.string(),
        cycles: z.array(z.string()),
        cases: z.array(
          z.object({
            key: z.string(),
            title: z.string(),
            runs: z.number(),
            failed: z.number(),
            flips: z.number(),
            rate: z.number(),
          }),
        ),
        next: z.string().optional(),
      },
      annotations: READ_ONLY,
    },
    guard(async (a) => {
      const out = await flakyCases(r, planOr(a.plan), {
        ...(a.cycles ? { cycles: a.cycles } : {}),
        ...(a.limit ? { limit: a.limit } : {}),
        ...(a.cursor ? { cursor: a.cursor } : {}),
      });
      const lines = out.cases.map((c) => `- ${c.key} ${c.title}: ${c.flips} flips in ${c.runs} runs`);
      return ok([`${out.cases.length} flaky case(s) over ${out.cycles.length} cycle(s)`, ...lines].join('\n'), out);
    }),
  );

  server.registerTool(
    'link_defect',
    {
      title: 'Link a defect to a run',
      description: 'Links an existing Jira issue to a run as its defect (needs --allow-writes).',
      inputSchema: {
        run: z.number().int().describe('a run id (list_failures gives them)'),
        issue: z.string().describe('an issue key, e.g. DEMO-40'),
      },
      outputSchema: { run: z.number(), issue: z.string(), linked: z.boolean() },
      annotations: WRITES,
    },
    guard(async (a) => {
      if (!opts.allowWrites) return readOnlyRefusal('link_defect');
      await r.tm.runs.update({ runId: a.run, bugs: [a.issue] });
      return ok(`${a.issue} is linked to run ${a.run}`, { run: a.run, issue: a.issue, linked: true });
    }),
  );

  server.registerTool(
    'cycle_action',
    {
      title: 'Start, complete, abort or resume a cycle',
      description: "Moves a cycle through synapseRT's workflow (needs --allow-writes).",
      inputSchema: { plan, cycle, action: z.enum(['start', 'complete', 'abort', 'resume']) },
      outputSchema: { plan: z.string(), cycle: z.string(), status: z.string() },
      annotations: { ...CHANGES, idempotentHint: false },
    },
    guard(async (a) => {
      if (!opts.allowWrites) return readOnlyRefusal('cycle_action');
      const p = planOr(a.plan);
      const summary = await cycleSummary(r, p, cycleOr(a.cycle));
      const wf = ({ start: 'Start', complete: 'Complete', abort: 'Abort', resume: 'Resume' } as const)[a.action];
      const info = { id: summary.cycle.id, name: summary.cycle.name, plan: p, status: summary.cycle.status };
      await moveCycle({ tm: r.tm, o: {}, dryRun: false, clock: systemClock }, info, wf);
      return ok(`Cycle "${info.name}" of ${p} is ${info.status}`, { plan: p, cycle: info.name, status: info.status });
    }),
  );

  quarantineTools(server, o, opts, guard);
  return server;
}
