/** The CI job's URL, for comments and defects (GitHub Actions, GitLab, Jenkins, Azure, CircleCI, Buildkite). */
export function ciBuildUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID) {
    return `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`;
  }
  return env.CI_JOB_URL ?? env.BUILD_URL ?? env.CIRCLE_BUILD_URL ?? env.BUILDKITE_BUILD_URL ?? undefined;
}

export function truncate(s: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strip ANSI colour codes from runner messages.
  const clean = s.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}
