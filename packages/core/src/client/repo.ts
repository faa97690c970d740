import { basename } from 'node:path';
import { repoAppAuth, repoCreateChild, repoUploadContent, repoValidateSession } from '../contract/repo.js';
import { basicHeader, cookieFrom } from './auth.js';
import { bindGroup, type CallOptions, type ClientOptions, type Methods, ServiceClient } from './base.js';
import { UnauthorizedError } from './errors.js';
import { contentTypeFor, type FileInput } from './multipart.js';

/** The content-repository operations, as methods. */
const REPO = {
  validateSession: repoValidateSession,
  createChild: repoCreateChild,
  appAuth: repoAppAuth,
  uploadContent: repoUploadContent,
} as const;

/** A 503 without Retry-After is the repository's storage-quota refusal: final, as re-sending the file cannot help. */
function notQuotaRefusal(answer: { status: number; headers: Record<string, unknown> }): boolean {
  return !(answer.status === 503 && answer.headers['retry-after'] === undefined);
}

export interface StoreFileOptions {
  /** Name of the node; defaults to the file's base name. */
  name?: string;
  /** Folder node id; defaults to the user's home (`-userhome-`). */
  parentNodeId?: string;
  /** Repository id; defaults to the home repository (`-home-`). */
  repository?: string;
  /** Media type; defaults to one derived from the file name. */
  mimetype?: string;
  /** Rename when a node of that name exists instead of failing with 409. Default true. */
  renameIfExists?: boolean;
  /** Extra properties of the node (`cclom:title`, ...). */
  properties?: Record<string, string[]>;
  signal?: AbortSignal;
}

/** Client of the content repository (edu-sharing); `baseUrl` is the server's origin, the prefix `/edu-sharing/rest`. */
export class ContentRepositoryClient extends ServiceClient {
  readonly repo: Methods<typeof REPO>;

  constructor(options: ClientOptions) {
    super(
      options,
      'repo',
      '/edu-sharing/rest',
      async (self) => (self as ContentRepositoryClient).login(),
      'EDU-TICKET',
    );
    const methods = bindGroup(this, REPO);
    this.repo = {
      ...methods,
      uploadContent: (input, options) =>
        methods.uploadContent(input, { ...options, retryAnswer: options?.retryAnswer ?? notQuotaRefusal }),
    };
  }

  /**
   * Resolves with the session information, or throws UnauthorizedError. A dropped session answers 200 with
   * `isValidLogin: false`, so a renewable client renews once and checks again.
   */
  async validateSession(options?: CallOptions) {
    const renewable = this.authenticator.renewable;
    // The credential the check is about to use: a renewal made meanwhile by another call is not repeated.
    const generation = renewable ? (await this.authenticator.headers()).generation : 0;
    let info = await this.repo.validateSession(undefined, options);
    if (!info.isValidLogin && renewable) {
      await this.authenticator.renew(generation);
      info = await this.repo.validateSession(undefined, options);
    }
    if (!info.isValidLogin) {
      throw new UnauthorizedError(`The content repository refused the credentials (${info.statusCode})`, {
        operation: repoValidateSession.id,
        method: 'GET',
        path: this.prefix + repoValidateSession.path,
      });
    }
    return info;
  }

  /** Stores a file (node, then streamed content) and returns the node; over the quota: HttpError 503, not retried. */
  async storeFile(file: FileInput, options: StoreFileOptions = {}) {
    const fileName =
      options.name ??
      (typeof file === 'string'
        ? basename(file)
        : 'path' in file
          ? (file.fileName ?? basename(file.path))
          : file.fileName);
    const mimetype =
      options.mimetype ?? (typeof file === 'object' && file.contentType ? file.contentType : contentTypeFor(fileName));
    const repository = options.repository ?? '-home-';
    const created = await this.repo.createChild(
      {
        repository,
        parentNodeId: options.parentNodeId ?? '-userhome-',
        type: 'ccm:io',
        renameIfExists: String(options.renameIfExists ?? true),
        body: { 'cm:name': [fileName], ...(options.properties ?? {}) },
      },
      { signal: options.signal },
    );
    const nodeId = created.node.ref.id;
    const uploaded = await this.repo.uploadContent(
      { repository: created.node.ref.repo || repository, nodeId, mimetype, file },
      { signal: options.signal },
    );
    return uploaded.node;
  }

  /** Session mode: a validateSession call with Basic credentials opens the JSESSIONID session. */
  private async login(): Promise<string> {
    const a = this.authenticator.auth;
    if (!('username' in a)) throw new Error('login needs a user name and password');
    if (a.type === 'ticket') {
      // Application-based authentication: the user's own credentials obtain a ticket for that user.
      const path = this.prefix + repoAppAuth.path.replace('{userId}', encodeURIComponent(a.username));
      const res = await this.transport.send({
        operation: repoAppAuth.id,
        method: 'POST',
        path,
        headers: { accept: 'application/json', authorization: basicHeader(a.username, a.password) },
        body: () => ({ data: '{}', contentType: 'application/json', length: 2 }),
        creates: false,
      });
      let ticket: unknown;
      try {
        ticket = (JSON.parse(res.text) as { ticket?: unknown }).ticket;
      } catch {
        ticket = undefined;
      }
      if (res.status !== 200 || typeof ticket !== 'string' || ticket === '') {
        throw new UnauthorizedError(
          `The content repository did not issue a ticket for ${a.username} (HTTP ${res.status}); ticket issuance needs an administrator`,
          { operation: repoAppAuth.id, method: 'POST', path, status: res.status },
        );
      }
      return ticket;
    }
    const res = await this.transport.send({
      operation: 'repo.login',
      method: 'GET',
      path: this.prefix + repoValidateSession.path,
      headers: { accept: 'application/json', authorization: basicHeader(a.username, a.password) },
      creates: false,
      // Every cookie the login sets (a load balancer's too) is kept and sent with the session.
      ...(this.authenticator.jar ? { cookies: this.authenticator.jar.view() } : {}),
    });
    const sid = cookieFrom(res.headers['set-cookie'], 'JSESSIONID');
    let valid = false;
    try {
      valid = (JSON.parse(res.text) as { isValidLogin?: boolean }).isValidLogin === true;
    } catch {
      valid = false;
    }
    if (res.status !== 200 || !valid || !sid) {
      throw new UnauthorizedError('The content repository refused the user name and password (session login)', {
        operation: 'repo.login',
        method: 'GET',
        path: this.prefix + repoValidateSession.path,
        status: res.status,
      });
    }
    return sid;
  }
}
