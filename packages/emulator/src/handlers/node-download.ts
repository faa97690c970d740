import type { ServerResponse } from 'node:http';
import { sendError } from '../kernel/send.js';
import { authenticate } from '../service/auth.js';
import { ServiceError } from '../service/context.js';
import type { DownloadArgs } from './download-args.js';
import { canAccess } from './repo-nodes.js';

/**
 * Serves a content-repository node's content at the `downloadUrl` the node operations hand out:
 * `{origin}/edu-sharing/eduservlet/download?nodeId=<id>` (or `/repo/eduservlet/...` when the client came in under
 * the `/repo/rest` alias). Authenticated like the repository (Basic, Bearer, EDU-TICKET, JSESSIONID cookie; no
 * guest: the guest owns nothing it could read); only the node's owner and administrators may download.
 */

const DOWNLOAD_PATH = /^\/(?:edu-sharing|repo)\/eduservlet\/download\/?$/;

/** Writes an edu-sharing error body. */
function sendRepoError(res: ServerResponse, status: number, error: string, message: string): void {
  sendError(res, 'repo', undefined, new ServiceError(status, message, { error }));
}

export async function nodeDownload({ store, blobs, req, res, rawPath }: DownloadArgs): Promise<boolean> {
  if (!DOWNLOAD_PATH.test(rawPath)) return false;
  req.resume();
  const auth = authenticate(store, 'repo', req.headers);
  if (!auth.ok) {
    res.writeHead(401, { 'content-length': '0' });
    res.end();
    return true;
  }
  const url = req.url ?? '';
  const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
  const nodeId = query.get('nodeId') ?? '';
  const node = nodeId ? store.nodes.get(nodeId) : undefined;
  if (!node) {
    sendRepoError(
      res,
      404,
      'org.edu_sharing.restservices.DAOMissingException',
      nodeId ? `Node "${nodeId}" not found` : 'Query parameter nodeId is missing: expected ?nodeId=<node id>',
    );
    return true;
  }
  if (!canAccess(auth.user, false, node)) {
    sendRepoError(
      res,
      403,
      'org.edu_sharing.restservices.DAOSecurityException',
      `User ${auth.user.name} may not read the content of node ${node.id}`,
    );
    return true;
  }
  if (node.blob === null || node.size === null) {
    sendRepoError(
      res,
      404,
      'org.edu_sharing.restservices.DAOMissingException',
      `Node "${node.name}" (${node.id}) has no content yet: upload it first`,
    );
    return true;
  }
  res.writeHead(200, {
    'content-type': node.mimetype ?? 'application/octet-stream',
    'content-length': String(node.size),
    'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(node.name)}`,
  });
  const stream = blobs.read(node.blob);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
  return true;
}
