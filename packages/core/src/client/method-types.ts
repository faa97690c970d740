import type * as z from 'zod';
import type { OperationDef, UploadOperationDef } from '../contract/define.js';
import type { FileInput } from './multipart.js';

/** Types of a call's input and output, derived from the contract. */

type Simplify<T> = { [K in keyof T]: T[K] } & {};
/** A schema slot that the operation leaves empty is typed with the bare `z.ZodType` default. */
type IsUnset<T> = z.ZodType extends T ? true : false;
/** Path and query values travel as text: a number is accepted wherever the contract reads a string. */
type Textual<T> = { [K in keyof T]: T[K] extends string ? T[K] | number : T[K] };
type ObjectPart<T> = IsUnset<T> extends true ? unknown : T extends z.ZodType ? Textual<z.input<T>> : unknown;
type BodyPart<T> =
  IsUnset<T> extends true
    ? unknown
    : T extends z.ZodObject
      ? z.input<T>
      : T extends z.ZodOptional<infer I extends z.ZodObject>
        ? z.input<I>
        : T extends z.ZodType
          ? undefined extends z.input<T>
            ? { body?: z.input<T> }
            : { body: z.input<T> }
          : unknown;

/** What a call takes: path and query parameters and the fields of an object body, flat; other bodies as `body`. */
export type InputOf<Op> =
  Op extends OperationDef<infer P, infer Q, infer B, z.ZodType>
    ? Simplify<ObjectPart<P> & ObjectPart<Q> & BodyPart<B>>
    : never;

/** What a call resolves to: the tolerant parse of the answer, or `undefined` for operations without a body. */
export type OutputOf<Op> =
  Op extends OperationDef<z.ZodType, z.ZodType, z.ZodType, infer R>
    ? IsUnset<R> extends true
      ? undefined
      : z.output<R>
    : never;

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Whether a 429/502/503/504 answer may be re-sent (default: always); a refused one fails at once, not retryable. */
  retryAnswer?: (answer: { status: number; headers: Record<string, string | string[] | undefined> }) => boolean;
  /** A long request (a bulk create): queued behind every other request, so reads and deliveries go first. */
  background?: boolean;
}

/** A method of a client group. Input is optional when the operation needs none. */
export type Method<Op> =
  Record<never, never> extends InputOf<Op>
    ? (input?: InputOf<Op>, options?: CallOptions) => Promise<OutputOf<Op>>
    : (input: InputOf<Op>, options?: CallOptions) => Promise<OutputOf<Op>>;

/** Upload methods take `file` (one or several) in addition to the operation's parameters. */
export type UploadMethod<Op> = (
  input: InputOf<Op> & { file: FileInput | readonly FileInput[] },
  options?: CallOptions,
) => Promise<OutputOf<Op>>;

/** The methods of a group: upload operations take files, the others their parameters. */
export type Methods<G> = { [K in keyof G]: G[K] extends UploadOperationDef ? UploadMethod<G[K]> : Method<G[K]> };
