import * as z from 'zod';
import type { DefectFields } from './options.js';

/**
 * `defects.fields`: Jira create fields sent with every defect. `customfield_NNNNN` takes any JSON, as only the create
 * screen knows its shape (`doctor` checks it); fields casebridge writes itself are refused for their own option.
 */

export type { DefectFields, JiraRef } from './options.js';

/** Fields casebridge writes itself, with the option that sets each. */
const OWN: Record<string, string> = {
  project: 'defects.projectKey',
  summary: 'defects.summaryTemplate',
  description: 'defects.descriptionTemplate',
  issuetype: 'defects.issueType',
};

const ref = z
  .strictObject({ name: z.string().min(1).optional(), id: z.string().min(1).optional() })
  .refine((r) => r.name !== undefined || r.id !== undefined, 'expected { name: "..." } or { id: "..." }');

const KNOWN: Record<string, z.ZodType> = {
  labels: z.array(z.string().regex(/^\S+$/, 'expected a label without spaces (Jira refuses them)')),
  components: z.array(ref, { message: 'expected a list, e.g. [{ name: "Checkout" }]' }),
  priority: ref,
  fixVersions: z.array(ref, { message: 'expected a list, e.g. [{ name: "1.1" }]' }),
  versions: z.array(ref, { message: 'expected a list, e.g. [{ name: "1.0" }]' }),
  assignee: z.strictObject({ name: z.string().min(1) }),
  duedate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date as yyyy-MM-dd'),
  environment: z.string(),
};

export const CUSTOM_FIELD = /^customfield_\d+$/;

/** Whether a value survives JSON as it is (what a custom field may hold). */
function isJson(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJson);
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.values(v).every(isJson);
  return false;
}

export const defectFieldsSchema = z.custom<DefectFields>().superRefine((value, ctx) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    ctx.addIssue({ code: 'custom', message: 'expected an object of Jira create fields, e.g. { labels: ["ci"] }' });
    return;
  }
  for (const [id, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    const own = OWN[id];
    if (own) {
      ctx.addIssue({ code: 'custom', path: [id], message: `casebridge sets ${id} itself: use ${own} instead` });
      continue;
    }
    const known = KNOWN[id];
    if (known) {
      const parsed = known.safeParse(v);
      for (const issue of parsed.error?.issues ?? []) {
        ctx.addIssue({ code: 'custom', path: [id, ...issue.path.map(String)], message: issue.message });
      }
    } else if (CUSTOM_FIELD.test(id)) {
      if (!isJson(v)) ctx.addIssue({ code: 'custom', path: [id], message: 'expected a JSON value' });
    } else {
      ctx.addIssue({
        code: 'custom',
        path: [id],
        message: `not a field casebridge can send: expected ${Object.keys(KNOWN).join(', ')} or customfield_NNNNN`,
      });
    }
  }
});

/** A field of a create screen as createmeta describes it (the parts the check reads). */
export interface ScreenField {
  fieldId: string;
  name: string;
  required: boolean;
  hasDefaultValue?: boolean;
  schema: { type: string; items?: string | undefined; custom?: string | undefined };
  allowedValues?: Array<{ id?: string | number; name?: string | undefined; value?: string | undefined }> | undefined;
}

/** One field at fault, with the fix: `defects.fields.<id>: <example>`. */
export interface ScreenProblem {
  fieldId: string;
  problem: string;
  fix: string;
}

/** Fields casebridge always sends (and project / issue type decide the screen): never asked of `defects.fields`. */
const SENT = new Set(['project', 'issuetype', 'summary', 'description']);

/** What is wrong with `defects.fields` for a create screen, each problem with a fix using an allowed value. */
export function screenProblems(screen: readonly ScreenField[], fields: DefectFields = {}): ScreenProblem[] {
  const out: ScreenProblem[] = [];
  const given = fields as Record<string, unknown>;
  const byId = new Map(screen.map((f) => [f.fieldId, f]));
  for (const f of screen) {
    if (!f.required || SENT.has(f.fieldId) || (f.fieldId === 'priority' && f.hasDefaultValue)) continue;
    const v = given[f.fieldId];
    if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) {
      out.push({ fieldId: f.fieldId, problem: `${f.name} (${f.fieldId}) is required`, fix: fixFor(f) });
    }
  }
  for (const [id, v] of Object.entries(given)) {
    if (v === undefined) continue;
    const f = byId.get(id);
    if (!f) {
      out.push({ fieldId: id, problem: `${id} is not on the create screen`, fix: `remove defects.fields.${id}` });
      continue;
    }
    if (!f.allowedValues || f.allowedValues.length === 0) continue;
    const bad = (Array.isArray(v) ? v : [v]).filter((x) => !allowed(f, x));
    if (bad.length > 0) {
      const names = f.allowedValues.map((a) => a.name ?? a.value ?? String(a.id)).slice(0, 10);
      out.push({
        fieldId: id,
        problem: `${f.name} (${id}): ${bad.map((x) => JSON.stringify(x)).join(', ')} is not allowed (allowed: ${names.join(', ')})`,
        fix: fixFor(f),
      });
    }
  }
  return out;
}

function allowed(f: ScreenField, x: unknown): boolean {
  if (typeof x !== 'object' || x === null) return false;
  const r = x as { id?: unknown; name?: unknown; value?: unknown };
  return (f.allowedValues ?? []).some(
    (a) =>
      (r.id !== undefined && String(r.id) === String(a.id)) ||
      (typeof r.name === 'string' && a.name?.toLowerCase() === r.name.toLowerCase()) ||
      (typeof r.value === 'string' && a.value === r.value),
  );
}

/** `defects.fields.<id>: <example>`, the example from the allowed values or the field's type. */
export function fixFor(f: ScreenField): string {
  return `set defects.fields.${f.fieldId}, e.g. ${JSON.stringify(exampleFor(f))}`;
}

function exampleFor(f: ScreenField): unknown {
  const a = f.allowedValues?.[0];
  const one = a ? (a.value !== undefined ? { value: a.value } : { name: a.name ?? String(a.id) }) : undefined;
  if (f.schema.type === 'array') {
    if (one) return [one];
    return f.schema.items === 'string' ? ['casebridge'] : [{ name: '...' }];
  }
  if (one) return one;
  switch (f.schema.type) {
    case 'number':
      return 1;
    case 'date':
      return '2030-01-31';
    case 'user':
      return { name: 'jdoe' };
    default:
      return '...';
  }
}
