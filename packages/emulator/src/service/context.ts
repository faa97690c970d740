import type { IncomingHttpHeaders } from 'node:http';
import { CasebridgeError, type OperationDef } from '@casebridge/core/contract';
import type { JiraBehaviour } from '../behaviour/profile.js';
import type { BlobStore } from '../store/blobs.js';
import type { SearchIndex } from '../store/search-index.js';
import type { Store, User } from '../store/store.js';

/**
 * Which documented variant the emulator speaks.
 * - `ids`: `id` (the fuller variant) or `ID` (identifier fields spelled `ID`, cycle list without environment,
 *   build and planned dates, plan members without testPlanKey).
 * - `timestamps`: how `executionTimeStamp` is written: `iso` (ISO 8601 with offset), `legacy`
 *   (`dd/Mon/yy h:mm AM/PM`) or `epoch` (integer ms). Defaults: `id` → iso, `ID` → legacy.
 */
export interface Variant {
  ids: 'id' | 'ID';
  timestamps: 'iso' | 'legacy' | 'epoch';
}

export function variantFor(ids: 'id' | 'ID', timestamps?: Variant['timestamps']): Variant {
  return { ids, timestamps: timestamps ?? (ids === 'id' ? 'iso' : 'legacy') };
}

/** The identifier field of an entity documented as "id (or ID)", spelled per variant. */
export function idf(v: Variant, id: number): { id: number } | { ID: number } {
  return v.ids === 'ID' ? { ID: id } : { id };
}

/** A file received in a multipart body, already streamed to the blob store and fsynced. */
export interface UploadedFile {
  field: string;
  fileName: string;
  mimeType: string;
  blob: string;
  size: number;
  sha256: string;
}

export interface Ctx {
  store: Store;
  blobs: BlobStore;
  variant: Variant;
  op: OperationDef;
  /** The authenticated user; `guest` for a content-repository guest request. */
  user: User;
  isGuest: boolean;
  params: Record<string, any>;
  query: Record<string, any>;
  body: any;
  files: UploadedFile[];
  headers: IncomingHttpHeaders;
  /** Base URL the client reached the emulator at (for download URLs), without a trailing slash. */
  origin: string;
  /** Service prefix the request came in under, e.g. `/edu-sharing/rest`. */
  prefix: string;
  now(): number;
  /**
   * The simulated Jira cluster, for the Jira-hosted services: the node the request landed on (0-based), the Jira
   * behaviour in effect and the search index. Absent (contexts built outside the pipeline): one ideal node.
   */
  cluster?: { node: number; jira: JiraBehaviour; index: SearchIndex };
  /** Time the request's work takes on a real service beyond the network (issues it created): waited before the answer. */
  workMs?: number;
}

/**
 * A handler returns the response body (`undefined` for a bare 200) or a `Reply` for another status or headers.
 * It throws `ServiceError` for a documented error answer.
 */
export type Handler = (ctx: Ctx) => unknown | Promise<unknown>;

export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string | string[]> = {},
  ) {}
}

/** A binary download answer (attachment or node content). */
export class FileReply {
  constructor(
    readonly blob: string,
    readonly mimeType: string,
    readonly fileName: string,
    readonly size: number,
  ) {}
}

/**
 * An error answer. The server writes it as the operation's error body: plain text when the operation (or the
 * error) says so, else the service's JSON error shape. In the family (kind `service`); its message is the answer's
 * text as given, never redacted (a real service does not redact, and the client's redaction is under test).
 */
export class ServiceError extends CasebridgeError {
  declare readonly status: number;
  constructor(
    status: number,
    message: string,
    readonly options: {
      text?: boolean;
      field?: string;
      /** The service's own name of the error (edu-sharing's exception class, Bitbucket's `exceptionName`). */
      error?: string;
      /**
       * The request's input failed validation (the parse step): synapseRT answers 500, the code hosts 400 (GitHub 422
       * for a field).
       */
      input?: boolean;
    } = {},
  ) {
    super('service', message, { status }, false, { redact: false });
  }
}

export const notFound = (what: string) => new ServiceError(404, what);
export const invalid = (message: string, field?: string) => new ServiceError(500, message, { field });
export const forbidden = (message: string) => new ServiceError(403, message);
