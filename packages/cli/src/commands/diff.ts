import { type CycleChange, type CycleComparison, compareCycles } from '@casebridge/core/internal';
import { defineCommand, UsageError } from '../command-line.js';
import { answer, CYCLE, JSON_OPTION, LIMIT, PLAN } from '../query/options.js';
import { cycleOf, openReader, planOf } from '../query/reader.js';

/** `casebridge diff --base CYCLE`: what changed between two cycles (core's compareCycles). */
export const diff = defineCommand({
  name: 'diff',
  summary: [['diff --base C [--cycle C] [--plan K] [--json]', 'what broke, what was fixed, between two cycles']],
  usage: 'Usage: casebridge diff --base C [--cycle C] [--plan KEY] [--limit N] [--json]',
  about: `A cycle against an earlier one (--base) of the same plan: tests newly failing (failed now; passed, not run
or absent before), fixed (failed before, passed now), still failing the same way or another way (by the failure's
signature, which the reporters write in the run comment), new tests, and tests not run any more (a result before,
none now). Each with its key and title, and for failures the classification, file and line, the meaningful error
lines and the defects. 3 requests at any size.`,
  options: {
    base: { type: 'string', value: 'C', description: ['the cycle to compare against: a name, #ID or id (required)'] },
    cycle: CYCLE,
    plan: PLAN,
    limit: { ...LIMIT, description: ['at most N tests in each list (default 50); the counts count all'] },
    json: JSON_OPTION,
  },
  after: `Examples:
  casebridge diff --base "Nightly 41" --cycle "Nightly 42"
  casebridge diff --base "#41" --json | jq -r '.newlyFailing[].key'`,
  positionals: false,
  run: ({ values }, io) =>
    answer(io, 'diff', async () => {
      if (!values.base) throw new UsageError('name the cycle to compare against: casebridge diff --base CYCLE');
      const o = await openReader(io.cwd, io.env);
      try {
        const plan = planOf(o.config, values.plan);
        const out = await compareCycles(o.reader, plan, values.base, cycleOf(o.config, values.cycle, io.env), {
          ...(values.limit !== undefined ? { limit: values.limit } : {}),
        });
        io.out(values.json ? JSON.stringify(out, null, 2) : text(out));
        return 0;
      } finally {
        await o.close();
      }
    }),
});

function text(d: CycleComparison): string {
  const out = [`Cycle "${d.cycle.name}" against "${d.base.name}" of ${d.plan}:`];
  const section = (title: string, count: number, items: readonly CycleChange[], failures = true) => {
    out.push('', `${title}: ${count}`);
    for (const c of items) {
      const f = c.failure;
      const where = f?.file ? ` (${f.file}${f.line !== undefined ? `:${f.line}` : ''})` : '';
      const facts = failures && f ? [f.classification, ...f.defects] : [c.cycle ?? 'no run'];
      out.push(`  ${c.key} ${c.title}${c.set ? ` [${c.set}]` : ''}${where}: ${facts.join(', ')}`);
      if (failures && f?.errorLines) out.push(...f.errorLines.map((l) => `      ${l}`));
      if (c.before?.errorLines) out.push('    before:', ...c.before.errorLines.map((l) => `      ${l}`));
    }
    if (items.length < count) out.push(`  … and ${count - items.length} more (--limit)`);
  };
  const n = d.counts;
  section('newly failing', n.newlyFailing, d.newlyFailing);
  section('fixed', n.fixed, d.fixed, false);
  section('still failing the same way', n.stillFailingSame, d.stillFailing.same);
  section('still failing another way', n.stillFailingOther, d.stillFailing.other);
  section('new tests', n.newTests, d.newTests, false);
  section('not run any more', n.notRunAnyMore, d.notRunAnyMore, false);
  return out.join('\n');
}
