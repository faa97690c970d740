import type { ServerResponse } from 'node:http';
import type { OperationDef, Service } from '@casebridge/core/contract';
import type { BlobStore } from '../blobs.js';
import { FileReply, Reply, ServiceError } from '../context.js';
import { type FaultDecision, malformedBody } from '../faults.js';
import type { Env, ServiceExchange } from './exchange.js';

/**
 * The reply step: writes what the handler returned (a body, a `Reply` with another status or headers, or a
 * `FileReply` download), malformed on purpose when a fault says so; and the service's error bodies.
 */
export async function reply(
  env: Env,
  x: ServiceExchange,
  op: OperationDef,
  result: unknown,
  fault: FaultDecision,
): Promise<void> {
  const { res } = x;
  if (result instanceof FileReply) {
    return sendBlob(res, env.blobs, result, (message) => sendError(res, x.service, op, new ServiceError(500, message)));
  }
  let status = 200;
  let headers: Record<string, string | string[]> = {};
  let body = result;
  if (result instanceof Reply) {
    status = result.status;
    headers = result.headers;
    body = result.body;
  }
  if (body === undefined) {
    res.writeHead(status, { ...headers, 'content-length': '0' });
    res.end();
    return;
  }
  let text = typeof body === 'string' ? body : JSON.stringify(body);
  let type = typeof body === 'string' ? 'text/plain;charset=UTF-8' : 'application/json;charset=UTF-8';
  if (fault.kind === 'malformed') {
    const m = malformedBody(fault.malformedKind, text);
    text = m.text;
    type = m.type;
  }
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** A stored file to download. */
export interface BlobFile {
  blob: string;
  mimeType: string;
  fileName: string;
  size: number;
}

/**
 * Streams a stored file as an attachment download. Headers wait until the blob is open: missing bytes are an error
 * answer (`fail` writes it), and never an unhandled stream error (which would end the process).
 */
export async function sendBlob(
  res: ServerResponse,
  blobs: BlobStore,
  file: BlobFile,
  fail: (message: string) => void,
): Promise<void> {
  const stream = blobs.read(file.blob);
  await new Promise<void>((resolve) => {
    stream.once('error', (err) => {
      if (res.headersSent) res.destroy();
      else fail(`The stored bytes of "${file.fileName}" cannot be read: ${err.message}`);
      resolve();
    });
    stream.once('open', () => {
      res.writeHead(200, {
        'content-type': file.mimeType,
        'content-length': String(file.size),
        'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(file.fileName)}`,
      });
      stream.pipe(res);
      resolve();
    });
  });
}

const REPO_ERRORS: Record<number, string> = {
  400: 'org.edu_sharing.restservices.DAOValidationException',
  403: 'org.edu_sharing.restservices.DAOSecurityException',
  404: 'org.edu_sharing.restservices.DAOMissingException',
  409: 'org.edu_sharing.restservices.DAODuplicateNodeNameException',
  415: 'org.edu_sharing.restservices.DAOMimetypeVerificationException',
  422: 'org.edu_sharing.restservices.DAOVirusDetectedException',
  503: 'org.edu_sharing.restservices.DAOQuotaException',
};

/**
 * Error bodies (the spec leaves them open; see the package README):
 * - test management: `{"message": "...", "field"?: "..."}`, or plain text for the operations that answer so;
 * - Jira platform: `{"errorMessages": ["..."], "errors": {}}`;
 * - content repository: edu-sharing's `{"error": "<exception class>", "message": "...", ...}`.
 */
export function sendError(
  res: ServerResponse,
  service: Service,
  op: OperationDef | undefined,
  err: ServiceError,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  let status = err.status;
  let text: string;
  let type = 'application/json;charset=UTF-8';
  if (service === 'repo') {
    if (status === 500 && err.options.field !== undefined) status = 400;
    text = JSON.stringify({
      error: err.options.error ?? REPO_ERRORS[status] ?? 'java.lang.RuntimeException',
      message: err.message,
      logLevel: 'INFO',
      stacktraceArray: null,
      details: {},
    });
  } else if (service === 'jira') {
    if (status === 500 && err.options.field !== undefined) status = 400;
    text = JSON.stringify({
      errorMessages: [err.message],
      errors: err.options.field ? { [err.options.field]: err.message } : {},
    });
  } else if ((op?.textErrors || err.options.text) && status === 500) {
    text = err.message;
    type = 'text/plain;charset=UTF-8';
  } else {
    text = JSON.stringify(
      err.options.field ? { message: err.message, field: err.options.field } : { message: err.message },
    );
  }
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}
