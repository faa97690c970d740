import { flakyCases } from '@casebridge/core/internal';
import { defineCommand } from '../command-line.js';
import { answer, CURSOR, JSON_OPTION, LIMIT, PLAN } from '../query/options.js';
import { openReader, planOf } from '../query/reader.js';
import { table } from '../query/table.js';

/** `casebridge flaky`: the plan's cases that flipped lately (core's flakyCases). */
export const flaky = defineCommand({
  name: 'flaky',
  summary: [['flaky [--plan K] [--cycles N] [--json]', "a plan's flaky cases: 2 or more flips in their last 10 runs"]],
  usage: 'Usage: casebridge flaky [--plan KEY] [--cycles N] [--limit N] [--cursor C] [--json]',
  about: `The test plan's flaky cases over its last N cycles (default 10, by creation): 2 or more flips between pass and
fail in their last 10 results, the rule the reporters classify a failure by. Most flips first, with the rate (flips ÷
(runs − 1)). 1 + N requests.`,
  options: {
    plan: PLAN,
    cycles: { type: 'number', value: 'N', description: ['look at the last N cycles (2 to 50, default 10)'] },
    limit: LIMIT,
    cursor: CURSOR,
    json: JSON_OPTION,
  },
  after: `Examples:
  casebridge flaky --plan PROJ-1
  casebridge flaky --cycles 30 --json`,
  positionals: false,
  run: ({ values }, io) =>
    answer(io, 'flaky', async () => {
      const o = await openReader(io.cwd, io.env);
      try {
        const plan = planOf(o.config, values.plan);
        const out = await flakyCases(o.reader, plan, {
          ...(values.cycles !== undefined ? { cycles: values.cycles } : {}),
          ...(values.limit !== undefined ? { limit: values.limit } : {}),
          ...(values.cursor ? { cursor: values.cursor } : {}),
        });
        if (values.json) io.out(JSON.stringify(out, null, 2));
        else {
          io.out(`${out.cases.length} flaky case(s) over the last ${out.cycles.length} cycle(s) of ${plan}`);
          if (out.cases.length > 0) {
            io.out(
              table(
                ['key', 'flips', 'runs', 'failed', 'rate', 'test'],
                out.cases.map((c) => [
                  c.key,
                  String(c.flips),
                  String(c.runs),
                  String(c.failed),
                  c.rate.toFixed(2),
                  c.title,
                ]),
              ),
            );
          }
          if (out.next) io.out(`more: --cursor ${out.next}`);
        }
        return 0;
      } finally {
        await o.close();
      }
    }),
});
