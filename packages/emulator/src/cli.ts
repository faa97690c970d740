import { join } from 'node:path';
import { DEFAULT_PROFILE } from './behaviour/profile.js';
import { HELP, parseCli } from './cli-options.js';
import { startEmulator } from './server.js';
import { DATA_FILE } from './store/persist.js';
import { isLoopbackHost } from './ui/state.js';

async function main(): Promise<void> {
  const request = parseCli(process.argv.slice(2));
  if (request.help) {
    process.stdout.write(HELP);
    return;
  }
  const { options } = request;
  const { faults } = options;
  const emu = await startEmulator(options);
  const open = isLoopbackHost(options.host ?? '127.0.0.1');
  const lines = [
    `casebridge emulator listening on ${emu.url}`,
    `  test management:     ${emu.url}/rest/synapse/latest/public   (alias /rest/svc/latest/public)`,
    `  content repository:  ${emu.url}/edu-sharing/rest             (alias /repo/rest)`,
    `  Jira platform:       ${emu.url}/rest/api/2`,
    `  code hosts:          Bitbucket ${emu.url}, GitLab ${emu.url} (/api/v4), GitHub ${emu.url}/api/v3`,
    `  API browser:         ${emu.url}/swagger   OpenAPI: ${emu.url}/openapi.json`,
    `  admin:               ${emu.url}/__emulator/state, /requests, /faults, /reset${open ? '' : '   (administrators only)'}`,
    `  UI:                  ${emu.url}/   (projects, /browse/<KEY>, /rehearsal/requests${open ? '' : '; log in at /login.jsp'})`,
    `  variant ${emu.variant.ids}, timestamps ${emu.variant.timestamps}, state ${options.dataDir ? 'on disk' : 'in memory'}${faults.length ? `, ${faults.length} fault rule(s)` : ''}`,
    ...(options.dataDir ? [`  data in ${join(options.dataDir, DATA_FILE)} (JSON lines, fsync on each write)`] : []),
    `  Jira: ${options.profile ?? DEFAULT_PROFILE} profile, ${emu.jira.nodes} node(s), index lag ${emu.jira.indexLagMs} ms, search pages of ${emu.jira.searchMaxResults}, result window ${emu.jira.resultWindow ?? 'off'} (${emu.jira.resultWindowMode}), ${emu.jira.createMs} ms to create an issue`,
  ];
  if (request.demo) {
    lines.push(
      '',
      'Demo data: project DEMO, test plan DEMO-1 with test cases DEMO-2..DEMO-7, requirements DEMO-8..DEMO-10.',
      '  code hosts: Bitbucket DEMO/shop, GitLab demo/shop (id 1, merge request 1), GitHub demo/shop (pull request 1)',
      '  users: admin / admin (personal access token casebridge-dev-token), tester / tester, nolicense / nolicense (403)',
      `  try:   curl -u admin:admin ${emu.url}/rest/synapse/latest/public/testPlan/DEMO-1/members`,
    );
  }
  lines.push('Press Ctrl+C to stop.');
  const stop = async () => {
    await emu.close();
    process.exit(0);
  };
  // Before the URL is printed: whoever reads it may stop us at once.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  for (const note of emu.notes) process.stderr.write(`casebridge-emulator: note: ${note}\n`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: Error & { code?: string }) => {
  // Argument errors of parseArgs (unknown option, missing value, stray argument) point at the help.
  const hint = err.code?.startsWith('ERR_PARSE_ARGS') ? '\nRun casebridge-emulator --help for the options.' : '';
  process.stderr.write(`casebridge-emulator: ${err.message}${hint}\n`);
  process.exit(2);
});
