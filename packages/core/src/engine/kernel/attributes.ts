import type { TestResult } from './model.js';

/**
 * Run attributes: a result's values and the key of its run. An advanced cycle has a run per case and attribute set,
 * so (DEMO-1, firefox) is not (DEMO-1, chromium).
 */

/** The value sent for an attribute whose template gives nothing: the spec's "no value". */
export const NO_VALUE = '-';

/** Separates the case key from the attribute set in a run key; never part of a case key or a JSON string. */
const SEP = '\u001f';

/** `${project}`, `${tag:<prefix>}`, `${annotation:<type>}`, `${param.<name>}`; anything else is kept as written. */
const VARIABLE = /\$\{(project|tag:[^}]*|annotation:[^}]+|param\.[^}]+)\}/g;

/** The variables a template may use, for the message that names an unknown one. */
export const ATTRIBUTE_VARIABLES = '${project}, ${tag:<prefix>}, ${annotation:<type>}, ${param.<name>}';

/** The `${...}` of a template that are none of ATTRIBUTE_VARIABLES (a typo would otherwise be sent as a value). */
export function unknownVariables(template: string): string[] {
  return [...template.matchAll(/\$\{[^}]*\}/g)].map((m) => m[0]).filter((v) => !new RegExp(VARIABLE.source).test(v));
}

/** One variable's value for a test; '' when the test has none. */
function variableValue(test: TestResult, variable: string): string {
  if (variable === 'project') return test.project ?? '';
  if (variable.startsWith('tag:')) {
    // Tags carry no `@` (see TestResult.tags): `${tag:browser-}` reads `browser-firefox` as `firefox`.
    const prefix = variable.slice(4).replace(/^@/, '');
    const tag = test.tags.find((t) => t.startsWith(prefix) && t.length > prefix.length);
    return tag === undefined ? '' : tag.slice(prefix.length);
  }
  if (variable.startsWith('annotation:')) {
    const type = variable.slice('annotation:'.length);
    return test.annotations.find((a) => a.type === type && a.description)?.description ?? '';
  }
  return test.params?.[variable.slice('param.'.length)] ?? '';
}

/** A result's attribute values: each template filled in and trimmed, NO_VALUE when empty; the first match wins. */
export function attributeValuesOf(test: TestResult, templates: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, template] of Object.entries(templates)) {
    const value = template.replace(VARIABLE, (_, v: string) => variableValue(test, v)).trim();
    out[name] = value === '' ? NO_VALUE : value;
  }
  return out;
}

/** The attributes that have a value, sorted by name: the set as the service answers it (`-` values are absent). */
export function attributeSet(values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(values).sort()) {
    const v = values[name] as string;
    if (v !== NO_VALUE && v !== '') out[name] = v;
  }
  return out;
}

/** The run a result goes to: its case key, or the case key and its attribute set (see the top of this file). */
export function runKey(key: string, attributes?: Record<string, string>): string {
  return attributes ? `${key}${SEP}${JSON.stringify(attributeSet(attributes))}` : key;
}

/** A run key's case and attribute set (undefined: a run without attributes). */
export function parseRunKey(runKeyText: string): { key: string; set?: Record<string, string> } {
  const at = runKeyText.indexOf(SEP);
  if (at < 0) return { key: runKeyText };
  return { key: runKeyText.slice(0, at), set: JSON.parse(runKeyText.slice(at + 1)) as Record<string, string> };
}

/** `Browser "firefox", OS "linux"`: an attribute set as the summary names it. */
export function describeSet(set: Record<string, string>): string {
  const entries = Object.entries(set);
  return entries.length ? entries.map(([k, v]) => `${k} "${v}"`).join(', ') : 'no attribute value';
}
