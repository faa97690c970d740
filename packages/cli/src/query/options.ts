import { UsageError } from '../command-line.js';
import type { Io } from '../output.js';
import { exitCodeOf } from './reader.js';

/**
 * What `casebridge failures`, `history`, `flaky` and `gate` share: their options, and how an answer that could not be
 * made ends (the reason on stderr; exit 1 when the query names nothing there, 2 when the service could not be read;
 * the gate exits 2 for both, its 1 being a failed verdict).
 * Core answers (query/results.ts, gate.ts); the commands only parse, print and pick the exit code.
 */

export const PLAN = {
  type: 'string' as const,
  value: 'KEY',
  description: ['the test plan (default: testPlan of the configuration)'],
};
export const CYCLE = {
  type: 'string' as const,
  value: 'C',
  description: ['a cycle name, #ID or id (default: the cycle the reporters name, option cycle)'],
};
export const JSON_OPTION = {
  type: 'boolean' as const,
  description: ["print JSON (the MCP tools' structured content)"],
};
export const LIMIT = { type: 'number' as const, value: 'N', description: ['at most N items (default 50)'] };
export const CURSOR = {
  type: 'string' as const,
  value: 'C',
  description: ['the next page: the "next" of the answer before'],
};

export async function answer(io: Io, name: string, work: () => Promise<number>, queryExit = 1): Promise<number> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof UsageError) throw err;
    io.err(`casebridge ${name}: ${err instanceof Error ? err.message : String(err)}`);
    return exitCodeOf(err, queryExit);
  }
}
