import { type FailureDetail, failureDetail } from '@casebridge/core/internal';
import { defineCommand, UsageError } from '../command-line.js';
import { answer, CYCLE, JSON_OPTION, PLAN } from '../query/options.js';
import { cycleOf, openReader, planOf } from '../query/reader.js';
import { table } from '../query/table.js';

/** `casebridge failure KEY`: one failure's whole story (core's failureDetail). */
export const failure = defineCommand({
  name: 'failure',
  summary: [['failure KEY [--plan K] [--cycle C] [--json]', "one failure's story: error, steps, files, defects"]],
  usage: 'Usage: casebridge failure KEY [--plan KEY] [--cycle C] [--json]',
  about: `A test case's run in a cycle, told whole: its status and link, the reporter's classification, the test file
and line, the error as the run comment has it (every line; the stack's frames in the project when the comment
carries a stack), the run's steps with their status, its files with download links (screenshot, Playwright's
error-context.md, trace), each defect with its status and assignee as Jira has them now, and the case's last 10
results. 4 requests, 1 more where the run details give no file links, and 1 per defect. Exit 1 when the case is
not there or has no run in the cycle.`,
  options: { plan: PLAN, cycle: CYCLE, json: JSON_OPTION },
  after: `Examples:
  casebridge failure PROJ-12 --cycle "CI 1234"
  casebridge failure PROJ-12 --json | jq -r '.attachments[] | select(.kind == "screenshot") | .url'`,
  positionals: true,
  run: ({ values, positionals }, io) =>
    answer(io, 'failure', async () => {
      const key = positionals[0];
      if (!key || positionals.length > 1) throw new UsageError('name one test case: casebridge failure KEY');
      const o = await openReader(io.cwd, io.env);
      try {
        const plan = planOf(o.config, values.plan);
        const out = await failureDetail(o.reader, plan, cycleOf(o.config, values.cycle, io.env), key);
        io.out(values.json ? JSON.stringify(out, null, 2) : text(out));
        return 0;
      } finally {
        await o.close();
      }
    }),
});

const indent = (lines: readonly string[]) => lines.map((l) => (l ? `    ${l}` : ''));

function text(d: FailureDetail): string {
  const out = [`${d.key} ${d.title}: ${d.run.status} in cycle "${d.cycle.name}" of ${d.plan}`];
  out.push(`run ${d.run.id}${d.run.set ? ` (${d.run.set})` : ''}: ${d.run.url}`);
  if (d.classification) out.push(`classification: ${d.classification}${d.reason ? ` (${d.reason})` : ''}`);
  if (d.file) out.push(`at: ${d.file}${d.line !== undefined ? `:${d.line}` : ''}`);
  if (d.error) {
    out.push('', 'error:', ...indent(d.error));
    // The reporters write the message; the stack is in the defect's description.
    out.push(...(d.stack ? ['stack:', ...indent(d.stack)] : ['(no stack in the run comment)']));
  }
  if (d.steps.length) {
    out.push('', 'steps:');
    out.push(
      table(
        ['#', 'status', 'step', 'actual', 'defects'],
        d.steps.map((s) => [String(s.step), s.status, s.text, s.actual ?? '', s.defects.join(' ')]),
      ),
    );
  }
  // Links one a line, whole: a table would cut them.
  if (d.attachments.length) {
    out.push('', 'files:');
    for (const a of d.attachments) {
      const where = a.step !== undefined ? ` (step ${a.step})` : a.stored ? ' (content repository)' : '';
      out.push(`  ${a.kind}: ${a.name}${where}`, ...(a.url ? [`      ${a.url}`] : []));
    }
  }
  if (d.defects.length) {
    out.push('', 'defects:');
    for (const x of d.defects) {
      const state = x.missing
        ? 'not found'
        : [x.status, x.assignee === null ? 'unassigned' : x.assignee].filter(Boolean).join(', ');
      out.push(`  ${x.key}${state ? ` (${state})` : ''}${x.summary ? ` ${x.summary}` : ''}`, `      ${x.url}`);
    }
  }
  const flaky = d.history.flaky ? ': flaky' : '';
  out.push('', `last ${d.history.runs.length} result(s), ${d.history.flips} flip(s)${flaky}:`);
  out.push(
    table(
      ['date', 'status', 'cycle', 'classification', 'defects'],
      d.history.runs.map((r) => [r.date ?? '', r.status, r.cycle, r.classification ?? '', r.defects.join(' ')]),
    ),
  );
  return out.join('\n');
}
