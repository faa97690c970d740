import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningEmulator } from '@casebridge/emulator';
import { beforeAll, describe, expect, it } from 'vitest';
import { base, ctx, last, project, report, result, useEngineWorld } from '../support/engine-world.js';

/**
 * What the engine writes besides requests, against the real emulator over real HTTP: the markdown step summary, the
 * links to the cycle and each failure (console, step summary, GitHub annotations), and the dry-run file.
 */

const world = useEngineWorld();
let emu: RunningEmulator;
beforeAll(() => {
  emu = world.emulator();
});

describe('summary and dry run', () => {
  it('writes the markdown summary to $GITHUB_STEP_SUMMARY of the context, after what is there', async () => {
    const dir = project();
    const file = join(dir, 'step-summary.md');
    writeFileSync(file, 'earlier step\n');
    const options = base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI summary' });
    const end = await report(
      options,
      [result('DEMO-2 a', 'passed'), result('DEMO-5 b', 'failed'), result('no key', 'passed')],
      ctx(dir, [], { GITHUB_STEP_SUMMARY: file }),
    );
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('earlier step\n### casebridge\n')).toBe(true);
    const id = end.summary.cycle?.id;
    expect(text).toContain(
      `Cycle [CI summary](${emu.url}/browse/DEMO-1?cycle=${id}) (id ${id}) of test plan [DEMO-1](${emu.url}/browse/DEMO-1)`,
    );
    expect(text).toContain('| passed | 2 |');
    expect(text).toContain('| failed | 1 |');
    const bug = end.summary.defects.created[0] as string;
    expect(text).toContain(`Defects created: [${bug}](${emu.url}/browse/${bug})`);
    expect(text).toContain('1 test(s) without a case key');
  });

  it('links the cycle and each failure (case, run, defect) in the console, the step summary and annotations', async () => {
    const dir = project();
    const file = join(dir, 'step-summary.md');
    const lines: string[] = [];
    const failing = result('DEMO-5 pays | with a card', 'failed');
    last(failing).errors = [{ message: 'expected 200\nreceived 500', location: { file: failing.file, line: 17 } }];
    const options = base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI links', annotations: true });
    const end = await report(
      options,
      [result('DEMO-2 a', 'passed'), failing],
      ctx(dir, lines, { GITHUB_STEP_SUMMARY: file, GITHUB_ACTIONS: 'true' }),
    );
    const s = end.summary;
    const cycle = `${emu.url}/browse/DEMO-1?cycle=${s.cycle?.id}`;
    const bug = s.defects.created[0] as string;
    const tc = emu.store.issues.find((i) => i.key === 'DEMO-5');
    const run = emu.store.runs.find((r) => r.cycleId === s.cycle?.id && r.tcId === tc?.id);
    expect(run).toBeDefined();
    expect(s.cycle?.url).toBe(cycle);
    expect(s.failures).toEqual([
      {
        test: `${failing.file} > DEMO-5 pays | with a card`,
        file: failing.file,
        line: 17,
        key: 'DEMO-5',
        message: 'expected 200',
        details: ['received 500'],
        runId: run?.id,
        defect: bug,
        defectCreated: true,
        classification: 'new',
        caseUrl: `${emu.url}/browse/DEMO-5`,
        runUrl: `${cycle}&run=${run?.id}#run-${run?.id}`,
        defectUrl: `${emu.url}/browse/${bug}`,
      },
    ]);
    const printed = lines.join('\n');
    expect(printed).toContain(`cycle "CI links" (id ${s.cycle?.id}) of test plan DEMO-1: ${cycle}`);
    expect(printed).toContain(`    ${bug}  ${emu.url}/browse/${bug}`);
    // The failure, classified from its case's history (new ones and regressions first).
    expect(printed).toContain(
      '  failures: 1 (1 new)\n    new  DEMO-5  t.spec.ts > DEMO-5 pays | with a card (t.spec.ts:17): expected 200\n         received 500',
    );
    const annotation = lines.find((l) => l.startsWith('::error '));
    expect(annotation).toBe(
      `::error file=${failing.file},line=17,title=casebridge%3A DEMO-5 failed::expected 200%0Atest: ${failing.file} > DEMO-5 pays | with a card%0Acase: ${emu.url}/browse/DEMO-5%0Arun: ${cycle}&run=${run?.id}#run-${run?.id}%0Anew defect: ${emu.url}/browse/${bug}`,
    );
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('#### Failures (1)');
    expect(text).toContain(
      `| t.spec.ts \\> DEMO-5 pays \\| with a card<br>expected 200<br>t.spec.ts:17 | new | [DEMO-5](${emu.url}/browse/DEMO-5) | [run ${run?.id}](${cycle}&run=${run?.id}#run-${run?.id}) | [${bug}](${emu.url}/browse/${bug}) (new) |`,
    );
  });

  it('prints no annotations unless asked, and none outside GitHub Actions', async () => {
    const dir = project();
    for (const [annotations, env] of [
      [false, { GITHUB_ACTIONS: 'true' }],
      [true, {}],
    ] as const) {
      const lines: string[] = [];
      const options = base(emu.url, { defects: { enabled: false }, annotations });
      await report(options, [result('DEMO-5 b', 'failed')], ctx(dir, lines, env));
      expect(lines.some((l) => l.startsWith('::error'))).toBe(false);
    }
  });

  it('dryRun with a path writes the calls it would make there as JSON and sends nothing', async () => {
    const dir = project();
    emu.clearRequests();
    const end = await report(
      base(emu.url, { mode: 'cycle', testPlan: 'DEMO-1', cycle: 'CI dry', dryRun: 'calls.json' }),
      [result('DEMO-2 a', 'passed'), result('DEMO-5 b', 'failed')],
      ctx(dir, []),
    );
    expect(emu.requests().filter((r) => !r.path.startsWith('/__emulator'))).toEqual([]);
    const written = JSON.parse(readFileSync(join(dir, 'calls.json'), 'utf8')) as { calls: string[] };
    expect(written.calls).toEqual(end.summary.calls);
    const names = written.calls.map((c) => c.split(' ')[0]);
    expect(names).toEqual(
      expect.arrayContaining(['plans.addCycle', 'cycles.workflow', 'runs.bulkStatusUpdate', 'runs.update']),
    );
    expect(written.calls.find((c) => c.startsWith('runs.update'))).toContain('"result":"Failed"');
    expect(emu.store.cycles.filter((c) => c.name === 'CI dry')).toEqual([]);
  });
});
