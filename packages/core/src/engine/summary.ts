import type { RunSummary } from './types.js';

/** The command that delivers what waits in the journal, as a user's install runs it. */
export const REPLAY = 'npx @casebridge/cli replay';

/**
 * The CI annotation when results stay behind (GitHub Actions shows it on the run's page), or undefined outside it.
 * A runner's disk goes away with the job: this must not pass unnoticed.
 */
export function ciWarning(s: RunSummary, env: NodeJS.ProcessEnv): string | undefined {
  if (!s.journaled || env.GITHUB_ACTIONS !== 'true') return undefined;
  return `::warning title=casebridge: ${s.journaled} result(s) not delivered::${s.journaled} test result(s) were not delivered to Jira${s.serviceDown ? ` (${s.serviceDown.replace(/[\r\n]+/g, ' ')})` : ''}. They wait in ${s.journalDir}; run \`${REPLAY}\` in this job to deliver them.`;
}

/** Outcomes in the order a reader scans them. */
const ORDER = ['passed', 'flaky', 'failed', 'skipped', 'interrupted'];

function counts(s: RunSummary): string {
  return ORDER.filter((k) => (s.byStatus[k] ?? 0) > 0)
    .map((k) => `${s.byStatus[k]} ${k}`)
    .join(', ');
}

function list(items: readonly string[], max = 10): string[] {
  const shown = items.slice(0, max).map((i) => `    ${i}`);
  if (items.length > max) shown.push(`    … and ${items.length - max} more`);
  return shown;
}

/** At most `max` names on one line, then how many more. */
function shortList(items: readonly string[], max = 10): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} ... and ${items.length - max} more` : shown;
}

/** The end-of-run summary for the console: a few lines, more only when something needs attention. */
export function formatSummary(s: RunSummary): string {
  const lines: string[] = [];
  const head = s.dryRun ? 'casebridge (dry run: nothing was sent)' : 'casebridge';
  const shard = s.shard ? `, shard ${s.shard.current}/${s.shard.total}` : '';
  lines.push(`${head}: ${s.results} test result(s)${s.results ? ` (${counts(s)})` : ''}, mode ${s.mode}${shard}`);
  if (s.cycle) lines.push(`  cycle "${s.cycle.name}" (id ${s.cycle.id}) of test plan ${s.cycle.plan}`);
  if (!s.dryRun) lines.push(`  delivered ${s.delivered} run result(s)`);
  if (s.replayed) lines.push(`  ${s.replayed} result(s) of an earlier run taken from the journal`);
  if (s.defects.created.length) lines.push(`  defects created: ${s.defects.created.join(', ')}`);
  if (s.defects.linked.length) lines.push(`  defects linked: ${s.defects.linked.join(', ')}`);
  if (s.attachments.uploaded) lines.push(`  attachments uploaded: ${s.attachments.uploaded}`);
  if (s.attachments.stored.length) lines.push(`  stored in the content repository: ${s.attachments.stored.join(', ')}`);
  if (s.attachments.skipped.length) {
    lines.push(
      `  not uploaded (too large, or outside the project; the run comments say which): ${s.attachments.skipped.join(', ')}`,
    );
  }
  if (s.createdCases.length) {
    const where = s.dryRun || !s.mappingFile ? '' : ` (every test's key is in ${s.mappingFile}: commit it)`;
    lines.push(`  ${s.createdCases.length} test case(s) created${where}: ${shortList(s.createdCases)}`);
  }
  if (s.duplicateCases?.length) {
    lines.push(
      `  ${s.duplicateCases.length} test case(s) were created by another machine at the same moment: the older ones were used, these are unused duplicates: ${shortList(s.duplicateCases.map((d) => d.key))}`,
    );
  }
  if (s.unmapped.length) {
    lines.push(`  ${s.unmapped.length} test(s) without a case key (add one to the title, or use autoCreate):`);
    lines.push(...list(s.unmapped));
    if (s.unmapped.length > 10) lines.push('    (`npx @casebridge/cli sync --dry-run` lists them all)');
  }
  if (s.calls) lines.push(`  ${s.calls.length} call(s) would have been made (CASEBRIDGE_DEBUG=1 lists them)`);
  if (s.serviceDown) lines.push(`  stopped delivering: ${s.serviceDown}`);
  if (s.problems.length) {
    lines.push(`  ${s.problems.length} problem(s):`);
    lines.push(...list(s.problems, 20));
  }
  if (s.journaled) {
    lines.push(
      `  ${s.journaled} result(s) not delivered: kept in ${s.journalDir}; deliver them now with \`${REPLAY}\` in the project folder (a CI runner's disk goes away with the job: run it there, or keep the folder as a cache), or the next run on this machine delivers them`,
    );
  }
  return lines.join('\n');
}

/** The same summary as markdown, for $GITHUB_STEP_SUMMARY. */
export function markdownSummary(s: RunSummary): string {
  const rows = ORDER.filter((k) => (s.byStatus[k] ?? 0) > 0).map((k) => `| ${k} | ${s.byStatus[k]} |`);
  const out = [`### casebridge${s.dryRun ? ' (dry run)' : ''}`, ''];
  if (s.cycle) out.push(`Cycle **${s.cycle.name}** (id ${s.cycle.id}) of test plan ${s.cycle.plan}`, '');
  out.push('| outcome | tests |', '|---|---|', ...rows, '');
  if (s.defects.created.length) out.push(`Defects created: ${s.defects.created.join(', ')}`, '');
  if (s.defects.linked.length) out.push(`Defects linked: ${s.defects.linked.join(', ')}`, '');
  if (s.unmapped.length) out.push(`${s.unmapped.length} test(s) without a case key`, '');
  if (s.problems.length) out.push('Problems:', '', ...s.problems.map((p) => `- ${p}`), '');
  if (s.journaled) {
    out.push(
      `**${s.journaled} result(s) not delivered**: they wait in \`${s.journalDir}\` on the runner; deliver them with \`${REPLAY}\` in the same job, or keep the folder as a cache`,
      '',
    );
  }
  return out.join('\n');
}
