import { listFailures } from '@casebridge/core/internal';
import { defineCommand } from '../command-line.js';
import { answer, CURSOR, CYCLE, JSON_OPTION, LIMIT, PLAN } from '../query/options.js';
import { cycleOf, openReader, planOf } from '../query/reader.js';
import { table } from '../query/table.js';

/** `casebridge failures`: a cycle's failed runs, classified as the reporters did (core's listFailures). */
export const failures = defineCommand({
  name: 'failures',
  summary: [['failures [--plan K] [--cycle C] [--json]', "a cycle's failed runs, classified as the reporters did"]],
  usage: 'Usage: casebridge failures [--plan KEY] [--cycle C] [--limit N] [--cursor C] [--json]',
  about: `The failed runs of a cycle: case key, test title, the classification the reporter wrote when the failure came
in (new, known, flaky, regression, quarantined; unclassified when it wrote none), the test file and line, the
meaningful lines of the error (a matcher's Expected and Received), the linked defects and a link to the run. Two
requests at any size.`,
  options: { plan: PLAN, cycle: CYCLE, limit: LIMIT, cursor: CURSOR, json: JSON_OPTION },
  after: `Examples:
  casebridge failures --cycle "CI 1234"
  casebridge failures --json | jq -r '.failures[] | select(.classification == "new") | .key'`,
  positionals: false,
  run: ({ values }, io) =>
    answer(io, 'failures', async () => {
      const o = await openReader(io.cwd, io.env);
      try {
        const plan = planOf(o.config, values.plan);
        const out = await listFailures(o.reader, plan, cycleOf(o.config, values.cycle, io.env), {
          ...(values.limit !== undefined ? { limit: values.limit } : {}),
          ...(values.cursor ? { cursor: values.cursor } : {}),
        });
        if (values.json) io.out(JSON.stringify(out, null, 2));
        else {
          io.out(`${out.total} failed run(s) in cycle "${out.cycle.name}" of ${plan} (${out.cycle.url})`);
          if (out.failures.length > 0) {
            const where = (f: (typeof out.failures)[number]) =>
              f.file ? `${f.file}${f.line ? `:${f.line}` : ''}` : '';
            io.out(
              table(
                ['key', 'classification', 'defects', 'test', 'where'],
                out.failures.map((f) => [f.key, f.classification, f.defects.join(' '), f.title, where(f)]),
              ),
            );
            // Each failure's meaningful error lines: what a reader acts on (Expected and Received).
            for (const f of out.failures) {
              const lines = f.errorLines ?? (f.error ? [f.error] : []);
              if (lines.length) io.out(['', `${f.key} ${f.title}`, ...lines.map((l) => `    ${l}`)].join('\n'));
            }
          }
          if (out.next) io.out(`more: --cursor ${out.next}`);
        }
        return 0;
      } finally {
        await o.close();
      }
    }),
});
