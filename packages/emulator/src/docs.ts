import { createReadStream, readdirSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import type { Service } from '@casebridge/core/contract';
import { buildOpenApi } from './openapi/document.js';

/**
 * The OpenAPI document and the browsable API pages (Swagger UI, served from the installed `swagger-ui-dist`
 * package: the emulator must work without internet access).
 *
 * - `GET /openapi.json`: the whole document; `?service=tm|repo|jira|bitbucket|gitlab|github` (comma-separated)
 *   keeps only those services.
 * - `GET /swagger`: every service, with a selector for the per-service documents.
 * - `GET /edu-sharing/swagger`, `GET /repo/swagger`: the content repository only (as the real edu-sharing API
 *   browser shows only edu-sharing), with the full document one click away in the selector.
 * - `GET /swagger/assets/<file>`: the Swagger UI files.
 */

const ASSETS = '/swagger/assets/';
const SERVICES: readonly Service[] = ['tm', 'repo', 'jira', 'bitbucket', 'gitlab', 'github'];
const SERVICE_NAMES: Record<Service, string> = {
  tm: 'Test management (synapseRT)',
  repo: 'Content repository (edu-sharing)',
  jira: 'Jira platform',
  bitbucket: 'Bitbucket Data Center (Code Insights, build status)',
  gitlab: 'GitLab (merge-request notes)',
  github: 'GitHub (pull-request comments)',
};

const PAGES: Record<string, { title: string; primary: Service | 'all' }> = {
  '/swagger': { title: 'casebridge emulator: API browser', primary: 'all' },
  '/edu-sharing/swagger': { title: 'edu-sharing REST API (casebridge emulator)', primary: 'repo' },
  '/repo/swagger': { title: 'Content repository REST API (casebridge emulator)', primary: 'repo' },
};

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.png': 'image/png',
  '.map': 'application/json; charset=utf-8',
};

/** Serialised documents by origin and service filter; bounded, since the origin comes from the Host header. */
const documents = new Map<string, string>();
const MAX_CACHED = 32;

/** Answers a docs request; returns true when the path is one of the docs paths and the request was answered. */
export function serveDocs(req: IncomingMessage, res: ServerResponse, path: string, origin: string): boolean {
  const method = (req.method ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (path === '/openapi.json') {
    req.resume();
    serveDocument(req, res, method, origin);
    return true;
  }
  const page = PAGES[path.replace(/\/(index\.html)?$/, '')];
  if (page) {
    req.resume();
    const html = pageHtml(page.title, page.primary);
    send(res, method, 200, 'text/html; charset=utf-8', html);
    return true;
  }
  if (path.startsWith(ASSETS)) {
    req.resume();
    serveAsset(res, method, path.slice(ASSETS.length));
    return true;
  }
  return false;
}

function send(res: ServerResponse, method: string, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) });
  res.end(method === 'HEAD' ? undefined : body);
}

function serveDocument(req: IncomingMessage, res: ServerResponse, method: string, origin: string): void {
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const asked = query.get('service');
  const services = (asked ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = services.filter((s) => !SERVICES.includes(s as Service));
  if (unknown.length) {
    const message = `Unknown service ${unknown.map((s) => JSON.stringify(s)).join(', ')} in query parameter "service"; expected ${SERVICES.join(', ')} (comma-separated)`;
    send(res, method, 400, 'text/plain; charset=utf-8', message);
    return;
  }
  const key = `${origin}|${services.join(',')}`;
  let body = documents.get(key);
  if (body === undefined) {
    try {
      const doc = buildOpenApi({
        serverUrl: origin,
        ...(services.length ? { services: services as Service[] } : {}),
      });
      body = JSON.stringify(doc, null, 2);
    } catch (err) {
      send(
        res,
        method,
        500,
        'text/plain; charset=utf-8',
        `Cannot build the OpenAPI document: ${(err as Error).message}`,
      );
      return;
    }
    if (documents.size >= MAX_CACHED) documents.clear();
    documents.set(key, body);
  }
  send(res, method, 200, 'application/json; charset=utf-8', body);
}

/** The Swagger UI page; `primary` is the document shown first, the others are in the top bar's selector. */
function pageHtml(title: string, primary: Service | 'all'): string {
  const urls = [
    { url: '/openapi.json', name: 'All services' },
    ...SERVICES.map((s) => ({ url: `/openapi.json?service=${s}`, name: SERVICE_NAMES[s] })),
  ];
  const first = primary === 'all' ? urls[0]! : urls.find((u) => u.url.endsWith(`=${primary}`))!;
  const config = {
    urls: [first, ...urls.filter((u) => u !== first)],
    'urls.primaryName': first.name,
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    // No online validator badge: the emulator runs without internet access.
    validatorUrl: null,
  };
  // `<` is escaped so that no configuration value can close the script element.
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" type="text/css" href="${ASSETS}swagger-ui.css">
    <link rel="stylesheet" type="text/css" href="${ASSETS}index.css">
    <link rel="icon" type="image/png" href="${ASSETS}favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${ASSETS}favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${ASSETS}swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="${ASSETS}swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script>
      window.onload = function () {
        var config = ${json};
        config.presets = [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset];
        config.plugins = [SwaggerUIBundle.plugins.DownloadUrl];
        config.layout = 'StandaloneLayout';
        window.ui = SwaggerUIBundle(config);
      };
    </script>
  </body>
</html>
`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

let assetDir: { dir: string; files: Set<string> } | undefined;

/** The swagger-ui-dist folder and its file names (read once: only these names are ever opened). */
function swaggerAssets(): { dir: string; files: Set<string> } {
  if (!assetDir) {
    const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    assetDir = { dir, files: new Set(readdirSync(dir).filter((f) => TYPES[extname(f)] !== undefined)) };
  }
  return assetDir;
}

function serveAsset(res: ServerResponse, method: string, name: string): void {
  let assets: { dir: string; files: Set<string> };
  try {
    assets = swaggerAssets();
  } catch (err) {
    send(res, method, 500, 'text/plain; charset=utf-8', `swagger-ui-dist is not installed: ${(err as Error).message}`);
    return;
  }
  // Only names listed in the package folder are served, so no path can reach outside it.
  if (!assets.files.has(name)) {
    send(res, method, 404, 'text/plain; charset=utf-8', `No Swagger UI asset named ${JSON.stringify(name)}`);
    return;
  }
  const file = join(assets.dir, name);
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    send(res, method, 404, 'text/plain; charset=utf-8', `No Swagger UI asset named ${JSON.stringify(name)}`);
    return;
  }
  res.writeHead(200, {
    'content-type': TYPES[extname(name)] ?? 'application/octet-stream',
    'content-length': String(size),
    'cache-control': 'public, max-age=3600',
  });
  if (method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(file);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
