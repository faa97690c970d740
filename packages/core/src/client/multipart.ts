import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';

/**
 * multipart/form-data bodies that stream files from disk. The length is computed up front (file sizes from `stat`),
 * so the request carries a Content-Length (some proxies and Jira's upload filter refuse chunked uploads), and no file
 * is ever held in memory whatever its size. A body is built afresh for every attempt, since a stream is consumed.
 */

/** A file to upload: a path on disk, or bytes in memory. */
export type FileInput =
  | string
  | { path: string; fileName?: string; contentType?: string }
  | { data: Uint8Array | string; fileName: string; contentType?: string };

interface ResolvedPart {
  header: Buffer;
  size: number;
  open: () => Readable;
}

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

/** Quotes a file name for Content-Disposition (RFC 7578: percent-encoding is not used; escape `"` and line breaks). */
function quoted(name: string): string {
  return `"${name.replace(/["\\]/g, (c) => `\\${c}`).replace(/[\r\n]/g, ' ')}"`;
}

export interface MultipartBody {
  contentType: string;
  length: number;
  /** A fresh stream of the whole body. */
  open: () => Readable;
}

/** Builds a multipart body with each file as a part named `field`. Missing files fail here, before sending. */
export async function multipartBody(field: string, files: readonly FileInput[]): Promise<MultipartBody> {
  const boundary = `----casebridge${randomBytes(12).toString('hex')}`;
  const parts: ResolvedPart[] = [];
  for (const f of files) {
    const spec = typeof f === 'string' ? { path: f } : f;
    let fileName: string;
    let size: number;
    let open: () => Readable;
    if ('path' in spec) {
      const info = await stat(spec.path);
      if (!info.isFile()) throw new Error(`${spec.path} is not a file`);
      fileName = spec.fileName ?? basename(spec.path);
      size = info.size;
      const path = spec.path;
      open = () => createReadStream(path);
    } else {
      const bytes = typeof spec.data === 'string' ? Buffer.from(spec.data, 'utf8') : Buffer.from(spec.data);
      fileName = spec.fileName;
      size = bytes.length;
      open = () => Readable.from([bytes]);
    }
    const type = spec.contentType ?? contentTypeFor(fileName);
    const header = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(field)}; filename=${quoted(fileName)}\r\n` +
        `Content-Type: ${type}\r\n\r\n`,
      'utf8',
    );
    parts.push({ header, size, open });
  }
  const trailer = Buffer.from(`--${boundary}--\r\n`, 'utf8');
  const CRLF = Buffer.from('\r\n');
  const length = parts.reduce((n, p) => n + p.header.length + p.size + CRLF.length, 0) + trailer.length;
  async function* generate() {
    for (const p of parts) {
      yield p.header;
      for await (const chunk of p.open()) yield chunk as Buffer;
      yield CRLF;
    }
    yield trailer;
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length,
    open: () => Readable.from(generate(), { objectMode: false }),
  };
}
