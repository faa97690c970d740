import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Service } from '@casebridge/core/contract';
import type { BlobStore } from '../store/blobs.js';
import type { Store } from '../store/store.js';

/** What a download at a URL the services hand out needs (its own file: downloads.ts imports the two downloads). */
export interface DownloadArgs {
  store: Store;
  blobs: BlobStore;
  req: IncomingMessage;
  res: ServerResponse;
  /** Raw request path (still percent-encoded), prefix included. */
  rawPath: string;
  service: Service;
  prefix: string;
  /** The simulated Jira node the request landed on, and whether a token works as a Basic password there. */
  node?: number;
  patAsBasic?: boolean;
}
