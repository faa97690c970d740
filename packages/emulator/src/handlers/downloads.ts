import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Service } from '@casebridge/core/contract';
import type { BlobStore } from '../blobs.js';
import type { Store } from '../store.js';

/**
 * TODO(helper): downloads of attachment bytes and node content at the URLs the services hand out
 * (`filePath` of an attachment, `downloadUrl` of a node). Returns true when it answered the request.
 */
export async function serveDownload(_args: {
  store: Store;
  blobs: BlobStore;
  req: IncomingMessage;
  res: ServerResponse;
  rawPath: string;
  service: Service;
  prefix: string;
}): Promise<boolean> {
  return false;
}
