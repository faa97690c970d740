import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Service } from '@casebridge/core/contract';
import type { BlobStore } from '../blobs.js';
import type { Store } from '../store.js';
import { attachmentDownload } from './attachment-download.js';
import { nodeDownload } from './node-download.js';

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

/**
 * Downloads at the URLs the services hand out (an attachment's `filePath`, a node's `downloadUrl`); these are not
 * operations of the spec. Each returns true when it answered the request.
 */
export async function serveDownload(args: DownloadArgs): Promise<boolean> {
  return (await attachmentDownload(args)) || (await nodeDownload(args));
}
