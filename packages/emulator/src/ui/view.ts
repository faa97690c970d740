import type { ServerResponse } from 'node:http';
import { SERVICE_PREFIXES } from '@casebridge/core/contract';
import type { Env } from '../kernel/exchange.js';
import { attachmentUrl } from '../rules/present.js';
import type { Attachment, Store } from '../store/store.js';
import type { Viewer } from './layout.js';

/** One UI request as the pages see it: the store, who is looking, and how to reach the emulator back. */
export interface View {
  env: Env;
  store: Store;
  res: ServerResponse;
  /** Upper case; HEAD answers like GET without the body. */
  method: string;
  path: string;
  query: URLSearchParams;
  /** Base URL the browser reached the emulator at (attachment URLs are built on it, as the API builds them). */
  origin: string;
  viewer: Viewer;
}

const TM_PREFIX = SERVICE_PREFIXES.tm[0] ?? '/rest/synapse/latest/public';

/**
 * An attachment's URL: the very `filePath` the run operations hand out to this client. The browser sends its
 * JSESSIONID with it, as Jira's own pages do, so the download's authentication applies unchanged.
 */
export function attachmentHref(v: View, a: Attachment): string {
  return attachmentUrl({ store: v.store, variant: v.env.variant, origin: v.origin, prefix: TM_PREFIX }, a);
}

/** The sorted paths of the suites a case or requirement is a member of (`suite` reads a membership's suite). */
export function suitePaths<M, S>(
  members: readonly M[],
  suite: (m: M) => S | undefined,
  path: (s: S) => string,
): string[] {
  return members
    .map(suite)
    .filter((s): s is S => s !== undefined)
    .map(path)
    .sort();
}
