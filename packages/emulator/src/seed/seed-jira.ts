import { z } from 'zod';
import { initialStatus, statusCategory, workflowFor } from '../jira/workflows.js';
import type { RunStatusDef, Store, Transition, Workflow } from '../store/store.js';

/**
 * The per-instance configuration of a seed (see seed.ts): Jira workflows per project and issue type, synapseRT's
 * run statuses (built-ins renamed or disabled, custom ones), and the Jira version the emulator answers as. Each is
 * checked at start with a message naming the field, and kept in the store, so a reset or a `--data` restart keeps it.
 */

const category = z.enum(['new', 'indeterminate', 'done']);

/** Fields a transition screen may hold besides the create-screen fields: `resolution` and `comment`. */
export const TRANSITION_ONLY_FIELDS = ['resolution', 'comment'] as const;

const transitionSchema = z.strictObject({
  /** Jira transition id, unique in its workflow. */
  id: z.number().int().positive(),
  /** The name the instance shows, in its language. */
  name: z.string().min(1),
  /** Statuses it is offered from; `[]`: a global transition, offered from every other status. */
  from: z.array(z.string().min(1)).default([]),
  to: z.string().min(1),
  /** A post-function sets this resolution (unless the screen's `resolution` field gives one); null: none. */
  resolution: z.string().min(1).nullable().default(null),
  /** The transition screen; absent: the transition has none (no field or comment can be sent with it). */
  screen: z
    .strictObject({
      fields: z.array(z.string().min(1)).default([]),
      required: z.array(z.string().min(1)).default([]),
      /**
       * Fields a workflow validator requires (Jira's Field Required Validator): not flagged `required` in the
       * transition's fields, yet refused when missing, as real instances do.
       */
      validators: z.array(z.string().min(1)).default([]),
    })
    .optional(),
});

export const workflowSchema = z.strictObject({
  name: z.string().min(1),
  /** Project keys using it; `[]`: every project. */
  projects: z.array(z.string().min(1)).default([]),
  /** Issue type names using it (case-insensitive); `[]`: every type. */
  issueTypes: z.array(z.string().min(1)).default([]),
  /** The first status is where new issues start. */
  statuses: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        category,
        /** `jira.issue.editable`: false refuses edits of issues in this status. */
        editable: z.boolean().default(true),
      }),
    )
    .min(1),
  transitions: z.array(transitionSchema).default([]),
});

const BUILT_IN_NAMES = ['Passed', 'Failed', 'Blocked', 'Not Tested', 'NA'] as const;

export const runStatusSchema = z.strictObject({
  /** Set: this entry configures that built-in status (renames it to `name`, disables it...); absent: a custom one. */
  builtIn: z.enum(BUILT_IN_NAMES).optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  color: z.string().optional(),
  category: z.enum(['Executed', 'Not Executed']).optional(),
  enabled: z.boolean().default(true),
});

/** Jira versions the switch knows: the createmeta resources differ before 8.4 and from 9.0. */
export const jiraVersionSchema = z
  .string()
  .regex(/^\d+\.\d+(\.\d+)?$/, 'a Jira version is major.minor, e.g. 8.20 or 10.3')
  .default('10.3');

type SeedWorkflow = z.output<typeof workflowSchema>;
type SeedRunStatus = z.output<typeof runStatusSchema>;

/** Checks a seed's workflows (statuses exist, categories agree, screens hold known fields) and stores them. */
export function applyWorkflows(
  store: Store,
  workflows: SeedWorkflow[],
  projectKeys: string[],
  isField: (id: string) => boolean,
): void {
  const resolutionNames = resolutions(store).map((r) => r.name);
  const categories = new Map<string, string>();
  workflows.forEach((w, n) => {
    const at = `workflows.${n} (${w.name})`;
    for (const p of w.projects) {
      if (!projectKeys.includes(p)) throw new Error(`seed: ${at}.projects: ${p} is not a project of the seed`);
    }
    const names = w.statuses.map((s) => s.name.toLowerCase());
    for (const s of w.statuses) {
      const seen = categories.get(s.name.toLowerCase());
      if (seen && seen !== s.category) {
        throw new Error(
          `seed: ${at}: status ${s.name} is ${s.category} here and ${seen} in another workflow (a Jira status has one category)`,
        );
      }
      categories.set(s.name.toLowerCase(), s.category);
    }
    const ids = new Set<number>();
    for (const t of w.transitions) {
      const where = `${at}.transitions.${t.id}`;
      if (ids.has(t.id)) throw new Error(`seed: ${where}: transition id ${t.id} is used twice`);
      ids.add(t.id);
      for (const s of [...t.from, t.to]) {
        if (!names.includes(s.toLowerCase())) {
          throw new Error(`seed: ${where}: status ${s} is not among the workflow's statuses (${names.join(', ')})`);
        }
      }
      for (const f of t.screen?.fields ?? []) {
        if (!(TRANSITION_ONLY_FIELDS as readonly string[]).includes(f) && !isField(f)) {
          throw new Error(
            `seed: ${where}.screen.fields: unknown field '${f}' (expected resolution, comment, a create-screen field or a customFields id)`,
          );
        }
      }
      for (const key of ['required', 'validators'] as const) {
        for (const f of t.screen?.[key] ?? []) {
          if (!t.screen?.fields.includes(f))
            throw new Error(`seed: ${where}.screen.${key}: '${f}' is not in its fields`);
        }
      }
      if (t.resolution !== null && !resolutionNames.some((r) => r.toLowerCase() === t.resolution?.toLowerCase())) {
        throw new Error(
          `seed: ${where}.resolution: ${t.resolution} is not a resolution (${resolutionNames.join(', ')})`,
        );
      }
    }
  });
  for (const w of workflows) {
    store.workflows.insert({
      name: w.name,
      projects: w.projects,
      issueTypes: w.issueTypes,
      statuses: w.statuses,
      transitions: w.transitions.map(
        (t): Transition => ({
          id: t.id,
          name: t.name,
          from: t.from,
          to: t.to,
          // The resolution's own spelling (the seed may write it in another case).
          resolution:
            t.resolution === null
              ? null
              : (resolutionNames.find((r) => r.toLowerCase() === t.resolution?.toLowerCase()) ?? t.resolution),
          // Seeded transitions always carry a screen (empty: none), so only the default workflow's rule of a
          // resolving transition taking `resolution` without one applies to the default workflow alone.
          screen: t.screen ?? { fields: [], required: [], validators: [] },
        }),
      ),
    } satisfies Omit<Workflow, 'id'>);
  }
}

/**
 * A seeded issue's status and resolution: the status given (one of its workflow's, when a seeded workflow has it)
 * or the workflow's first; the resolution given, else `Done` for a status in the done category.
 */
export function seededStatus(
  store: Store,
  projectId: number,
  issue: { type: string; status?: string | undefined; resolution?: string | null | undefined },
  key: string,
): { status: string; resolution: string | null } {
  const w = workflowFor(store, projectId, issue.type);
  if (issue.status && w && !w.statuses.some((s) => s.name.toLowerCase() === issue.status?.toLowerCase())) {
    throw new Error(
      `seed: ${key}.status: ${issue.status} is not a status of workflow ${w.name} (${w.statuses.map((s) => s.name).join(', ')})`,
    );
  }
  const status = issue.status ?? initialStatus(store, projectId, issue.type);
  // A done status resolves the issue: Done, or the instance's first resolution when it has no Done.
  const all = resolutions(store);
  const done = (all.find((r) => r.name === 'Done') ?? all[0])?.name ?? null;
  const resolution =
    issue.resolution !== undefined ? issue.resolution : statusCategory(store, status) === 'done' ? done : null;
  return { status, resolution };
}

const BUILT_IN_STATUSES: Omit<RunStatusDef, 'id' | 'enabled' | 'immutable' | 'isDefault'>[] = [
  { name: 'Passed', description: 'Test passed', color: '#14892c', lozenge: 'aui-lozenge-success' },
  { name: 'Failed', description: 'Test failed', color: '#d04437', lozenge: 'aui-lozenge-error' },
  { name: 'Blocked', description: 'Test is blocked', color: '#4a6785', lozenge: 'aui-lozenge-complete' },
  { name: 'Not Tested', description: 'Not tested yet', color: '#cccccc', lozenge: 'aui-lozenge-default' },
  { name: 'NA', description: 'Not applicable', color: '#f6c342', lozenge: 'aui-lozenge-current' },
];

/**
 * The run statuses of the instance: the five built-ins (ids 1..5) as the seed configures them, then the custom
 * ones. synapseRT's admin page rules: `Not Tested` can be neither renamed, disabled nor given a category; names are
 * unique, compared case-insensitively.
 */
export function applyRunStatuses(store: Store, entries: SeedRunStatus[]): void {
  const config = new Map<string, SeedRunStatus>();
  entries.forEach((e, n) => {
    if (!e.builtIn) return;
    const at = `runStatuses.${n}`;
    if (config.has(e.builtIn)) throw new Error(`seed: ${at}: built-in status ${e.builtIn} is configured twice`);
    if (e.builtIn === 'Not Tested') {
      if (e.name.toLowerCase() !== 'not tested' || !e.enabled || e.category) {
        throw new Error(`seed: ${at}: Not Tested can be neither renamed, disabled nor given a category`);
      }
    }
    config.set(e.builtIn, e);
  });
  const seen = new Set<string>();
  const add = (def: Omit<RunStatusDef, 'id'>) => {
    const key = def.name.trim().toLowerCase();
    if (seen.has(key))
      throw new Error(`seed: runStatuses: the name ${def.name} is used twice (names are case-insensitive)`);
    seen.add(key);
    store.runStatuses.insert(def);
  };
  for (const b of BUILT_IN_STATUSES) {
    const c = config.get(b.name);
    add({
      ...b,
      name: c?.name.trim() ?? b.name,
      description: c?.description ?? b.description,
      color: c?.color ?? b.color,
      enabled: c?.enabled ?? true,
      immutable: true,
      isDefault: b.name === 'Not Tested',
      builtIn: b.name,
      category: b.name === 'Not Tested' ? 'Not Executed' : (c?.category ?? 'Executed'),
    });
  }
  for (const e of entries) {
    if (e.builtIn) continue;
    add({
      name: e.name.trim(),
      description: e.description ?? '',
      color: e.color ?? '#999999',
      lozenge: 'aui-lozenge-default',
      enabled: e.enabled,
      immutable: false,
      isDefault: false,
      builtIn: null,
      category: e.category ?? 'Executed',
    });
  }
}

/** Jira's default resolutions with their ids. */
const DEFAULT_RESOLUTIONS: { id: string; name: string }[] = [
  { id: '1', name: 'Fixed' },
  { id: '2', name: "Won't Fix" },
  { id: '3', name: 'Duplicate' },
  { id: '4', name: 'Incomplete' },
  { id: '5', name: 'Cannot Reproduce' },
  { id: '10000', name: 'Done' },
];

export const resolutionsSchema = z.array(z.string().min(1)).min(1).optional();

/** Keeps a seed's resolutions (names in the instance's language): Jira's ids for its default names, 10100... else. */
export function applyResolutions(store: Store, names: string[] | undefined): void {
  if (!names) return;
  const lowered = names.map((n) => n.toLowerCase());
  const twice = names.find((_, i) => lowered.indexOf(lowered[i] as string) !== i);
  if (twice) throw new Error(`seed: resolutions: ${twice} is listed twice`);
  let next = 10100;
  const value = names.map((name) => ({
    id: DEFAULT_RESOLUTIONS.find((d) => d.name.toLowerCase() === name.toLowerCase())?.id ?? String(next++),
    name,
  }));
  store.settings.insert({ id: 'resolutions', value });
}

/** The instance's resolutions, in order: the seed's, else Jira's defaults. */
export function resolutions(store: Store): { id: string; name: string }[] {
  const v = store.settings.get('resolutions')?.value;
  return Array.isArray(v) ? (v as { id: string; name: string }[]) : DEFAULT_RESOLUTIONS;
}

/** The Jira version the emulator answers as (`jiraVersion` of the seed). */
export function jiraVersion(store: Store): string {
  const v = store.settings.get('jiraVersion')?.value;
  return typeof v === 'string' ? v : '10.3';
}

/** True when the emulated Jira is at least `major.minor`. */
export function jiraAtLeast(store: Store, major: number, minor = 0): boolean {
  const [a = 0, b = 0] = jiraVersion(store).split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

/**
 * The DEMO project's Bug workflow, as a team's administrator would set it up in a German-language instance: no
 * closing transition from the first status (work starts first), closing asks for a resolution and a root cause
 * on its screen, a second closing transition sets no resolution, and closed bugs cannot be edited. A careful client
 * closes a bug in two steps: "Bearbeiten", then the done-category transition with the screen's required fields.
 */
export const DEMO_BUG_WORKFLOW: z.input<typeof workflowSchema> = {
  name: 'DEMO: Fehler-Workflow',
  projects: ['DEMO'],
  issueTypes: ['Bug'],
  statuses: [
    { name: 'Offen', category: 'new' },
    { name: 'In Arbeit', category: 'indeterminate' },
    { name: 'Erledigt', category: 'done', editable: false },
    { name: 'Wieder geöffnet', category: 'new' },
  ],
  transitions: [
    { id: 11, name: 'Bearbeiten', from: ['Offen', 'Wieder geöffnet'], to: 'In Arbeit' },
    {
      id: 21,
      name: 'Erledigen',
      from: ['In Arbeit'],
      to: 'Erledigt',
      screen: { fields: ['resolution', 'customfield_10200', 'comment'], required: ['resolution', 'customfield_10200'] },
    },
    { id: 31, name: 'Ohne Lösung schließen', from: ['In Arbeit'], to: 'Erledigt' },
    { id: 41, name: 'Wieder öffnen', from: ['Erledigt'], to: 'Wieder geöffnet' },
  ],
};

/** The custom field the demo's closing screen requires. */
export const DEMO_ROOT_CAUSE = {
  id: 'customfield_10200',
  name: 'Ursache',
  type: 'option' as const,
  options: ['Code', 'Konfiguration', 'Umgebung', 'Test'],
};
