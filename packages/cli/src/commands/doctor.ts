import { resolve } from 'node:path';
import { defineCommand } from '../command-line.js';
import { doctor as checksOf } from '../doctor.js';
import { runnerConfigOptions } from '../options.js';
import { paint } from '../output.js';

/** `casebridge doctor [dir]`: the checks of doctor.ts, printed ✓/✗ with the fix. */
export const doctor = defineCommand({
  name: 'doctor',
  summary: [['doctor [dir]', 'check config, credentials, project, plan, cycle, proxy, TLS, clock; ✓/✗ and the fix']],
  usage: 'Usage: casebridge doctor [dir] [--json]',
  about: `Checks, with the configuration of the project in dir (default: the current folder): the config, the proxy and CA
file, the credentials, the clock against the server's, the project, the test plan and the cycle (cycle mode), the
content repository (when configured) and the mapping file. Prints ✓ or ✗ per check with the fix. Exit code 0 only
when all pass.`,
  options: { json: { type: 'boolean' } },
  after: `Example:
  CASEBRIDGE_URL=https://jira.example.com CASEBRIDGE_TOKEN=... CASEBRIDGE_PROJECT=PROJ casebridge doctor`,
  positionals: true,
  async run({ values, positionals }, io) {
    const dir = resolve(io.cwd, positionals[0] ?? '.');
    const checks = await checksOf(dir, io.env, await runnerConfigOptions(dir, io.env));
    const ok = checks.every((c) => c.ok);
    if (values.json) {
      io.out(JSON.stringify({ ok, checks }, null, 2));
    } else {
      const p = paint(io);
      const width = Math.max(...checks.map((c) => c.name.length));
      for (const c of checks) {
        const mark = !c.ok ? p.red('✗') : c.warning ? p.yellow('!') : p.green('✓');
        io.out(`${mark} ${c.name.padEnd(width)}  ${c.detail}`);
        if (!c.ok && c.fix) io.out(`  ${' '.repeat(width)}  ${p.dim('fix:')} ${c.fix}`);
      }
      io.out(ok ? p.green('All checks passed.') : p.red(`${checks.filter((c) => !c.ok).length} check(s) failed.`));
    }
    return ok ? 0 : 1;
  },
});
