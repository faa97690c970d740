import type { QuarantineStats } from '../defects/quarantine.js';
import type { FailureLine, RunSummary } from '../kernel/types.js';
import { issueUrl } from './links.js';

/** The command that delivers what waits in the journal, as a user's install runs it. */
export const REPLAY = 'npx @casebridge/cli replay';

/** The CI annotation when results stay behind, as a runner's disk goes away with the job; undefined outside CI. */
export function ciWarning(s: RunSummary, env: NodeJS.ProcessEnv): string | undefined {
  if (!s.journaled || env.GITHUB_ACTIONS !== 'true') return undefined;
  return `::warning title=casebridge: ${s.journaled} result(s) not delivered::${s.journaled} test result(s) were not delivered to Jira${s.serviceDown ? ` (${s.serviceDown.replace(/[\r\n]+/g, ' ')})` : ''}. They wait in ${s.journalDir}; run \`${REPLAY}\` in this job to deliver them.`;
}

/** GitHub shows at most 10 error annotations of a step. */
const MAX_ANNOTATIONS = 10;

/** A workflow command's message: `%`, CR and LF escaped. */
function commandData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A workflow command's property value: also `:` and `,`. */
function commandProperty(text: string): string {
  return commandData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** `::error` annotations for failing tests (`annotations: true`), each on the test's file and line, with its links. */
export function ciAnnotations(s: RunSummary, env: NodeJS.ProcessEnv): string[] {
  if (env.GITHUB_ACTIONS !== 'true' || !s.failures?.length) return [];
  return s.failures.slice(0, MAX_ANNOTATIONS).map((f) => {
    const props = [`file=${commandProperty(f.file)}`];
    if (f.line !== undefined) props.push(`line=${f.line}`);
    props.push(`title=${commandProperty(`casebridge: ${f.key} failed`)}`);
    const parts = [f.message ?? 'failed', `test: ${f.test}`, `case: ${f.caseUrl ?? f.key}`];
    if (f.runUrl) parts.push(`run: ${f.runUrl}`);
    if (f.defect) parts.push(`${f.defectCreated ? 'new defect' : 'defect'}: ${f.defectUrl ?? f.defect}`);
    return `::error ${props.join(',')}::${commandData(parts.join('\n'))}`;
  });
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

/** The order a reader acts on failures: what is new or came back first, then what is known, then flaky ones. */
const CLASS_ORDER = ['new', 'regression', 'known', 'flaky', 'quarantined'];

/** The failures, new ones and regressions first (the run's order otherwise); unclassified ones last. */
function byClassification(failures: readonly FailureLine[]): FailureLine[] {
  const rank = (f: FailureLine) => (f.classification ? CLASS_ORDER.indexOf(f.classification) : CLASS_ORDER.length);
  return [...failures].sort((a, b) => rank(a) - rank(b));
}

/** The classified failures for the console: counts per kind, then at most 10, new and regressions first. */
function failureLines(s: RunSummary): string[] {
  const failures = s.failures ?? [];
  if (!failures.some((f) => f.classification)) return [];
  const total = failures.length + (s.failuresOmitted ?? 0);
  const kinds = CLASS_ORDER.map((c) => [c, failures.filter((f) => f.classification === c).length] as const)
    .filter(([, n]) => n > 0)
    .map(([c, n]) => `${n} ${c}`);
  const width = Math.max(...failures.map((f) => (f.classification ?? '').length));
  const lines = byClassification(failures).map((f) => {
    const at = f.line !== undefined ? ` (${f.file}:${f.line})` : '';
    const what = `${(f.classification ?? '').padEnd(width)}  ${f.key}  ${f.test}${at}`;
    // The lines that say what differed, under it: what a reader acts on.
    const details = (f.details ?? []).map((l) => `\n${' '.repeat(width + 6)}${l}`).join('');
    return `${f.message ? `${what}: ${f.message}` : what}${details}`;
  });
  return [`  failures: ${total} (${kinds.join(', ')})`, ...list(lines)];
}

/** The command that prints the quarantined cases as a pattern the runner can leave out. */
export const QUARANTINED_KEYS = 'npx @casebridge/cli cycle keys --quarantined';

/** What the quarantine did: an unreadable set, quarantined failures (and how to leave them out), cases that passed. */
function quarantineLines(s: RunSummary): string[] {
  const q = s.quarantine;
  if (!q) return [];
  const label = `label ${q.label}`;
  if (q.problem !== undefined) {
    // Sending stopped for that very reason: `stopped delivering` says it once, with the fix.
    if (s.serviceDown && q.problem.includes(s.serviceDown)) return [];
    return [`  quarantine (${label}): could not be read (${q.problem}); failures were reported without it`];
  }
  const lines: string[] = [];
  if (q.marked) lines.push(`  quarantine (${label}): ${q.marked} test(s) ran expected to fail`);
  if (q.failed.length) {
    lines.push(
      `  ${q.failed.length} quarantined case(s) failed (${label}): reported, no new defect: ${shortList(q.failed)}`,
    );
    if (!q.marked) {
      lines.push(
        `    to leave them out of the run: \`${QUARANTINED_KEYS} --runner <playwright|vitest|jest>\` prints a pattern (Playwright: --grep-invert; Vitest and Jest: -t)`,
      );
    }
  }
  if (q.passed.length) {
    lines.push(
      `  ${q.passed.length} quarantined case(s) passed: ${shortList(q.passed)}; remove the ${label} (or close its bug) to lift the quarantine`,
    );
  }
  const expired = (q as QuarantineStats).expired ?? [];
  if (expired.length) {
    lines.push(
      `  ${expired.length} quarantine(s) expired, no longer applied (${label}): ${shortList(expired)}; \`casebridge quarantine list\` shows them (remove, or add again with a later --until)`,
    );
  }
  const unread = (q as QuarantineStats).capUnread;
  if (unread !== undefined) {
    lines.push(`  quarantine cap not checked (the cases could not be counted: ${unread}): every quarantine applied`);
  }
  const over = (q as QuarantineStats).overCap;
  if (over) {
    lines.push(
      `  ${over.keys.length} quarantine(s) past the cap, not applied (${label}): ${shortList(over.keys)}; quarantine.max ${over.max} allows ${over.allowed} of the ${over.total} cases of ${over.of} (those made with casebridge quarantine add first): end some (casebridge quarantine remove KEY) or raise quarantine.max`,
    );
  }
  return lines;
}

/** What `select` did: the cycle and what it selected, the cycle's cases no test maps, or why it was not applied. */
function selectionLines(s: RunSummary): string[] {
  const sel = s.selection;
  if (!sel) return [];
  const cycle = `cycle "${sel.cycle}"${sel.cycleId !== undefined ? ` (#${sel.cycleId})` : ''}${sel.plan ? ` of ${sel.plan}` : ''}`;
  if (sel.problem) return [`  select (${cycle}): ${sel.problem}; every test ran`];
  const filters = sel.filters.length ? ` (${sel.filters.join(' and ')})` : '';
  const lines = [
    `  select: ${sel.cases} case(s) of ${cycle}${filters}: ${sel.selected} of ${sel.tests} test(s) selected`,
  ];
  if (sel.uncovered.length) {
    lines.push(`  ${sel.uncovered.length} case(s) of the cycle have no test: ${shortList(sel.uncovered)}`);
  }
  return lines;
}

/** The end-of-run summary for the console: a few lines, more only when something needs attention. */
export function formatSummary(s: RunSummary): string {
  const lines: string[] = [];
  const head = s.dryRun ? 'casebridge (dry run: nothing was sent)' : 'casebridge';
  const shard = s.shard ? `, shard ${s.shard.current}/${s.shard.total}` : '';
  lines.push(`${head}: ${s.results} test result(s)${s.results ? ` (${counts(s)})` : ''}, mode ${s.mode}${shard}`);
  if (s.cycle) {
    const url = s.cycle.url ? `: ${s.cycle.url}` : '';
    lines.push(`  cycle "${s.cycle.name}" (id ${s.cycle.id}) of test plan ${s.cycle.plan}${url}`);
  }
  if (!s.dryRun) lines.push(`  delivered ${s.delivered} run result(s)`);
  if (s.replayed) lines.push(`  ${s.replayed} result(s) of an earlier run taken from the journal`);
  lines.push(...failureLines(s));
  lines.push(...quarantineLines(s));
  lines.push(...selectionLines(s));
  if (s.defects.created.length && s.url) {
    const base = s.url;
    lines.push(`  defects created: ${s.defects.created.length}`);
    lines.push(...list(s.defects.created.map((key) => `${key}  ${issueUrl(base, key)}`)));
  } else if (s.defects.created.length) {
    lines.push(`  defects created: ${s.defects.created.join(', ')}`);
  }
  if (s.defects.linked.length) lines.push(`  defects linked: ${s.defects.linked.join(', ')}`);
  if (s.defects.notFiled) lines.push(`  ${notFiledLine(s.defects)}`);
  lines.push(...notFiledGroups(s.defects).map((g) => `    ${g}`));
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
  if (s.requirements) {
    const r = s.requirements;
    lines.push(
      `  requirements: ${r.requirements} named, ${r.linked} new case link(s)${s.calls ? ' (would be made)' : ''}`,
    );
    for (const p of r.problems) lines.push(`  warning: ${p}`);
  }
  for (const p of s.published ?? []) lines.push(`  ${p.ok ? '' : 'warning: '}${p.line}`);
  const undecided = s.undecided?.keys.length ?? 0;
  if (s.undecided && undecided) {
    lines.push(
      `  ${undecided} failure(s) have their status, but not their classification and defect: ${s.undecided.reason}; kept in ${s.journalDir}: \`${REPLAY}\` or the next run files them: ${shortList(s.undecided.keys)}`,
    );
  }
  if (s.journaled > undecided) {
    lines.push(
      `  ${s.journaled - undecided} result(s) not delivered: kept in ${s.journalDir}; deliver them now with \`${REPLAY}\` in the project folder (a CI runner's disk goes away with the job: run it there, or keep the folder as a cache), or the next run on this machine delivers them`,
    );
  }
  return lines.join('\n');
}

/** Text inside a markdown table cell: no line breaks, no cell separators, no markup of its own. */
function cell(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/([\\`*_[\]<>|])/g, '\\$1')
    .trim();
}

function link(text: string, url: string | undefined): string {
  return url ? `[${cell(text)}](${url})` : cell(text);
}

/** Rows of the failures table in the step summary; the rest are counted. */
const MAX_FAILURE_ROWS = 50;

function failureTable(s: RunSummary): string[] {
  const failures = s.failures ?? [];
  if (!failures.length) return [];
  const total = failures.length + (s.failuresOmitted ?? 0);
  // A column for the classification when the run classified its failures (option `history`), new ones first.
  const classified = failures.some((f) => f.classification);
  const out = [
    `#### Failures (${total})`,
    '',
    classified ? '| test | class | case | run | defect |' : '| test | case | run | defect |',
    classified ? '|---|---|---|---|---|' : '|---|---|---|---|',
  ];
  for (const f of (classified ? byClassification(failures) : failures).slice(0, MAX_FAILURE_ROWS)) {
    const where = f.line !== undefined ? `${f.file}:${f.line}` : f.file;
    const test = `${cell(f.test)}${f.message ? `<br>${cell(f.message)}` : ''}<br>${cell(where)}`;
    const run = f.runId !== undefined ? link(`run ${f.runId}`, f.runUrl) : '';
    const defect = f.defect ? `${link(f.defect, f.defectUrl)}${f.defectCreated ? ' (new)' : ''}` : '';
    const kind = classified ? ` ${f.classification ?? ''} |` : '';
    out.push(`| ${test} |${kind} ${link(f.key, f.caseUrl)} | ${run} | ${defect} |`);
  }
  if (total > MAX_FAILURE_ROWS) {
    const more = `… and ${total - MAX_FAILURE_ROWS} more`;
    out.push('', s.cycle?.url ? `${more}: [the cycle](${s.cycle.url}) lists them all` : more);
  }
  out.push('');
  return out;
}

/** Failures that got no defect: how many and why (the cap, `defects.maxPerRun`). */
function notFiledLine(d: RunSummary['defects']): string {
  return `${d.notFiled} failure(s) not filed as defects: ${d.notFiledReason ?? 'the cap of new defects was reached'}`;
}

/** The groups of failures left without a defect, largest first: at most 10 lines, then how many more. */
function notFiledGroups(d: RunSummary['defects']): string[] {
  const groups = d.notFiledGroups ?? [];
  const lines = groups.slice(0, 10).map((g) => `${g.label} (${g.tests} test${g.tests === 1 ? '' : 's'})`);
  if (groups.length > 10) lines.push(`... and ${groups.length - 10} more group(s)`);
  return lines;
}

function keyLinks(keys: readonly string[], base: string | undefined): string {
  return keys.map((k) => (base ? link(k, issueUrl(base, k)) : k)).join(', ');
}

/** The same summary as markdown, for $GITHUB_STEP_SUMMARY: counts, links, and the failures with theirs. */
export function markdownSummary(s: RunSummary): string {
  const rows = ORDER.filter((k) => (s.byStatus[k] ?? 0) > 0).map((k) => `| ${k} | ${s.byStatus[k]} |`);
  const out = [`### casebridge${s.dryRun ? ' (dry run)' : ''}`, ''];
  if (s.cycle) {
    const name = s.cycle.url ? `[${cell(s.cycle.name)}](${s.cycle.url})` : `**${cell(s.cycle.name)}**`;
    out.push(`Cycle ${name} (id ${s.cycle.id}) of test plan ${keyLinks([s.cycle.plan], s.url)}`, '');
  }
  out.push('| outcome | tests |', '|---|---|', ...rows, '');
  out.push(...failureTable(s));
  if (s.defects.created.length) out.push(`Defects created: ${keyLinks(s.defects.created, s.url)}`, '');
  if (s.defects.linked.length) out.push(`Defects linked: ${keyLinks(s.defects.linked, s.url)}`, '');
  if (s.defects.notFiled) {
    const groups = notFiledGroups(s.defects).map((g) => `- ${cell(g)}`);
    out.push(notFiledLine(s.defects), '', ...(groups.length ? [...groups, ''] : []));
  }
  const q = s.quarantine;
  if (q?.failed.length) out.push(`Quarantined (label \`${q.label}\`), failed: ${keyLinks(q.failed, s.url)}`, '');
  if (q?.passed.length) out.push(`Quarantined (label \`${q.label}\`), passed: ${keyLinks(q.passed, s.url)}`, '');
  const expired = (q as QuarantineStats | undefined)?.expired ?? [];
  if (q && expired.length) out.push(`Quarantine expired (label \`${q.label}\`): ${keyLinks(expired, s.url)}`, '');
  const over = (q as QuarantineStats | undefined)?.overCap;
  if (q && over) {
    out.push(
      `Quarantine past the cap, not applied (label \`${q.label}\`, quarantine.max ${over.max}: ${over.allowed} of ${over.total}): ${keyLinks(over.keys, s.url)}`,
      '',
    );
  }
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
