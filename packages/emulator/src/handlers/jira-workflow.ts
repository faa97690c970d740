import { issueEditable, offeredTransitions, statusCategory } from '../jira/workflows.js';
import { resolutions } from '../seed/seed-jira.js';
import { type Ctx, type Handler, Reply, ServiceError } from '../service/context.js';
import type { CreateScreen, Issue, Project, Transition } from '../store/store.js';
import { allowedValues, cannotBeSetMessage, checkFieldsOn, fieldDef } from './jira-fields.js';
import { lower, presentStatus, requireJiraIssue, summaryProblem } from './jira-model.js';

/**
 * Jira's workflow operations on an issue: the transitions offered (with their screens' fields under
 * `expand=transitions.fields`), moving an issue through one (its screen's fields checked as Jira does: required,
 * allowed values, not on the screen), and the issue edit, which a status with `jira.issue.editable=false` refuses.
 * Workflows and statuses are in ../jira/workflows.ts, their seed form in ../seed/seed-jira.ts.
 */

/** Fields only a transition screen has: they are not create-screen fields, so jira-fields.ts does not know them. */
const OWN_FIELDS = ['resolution', 'comment'];

/**
 * A transition's screen. Seeded workflows give every transition one (empty: no screen). The default workflow's
 * transitions have none, but its resolving ones still take `resolution`, as the emulator's transitions always did.
 */
function screenOf(t: Transition): NonNullable<Transition['screen']> {
  if (t.screen) return t.screen;
  return { fields: t.resolution === null ? [] : ['resolution'], required: [] };
}

function resolutionRefs(ctx: Ctx): Record<string, unknown>[] {
  return resolutions(ctx.store).map(({ name, id }) => ({
    self: `${ctx.origin}/rest/api/2/resolution/${id}`,
    name,
    id,
  }));
}

/** The fields of a transition's screen as Jira lists them under `expand=transitions.fields`, keyed by field id. */
function fieldMetas(ctx: Ctx, project: Project | undefined, t: Transition): Record<string, unknown> {
  const screen = screenOf(t);
  const out: Record<string, unknown> = {};
  for (const id of screen.fields) {
    const base = { required: screen.required.includes(id), key: id, hasDefaultValue: false };
    if (id === 'resolution') {
      out[id] = {
        ...base,
        schema: { type: 'resolution', system: 'resolution' },
        name: 'Resolution',
        operations: ['set'],
        allowedValues: resolutionRefs(ctx),
      };
    } else if (id === 'comment') {
      out[id] = {
        ...base,
        schema: { type: 'comments-page', system: 'comment' },
        name: 'Comment',
        operations: ['add', 'edit', 'remove'],
      };
    } else {
      const def = fieldDef(ctx.store, id);
      if (!def) continue;
      const allowed = project ? allowedValues(ctx, project, id) : undefined;
      out[id] = {
        ...base,
        schema: def.schema,
        name: def.name,
        operations: def.operations,
        ...(allowed ? { allowedValues: allowed } : {}),
      };
    }
  }
  return out;
}

const isEmpty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

/** `update.comment: [{add: {body}}]`, Jira's way of commenting in a transition; the bodies given. */
function commentsOf(update: Record<string, unknown>): { bodies: string[]; error?: string } {
  const ops = update.comment;
  if (ops === undefined) return { bodies: [] };
  if (!Array.isArray(ops)) return { bodies: [], error: 'expected [{"add": {"body": "..."}}]' };
  const bodies: string[] = [];
  for (const op of ops) {
    const body = (op as { add?: { body?: unknown } })?.add?.body;
    if (typeof body !== 'string') return { bodies: [], error: 'expected [{"add": {"body": "..."}}]' };
    if (body.trim() !== '') bodies.push(body);
  }
  return { bodies };
}

/** A resolution by `{name}` (case-insensitive) or `{id}`; undefined when the instance has none such. */
function findResolution(ctx: Ctx, v: unknown): string | undefined {
  const r = (v ?? {}) as { id?: unknown; name?: unknown };
  return resolutions(ctx.store).find((x) =>
    r.id !== undefined ? x.id === String(r.id) : lower(x.name) === lower(String(r.name ?? '')),
  )?.name;
}

/** What a transition request came to: the resolution given, the other fields normalised, comments, Jira's errors. */
function checkTransition(
  ctx: Ctx,
  issue: Issue,
  t: Transition,
): {
  resolution: string | undefined;
  fields: Record<string, unknown>;
  labels: string[] | undefined;
  comments: string[];
  errors: Record<string, string>;
} {
  const screen = screenOf(t);
  const input = (ctx.body.fields ?? {}) as Record<string, unknown>;
  const update = (ctx.body.update ?? {}) as Record<string, unknown>;
  const errors: Record<string, string> = {};
  const on = (id: string) => screen.fields.includes(id);

  let resolution: string | undefined;
  if (input.resolution !== undefined && input.resolution !== null) {
    if (!on('resolution')) errors.resolution = cannotBeSetMessage('resolution');
    else {
      resolution = findResolution(ctx, input.resolution);
      if (!resolution) {
        const r = input.resolution as { id?: unknown; name?: unknown };
        errors.resolution = `Resolution '${String(r.name ?? r.id)}' does not exist.`;
      }
    }
  }
  const { bodies, error } = commentsOf(update);
  if (error) errors.comment = `Comment: ${error}`;
  else if (bodies.length && !on('comment')) errors.comment = cannotBeSetMessage('comment');
  for (const k of Object.keys(update)) {
    if (k !== 'comment') errors[k] = `${cannotBeSetMessage(k)} (the emulator takes screen fields under "fields")`;
  }
  if (input.comment !== undefined) errors.comment = cannotBeSetMessage('comment');

  const project = ctx.store.projects.get(issue.projectId);
  const rest = Object.fromEntries(Object.entries(input).filter(([k]) => !OWN_FIELDS.includes(k)));
  const others: CreateScreen = {
    fields: screen.fields.filter((f) => !OWN_FIELDS.includes(f)),
    required: screen.required.filter((f) => !OWN_FIELDS.includes(f)),
  };
  const checked = project
    ? checkFieldsOn(ctx.store, project, others, rest, [])
    : { fields: {}, labels: [], errors: {} };
  Object.assign(errors, checked.errors);
  if (screen.required.includes('resolution') && !resolution && errors.resolution === undefined) {
    errors.resolution = 'Resolution is required.';
  }
  if (screen.required.includes('comment') && bodies.length === 0 && errors.comment === undefined) {
    errors.comment = 'Comment is required.';
  }
  // A validator reads the issue as the transition would leave it: a value the issue already has satisfies it.
  for (const id of screen.validators ?? []) {
    if (errors[id] !== undefined) continue;
    const has =
      id === 'resolution'
        ? resolution !== undefined || issue.resolution !== null
        : id === 'comment'
          ? bodies.length > 0
          : id === 'labels'
            ? (rest.labels !== undefined ? checked.labels : issue.labels).length > 0
            : !isEmpty(checked.fields[id] ?? issue.fields?.[id]);
    if (!has) {
      const name = id === 'resolution' ? 'Resolution' : id === 'comment' ? 'Comment' : fieldDef(ctx.store, id)?.name;
      errors[id] = `${name ?? id} is required.`;
    }
  }
  // Only what was sent changes (the screen check fills in a default priority, which a transition must not).
  const fields = Object.fromEntries(Object.entries(checked.fields).filter(([k]) => rest[k] !== undefined));
  return {
    resolution,
    fields,
    labels: rest.labels !== undefined && rest.labels !== null ? checked.labels : undefined,
    comments: bodies,
    errors,
  };
}

export const jiraWorkflowHandlers: Record<string, Handler> = {
  'jira.transitions': (ctx) => {
    const issue = requireJiraIssue(ctx);
    const only = ctx.query.transitionId as string | undefined;
    const withFields = String(ctx.query.expand ?? '')
      .split(',')
      .map((s) => s.trim())
      .includes('transitions.fields');
    const project = ctx.store.projects.get(issue.projectId);
    return {
      expand: 'transitions',
      transitions: offeredTransitions(ctx.store, issue)
        .filter((t) => only === undefined || String(t.id) === only)
        .map((t) => ({
          id: String(t.id),
          name: t.name,
          to: presentStatus(ctx, t.to),
          hasScreen: (t.screen?.fields.length ?? 0) > 0,
          isGlobal: t.from.length === 0,
          isInitial: false,
          isAvailable: true,
          isConditional: false,
          ...(withFields ? { fields: fieldMetas(ctx, project, t) } : {}),
        })),
    };
  },

  'jira.transition': (ctx) => {
    const issue = requireJiraIssue(ctx);
    const wanted = String(ctx.body.transition.id);
    const t = offeredTransitions(ctx.store, issue).find((x) => String(x.id) === wanted);
    if (!t) throw new ServiceError(400, `Transition id '${wanted}' is not valid for this issue.`);
    const c = checkTransition(ctx, issue, t);
    if (Object.keys(c.errors).length) return new Reply(400, { errorMessages: [], errors: c.errors });
    const now = ctx.now();
    // A transition into a done status takes the screen's resolution, else its post-function's, else keeps what
    // the issue had (a "Done" without either leaves the issue unresolved); leaving the done category clears it.
    const done = statusCategory(ctx.store, t.to) === 'done';
    issue.resolution = done ? (c.resolution ?? t.resolution ?? issue.resolution) : (c.resolution ?? null);
    issue.status = t.to;
    if (Object.keys(c.fields).length || c.comments.length) {
      const prev = (issue.fields?.comment as unknown[] | undefined) ?? [];
      issue.fields = {
        ...issue.fields,
        ...c.fields,
        ...(c.comments.length
          ? { comment: [...prev, ...c.comments.map((body) => ({ body, author: ctx.user.name, created: now }))] }
          : {}),
      };
    }
    if (c.labels) issue.labels = [...new Set(c.labels)];
    issue.updated = now;
    ctx.store.issues.update(issue);
    return new Reply(204, undefined);
  },

  'jira.editIssue': (ctx) => {
    const issue = requireJiraIssue(ctx);
    const f = ctx.body.fields as { summary?: string; description?: string | null };
    // An issue in a status with jira.issue.editable=false has no edit screen: Jira refuses every field sent.
    if (!issueEditable(ctx.store, issue)) {
      const errors = Object.fromEntries(Object.keys(f).map((k) => [k, cannotBeSetMessage(k)]));
      return new Reply(400, { errorMessages: [], errors });
    }
    if (f.summary !== undefined) {
      const summary = f.summary.trim();
      const problem = summaryProblem(summary);
      if (problem) return new Reply(400, { errorMessages: [], errors: { summary: problem } });
      issue.summary = summary;
    }
    if (f.description !== undefined) issue.description = f.description ?? '';
    ctx.store.issues.update(issue);
    return new Reply(204, undefined);
  },
};
