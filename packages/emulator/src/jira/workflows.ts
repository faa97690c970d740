import type { Issue, Store, Transition, Workflow, WorkflowStatus } from '../store/store.js';

/**
 * Jira workflows as the emulator keeps them: which workflow an issue follows (by project and issue type), the
 * statuses with their category and `jira.issue.editable` flag, and the transitions offered from a status. Issues
 * of projects and types no seeded workflow names follow the default workflow: the `transitions` table and Jira's
 * default statuses below. Store-level only (no request context), so the domain rules and the presenters share it.
 */

export type CategoryKey = WorkflowStatus['category'];

const lower = (s: string) => s.toLowerCase();

/** Jira's default statuses (ids as Jira numbers them); the default workflow uses Open, In Progress, Done, Reopened. */
export const DEFAULT_STATUSES: Record<string, { id: string; category: CategoryKey }> = {
  Open: { id: '1', category: 'new' },
  'In Progress': { id: '3', category: 'indeterminate' },
  Reopened: { id: '4', category: 'new' },
  Resolved: { id: '5', category: 'done' },
  Closed: { id: '6', category: 'done' },
  'To Do': { id: '10000', category: 'new' },
  Done: { id: '10001', category: 'done' },
};

/** Where an issue starts in the default workflow. */
export const DEFAULT_INITIAL_STATUS = 'Open';

/** How specific a workflow's claim is: a project and a type beat a type alone, which beats a project alone. */
function specificity(w: Workflow): number {
  return (w.issueTypes.length ? 2 : 0) + (w.projects.length ? 1 : 0);
}

/** The seeded workflow of issues of `type` in the project, or undefined for the default workflow. */
export function workflowFor(store: Store, projectId: number, type: string): Workflow | undefined {
  if (store.workflows.size === 0) return undefined;
  const key = store.projects.get(projectId)?.key;
  const hits = store.workflows
    .all()
    .filter(
      (w) =>
        (w.projects.length === 0 || (key !== undefined && w.projects.includes(key))) &&
        (w.issueTypes.length === 0 || w.issueTypes.some((t) => lower(t) === lower(type))),
    )
    .sort((a, b) => specificity(b) - specificity(a) || a.id - b.id);
  return hits[0];
}

export function workflowOf(store: Store, issue: Issue): Workflow | undefined {
  return workflowFor(store, issue.projectId, issue.type);
}

/** The status a new issue of `type` gets: its workflow's first status. */
export function initialStatus(store: Store, projectId: number, type: string): string {
  return workflowFor(store, projectId, type)?.statuses[0]?.name ?? DEFAULT_INITIAL_STATUS;
}

/** A status of a workflow by name (case-insensitive). */
function statusIn(w: Workflow, name: string): WorkflowStatus | undefined {
  return w.statuses.find((s) => lower(s.name) === lower(name));
}

/**
 * A status's category. Jira's statuses are instance-wide, so the category is the one a seeded workflow gives the
 * name (the seed refuses two different ones), else Jira's default, else guessed from the name.
 */
export function statusCategory(store: Store, name: string): CategoryKey {
  for (const w of store.workflows.all()) {
    const s = statusIn(w, name);
    if (s) return s.category;
  }
  const known = Object.entries(DEFAULT_STATUSES).find(([n]) => lower(n) === lower(name));
  if (known) return known[1].category;
  return /done|closed|resolved|complete/i.test(name)
    ? 'done'
    : /progress|review|testing/i.test(name)
      ? 'indeterminate'
      : 'new';
}

/** False when the issue's status carries `jira.issue.editable=false` in its workflow (edits are refused). */
export function issueEditable(store: Store, issue: Issue): boolean {
  const w = workflowOf(store, issue);
  return w ? (statusIn(w, issue.status)?.editable ?? true) : true;
}

/** Every transition of the issue's workflow, by id. */
function transitionsOf(store: Store, issue: Issue): Transition[] {
  const w = workflowOf(store, issue);
  return [...(w ? w.transitions : store.transitions.all())].sort((a, b) => a.id - b.id);
}

/** Transitions offered from the issue's status: those listing it, and global ones (no `from`) that lead elsewhere. */
export function offeredTransitions(store: Store, issue: Issue): Transition[] {
  const from = lower(issue.status);
  return transitionsOf(store, issue).filter(
    (t) => lower(t.to) !== from && (t.from.length === 0 || t.from.some((s) => lower(s) === from)),
  );
}

/** Every status name the instance knows: Jira's defaults, the workflows' and those issues are in. */
export function workflowStatusNames(store: Store): string[] {
  const names = new Set<string>(Object.keys(DEFAULT_STATUSES));
  for (const w of store.workflows.all()) for (const s of w.statuses) names.add(s.name);
  for (const t of store.transitions.all()) names.add(t.to);
  return [...names];
}
