import type { DownloadArgs } from './downloads.js';

/** TODO: serves a content-repository node's content at its downloadUrl (repo helper). Returns true when it answered. */
export async function nodeDownload(_args: DownloadArgs): Promise<boolean> {
  return false;
}
