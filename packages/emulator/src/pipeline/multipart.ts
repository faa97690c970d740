import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { ServiceError, type UploadedFile } from '../service/context.js';
import type { BlobStore } from '../store/blobs.js';

/**
 * Reads a multipart/form-data body: its fields, and its files streamed to the blob store (each at most `maxFile`
 * bytes; a failure removes the files already stored).
 */
export async function readMultipart(
  req: IncomingMessage,
  blobs: BlobStore,
  maxFile: number,
): Promise<{ fields: Record<string, string>; files: UploadedFile[] }> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) {
    req.resume();
    throw new ServiceError(500, 'Invalid request: expected a multipart/form-data body with a part named "file"');
  }
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: UploadedFile[] = [];
    const pending: Promise<void>[] = [];
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fileSize: maxFile } });
    } catch (err) {
      req.resume();
      reject(new ServiceError(500, `Invalid request: ${(err as Error).message}`));
      return;
    }
    bb.on('field', (name, value) => {
      fields[name] = value;
    });
    bb.on('file', (field, stream, info) => {
      // busboy truncates a file at the limit and keeps draining the request, so the answer is never stalled.
      let truncated = false;
      stream.on('limit', () => {
        truncated = true;
      });
      pending.push(
        blobs.put(stream).then(async (b) => {
          if (truncated) {
            await blobs.remove(b.id);
            throw new Error(`file "${info.filename}" exceeds the size limit of ${maxFile} bytes`);
          }
          files.push({
            field,
            fileName: info.filename || 'file',
            mimeType: info.mimeType || 'application/octet-stream',
            blob: b.id,
            size: b.size,
            sha256: b.sha256,
          });
        }),
      );
    });
    bb.on('error', (err) =>
      reject(new ServiceError(500, `Invalid request: malformed multipart body (${(err as Error).message})`)),
    );
    bb.on('close', () => {
      Promise.all(pending)
        .then(() => resolve({ fields, files }))
        .catch(async (err) => {
          for (const f of files) await blobs.remove(f.blob);
          reject(new ServiceError(500, `Invalid request: ${(err as Error).message}`));
        });
    });
    req.on('aborted', () => reject(new ServiceError(500, 'request aborted')));
    req.pipe(bb);
  });
}
