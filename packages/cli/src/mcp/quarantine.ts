import {
  pageOf,
  quarantineAdd,
  quarantineList,
  quarantineOptions,
  quarantineRemove,
  quarantineView,
} from '@casebridge/core/internal';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import type { Opened } from '../query/reader.js';
import { type Answer, CHANGES, ok, READ_ONLY, readOnlyRefusal, type ServerOptions, WRITES } from './answers.js';

type Guard = <A>(fn: (a: A) => Promise<Answer>) => (a: A) => Promise<Answer>;

const entry = z.object({
  key: z.string(),
  reason: z.string(),
  owner: z.string().optional(),
  until: z.string().optional(),
  expired: z.boolean(),
  overCap: z.boolean().optional().describe('active, but past the cap quarantine.max: it does not apply'),
});

/** The quarantine tools: the reporters' own quarantine set (core's defects/quarantine.ts), read and changed. */
export function quarantineTools(server: McpServer, o: Opened, opts: ServerOptions, guard: Guard): void {
  const c = o.config;
  const base = quarantineOptions(c, o.reader.tm);

  server.registerTool(
    'quarantined_cases',
    {
      title: 'Quarantined test cases',
      description:
        "The project's quarantined cases as the reporters read them: key, reason, owner, until when, and whether " +
        'the quarantine has expired (an expired one no longer applies).',
      inputSchema: {
        limit: z.number().int().min(1).max(500).optional().describe('at most this many (default 50)'),
        cursor: z.string().optional().describe('the next page: the `next` of the previous answer'),
      },
      outputSchema: { cases: z.array(entry), next: z.string().optional() },
      annotations: READ_ONLY,
    },
    guard(async (a: { limit?: number; cursor?: string }) => {
      const listed = await quarantineList(base);
      const all = listed.cases.map(quarantineView);
      const { items: cases, next } = pageOf(all, {
        ...(a.limit ? { limit: a.limit } : {}),
        ...(a.cursor ? { cursor: a.cursor } : {}),
      });
      const lines = cases.map(
        (e) =>
          `- ${e.key}: ${e.reason}${e.owner ? `, owner ${e.owner}` : ''}${e.until ? `, until ${e.until}` : ''}${e.expired ? ' (expired)' : e.overCap ? ' (over the cap: not applied)' : ''}`,
      );
      const unread = listed.capUnread === undefined ? [] : [`the cap was not checked: ${listed.capUnread}`];
      return ok([`${all.length} quarantined case(s)`, ...lines, ...unread].join('\n'), {
        cases,
        ...(next ? { next } : {}),
      });
    }),
  );

  server.registerTool(
    'quarantine_case',
    {
      title: 'Quarantine a test case',
      description:
        'Quarantines a test case (needs --allow-writes): its failures are classified quarantined and file no defect; ' +
        'Playwright 1.62+ runs it expected-to-fail. Refused past quarantine.max of the plan.',
      inputSchema: {
        key: z.string().describe('a test case key'),
        reason: z.string().min(1).describe('why, for the people who read it in Jira'),
        owner: z.string().optional().describe('who fixes it (a Jira user name)'),
        until: z.string().optional().describe('when the quarantine ends, YYYY-MM-DD'),
      },
      outputSchema: entry.shape,
      annotations: WRITES,
    },
    guard(async (a: { key: string; reason: string; owner?: string; until?: string }) => {
      if (!opts.allowWrites) return readOnlyRefusal('quarantine_case');
      const e = await quarantineAdd({
        ...base,
        key: a.key,
        reason: a.reason,
        ...(a.owner ? { owner: a.owner } : {}),
        ...(a.until ? { until: a.until } : {}),
      });
      return ok(`${e.key} is quarantined: ${e.reason}`, quarantineView(e));
    }),
  );

  server.registerTool(
    'release_case',
    {
      title: 'Release a test case from quarantine',
      description: 'Ends the quarantine of a test case (needs --allow-writes).',
      inputSchema: { key: z.string().describe('a test case key') },
      outputSchema: { key: z.string(), removed: z.boolean() },
      annotations: CHANGES,
    },
    guard(async (a: { key: string }) => {
      if (!opts.allowWrites) return readOnlyRefusal('release_case');
      const out = await quarantineRemove({ ...base, key: a.key });
      return ok(out.removed ? `${out.key} is no longer quarantined` : `${out.key} was not quarantined`, out);
    }),
  );
}
