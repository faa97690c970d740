import { appendFileSync } from 'node:fs';
import { gateCycle, gateMarkdown, listCycles, rulesOf } from '@casebridge/core/internal';
import { defineCommand, UsageError } from '../command-line.js';
import { answer, CYCLE, JSON_OPTION, PLAN } from '../query/options.js';
import { cycleOf, openReader, planOf } from '../query/reader.js';

/** `casebridge gate`: one verdict on a cycle for CI (core's gate.ts over its cycleRead). */
/** `--require-attribute Browser=Chrome,Firefox` (repeatable) as the gate's rule. */
export function attributeRules(values: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const v of values) {
    const m = /^([^=]+)=(.+)$/.exec(v);
    if (!m) throw new UsageError(`--require-attribute expects NAME=v1,v2, got "${v}"`);
    const name = (m[1] as string).trim();
    out[name] = [
      ...(out[name] ?? []),
      ...(m[2] as string)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ];
  }
  return out;
}

/** `--requirements covered|passing`. */
function requirementsRule(v: string): 'covered' | 'passing' {
  if (v === 'covered' || v === 'passing') return v;
  throw new UsageError(`--requirements expects covered or passing, got "${v}"`);
}

export const gate = defineCommand({
  name: 'gate',
  summary: [
    ['gate [--plan K] [--cycle C] [rules]', 'one verdict on a cycle for CI: new failures, regressions, pass rate'],
  ],
  usage: `Usage: casebridge gate [--plan KEY] [--cycle C] [--max-new N] [--max-regressions N] [--min-pass-rate P]
                     [--require-all-planned] [--require-attribute NAME=v1,v2] [--strict]
                     [--requirements covered|passing [--requirements-jql JQL]] [--json]`,
  about: `One verdict on a cycle, for the end of a pipeline whose jobs (shards, browsers) report into it: every rule with
its figure and verdict. By default no new failure and no regression pass (--max-new 0 --max-regressions 0); the
pass rate is not checked unless --min-pass-rate is given. Known and quarantined failures (as the reporters
classified them) are waived unless --strict. The same rules can be set in the configuration (option gate:
{ maxNew, maxRegressions, minPassRate, requireAllPlanned, requireAttributes, strict, requirements,
requirementsJql }); a flag wins over it. --requirements covered|passing judges requirements as casebridge coverage
does, over --requirements-jql or the project's requirements linked to the cycle's cases.
With GITHUB_STEP_SUMMARY set, the same goes to the job summary as Markdown, with the pass rate of the plan's last
cycles as a chart (a chart that cannot be read is left out, with a line on stderr). Costs 2 requests for the
cycle, 1 more with --require-all-planned, 1 + up to 10 for the chart. Exit codes: 0 passed, 1 failed, 2 no
verdict (the service, the plan or the cycle could not be read; wrong usage or configuration).`,
  options: {
    plan: PLAN,
    cycle: CYCLE,
    'max-new': { type: 'number', value: 'N', description: ['new failures allowed (default 0)'] },
    'max-regressions': { type: 'number', value: 'N', description: ['regressions allowed (default 0)'] },
    'min-pass-rate': {
      type: 'string',
      value: 'P',
      description: ['least pass rate in percent (passed ÷ runs with a result)'],
    },
    'require-all-planned': { type: 'boolean', description: ['every case of the plan has a run with a result'] },
    'require-attribute': {
      type: 'list',
      value: 'NAME=v1,v2',
      description: ['each value of the run attribute has a run with a result (repeatable)'],
    },
    strict: { type: 'boolean', description: ['known and quarantined failures count as new'] },
    requirements: {
      type: 'string',
      value: 'covered|passing',
      description: ['every requirement covered by a case, or covered and passing (see coverage)'],
    },
    'requirements-jql': {
      type: 'string',
      value: 'JQL',
      description: ["the requirements the rule judges (default: those linked to the cycle's cases)"],
    },
    json: JSON_OPTION,
  },
  after: `Exit codes: 0 passed, 1 failed, 2 the cycle could not be read (the reason is printed).

Example (GitHub Actions, after the test jobs):
  npx casebridge gate --plan SHOP-1 --cycle "CI \${{ github.run_id }}" --require-attribute Browser=Chrome,Firefox`,
  positionals: false,
  run: ({ values }, io) =>
    answer(
      io,
      'gate',
      async () => {
        const rate = values['min-pass-rate'];
        const minPassRate = rate === undefined ? undefined : Number(rate.replace(/%$/, ''));
        if (minPassRate !== undefined && !(minPassRate >= 0 && minPassRate <= 100)) {
          throw new UsageError(`--min-pass-rate expects a percentage from 0 to 100, got "${rate}"`);
        }
        const o = await openReader(io.cwd, io.env);
        // The configuration's rules (option gate), each flag given on the command line above its rule.
        const rules = rulesOf(o.config.gate, {
          ...(values['max-new'] !== undefined ? { maxNew: values['max-new'] } : {}),
          ...(values['max-regressions'] !== undefined ? { maxRegressions: values['max-regressions'] } : {}),
          ...(minPassRate !== undefined ? { minPassRate } : {}),
          ...(values['require-all-planned'] ? { requireAllPlanned: true } : {}),
          ...(values['require-attribute'].length
            ? { requireAttributes: attributeRules(values['require-attribute']) }
            : {}),
          ...(values.strict ? { strict: true } : {}),
          ...(values.requirements ? { requirements: requirementsRule(values.requirements) } : {}),
          ...(values['requirements-jql'] ? { requirementsJql: values['requirements-jql'] } : {}),
        });
        try {
          const plan = planOf(o.config, values.plan);
          const { cycle, verdict } = await gateCycle(o.reader, plan, cycleOf(o.config, values.cycle, io.env), rules);
          if (values.json) io.out(JSON.stringify({ plan, cycle, ...verdict }, null, 2));
          else {
            io.out(`casebridge gate: cycle "${cycle.name}" of ${plan}: ${verdict.pass ? 'passed' : 'FAILED'}`);
            for (const r of verdict.rules) io.out(`  ${r.pass ? 'pass' : 'FAIL'}  ${r.rule}: ${r.figure}`);
            if (verdict.waived > 0) io.out(`  (${verdict.waived} known or quarantined failure(s) waived)`);
          }
          const summary = io.env.GITHUB_STEP_SUMMARY;
          if (summary) {
            // The verdict stands without its chart: a trend that cannot be read leaves the chart out.
            const trend = await listCycles(o.reader, plan, { limit: 10 }).then(
              (l) => l.cycles.reverse(),
              (err: unknown) => {
                io.err(`casebridge gate: the chart of the last cycles is left out: ${(err as Error).message}`);
                return [];
              },
            );
            const where = { plan, cycle: cycle.name, url: cycle.url };
            appendFileSync(summary, gateMarkdown(verdict, where, trend));
          }
          return verdict.pass ? 0 : 1;
        } finally {
          await o.close();
        }
      },
      2,
    ),
});
