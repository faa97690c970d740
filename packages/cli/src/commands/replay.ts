import { resolve } from 'node:path';
import { Engine } from '@casebridge/core';
import { defineCommand } from '../command-line.js';
import { replayOptions } from '../options.js';
import { paint } from '../output.js';

/** `casebridge replay [dir]`: delivers what earlier runs left in the journal. */
export const replay = defineCommand({
  name: 'replay',
  summary: [['replay [dir]', 'deliver the results a run left in the journal; safe to run twice']],
  usage: 'Usage: casebridge replay [dir] [--json]',
  about: `Delivers what earlier runs left in the journal of the project in dir (default: the current folder;
.casebridge/journal or journalDir). Each entry records what already reached the service, so running it twice, or
after a run that delivered part of it, never creates a second run or defect.`,
  options: { json: { type: 'boolean' } },
  after: `Examples:
  casebridge replay
  CASEBRIDGE_TOKEN=... casebridge replay ./e2e --json`,
  positionals: true,
  async run({ values, positionals }, io) {
    const cwd = resolve(io.cwd, positionals[0] ?? '.');
    const json = values.json;
    // With --json the engine's summary goes to stderr and the machine-readable one to stdout. Progress: a bar that
    // redraws itself on a terminal, a plain line per tenth in CI logs.
    const p = paint(io);
    let lastTenth = -1;
    const onReplay = ({ done, total, key, ok }: { done: number; total: number; key: string; ok: boolean }) => {
      if (io.errTty) {
        const width = 30;
        const filled = Math.round((done / total) * width);
        io.progress(
          `\r${p.green('█'.repeat(filled))}${p.dim('░'.repeat(width - filled))} ${done}/${total} ${ok ? '' : p.red(`${key} not delivered`)}\u001b[K${done === total ? '\n' : ''}`,
        );
        return;
      }
      const tenth = Math.floor((done / total) * 10);
      if (tenth !== lastTenth || !ok || done === total) {
        lastTenth = tenth;
        io.err(`casebridge replay: ${done}/${total} result(s)${ok ? '' : ` (${key} not delivered)`}`);
      }
    };
    // The options the run that journaled had (or, for an older journal, the runner configs' ones).
    const found = await replayOptions(cwd, io.env);
    for (const note of [...found.notes, ...(found.warnings ?? [])]) io.err(`casebridge replay: ${note}`);
    const source = found.source ?? 'reporter options';
    const engine = Engine.create(found.recorded ? {} : found.options, {
      cwd,
      runner: { name: 'junit' },
      env: io.env,
      out: json ? io.err : io.out,
      onReplay,
      ...(found.recorded ? { baseOptions: { options: found.options, source } } : { optionsSource: source }),
    });
    if (!engine.enabled) return 1;
    engine.begin();
    const end = await engine.end();
    const s = end.summary;
    if (json) io.out(JSON.stringify(s, null, 2));
    return s.journaled > 0 || s.problems.length > 0 ? 1 : 0;
  },
});
