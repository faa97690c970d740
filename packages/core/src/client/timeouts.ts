import * as z from 'zod';

/** Client timeouts per request, ms (defaults: connect 10 s, headers 30 s, body 60 s). */
export const timeoutsSchema = z.strictObject({
  connectMs: z.number().int().positive().optional(),
  headersMs: z.number().int().positive().optional(),
  bodyMs: z.number().int().positive().optional(),
});
