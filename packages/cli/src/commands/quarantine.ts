import {
  clientsFor,
  type QuarantineEntry,
  QuarantineRefused,
  quarantineAdd,
  quarantineList,
  quarantineOptions,
  quarantineRemove,
  quarantineView,
} from '@casebridge/core/internal';
import { defineCommand } from '../command-line.js';
import { configFor } from '../cycle-keys.js';
import type { Io } from '../output.js';

/**
 * `casebridge quarantine list|add|remove`: the project's quarantined cases with their reason, owner and end, as the
 * reporters read them (core's defects/quarantine.ts, the same code the MCP server's quarantine tools call). Exit
 * codes: 0 done, 1 refused (an unknown key, not a test case, a bad date, the cap), 2 wrong usage, configuration or
 * a service that cannot be read.
 */

const ACTIONS = ['list', 'add', 'remove'] as const;
type Action = (typeof ACTIONS)[number];

export const quarantine = defineCommand({
  name: 'quarantine',
  summary: [
    ['quarantine list', 'the quarantined cases: reason, owner, until when, expired or not'],
    ['quarantine add KEY --reason R', 'quarantine a test case [--owner U] [--until YYYY-MM-DD]; remove KEY ends it'],
  ],
  usage: `Usage: casebridge quarantine list [--json]
       casebridge quarantine add KEY --reason R [--owner U] [--until YYYY-MM-DD] [--plan KEY] [--json]
       casebridge quarantine remove KEY [--json]`,
  about: `The project's quarantined cases (option quarantine): a case carrying the label (quarantine.label, default
casebridge-quarantine), or linked through one of its runs to an open issue carrying it. Reason, owner and end come
from a line "casebridge-quarantine: reason=...; owner=...; until=YYYY-MM-DD" in the issue's description, and from a
labelled bug's assignee and due date. A quarantine whose end has passed (UTC) no longer applies: it is listed as
expired and the reporters run the case as any other.

  list      every quarantined case, active and expired
  add       files a bug carrying the label, with the line (and the assignee and due date when its create screen
            has them), linked to a new ad hoc run of the case: a person sees who and until when in Jira. Refused
            past quarantine.max (a share of the plan's cases, default 0.05; CASEBRIDGE_QUARANTINE_MAX)
  remove    closes casebridge's bug of the case; a case labelled by hand gets a line that ends yesterday (remove
            the label in Jira to take it off the list)`,
  options: {
    reason: { type: 'string', value: 'R', description: ['why (add; required)'] },
    owner: { type: 'string', value: 'U', description: ['who fixes it, a Jira user name (add)'] },
    until: { type: 'string', value: 'DATE', description: ['the last day it applies, YYYY-MM-DD (add)'] },
    plan: {
      type: 'string',
      value: 'KEY',
      description: ['the test plan whose cases the cap counts (add; default testPlan, else the project)'],
    },
    json: { type: 'boolean', description: ['JSON on stdout instead of a table'] },
  },
  after: `Exit codes: 0 done, 1 refused (unknown key, not a test case, a bad date, the cap reached), 2 wrong usage,
configuration, or a service that cannot be read.

Examples:
  casebridge quarantine add PROJ-12 --reason "flaky on CI, see PROJ-40" --owner alice --until 2025-07-31
  casebridge quarantine list --json
  casebridge quarantine remove PROJ-12`,
  positionals: true,
  async run({ values, positionals }, io) {
    const usage = (message: string) => {
      io.err(`casebridge quarantine: ${message}; try casebridge help quarantine`);
      return 2;
    };
    const [action, key, ...rest] = positionals as [Action | undefined, string | undefined, ...string[]];
    if (!action || !ACTIONS.includes(action)) return usage(`expected list, add or remove, got ${action ?? 'nothing'}`);
    if (rest.length > 0 || (action === 'list' && key !== undefined)) {
      return usage(`unexpected argument ${[...(action === 'list' ? [key] : []), ...rest].join(' ')}`);
    }
    if (action !== 'list' && !key) return usage(`${action} needs a test case key, e.g. PROJ-12`);
    if (action === 'add' && !values.reason?.trim()) return usage('add needs --reason "why"');
    const stray = (['reason', 'owner', 'until', 'plan'] as const).find((o) => values[o] !== undefined);
    if (action !== 'add' && stray) return usage(`--${stray} goes with add`);
    const notes: string[] = [];
    try {
      const c = await configFor(undefined, { mode: 'adhoc' }, io.cwd, io.env, notes);
      for (const note of notes) io.err(`casebridge quarantine: ${note}`);
      const { tm, repo } = clientsFor(c);
      const base = quarantineOptions(c, tm, values.plan);
      try {
        if (action === 'list') {
          const { cases, capUnread } = await quarantineList(base);
          if (values.json) io.out(JSON.stringify({ cases: cases.map(quarantineView) }));
          else printTable(cases, c.quarantine.label, io);
          if (capUnread !== undefined) {
            io.err(`casebridge quarantine: the cap was not checked (the cases could not be counted: ${capUnread})`);
          }
        } else if (action === 'add') {
          const e = await quarantineAdd({
            ...base,
            key: key as string,
            reason: values.reason as string,
            ...(values.owner ? { owner: values.owner } : {}),
            ...(values.until ? { until: values.until } : {}),
          });
          if (values.json) io.out(JSON.stringify(e));
          else io.out(`${e.key} is quarantined (${describe(e)})`);
        } else {
          const out = await quarantineRemove({ ...base, key: key as string });
          if (values.json) io.out(JSON.stringify(out));
          else io.out(out.removed ? `${out.key}: its quarantine has ended` : `${out.key} was not quarantined`);
        }
        return 0;
      } finally {
        await tm.close();
        await repo?.close();
      }
    } catch (err) {
      io.err(`casebridge quarantine ${action}: ${err instanceof Error ? err.message : String(err)}`);
      return err instanceof QuarantineRefused ? 1 : 2;
    }
  },
});

function describe(e: QuarantineEntry): string {
  return [
    e.via === 'bug' ? `bug ${e.bug}` : 'label',
    e.reason,
    e.owner && `owner ${e.owner}`,
    e.until && `until ${e.until}`,
  ]
    .filter(Boolean)
    .join(', ');
}

/** A table with a header, columns padded to their widest cell; a line saying so when nothing is quarantined. */
function printTable(cases: QuarantineEntry[], label: string, io: Io): void {
  if (cases.length === 0) {
    io.out(`no test case is quarantined (label ${label})`);
    return;
  }
  const rows = [
    ['KEY', 'STATE', 'UNTIL', 'OWNER', 'VIA', 'REASON'],
    ...cases.map((e) => [
      e.key,
      e.expired ? 'expired' : e.overCap ? 'over cap' : 'active',
      e.until ?? '-',
      e.owner ?? '-',
      e.via === 'bug' ? `bug ${e.bug}` : 'label',
      e.reason,
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  for (const r of rows)
    io.out(r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
  const expired = cases.filter((e) => e.expired).length;
  const over = cases.filter((e) => e.overCap).length;
  io.err(
    `casebridge quarantine: ${cases.length - expired - over} active, ${expired} expired${over ? `, ${over} over the cap quarantine.max (not applied: end some or raise it)` : ''} (label ${label})`,
  );
}
