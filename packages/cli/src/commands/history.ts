import { caseHistory } from '@casebridge/core/internal';
import { defineCommand, UsageError } from '../command-line.js';
import { answer, CURSOR, JSON_OPTION, LIMIT } from '../query/options.js';
import { openReader } from '../query/reader.js';
import { table } from '../query/table.js';

/** `casebridge history KEY`: a case's last runs and flips (core's caseHistory). */
export const history = defineCommand({
  name: 'history',
  summary: [['history KEY [--json]', "a case's last runs across cycles and ad hoc, and how often it flipped"]],
  usage: 'Usage: casebridge history KEY [--limit N] [--cursor C] [--json]',
  about: `A test case's last runs (newest first): status, cycle, date, defects, the classification the reporter
wrote; and how often its result flipped between pass and fail over its last 10 executed runs (2 or more: the
reporters classify its failures flaky). One request.`,
  options: { limit: { ...LIMIT, description: ['at most N runs (default 20)'] }, cursor: CURSOR, json: JSON_OPTION },
  after: `Examples:
  casebridge history PROJ-12
  casebridge history PROJ-12 --json --limit 50`,
  positionals: true,
  run: ({ values, positionals }, io) =>
    answer(io, 'history', async () => {
      const key = positionals[0];
      if (!key || positionals.length > 1) throw new UsageError('name one test case: casebridge history KEY');
      const o = await openReader(io.cwd, io.env);
      try {
        const out = await caseHistory(o.reader, key, {
          ...(values.limit ? { limit: values.limit } : {}),
          ...(values.cursor ? { cursor: values.cursor } : {}),
        });
        if (values.json) io.out(JSON.stringify(out, null, 2));
        else {
          const flaky = out.flaky ? ': flaky' : '';
          io.out(
            `${key}: ${out.runs.length} run(s), ${out.flips} flip(s) in its last 10 executed${flaky} (${out.url})`,
          );
          io.out(
            table(
              ['date', 'status', 'cycle', 'classification', 'defects'],
              out.runs.map((r) => [r.date ?? '', r.status, r.cycle, r.classification ?? '', r.defects.join(' ')]),
            ),
          );
          if (out.next) io.out(`more: --cursor ${out.next}`);
        }
        return 0;
      } finally {
        await o.close();
      }
    }),
});
