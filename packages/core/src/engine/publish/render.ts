import type { FailureClass } from '../query/results.js';
import { type CycleReport, countsLine, type ReportFailure } from './report.js';

/** Bitbucket Data Center's limits (service-facts.md): the service refuses a request that passes one. */
export const INSIGHTS = { title: 450, details: 2000, message: 2000, externalId: 449, data: 6, annotations: 1000 };
/** Rows of the failures' table in a pull-request comment; the rest are counted, with the cycle's link. */
export const COMMENT_ROWS = 50;

const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
const where = (f: ReportFailure) => (f.file ? `${f.file}${f.line ? `:${f.line}` : ''}` : '');
const errorOf = (f: ReportFailure) => f.errorLines ?? (f.error ? [f.error] : []);

const SEVERITY: Record<FailureClass, 'HIGH' | 'MEDIUM' | 'LOW'> = {
  new: 'HIGH',
  regression: 'HIGH',
  unclassified: 'HIGH',
  known: 'MEDIUM',
  flaky: 'LOW',
  quarantined: 'LOW',
};

type DataField =
  | { title: string; type: 'NUMBER' | 'PERCENTAGE' | 'DURATION'; value: number }
  | { title: string; type: 'LINK'; value: { linktext: string; href: string } };

export interface InsightsReport {
  title: string;
  details: string;
  result: 'PASS' | 'FAIL';
  reporter: string;
  link: string;
  data: DataField[];
}

export interface InsightsAnnotation {
  message: string;
  severity: 'HIGH' | 'MEDIUM' | 'LOW';
  type: 'BUG';
  path?: string;
  line?: number;
  link: string;
  externalId: string;
}

/**
 * A Code Insights report (the gate's verdict, six data fields) and one annotation per failure at its file and line,
 * worst first, at most 1,000.
 */
export function insights(rep: CycleReport): { report: InsightsReport; annotations: InsightsAnnotation[] } {
  const { tally, classes, verdict } = rep;
  const annotated = rep.failures.slice(0, INSIGHTS.annotations);
  const left = rep.failures.length - annotated.length;
  const failing = verdict.rules.filter((r) => !r.pass).map((r) => `${r.rule}: ${r.figure}`);
  const details = [
    `${verdict.pass ? 'Passed' : 'Failed'} the gate: ${countsLine(rep)}.`,
    ...failing.map((l) => `Failing rule ${l}.`),
    ...(verdict.waived ? [`${verdict.waived} known or quarantined failure(s) waived.`] : []),
    ...(left > 0 ? [`${left} failure(s) not annotated: a report holds at most ${INSIGHTS.annotations}.`] : []),
  ].join(' ');
  const data: DataField[] = [
    { title: 'Passed', type: 'NUMBER', value: tally.passed },
    { title: 'Failed', type: 'NUMBER', value: tally.failed },
    { title: 'New and regressions', type: 'NUMBER', value: classes.new + classes.regression + classes.unclassified },
    ...(verdict.passRate !== undefined
      ? [{ title: 'Pass rate', type: 'PERCENTAGE' as const, value: verdict.passRate }]
      : []),
    rep.durationMs !== undefined
      ? { title: 'Duration', type: 'DURATION', value: Math.round(rep.durationMs) }
      : { title: 'Not run', type: 'NUMBER', value: tally.notRun },
    { title: 'Cycle', type: 'LINK', value: { linktext: cut(rep.cycle.name, 100), href: rep.cycle.url } },
  ];
  return {
    report: {
      title: cut(`casebridge: ${rep.cycle.name} (${rep.plan})`, INSIGHTS.title),
      details: cut(details, INSIGHTS.details),
      result: verdict.pass ? 'PASS' : 'FAIL',
      reporter: 'casebridge',
      link: rep.cycle.url,
      data: data.slice(0, INSIGHTS.data),
    },
    annotations: annotated.map((f) => ({
      message: cut(
        [`${f.classification}: ${f.title}${f.defects.length ? ` (${f.defects.join(', ')})` : ''}`, ...errorOf(f)].join(
          '\n',
        ),
        INSIGHTS.message,
      ),
      severity: SEVERITY[f.classification],
      type: 'BUG',
      ...(f.file ? { path: f.file } : {}),
      ...(f.file && f.line ? { line: f.line } : {}),
      link: f.link,
      externalId: cut(f.key, INSIGHTS.externalId),
    })),
  };
}

/** The hidden line that finds casebridge's comment on a pull request again (one per report key). */
export const commentMarker = (key: string) => `<!-- casebridge-report: ${key} -->`;

const md = (s: string) => s.replace(/\|/g, '\\|').replace(/[<>]/g, (c) => (c === '<' ? '&lt;' : '&gt;'));

/** The pull-request comment: verdict, counts, the gate's rules, failures worst first (at most 50 rows), the link. */
export function commentMarkdown(rep: CycleReport, key: string): string {
  const { verdict } = rep;
  const lines = [
    commentMarker(key),
    `### casebridge: ${verdict.pass ? '✅ PASS' : '❌ FAIL'} — cycle [${md(rep.cycle.name)}](${rep.cycle.url}) of ${rep.plan}`,
    '',
    `**${countsLine(rep)}**${verdict.passRate !== undefined ? ` · pass rate ${verdict.passRate}%` : ''}${
      verdict.waived ? ` · ${verdict.waived} known or quarantined waived` : ''
    }`,
    '',
    '| gate rule | figure | verdict |',
    '|---|---|---|',
    ...verdict.rules.map((r) => `| ${md(r.rule)} | ${md(r.figure)} | ${r.pass ? 'pass' : '**fail**'} |`),
  ];
  const rows = rep.failures.slice(0, COMMENT_ROWS);
  if (rows.length > 0) {
    lines.push('', '| test | where | classification | error | defect |', '|---|---|---|---|---|');
    for (const f of rows) {
      const err = errorOf(f)
        .map((l) => `\`${md(cut(l, 200)).replace(/`/g, "'")}\``)
        .join('<br>');
      const defect = f.defects.length ? `[${f.defects.join(', ')}](${f.link})` : `[run](${f.link})`;
      lines.push(
        `| ${md(`${f.key} ${f.title}`)} | ${where(f) ? `\`${md(where(f))}\`` : ''} | ${f.classification} | ${err} | ${defect} |`,
      );
    }
    const more = rep.failures.length - rows.length;
    if (more > 0) lines.push('', `and ${more} more: [the cycle](${rep.cycle.url})`);
  }
  return `${lines.join('\n')}\n`;
}
