import { type CasebridgeConfig, CasebridgeError } from '@casebridge/core';
import { clientsFor, cycleNameFor, QueryError, type Reader } from '@casebridge/core/internal';
import { configFor } from '../cycle-keys.js';

/**
 * The reads the CLI's queries, its gate and its MCP server share: the configuration the reporters use
 * (casebridge.config.*, CASEBRIDGE_*), the client it makes, and the plan and cycle a query names or the
 * configuration implies. What is read and how it is understood is core's (query/results.ts).
 */
export interface Opened {
  config: CasebridgeConfig;
  reader: Reader;
  close: () => Promise<void>;
}

export async function openReader(
  cwd: string,
  env: NodeJS.ProcessEnv,
  inline: Record<string, unknown> = {},
): Promise<Opened> {
  // Ad hoc whatever the configuration says: a plan is then optional (each query may name one), as `cycle keys
  // --quarantined` reads it; testPlan and cycle are still read when set.
  const config = await configFor(undefined, { mode: 'adhoc', ...inline }, cwd, env, []);
  const { tm, repo } = clientsFor(config);
  return {
    config,
    reader: { tm, baseUrl: config.url, statusMap: config.statusMap },
    close: async () => {
      await tm.close();
      await repo?.close();
    },
  };
}

/** The test plan a query is about: the one asked for, else the configuration's (`testPlan`, CASEBRIDGE_TEST_PLAN). */
export function planOf(config: CasebridgeConfig, asked: string | undefined): string {
  const plan = asked ?? config.testPlan;
  if (!plan)
    throw new QueryError('name a test plan: --plan KEY (or testPlan / CASEBRIDGE_TEST_PLAN in the configuration)');
  return plan;
}

/** The cycle a query is about: the one asked for, else the one the reporters of this job name (option `cycle`). */
export function cycleOf(config: CasebridgeConfig, asked: string | undefined, env: NodeJS.ProcessEnv): string {
  return asked ?? cycleNameFor(config, env);
}

/**
 * Exit code 2 (the service could not be read, or the configuration is wrong) unless the query itself was wrong
 * (`query`: 1 for the queries; the gate gives 2, since its 1 is a failed verdict).
 */
export function exitCodeOf(err: unknown, query = 1): number {
  if (err instanceof QueryError) return query;
  return err instanceof CasebridgeError && err.exitCode !== undefined ? err.exitCode : 2;
}
