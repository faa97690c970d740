import { attachmentDownload } from './attachment-download.js';
import type { DownloadArgs } from './download-args.js';
import { nodeDownload } from './node-download.js';

/**
 * Downloads at the URLs the services hand out (an attachment's `filePath`, a node's `downloadUrl`); these are not
 * operations of the spec. Each returns true when it answered the request.
 */
export async function serveDownload(args: DownloadArgs): Promise<boolean> {
  return (await attachmentDownload(args)) || (await nodeDownload(args));
}
