import * as z from 'zod';
import type { SchemaMode } from '../define.js';

/** Shared by the code hosts' operations; their APIs have no variants, so every mode builds the same wire shapes. */

/** A field the answer may leave out: optional on the wire, also null for the client. */
export function opt<T extends z.ZodType>(mode: SchemaMode, t: T): z.ZodType<z.output<T> | null | undefined> {
  return (mode === 'tolerant' ? t.nullish() : t.optional()) as z.ZodType<z.output<T> | null | undefined>;
}

/** A 1-based page number or a page size as the query string carries it. */
export const positiveInt = () => z.coerce.number().int().positive();
