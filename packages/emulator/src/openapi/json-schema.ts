import * as z from 'zod';

/**
 * zod → JSON Schema (2020-12, the dialect of OpenAPI 3.1), and the JSON values the document is made of.
 */

/** A JSON value as the document holds it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

const SAFE_INT = 9007199254740991;

/** Properties and required names of an object-like JSON schema (branches of a union are merged). */
export function objectParts(schema: JsonObject): { properties: Record<string, JsonObject>; required: Set<string> } {
  const branches = (schema.anyOf ?? schema.oneOf) as JsonObject[] | undefined;
  if (Array.isArray(branches)) {
    const parts = branches.map(objectParts);
    const properties = Object.assign({}, ...parts.map((p) => p.properties)) as Record<string, JsonObject>;
    // Required only when every branch requires it.
    const required = new Set([...(parts[0]?.required ?? [])].filter((n) => parts.every((p) => p.required.has(n))));
    return { properties, required };
  }
  return {
    properties: (schema.properties ?? {}) as Record<string, JsonObject>,
    required: new Set((schema.required ?? []) as string[]),
  };
}

export interface Converted {
  schema: JsonObject;
  /** Sub-schemas to store as components (what zod lifts into `$defs`), by component name. */
  defs: Record<string, JsonObject>;
}

/**
 * JSON Schema of a zod schema (2020-12, the dialect of OpenAPI 3.1), meant to be stored as the component `name`
 * or inlined. Sub-schemas that zod lifts into `$defs` (recursion) become components `<name>.<def>`, and a root
 * self-reference points at `name`.
 */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output', name: string): Converted {
  const raw = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  const { $schema: _dialect, $defs, ...root } = raw;
  const refFor = (ref: string): string => {
    if (ref === '#') return `#/components/schemas/${name}`;
    const def = /^#\/\$defs\/(.+)$/.exec(ref)?.[1];
    return def ? `#/components/schemas/${name}.${def}` : ref;
  };
  const defs: Record<string, JsonObject> = {};
  if ($defs && typeof $defs === 'object' && !Array.isArray($defs)) {
    for (const [def, sub] of Object.entries($defs)) defs[`${name}.${def}`] = tidy(sub, refFor) as JsonObject;
  }
  return { schema: tidy(root, refFor) as JsonObject, defs };
}

/** Rewrites references, drops zod's safe-integer bounds and merges intersections of closed objects. */
function tidy(value: Json, refFor: (ref: string) => string): Json {
  if (Array.isArray(value)) return value.map((v) => tidy(v, refFor));
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$ref' && typeof v === 'string') out[k] = refFor(v);
    else if ((k === 'minimum' && v === -SAFE_INT) || (k === 'maximum' && v === SAFE_INT)) continue;
    else out[k] = tidy(v, refFor);
  }
  return mergeAllOf(out);
}

/**
 * zod writes an intersection of objects as `allOf`; each part has `additionalProperties: false`, so together they
 * would admit nothing. Plain object parts are merged into one object instead.
 */
function mergeAllOf(schema: JsonObject): JsonObject {
  const parts = schema.allOf;
  if (!Array.isArray(parts) || Object.keys(schema).length !== 1) return schema;
  const objects = parts.filter((p): p is JsonObject => typeof p === 'object' && p !== null && !Array.isArray(p));
  const plain = new Set(['type', 'properties', 'required', 'additionalProperties']);
  if (
    objects.length !== parts.length ||
    !objects.every((p) => p.type === 'object' && Object.keys(p).every((k) => plain.has(k)))
  ) {
    return schema;
  }
  const properties: JsonObject = {};
  const required = new Set<string>();
  let closed = true;
  for (const p of objects) {
    Object.assign(properties, p.properties ?? {});
    for (const r of (p.required ?? []) as string[]) required.add(r);
    if (p.additionalProperties !== false) closed = false;
  }
  const merged: JsonObject = { type: 'object', properties, required: [...required] };
  if (closed) merged.additionalProperties = false;
  return merged;
}
