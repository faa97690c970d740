import type { ServerResponse } from 'node:http';
import { sendBlob, sendError } from '../kernel/send.js';
import { authenticate } from '../service/auth.js';
import { ServiceError } from '../service/context.js';
import { safeDecode } from '../service/router.js';
import type { DownloadArgs } from './download-args.js';

/**
 * Serves an attachment's bytes at the `filePath` URL the run operations hand out:
 * `{origin}{prefix}/attachment/{runId}/download/{attachmentId}/{fileName}` under either test-management prefix.
 * Authenticated like every test-management operation (Basic, Bearer, JSESSIONID; 401 without valid credentials,
 * 403 without a licence). The file name segment is for the browser's benefit and is not checked: the attachment
 * is identified by run and attachment id, and a renamed or missing name still downloads the same bytes.
 */

const DOWNLOAD_PATH = /^\/attachment\/([^/]+)\/download\/([^/]+)(?:\/[^/]*)?\/?$/;

/** Writes a test-management JSON error (the service's `{"message": ...}` shape). */
const fail = (res: ServerResponse, status: number, message: string, headers?: Record<string, string>) =>
  sendError(res, 'tm', undefined, new ServiceError(status, message), headers);

export async function attachmentDownload({
  store,
  blobs,
  req,
  res,
  rawPath,
  service,
  prefix,
  node,
  patAsBasic,
}: DownloadArgs): Promise<boolean> {
  if (service !== 'tm') return false;
  const m = DOWNLOAD_PATH.exec(rawPath.slice(prefix.length));
  if (!m) return false;
  req.resume();
  const auth = authenticate(store, 'tm', req.headers, { ...(node !== undefined ? { node } : {}), patAsBasic });
  if (!auth.ok) {
    fail(
      res,
      401,
      auth.reason === 'missing'
        ? 'You are not authenticated. Authentication required to download this attachment.'
        : 'Invalid credentials: the user name, password or token was not accepted.',
      { 'www-authenticate': 'Basic realm="protected-area"' },
    );
    return true;
  }
  if (!auth.user.licensed) {
    fail(res, 403, `User ${auth.user.name} is not authorised: no valid licence for the test-management add-on`);
    return true;
  }
  const runId = safeDecode(m[1] ?? '');
  const attachmentId = safeDecode(m[2] ?? '');
  const attachment = /^\d+$/.test(attachmentId) ? store.attachments.get(Number(attachmentId)) : undefined;
  if (!attachment || String(attachment.runId) !== runId) {
    fail(res, 404, `Attachment ${attachmentId} not found in test run ${runId}`);
    return true;
  }
  await sendBlob(res, blobs, attachment, (message) => fail(res, 500, message));
  return true;
}
