import { redact } from '../client/secrets.js';

/** The CI job's URL, for comments and defects (GitHub Actions, GitLab, Jenkins, Azure, CircleCI, Buildkite). */
export function ciBuildUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID) {
    return `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`;
  }
  return env.CI_JOB_URL ?? env.BUILD_URL ?? env.CIRCLE_BUILD_URL ?? env.BUILDKITE_BUILD_URL ?? undefined;
}

/**
 * Text from a test (error messages, stacks) on its way into a run comment or a defect: ANSI colours stripped, the
 * configured secrets redacted (a test that prints the token must not publish it in Jira), then cut to `max`.
 */
export function truncate(s: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strip ANSI colour codes from runner messages.
  const clean = redact(s.replace(/\u001b\[[0-9;]*[A-Za-z]/g, ''));
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}
