import type { DownloadArgs } from './downloads.js';

/** TODO: serves an attachment's bytes at its filePath URL (runs helper). Returns true when it answered. */
export async function attachmentDownload(_args: DownloadArgs): Promise<boolean> {
  return false;
}
