import { anyTarget, clientSettings, commitOf, cycleReport, publishReport, targetsOf } from '@casebridge/core/internal';
import { defineCommand } from '../command-line.js';
import { answer, CYCLE, JSON_OPTION, PLAN } from '../query/options.js';
import { cycleOf, openReader, planOf } from '../query/reader.js';

/** `casebridge publish`: a cycle's report to the pull request (core's publish/: the gate's verdict, read back). */
export const publish = defineCommand({
  name: 'publish',
  summary: [['publish [--plan K] [--cycle C] [--commit SHA]', "a cycle's report to the pull request and commit"]],
  usage: 'Usage: casebridge publish [--plan KEY] [--cycle C] [--commit SHA] [--dry-run] [--json]',
  about: `Posts a cycle's report where the code is reviewed, as every reporter does at the end of its run: the
gate's verdict (the same rules as casebridge gate), the counts, the pass rate and each failure with its file,
line, classification, error and defect. Bitbucket Data Center: a Code Insights report on the commit, one
annotation per failed test and a build status (bitbucket: { url, token, repo }, or CASEBRIDGE_BITBUCKET_URL,
_TOKEN, _REPO). GitLab: one merge-request note (CI_SERVER_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID,
CASEBRIDGE_GITLAB_TOKEN). GitHub: one pull-request comment (GITHUB_API_URL, GITHUB_REPOSITORY, the event's pull
request, GITHUB_TOKEN or CASEBRIDGE_GITHUB_TOKEN). A note or comment is edited in place on every later post. For
JUnit imports, merge-reports or any runner. The commit: --commit, CASEBRIDGE_COMMIT, the CI's (GIT_COMMIT,
bamboo_planRepository_revision, CI_COMMIT_SHA, GITHUB_SHA), else git rev-parse HEAD. Exit codes: 0 posted
everywhere, 1 a target refused or failed, 2 nothing to post (no target, the cycle could not be read).`,
  options: {
    plan: PLAN,
    cycle: CYCLE,
    commit: { type: 'string', value: 'SHA', description: ['the commit (full 40-character hash for Bitbucket)'] },
    'dry-run': { type: 'boolean', description: ['print what would be sent, send nothing'] },
    json: JSON_OPTION,
  },
  after: `Example (Jenkins, after a JUnit import):
  npx casebridge junit results.xml && npx casebridge publish --cycle "CI \${BUILD_NUMBER}"`,
  positionals: false,
  run: ({ values }, io) =>
    answer(
      io,
      'publish',
      async () => {
        const o = await openReader(io.cwd, io.env);
        try {
          const targets = targetsOf(o.config, io.env);
          if (!anyTarget(targets)) {
            io.err(
              'casebridge publish: no target: configure bitbucket (or CASEBRIDGE_BITBUCKET_URL, _TOKEN, _REPO), or run in a GitLab merge-request pipeline with CASEBRIDGE_GITLAB_TOKEN, or a GitHub pull request with GITHUB_TOKEN',
            );
            return 2;
          }
          const plan = planOf(o.config, values.plan);
          const rep = await cycleReport(o.reader, o.config, plan, cycleOf(o.config, values.cycle, io.env));
          const posted = await publishReport(rep, targets, {
            commit: values.commit ?? (await commitOf(io.env, io.cwd)),
            client: clientSettings(o.config),
            ...(values['dry-run'] ? { dryRun: (line: string) => io.out(line) } : {}),
          });
          if (values.json) io.out(JSON.stringify({ plan, cycle: rep.cycle, pass: rep.verdict.pass, posted }, null, 2));
          else for (const p of posted) io.out(`casebridge publish: ${p.ok ? '' : 'FAILED: '}${p.line}`);
          return posted.every((p) => p.ok) ? 0 : 1;
        } finally {
          await o.close();
        }
      },
      2,
    ),
});
