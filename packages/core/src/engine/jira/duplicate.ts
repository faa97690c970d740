import type { TestManagementClient } from '../../client/tm.js';

/**
 * Closes an issue casebridge made twice (a test case or a defect that two machines, or a lagging search, created for
 * the same test or failure) as a duplicate of the survivor, the oldest by id.
 *
 * Workflows are per project and issue type, named in the instance's language, and may have no transition called
 * anything like "Done" from where the issue is. So the closing transition is found by its target's status category
 * (`done`), with its screen's fields (`expand=transitions.fields`): the resolution is Duplicate when the screen offers
 * it, else another value it allows; a transition whose screen requires another field casebridge cannot fill (a custom
 * field without a default) is skipped, never filled with a guess. When no closing transition is offered from the
 * current status, one step through another transition is tried (Open → In Progress → Done).
 *
 * When the workflow offers no way to close it (or refuses), the duplicate is labelled instead: a line
 * `casebridge-duplicate-of: <survivor>` is put at the top of its description. Every later read (this run's, the next
 * run's, every machine's) ignores an issue with that line, so the same survivor is picked everywhere; a person sees
 * which issue to use. Costs three to six requests, only when an issue was made twice.
 */

/** The line that marks an issue casebridge made twice and could not close; later reads ignore the issue. */
export const DUPLICATE_LINE = /^casebridge-duplicate-of:/m;

/**
 * `already`: closed or labelled before this call (another machine, an earlier run, a lagging search that still showed
 * it open): nothing was sent but the read.
 */
export type DuplicateOutcome = 'closed' | 'labelled' | 'already' | 'failed';

interface Transition {
  id: string | number;
  name: string;
  to?: { name?: string; statusCategory?: { key?: string } };
  fields?: Record<string, FieldMeta>;
}

interface FieldMeta {
  required?: boolean;
  hasDefaultValue?: boolean;
  allowedValues?: Array<{ id?: string | number; name?: string; value?: string }>;
}

/**
 * Fields the screen of `t` needs, filled; undefined when a required one cannot be filled. The resolution is
 * `resolution` when the screen offers it (Done also takes Fixed), else another value it allows.
 */
function fieldsFor(t: Transition, resolution: Resolution): Record<string, unknown> | undefined {
  const prefer = resolution === 'Done' ? /^(done|fixed)$/i : /^duplicate$/i;
  const out: Record<string, unknown> = {};
  for (const [id, meta] of Object.entries(t.fields ?? {})) {
    if (id === 'resolution') {
      const allowed = meta.allowedValues ?? [];
      const pick = allowed.find((v) => prefer.test(v.name ?? '')) ?? allowed[0];
      if (pick) out.resolution = pick.id !== undefined ? { id: String(pick.id) } : { name: pick.name };
      else if (meta.required && !meta.hasDefaultValue) out.resolution = { name: resolution };
      continue;
    }
    // The comment is added through `update`; any other required field casebridge has no value for.
    if (id === 'comment') continue;
    if (meta.required && !meta.hasDefaultValue) return undefined;
  }
  return out;
}

type Resolution = 'Duplicate' | 'Done';

const category = (t: Transition) => t.to?.statusCategory?.key?.toLowerCase();

/**
 * Closes in flight, process-wide: two reads that find the same duplicate at once (the case registry and a defect
 * search, two engines of one process) share one close, which only the first reports (`closed`, `labelled`; the
 * others get `already`, as another machine's read would). A later call reads the issue again (`already`).
 */
const closes = new Map<string, Promise<DuplicateOutcome>>();

export function closeAsDuplicate(
  tm: TestManagementClient,
  key: string,
  signal?: AbortSignal,
  survivor?: string,
): Promise<DuplicateOutcome> {
  const under = closes.get(key);
  // Joined: the other caller closes it and reports it; for this one it was closed already.
  if (under) return under.then((o) => (o === 'closed' || o === 'labelled' ? 'already' : o));
  const p = close(tm, key, signal, survivor);
  closes.set(key, p);
  void p.then(() => closes.delete(key));
  return p;
}

/** Whether an issue's status is in Jira's done category (a Done that sets no resolution is still closed). */
export function isDone(fields: { status?: unknown; resolution?: unknown }): boolean {
  if (fields.resolution !== null && fields.resolution !== undefined) return true;
  const status = fields.status as { statusCategory?: { key?: unknown } } | undefined;
  return String(status?.statusCategory?.key ?? '').toLowerCase() === 'done';
}

async function close(
  tm: TestManagementClient,
  key: string,
  signal: AbortSignal | undefined,
  survivor: string | undefined,
): Promise<DuplicateOutcome> {
  const o = signal ? { signal } : undefined;
  const note = `casebridge made this issue twice; ${survivor ?? 'the older one'} is the one it uses (the oldest).`;
  try {
    const issue = await tm.jira.issue({ issueIdOrKey: key, fields: 'resolution,status,description' }, o);
    const f = (issue as { fields?: { resolution?: unknown; status?: unknown; description?: unknown } }).fields ?? {};
    // Closed already (another machine saw the same duplicate first), or labelled: nothing to do.
    if (isDone(f)) return 'already';
    const description = typeof f.description === 'string' ? f.description : '';
    if (DUPLICATE_LINE.test(description)) return 'already';
    if (await closeIssue(tm, key, { resolution: 'Duplicate', comment: note, ...(signal ? { signal } : {}) })) {
      return 'closed';
    }
    await tm.jira.editIssue(
      {
        issueIdOrKey: key,
        fields: { description: `casebridge-duplicate-of: ${survivor ?? '(the older one)'}\n${note}\n\n${description}` },
      },
      o,
    );
    return 'labelled';
  } catch {
    return 'failed';
  }
}

/**
 * Moves an issue into Jira's done category through its workflow (see the file comment for how): true when it got
 * there, false when the workflow offers no way or refuses. Throws what a read throws. The duplicates' close and the
 * quarantine's release (defects/quarantine-manage.ts) both close issues so.
 */
export async function closeIssue(
  tm: TestManagementClient,
  key: string,
  c: { resolution: Resolution; comment?: string; signal?: AbortSignal },
): Promise<boolean> {
  const o = c.signal ? { signal: c.signal } : undefined;
  const tried = new Set<string>();
  for (let step = 0; step < 2; step += 1) {
    const { transitions } = (await tm.jira.transitions({ issueIdOrKey: key, expand: 'transitions.fields' }, o)) as {
      transitions: Transition[];
    };
    for (const t of transitions.filter((x) => category(x) === 'done')) {
      const fields = fieldsFor(t, c.resolution);
      if (!fields) continue;
      try {
        await tm.jira.transition(
          {
            issueIdOrKey: key,
            transition: { id: String(t.id) },
            ...(Object.keys(fields).length ? { fields } : {}),
            ...(t.fields?.comment && c.comment ? { update: { comment: [{ add: { body: c.comment } }] } } : {}),
          },
          o,
        );
        return true;
      } catch {
        // Refused (a validator, a condition): the next closing transition, if any.
      }
    }
    if (step === 1) break;
    // No way to close from here: one step through a transition that leaves the status for another one that is
    // not done (In Progress), preferring one that needs nothing, then look again.
    const via = transitions.find(
      (t) => category(t) !== 'done' && !tried.has(String(t.id)) && fieldsFor(t, c.resolution),
    );
    if (!via) break;
    tried.add(String(via.id));
    const fields = fieldsFor(via, c.resolution) ?? {};
    await tm.jira.transition(
      { issueIdOrKey: key, transition: { id: String(via.id) }, ...(Object.keys(fields).length ? { fields } : {}) },
      o,
    );
  }
  return false;
}
