import { expandTemplate } from '../config/schema.js';
import type { ResultError, TestResult } from '../kernel/model.js';
import { displayName } from '../kernel/model.js';
import { ciBuildUrl, truncate } from '../kernel/text.js';
import type { FailureGroup } from './groups.js';

/** A defect's summary and description from the templates (variables: packages/core/README.md). */

/** Bound of `${errorFull}` and of the error and stack in the default description. */
const ERROR_MAX = 8000;

export interface DefectTextInput {
  test: TestResult;
  error: ResultError | undefined;
  key: string;
  runId: number;
  runner: string;
  group: FailureGroup;
  /** The closed defect this one is a regression of. */
  regressionOf?: string | undefined;
  env?: NodeJS.ProcessEnv;
}

/** `[cb-<hash>]`: the group's marker, searched for with JQL and read back from the cycle's defect list. */
export function marker(hash: string): string {
  return `cb-${hash}`;
}

export function templateVars(i: DefectTextInput): Record<string, string> {
  const t = i.test;
  const message = i.error?.message ?? 'failed';
  const firstLine = message.split('\n').find((l) => l.trim() !== '') ?? 'failed';
  const line = failedLine(t, i.error);
  const stack = i.error?.stack;
  // A V8 stack starts with the message: then the stack alone holds both.
  const full = stack ? (stack.includes(message.trim()) ? stack : `${message}\n${stack}`) : message;
  return {
    title: t.titlePath[t.titlePath.length - 1] ?? displayName(t),
    test: displayName(t),
    error: firstLine.trim(),
    errorFull: truncate(full, ERROR_MAX * 2),
    file: t.file,
    line: line === undefined ? '' : String(line),
    location: line === undefined ? t.file : `${t.file}:${line}`,
    ciUrl: ciBuildUrl(i.env ?? process.env) ?? '',
    runner: i.runner,
    project: t.project ?? '',
    key: i.key,
  };
}

/** The line of the test file where the test failed: the error's location there, its stack's frame there, or the test's. */
function failedLine(t: TestResult, error: ResultError | undefined): number | undefined {
  const file = t.file.replace(/\\/g, '/');
  const loc = error?.location;
  if (loc?.line !== undefined && loc.file.replace(/\\/g, '/').endsWith(file)) return loc.line;
  for (const raw of (error?.stack ?? '').split('\n')) {
    const m = /((?:[A-Za-z]:)?[^\s()]+?):(\d+)(?::\d+)?\)?\s*$/.exec(raw.replace(/\\/g, '/'));
    if (m?.[1] && m[2] && (m[1] === file || m[1].endsWith(`/${file}`))) return Number(m[2]);
  }
  return t.line;
}

/** The summary on one line, cut to fit, ` [cb-<hash>]` always last (the searches find it; a quoted one is removed). */
export function defectSummary(template: string, vars: Record<string, string>, hash: string, env = process.env) {
  const tag = ` [${marker(hash)}]`;
  const text = expandTemplate(template, vars, env)
    .replace(/\[cb-[0-9a-f]{16}\]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return `${truncate(text || vars.title || 'failed', 255 - tag.length)}${tag}`;
}

/** The description: `template`, or the built-in text; a regression names the closed defect on the first line. */
export function defectDescription(
  template: string | undefined,
  vars: Record<string, string>,
  i: DefectTextInput,
): string {
  const regression = i.regressionOf
    ? `Regression of ${i.regressionOf}: it had the same failure and is closed.`
    : undefined;
  if (template !== undefined) {
    const text = truncate(expandTemplate(template, vars, i.env ?? process.env), 30_000);
    return regression ? `${regression}\n${text}` : text;
  }
  const t = i.test;
  const err = i.error;
  const group = i.group;
  const ci = vars.ciUrl;
  return [
    regression,
    `Test: ${displayName(t)}${t.project ? ` [${t.project}]` : ''} (${i.runner})`,
    `Test case: ${i.key}, run ${i.runId}`,
    group.environment
      ? `Environment error (${group.environment}): every test failing with it links this defect.`
      : group.perTest
        ? undefined
        : `Failure group: ${group.type} at ${group.frame}; other tests failing the same way there link this defect.`,
    ci ? `CI build: ${ci}` : undefined,
    '',
    '{noformat}',
    truncate(err?.message ?? '(no error message)', ERROR_MAX),
    '{noformat}',
    err?.stack ? `{noformat}\n${truncate(err.stack, ERROR_MAX)}\n{noformat}` : undefined,
    `Fingerprint: ${marker(group.hash)}`,
  ]
    .filter((l) => l !== undefined)
    .join('\n');
}
