import { redact } from '@casebridge/core';
import { QueryError } from '@casebridge/core/internal';

/** What every tool of `casebridge mcp` answers with: a text for a person, structured content, or a tool error. */

export interface ServerOptions {
  allowWrites: boolean;
  env: NodeJS.ProcessEnv;
}

export type Answer = {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

export function failed(err: unknown): Answer {
  const reason = err instanceof Error ? err.message : String(err);
  const hint = err instanceof QueryError ? '' : ' (the service could not be read; casebridge doctor checks the setup)';
  return { content: [{ type: 'text', text: redact(`${reason}${hint}`) }], isError: true };
}

/** A tool's answer: `text` for a person, `data` as structured content. */
export function ok(text: string, data: object): Answer {
  return { content: [{ type: 'text', text: redact(text) }], structuredContent: data as Record<string, unknown> };
}

export const READ_ONLY = { readOnlyHint: true, openWorldHint: true } as const;
/** A write that only adds (a bug, a link); the same call again changes nothing more. */
export const WRITES = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
} as const;
/** A write that changes what is there (closes a bug, moves a cycle through its workflow). */
export const CHANGES = { ...WRITES, destructiveHint: true } as const;

export function readOnlyRefusal(tool: string): Answer {
  return failed(
    new QueryError(
      `${tool} changes synapseRT, and this server is read-only: start it with \`casebridge mcp --allow-writes\` to allow it`,
    ),
  );
}
