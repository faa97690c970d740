import { jiraAtLeast, jiraVersion } from '../seed/seed-jira.js';
import { type Ctx, type Handler, notFound } from '../service/context.js';
import type { Project } from '../store/store.js';
import { allowedValues, defaultPriority, fieldDef, presentPriority, screenOf } from './jira-fields.js';
import {
  issueTypeOf,
  lower,
  presentIssueType,
  presentProjectRef,
  projectByIdOrKey,
  projectIssueTypes,
} from './jira-model.js';

/**
 * Jira's create-screen metadata: the DC 8.4+ resources `issue/createmeta/{project}/issuetypes[/{issueTypeId}]`
 * (paged `{maxResults, startAt, total, isLast, values}`) and the older `issue/createmeta?projectKeys=...` (removed in
 * Jira 9.0, JRASERVER-74965). Both answer from the projects' create screens (jira-fields.ts); which of them exists
 * follows the seed's `jiraVersion`, as on a real server: before 8.4 the old one only, from 9.0 the paged ones only.
 */

/** The 404 of a resource this Jira version does not have, in Jira's error shape. */
function absent(ctx: Ctx, path: string, why: string): never {
  throw notFound(`No operation at GET ${path}: ${why} (this Jira is ${jiraVersion(ctx.store)}, seed jiraVersion)`);
}

function requirePaged(ctx: Ctx): void {
  if (!jiraAtLeast(ctx.store, 8, 4)) {
    absent(ctx, '/rest/api/2/issue/createmeta/{projectIdOrKey}/issuetypes', 'added in Jira 8.4');
  }
}

const DEFAULT_PAGE = 50;
const MAX_PAGE = 1000;

function requireProject(ctx: Ctx): Project {
  const ref = String(ctx.params.projectIdOrKey);
  const p = projectByIdOrKey(ctx.store, ref);
  if (!p) throw notFound(`No project could be found with ${/^\d+$/.test(ref) ? 'id' : 'key'} '${ref}'.`);
  return p;
}

function page(ctx: Ctx, all: unknown[]): Record<string, unknown> {
  const startAt = (ctx.query.startAt as number | undefined) ?? 0;
  const maxResults = Math.min((ctx.query.maxResults as number | undefined) ?? DEFAULT_PAGE, MAX_PAGE);
  const values = all.slice(startAt, startAt + maxResults);
  return { maxResults, startAt, total: all.length, isLast: startAt + values.length >= all.length, values };
}

function meta(
  fieldId: string,
  name: string,
  required: boolean,
  schema: Record<string, unknown>,
  operations: string[],
  allowed?: unknown[],
): Record<string, unknown> {
  return {
    required,
    schema,
    name,
    fieldId,
    hasDefaultValue: false,
    operations,
    ...(allowed ? { allowedValues: allowed } : {}),
  };
}

/** The fields of a type's create screen: the four always there, then the screen's own in its order. */
export function fieldMetas(ctx: Ctx, project: Project, type: string): Record<string, unknown>[] {
  const screen = screenOf(project, type);
  const out = [
    meta('summary', 'Summary', true, { type: 'string', system: 'summary' }, ['set']),
    meta(
      'issuetype',
      'Issue Type',
      true,
      { type: 'issuetype', system: 'issuetype' },
      [],
      [presentIssueType(ctx, type)],
    ),
    meta(
      'project',
      'Project',
      true,
      { type: 'project', system: 'project' },
      ['set'],
      [presentProjectRef(ctx, project)],
    ),
    meta(
      'description',
      'Description',
      screen.required.includes('description'),
      { type: 'string', system: 'description' },
      ['set'],
    ),
  ];
  for (const id of screen.fields) {
    const def = fieldDef(ctx.store, id);
    if (!def) continue;
    const m = meta(
      id,
      def.name,
      screen.required.includes(id),
      def.schema,
      def.operations,
      allowedValues(ctx, project, id),
    );
    const dflt = id === 'priority' ? defaultPriority(ctx.store) : undefined;
    if (dflt) Object.assign(m, { hasDefaultValue: true, defaultValue: presentPriority(ctx, dflt) });
    out.push(m);
  }
  return out;
}

const list = (v: unknown) =>
  String(v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

export const jiraMetaHandlers: Record<string, Handler> = {
  'jira.createMetaIssueTypes': (ctx) => {
    requirePaged(ctx);
    const project = requireProject(ctx);
    return page(
      ctx,
      projectIssueTypes(ctx.store, project).map((n) => presentIssueType(ctx, n)),
    );
  },

  'jira.createMetaFields': (ctx) => {
    requirePaged(ctx);
    const project = requireProject(ctx);
    const id = String(ctx.params.issueTypeId);
    const type = projectIssueTypes(ctx.store, project).find((n) => issueTypeOf(n).id === id);
    if (!type) throw notFound(`Issue type with id '${id}' does not exist in project ${project.key}.`);
    return page(ctx, fieldMetas(ctx, project, type));
  },

  'jira.createMeta': (ctx) => {
    if (jiraAtLeast(ctx.store, 9)) {
      absent(ctx, '/rest/api/2/issue/createmeta', 'removed in Jira 9.0, use /issue/createmeta/{project}/issuetypes');
    }
    const keys = list(ctx.query.projectKeys).map(lower);
    const ids = list(ctx.query.projectIds);
    const typeNames = list(ctx.query.issuetypeNames).map(lower);
    const typeIds = list(ctx.query.issuetypeIds);
    const withFields = list(ctx.query.expand).includes('projects.issuetypes.fields');
    // As in Jira, an unknown key or type name is left out rather than refused.
    const projects = ctx.store.projects
      .all()
      .filter((p) => (!keys.length && !ids.length) || keys.includes(lower(p.key)) || ids.includes(String(p.id)));
    return {
      expand: 'projects',
      projects: projects.map((p) => ({
        expand: 'issuetypes',
        ...presentProjectRef(ctx, p),
        issuetypes: projectIssueTypes(ctx.store, p)
          .filter(
            (n) =>
              (!typeNames.length && !typeIds.length) ||
              typeNames.includes(lower(n)) ||
              typeIds.includes(issueTypeOf(n).id),
          )
          .map((n) => ({
            ...presentIssueType(ctx, n),
            expand: 'fields',
            ...(withFields
              ? { fields: Object.fromEntries(fieldMetas(ctx, p, n).map((m) => [m.fieldId as string, m])) }
              : {}),
          })),
      })),
    };
  },
};
