import type { TestManagementClient } from '../../client/tm.js';

/**
 * Closes an issue made twice as a duplicate of the oldest. Workflows differ, so the transition is found by its
 * target's status category and never guesses a required field; failing that, a label every later read ignores.
 */

/** The line that marks an issue casebridge made twice and could not close; later reads ignore the issue. */
export const DUPLICATE_LINE = /^casebridge-duplicate-of:/m;

/** `already`: closed or labelled before this call (elsewhere, earlier, or a lagging search): only the read was sent. */
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

/** The fields `t`'s screen needs; undefined when a required one cannot be filled. */
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

/** Closes in flight, process-wide: concurrent finders of one duplicate share one close, reported by the first only. */
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
 * Moves an issue into Jira's done category (one intermediate step allowed): false when the workflow offers no way or
 * refuses; throws what a read throws.
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
