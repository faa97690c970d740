import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { FormData } from 'undici';
import { undici } from './connection.js';

/** A file to upload: a path on disk, or bytes in memory. */
export type FileInput =
  | string
  | { path: string; fileName?: string; contentType?: string }
  | { data: Uint8Array | string; fileName: string; contentType?: string };

/**
 * Media types for files with none given: synapseRT keeps it (a screenshot shows inline), the repository requires one.
 */
const TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  txt: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  html: 'text/html',
  json: 'application/json',
  xml: 'application/xml',
  zip: 'application/zip',
  pdf: 'application/pdf',
  webm: 'video/webm',
  mp4: 'video/mp4',
  csv: 'text/csv',
};

/** The media type for a file name's extension; `application/octet-stream` when unknown. */
export function contentTypeFor(fileName: string): string {
  const ext = fileName.toLowerCase().split('.').pop() ?? '';
  return TYPES[ext] ?? 'application/octet-stream';
}

/**
 * An upload's multipart body, files streamed with `fs.openAsBlob` under a Content-Length (Jira's upload filter and
 * some proxies refuse chunked bodies). A missing file fails here, before anything is sent.
 */
export async function formData(field: string, files: readonly FileInput[]): Promise<FormData> {
  const form = new (undici().FormData)();
  for (const f of files) {
    const spec = typeof f === 'string' ? { path: f } : f;
    if ('path' in spec) {
      if (!(await stat(spec.path)).isFile()) throw new Error(`${spec.path} is not a file`);
      const fileName = spec.fileName ?? basename(spec.path);
      form.append(field, await openAsBlob(spec.path, { type: spec.contentType ?? contentTypeFor(fileName) }), fileName);
    } else {
      const type = spec.contentType ?? contentTypeFor(spec.fileName);
      form.append(field, new Blob([spec.data], { type }), spec.fileName);
    }
  }
  return form;
}
