import { requirementCoverage } from '@casebridge/core/internal';
import { defineCommand } from '../command-line.js';
import { answer, CURSOR, CYCLE, JSON_OPTION, LIMIT, PLAN } from '../query/options.js';
import { cycleOf, openReader, planOf } from '../query/reader.js';
import { table } from '../query/table.js';

/** `casebridge coverage`: each requirement's cases and their results in a cycle (core's query/coverage.ts). */
export const coverage = defineCommand({
  name: 'coverage',
  summary: [['coverage [--plan K] [--cycle C] [--jql Q]', "requirements and their cases' results in a cycle"]],
  usage:
    'Usage: casebridge coverage [--plan KEY] [--cycle C] [--requirement KEY]... [--jql JQL] [--limit N] [--cursor C] [--json]',
  about: `Each requirement with its test cases (linked by anyone, a parent's over its descendants too), each case's
status in the cycle, and its state: passing (every case passed), failing (a case failed: named, with its
defects), not run (a case has no result yet), not covered (no case). The set: the keys given with --requirement,
else the issues of --jql (for example 'fixVersion = "2.3" AND issuetype = Story': the stories no test covers show),
else the project's requirements linked to a case of the cycle. Costs the cycle (2 requests), one search, and two
reads a requirement (its cases, its descendants). Exit 2 when it cannot answer (an unknown key, a refused JQL, a
cycle that is not there).`,
  options: {
    plan: PLAN,
    cycle: CYCLE,
    requirement: { type: 'list', value: 'KEY', description: ['a requirement to judge (repeatable)'] },
    jql: { type: 'string', value: 'JQL', description: ['the requirements (or stories) to judge'] },
    limit: LIMIT,
    cursor: CURSOR,
    json: JSON_OPTION,
  },
  after: `Examples:
  casebridge coverage --cycle "CI 1234"
  casebridge coverage --jql 'fixVersion = "2.3" AND issuetype = Story'
  casebridge coverage --json | jq -r '.requirements[] | select(.state != "passing") | .key'`,
  positionals: false,
  run: ({ values }, io) =>
    answer(
      io,
      'coverage',
      async () => {
        const o = await openReader(io.cwd, io.env);
        try {
          const plan = planOf(o.config, values.plan);
          const out = await requirementCoverage(
            o.reader,
            plan,
            cycleOf(o.config, values.cycle, io.env),
            o.config.projectKey,
            {
              ...(values.requirement.length ? { requirements: values.requirement } : {}),
              ...(values.jql ? { jql: values.jql } : {}),
              ...(values.limit !== undefined ? { limit: values.limit } : {}),
              ...(values.cursor ? { cursor: values.cursor } : {}),
            },
          );
          if (values.json) io.out(JSON.stringify(out, null, 2));
          else {
            const c = out.counts;
            io.out(
              `${out.total} requirement(s), cycle "${out.cycle.name}" of ${plan}: ${c.passing} passing, ${c.failing} failing, ${c['not run']} not run, ${c['not covered']} not covered`,
            );
            if (out.requirements.length) {
              const failed = (x: (typeof out.requirements)[number]) =>
                x.cases
                  .filter((k) => k.result === 'failed')
                  .map((k) => `${k.key}${k.defects.length ? ` (${k.defects.join(', ')})` : ''}`)
                  .join(' ');
              io.out(
                table(
                  ['requirement', 'state', 'cases', 'failed', 'summary'],
                  out.requirements.map((x) => [x.key, x.state, String(x.cases.length), failed(x), x.summary]),
                ),
              );
            }
            if (out.next) io.out(`more: --cursor ${out.next}`);
          }
          return 0;
        } finally {
          await o.close();
        }
      },
      2,
    ),
});
