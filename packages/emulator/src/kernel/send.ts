import type { ServerResponse } from 'node:http';
import type { OperationDef, Service } from '@casebridge/core/contract';
import type { ServiceError } from '../service/context.js';
import type { BlobStore } from '../store/blobs.js';

// How an answer is written: the services' error bodies and file downloads. Here, below the pipeline, because the
// downloads at the URLs the services hand out (handlers/) answer with them too, outside the pipeline's steps.

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

const BITBUCKET_ERRORS: Record<number, string> = {
  400: 'com.atlassian.bitbucket.validation.ArgumentValidationException',
  401: 'com.atlassian.bitbucket.AuthorisationException',
  404: 'com.atlassian.bitbucket.NoSuchEntityException',
  405: 'com.atlassian.bitbucket.rest.MethodNotAllowedException',
};

/** Where GitHub's error answers point. */
export const GITHUB_DOCS = 'https://docs.github.com/rest';

/**
 * A code host's error answer: Bitbucket's `{"errors": [{context, message, exceptionName}]}`, GitLab's
 * `{"message": "404 Project Not Found"}` (`{"error": ...}` for invalid input), GitHub's `{"message",
 * "documentation_url"}` (422 `Validation Failed` with the field for invalid input). Input that failed validation
 * answers 400 on all three.
 */
function codeHostError(
  service: 'bitbucket' | 'gitlab' | 'github',
  err: ServiceError,
): { status: number; body: unknown } {
  const { field, input, error } = err.options;
  const status = input && err.status === 500 ? (service === 'github' && field ? 422 : 400) : err.status;
  if (service === 'bitbucket') {
    const exceptionName = error ?? BITBUCKET_ERRORS[status] ?? 'com.atlassian.bitbucket.ServiceException';
    return { status, body: { errors: [{ context: field ?? null, message: err.message, exceptionName }] } };
  }
  if (service === 'gitlab') return { status, body: status === 400 ? { error: err.message } : { message: err.message } };
  if (status === 422) {
    const errors = [{ resource: error ?? 'IssueComment', code: 'custom', field, message: err.message }];
    return { status, body: { message: 'Validation Failed', errors, documentation_url: GITHUB_DOCS, status: '422' } };
  }
  const message = input ? 'Problems parsing JSON' : err.message;
  return { status, body: { message, documentation_url: GITHUB_DOCS, status: String(status) } };
}

/**
 * Error bodies (the spec leaves them open; see the package README):
 * - test management: `{"message": "...", "field"?: "..."}`, or plain text for the operations that answer so;
 * - Jira platform: `{"errorMessages": ["..."], "errors": {}}`;
 * - content repository: edu-sharing's `{"error": "<exception class>", "message": "...", ...}`;
 * - the code hosts: each its own (`codeHostError`).
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
  } else if (service === 'bitbucket' || service === 'gitlab' || service === 'github') {
    const answer = codeHostError(service, err);
    status = answer.status;
    text = JSON.stringify(answer.body);
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
