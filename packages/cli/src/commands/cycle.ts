import { defineCommand, helpOf } from '../command-line.js';
import { CYCLE_ACTIONS, type CycleAction, CycleError, cycleCommand } from '../cycle.js';
import { cycleKeysCommand } from './cycle-keys.js';

/** `casebridge cycle <action>`: cycle control for sharded pipelines (see cycle.ts); `cycle keys` is its subcommand. */
export const cycle = defineCommand({
  name: 'cycle',
  summary: [['cycle <action> [options]', "create | start | complete | abort | resume the run's cycle; prints its id"]],
  usage: `Usage: casebridge cycle <create|start|complete|abort|resume> [--plan KEY] [--name NAME] [--json]
       casebridge cycle keys [options]             (below)`,
  about: `Cycle control for pipelines that fan out into shards: start the cycle before the shards, complete it after them.
The plan and the name come from --plan/--name or from testPlan and cycle (CASEBRIDGE_TEST_PLAN, CASEBRIDGE_CYCLE;
the name template expands \${build}, \${environment}, \${date}, \${branch} and any \${ENV_VAR}). Prints the cycle id on
stdout (with --json: id, name, plan, status, created). Safe to run from several jobs at once: an action that
another job already did is not an error.

  create     find or create the cycle (left in Draft)
  start      find or create it, and start it when it is a Draft
  complete   complete an Active cycle
  abort      abort an Active cycle
  resume     resume a Completed or Aborted cycle`,
  options: {
    plan: { type: 'string' },
    name: { type: 'string' },
    json: { type: 'boolean' },
  },
  after: `Examples:
  CYCLE_ID=$(casebridge cycle start --plan PROJ-1 --name "CI $GITHUB_RUN_ID")
  casebridge cycle complete --plan PROJ-1 --name "CI $GITHUB_RUN_ID"`,
  positionals: true,
  subcommands: { keys: cycleKeysCommand },
  async run({ values, positionals }, io) {
    const action = positionals[0] as CycleAction | undefined;
    if (!action || !CYCLE_ACTIONS.includes(action) || positionals.length > 1) {
      io.err(
        `casebridge cycle: expected one of ${[...CYCLE_ACTIONS, 'keys'].join(', ')}, got ${positionals.join(' ') || 'nothing'}`,
      );
      io.err(cycleHelp());
      return 2;
    }
    try {
      const info = await cycleCommand(action, { name: values.name, plan: values.plan }, io.cwd, io.env);
      if (values.json) io.out(JSON.stringify(info));
      else io.out(String(info.id));
      io.err(
        `casebridge: cycle "${info.name}" (id ${info.id}) of test plan ${info.plan} is ${info.status}${info.created ? ' (created now)' : ''}`,
      );
      return 0;
    } catch (err) {
      io.err(`casebridge cycle ${action}: ${err instanceof Error ? err.message : String(err)}`);
      return err instanceof CycleError ? err.exitCode : 1;
    }
  },
});

/** A wrong action prints the whole help (the keys subcommand's too) on stderr. */
function cycleHelp(): string {
  return helpOf(cycle) ?? '';
}
