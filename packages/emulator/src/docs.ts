import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * TODO(helper): serves `/openapi.json` and the browsable API pages (`/swagger`, `/edu-sharing/swagger`,
 * `/repo/swagger`). Returns true when it answered the request.
 */
export function serveDocs(_req: IncomingMessage, _res: ServerResponse, _path: string, _origin: string): boolean {
  return false;
}
