import { ANSI } from '../../adapter/text.js';
import { redact } from '../../client/secrets.js';

/** The CI job's URL, for comments and defects (GitHub Actions, GitLab, Jenkins, Azure, CircleCI, Buildkite). */
export function ciBuildUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID) {
    return `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`;
  }
  return env.CI_JOB_URL ?? env.BUILD_URL ?? env.CIRCLE_BUILD_URL ?? env.BUILDKITE_BUILD_URL ?? undefined;
}

/** This pipeline run across its machines: `CASEBRIDGE_PIPELINE_ID`, or the CI's run id with its attempt. */
export function pipelineId(env: NodeJS.ProcessEnv): string | undefined {
  const id =
    env.CASEBRIDGE_PIPELINE_ID ??
    (env.GITHUB_RUN_ID ? `gh-${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? '1'}` : undefined) ??
    (env.CI_PIPELINE_ID ? `gl-${env.CI_PIPELINE_ID}` : undefined) ??
    env.BUILD_TAG ??
    (env.BUILD_BUILDID ? `az-${env.BUILD_BUILDID}` : undefined) ??
    (env.CIRCLE_WORKFLOW_ID ? `cc-${env.CIRCLE_WORKFLOW_ID}` : undefined) ??
    (env.BUILDKITE_BUILD_ID ? `bk-${env.BUILDKITE_BUILD_ID}-${env.BUILDKITE_RETRY_COUNT ?? '0'}` : undefined);
  const clean = id?.replace(/\s+/g, '-').slice(0, 100);
  return clean || undefined;
}

/** The line of a run comment that names the pipeline run which wrote it. */
export function pipelineMarker(pipeline: string): string {
  return `casebridge-pipeline: ${pipeline}`;
}

/** Test text on its way into Jira: colours stripped, secrets redacted (a printed token must not be published), cut. */
export function truncate(s: string, max: number): string {
  const clean = redact(s.replace(ANSI, ''));
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** Lines of an error that say what differed: a matcher's Expected, Received and diff lines, a locator. */
const TELLING = /^\s*(Expected|Received|Locator|Difference|[-+] |[-+]\s*(Expected|Received))/;

/**
 * An error message's meaningful lines, at most `max`: the first line and what differed (expected/received, diffs,
 * locators), uncoloured, without stack frames or Playwright's call log.
 */
export function errorLines(message: string, max = 8): string[] {
  const lines: string[] = [];
  for (const raw of message.replace(ANSI, '').split('\n')) {
    if (/^\s*Call log:/.test(raw) || /^\s+at .+(:\d+|\))$/.test(raw)) break;
    if (raw.trim()) lines.push(raw.trimEnd());
  }
  if (lines.length <= max) return lines;
  const [first = '', ...rest] = lines;
  const telling = rest.filter((l) => TELLING.test(l));
  return [first, ...(telling.length ? telling : rest)].slice(0, max);
}

/** Where a failure is, `path:line` from the repository root: the failing line in the test's file, else the test's. */
export function failureAt(
  t: {
    file: string;
    line?: number;
    attempts: ReadonlyArray<{ errors: ReadonlyArray<{ location?: { file: string; line?: number } }> }>;
  },
  prefix = '',
): string {
  const errs = t.attempts.at(-1)?.errors ?? [];
  const inFile = errs.find((e) => e.location?.file === t.file && e.location.line !== undefined)?.location?.line;
  const line = inFile ?? t.line;
  const path = prefix ? `${prefix.replace(/\/$/, '')}/${t.file}` : t.file;
  return line !== undefined ? `${path}:${line}` : path;
}
