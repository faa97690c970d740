import { CasebridgeError } from '@casebridge/core/contract';
import type { Ctx } from '../service/context.js';
import type { CreateScreen, CustomField, Issue, NamedRef, Project, Store } from '../store/store.js';
import { lower, presentUser } from './jira-model.js';

/**
 * Jira's create screens: which fields an issue type's create accepts and requires, how each kind of value is
 * checked and normalised, and how the stored values are presented. Shared by Jira's issue create and synapseRT's
 * `createRunBug` / `createRunStepBug` (the add-on hands its `fields` to Jira's issue service), and described by the
 * createmeta resources (jira-meta.ts).
 */

/** On every create screen and never listed in `createScreens` (project, issue type and summary are required). */
export const ALWAYS_ON_SCREEN: readonly string[] = ['project', 'issuetype', 'summary', 'description'];

/** A type without a screen of its own: labels only, nothing required (the emulator's behaviour before screens). */
export const DEFAULT_SCREEN: CreateScreen = { fields: ['labels'], required: [] };

type Kind = 'labels' | 'components' | 'versions' | 'priority' | 'user' | 'date' | 'string' | 'number' | 'option';

interface FieldDef {
  name: string;
  kind: Kind;
  /** Arrays of the kind (multi-select, components, versions, labels). */
  many: boolean;
  schema: Record<string, unknown>;
  operations: string[];
}

const CUSTOM = 'com.atlassian.jira.plugin.system.customfieldtypes:';

/** A system field holding a list (`items`), as createmeta describes it. */
function listField(name: string, kind: Kind, items: string, system: string, operations: string[]): FieldDef {
  return { name, kind, many: true, schema: { type: 'array', items, system }, operations };
}

/** A system field holding one value of `type`. */
function oneField(name: string, kind: Kind, type: string, system: string): FieldDef {
  return { name, kind, many: false, schema: { type, system }, operations: ['set'] };
}

/** Jira's system fields a create screen may hold besides the four always there. */
export const SYSTEM_FIELDS: Record<string, FieldDef> = {
  labels: listField('Labels', 'labels', 'string', 'labels', ['add', 'set', 'remove']),
  components: listField('Component/s', 'components', 'component', 'components', ['add', 'set', 'remove']),
  fixVersions: listField('Fix Version/s', 'versions', 'version', 'fixVersions', ['set', 'add', 'remove']),
  versions: listField('Affects Version/s', 'versions', 'version', 'versions', ['set', 'add', 'remove']),
  priority: oneField('Priority', 'priority', 'priority', 'priority'),
  assignee: oneField('Assignee', 'user', 'user', 'assignee'),
  duedate: oneField('Due Date', 'date', 'date', 'duedate'),
  environment: oneField('Environment', 'string', 'string', 'environment'),
};

const CUSTOM_KINDS: Record<CustomField['type'], { kind: Kind; many: boolean; type: string; key: string }> = {
  string: { kind: 'string', many: false, type: 'string', key: 'textfield' },
  number: { kind: 'number', many: false, type: 'number', key: 'float' },
  option: { kind: 'option', many: false, type: 'option', key: 'select' },
  'multi-option': { kind: 'option', many: true, type: 'array', key: 'multiselect' },
  user: { kind: 'user', many: false, type: 'user', key: 'userpicker' },
};

/** The definition of a field id (system or custom); undefined when Jira knows no such field. */
export function fieldDef(store: Store, id: string): FieldDef | undefined {
  if (SYSTEM_FIELDS[id]) return SYSTEM_FIELDS[id];
  const cf = store.customFields.get(id);
  if (!cf) return undefined;
  const k = CUSTOM_KINDS[cf.type];
  return {
    name: cf.name,
    kind: k.kind,
    many: k.many,
    schema: {
      type: k.type,
      ...(k.many ? { items: 'option' } : {}),
      custom: CUSTOM + k.key,
      customId: Number(id.replace('customfield_', '')),
    },
    operations: k.many ? ['add', 'set', 'remove'] : ['set'],
  };
}

/** The create screen of an issue type in a project (type names compare case-insensitively). */
export function screenOf(project: Project, type: string): CreateScreen {
  const hit = Object.entries(project.createScreens ?? {}).find(([t]) => lower(t) === lower(type));
  return hit?.[1] ?? DEFAULT_SCREEN;
}

/** Jira's default priority: Medium when there is one, else the first. */
export function defaultPriority(store: Store): NamedRef | undefined {
  const all = store.priorities.all().sort((a, b) => a.id - b.id);
  const p = all.find((x) => x.name === 'Medium') ?? all[0];
  return p ? { id: String(p.id), name: p.name } : undefined;
}

export function cannotBeSetMessage(field: string): string {
  return `Field '${field}' cannot be set. It is not on the appropriate screen, or unknown.`;
}

/** A value refused; the message is Jira's for that field. In the family, kind `refused`. */
export class Refused extends CasebridgeError {
  constructor(message: string) {
    super('refused', message, {}, false, { redact: false });
  }
}

const isEmpty = (v: unknown) =>
  v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);

type Ref = { id?: unknown; name?: unknown; value?: unknown };

function asRef(v: unknown, what: string): Ref {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new Refused(`${what}: expected {"name": ...} or {"id": ...}`);
  return v as Ref;
}

/** Finds `{id}` or `{name}` among named things; Jira's "<What> name 'x' is not valid" otherwise. */
function pickNamed(list: readonly NamedRef[], v: unknown, what: string): NamedRef {
  const r = asRef(v, what);
  const hit =
    r.id !== undefined
      ? list.find((x) => x.id === String(r.id))
      : list.find((x) => lower(x.name) === lower(String(r.name ?? '')));
  if (!hit) {
    throw new Refused(
      r.id !== undefined ? `${what} id '${r.id}' is not valid` : `${what} name '${r.name}' is not valid`,
    );
  }
  return { id: hit.id, name: hit.name };
}

function pickOption(cf: CustomField, v: unknown): { id: string; value: string } {
  const r = asRef(v, 'Option');
  const hit =
    r.id !== undefined
      ? cf.options.find((o) => o.id === String(r.id))
      : cf.options.find((o) => o.value === String(r.value ?? r.name ?? ''));
  if (!hit) {
    throw new Refused(
      r.id !== undefined ? `Option id '${r.id}' is not valid` : `Option value '${r.value ?? r.name}' is not valid`,
    );
  }
  return { ...hit };
}

/** Checks one value of a field on the screen and returns it normalised for the store. */
function normalise(store: Store, project: Project, id: string, def: FieldDef, value: unknown): unknown {
  const one = (v: unknown): unknown => {
    switch (def.kind) {
      case 'labels':
        if (typeof v !== 'string' || v === '' || /\s/.test(v)) {
          throw new Refused(`The label '${String(v)}' contains spaces which is invalid.`);
        }
        return v;
      case 'components':
        return pickNamed(project.components ?? [], v, 'Component');
      case 'versions':
        return pickNamed(project.versions ?? [], v, 'Version');
      case 'priority':
        return pickNamed(
          store.priorities.all().map((p) => ({ id: String(p.id), name: p.name })),
          v,
          'Priority',
        );
      case 'user': {
        const name = asRef(v, 'User').name;
        if (!store.users.find((u) => u.name === name)) throw new Refused(`User '${String(name)}' does not exist.`);
        return { name };
      }
      case 'date':
        if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(v) || Number.isNaN(Date.parse(v))) {
          throw new Refused(`Error parsing date string: ${String(v)}`);
        }
        return v;
      case 'string':
        if (typeof v !== 'string') throw new Refused('Operation value must be a string');
        return v;
      case 'number':
        if (typeof v !== 'number' || !Number.isFinite(v)) throw new Refused('Operation value must be a number');
        return v;
      case 'option':
        return pickOption(store.customFields.get(id) as CustomField, v);
    }
  };
  if (!def.many) return one(value);
  if (!Array.isArray(value)) throw new Refused('data was not an array');
  const out = value.map(one);
  // Jira keeps a value once.
  return out.filter((v, i) => out.findIndex((w) => JSON.stringify(w) === JSON.stringify(v)) === i);
}

/** What a create's screen fields came to: the labels, the other fields normalised, and Jira's errors by field. */
export interface CheckedFields {
  labels: string[];
  fields: Record<string, unknown>;
  errors: Record<string, string>;
}

/**
 * Checks the fields of an issue create against the issue type's create screen, as Jira's issue service does: a
 * field not on the screen (or unknown) "cannot be set", a value not allowed is refused naming it, a required field
 * missing "is required". Project, issue type and summary are the caller's (they decide the screen); a required
 * `description` is checked here. Every field at fault gets its entry, as in Jira's answer.
 */
export function checkScreenFields(
  store: Store,
  project: Project,
  type: string,
  input: Record<string, unknown>,
): CheckedFields {
  return checkFieldsOn(store, project, screenOf(project, type), input, ALWAYS_ON_SCREEN);
}

/**
 * The same check against any screen (a transition's, see jira-workflow.ts): `skip` are fields the caller deals with
 * itself (on a create screen the four always there).
 */
export function checkFieldsOn(
  store: Store,
  project: Project,
  screen: CreateScreen,
  input: Record<string, unknown>,
  skip: readonly string[],
): CheckedFields {
  const errors: Record<string, string> = {};
  const fields: Record<string, unknown> = {};
  let labels: string[] = [];
  for (const [id, value] of Object.entries(input)) {
    if (skip.includes(id)) continue;
    const def = fieldDef(store, id);
    if (!def || !screen.fields.includes(id)) {
      errors[id] = cannotBeSetMessage(id);
      continue;
    }
    // Jira takes null (and an empty list) as "no value"; a required field then reports missing.
    if (value === null || (Array.isArray(value) && value.length === 0)) continue;
    try {
      const v = normalise(store, project, id, def, value);
      if (id === 'labels') labels = v as string[];
      else fields[id] = v;
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      errors[id] = err.message;
    }
  }
  // The priority scheme's default applies when the screen has the field and the create leaves it out.
  if (screen.fields.includes('priority') && fields.priority === undefined && errors.priority === undefined) {
    const p = defaultPriority(store);
    if (p) fields.priority = p;
  }
  for (const id of screen.required) {
    if (errors[id] !== undefined) continue;
    const given = id === 'description' ? input.description : id === 'labels' ? labels : fields[id];
    if (isEmpty(given))
      errors[id] = `${id === 'description' ? 'Description' : (fieldDef(store, id)?.name ?? id)} is required.`;
  }
  return { labels, fields, errors };
}

/** A stored value as Jira writes it in an issue's fields. */
function presentValue(ctx: Ctx, def: FieldDef, value: unknown): unknown {
  const api = `${ctx.origin}/rest/api/2`;
  const one = (v: any): unknown => {
    switch (def.kind) {
      case 'components':
        return { self: `${api}/component/${v.id}`, id: v.id, name: v.name };
      case 'versions':
        return { self: `${api}/version/${v.id}`, id: v.id, name: v.name, archived: false, released: false };
      case 'priority':
        return {
          self: `${api}/priority/${v.id}`,
          iconUrl: `${ctx.origin}/images/icons/priorities/${lower(v.name)}.svg`,
          name: v.name,
          id: v.id,
        };
      case 'user': {
        const u = ctx.store.users.find((x) => x.name === v.name);
        return u ? presentUser(ctx, u) : { name: v.name };
      }
      case 'option':
        return { self: `${api}/customFieldOption/${v.id}`, value: v.value, id: v.id };
      default:
        return v;
    }
  };
  return def.many && Array.isArray(value) ? value.map(one) : one(value);
}

/**
 * The create-screen fields of an issue as Jira answers them: every field of its type's screen (null, or [] for a
 * list, when unset) and any other stored field. Labels are the issue's own column and are left to the caller.
 */
export function presentScreenFields(ctx: Ctx, issue: Issue): Record<string, unknown> {
  const project = ctx.store.projects.get(issue.projectId);
  const ids = new Set([...(project ? screenOf(project, issue.type).fields : []), ...Object.keys(issue.fields ?? {})]);
  const out: Record<string, unknown> = {};
  for (const id of ids) {
    const def = fieldDef(ctx.store, id);
    if (id === 'labels' || !def) continue;
    const v = issue.fields?.[id];
    out[id] = v === undefined || v === null ? (def.many ? [] : null) : presentValue(ctx, def, v);
  }
  return out;
}

/** The allowed values of a field for createmeta (components, versions, priorities, options), if it has any. */
export function allowedValues(ctx: Ctx, project: Project, id: string): unknown[] | undefined {
  const def = fieldDef(ctx.store, id);
  if (!def) return undefined;
  switch (def.kind) {
    case 'components':
      return (project.components ?? []).map((c) => presentValue(ctx, { ...def, many: false }, c));
    case 'versions':
      return (project.versions ?? []).map((v) => ({
        ...(presentValue(ctx, { ...def, many: false }, v) as object),
        projectId: Number(project.id),
      }));
    case 'priority':
      return ctx.store.priorities
        .all()
        .sort((a, b) => a.id - b.id)
        .map((p) => presentValue(ctx, def, { id: String(p.id), name: p.name }));
    case 'option':
      return (ctx.store.customFields.get(id)?.options ?? []).map((o) => presentValue(ctx, { ...def, many: false }, o));
    default:
      return undefined;
  }
}

/** A stored priority presented (createmeta's default value). */
export function presentPriority(ctx: Ctx, p: NamedRef): unknown {
  return presentValue(ctx, SYSTEM_FIELDS.priority as FieldDef, p);
}
