import { randomBytes } from 'node:crypto';
import { authenticate, openSession } from '../service/auth.js';
import { type Ctx, forbidden, type Handler, notFound, Reply, ServiceError } from '../service/context.js';
import type { BlobStore } from '../store/blobs.js';
import type { RepoNode } from '../store/store.js';
import {
  canAccess,
  DEFAULT_ASPECTS,
  EXTENSION_TYPES,
  extension,
  findSpecialFolder,
  HOME_REPOSITORY,
  insertNode,
  presentNode,
  USER_HOME,
  userHome,
  userInbox,
} from './repo-nodes.js';

/**
 * The content repository (edu-sharing): session validation, node creation, content upload and ticket issuance.
 * Only the owner of a node and administrators may add children to it, write its content or download it; the guest
 * may do neither. The node model (home folder, inbox, presentation) is in repo-nodes.ts.
 */

/** Default per-user storage quota: 10 GiB. */
const DEFAULT_QUOTA_BYTES = 10 * 1024 ** 3;

function quotaFromEnv(): number {
  const raw = process.env.CASEBRIDGE_REPO_QUOTA_BYTES;
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isSafeInteger(n) && n >= 0 ? n : DEFAULT_QUOTA_BYTES;
}

let quotaBytes = quotaFromEnv();

/**
 * Sets the per-user storage quota (bytes) of every emulator in this process: an upload that would take the owner's
 * stored content beyond it answers 503. Default 10 GiB, or the environment variable `CASEBRIDGE_REPO_QUOTA_BYTES`.
 * Returns the previous quota so a test can restore it.
 */
export function setRepoQuota(bytes: number): number {
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    throw new Error(`setRepoQuota: expected a non-negative integer number of bytes, got ${bytes}`);
  }
  const previous = quotaBytes;
  quotaBytes = bytes;
  return previous;
}

const NODE_TYPES: Record<string, { isDirectory: boolean }> = {
  'ccm:io': { isDirectory: false },
  'cm:content': { isDirectory: false },
  'ccm:map': { isDirectory: true },
  'cm:folder': { isDirectory: true },
};

const EICAR = 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE';

const TOOL_PERMISSIONS = [
  'TOOLPERMISSION_WORKSPACE',
  'TOOLPERMISSION_SEARCH',
  'TOOLPERMISSION_SHARE',
  'TOOLPERMISSION_LICENSE',
  'TOOLPERMISSION_UNCHECKEDCONTENT',
  'TOOLPERMISSION_INVITE',
];

function requireRepository(ctx: Ctx): void {
  const repo = ctx.params.repository as string;
  if (repo !== '-home-' && repo !== HOME_REPOSITORY) {
    throw notFound(`Repository "${repo}" not found: expected -home- or ${HOME_REPOSITORY}`);
  }
}

const ALIASES = new Set(['-userhome-', '-inbox-', '-root-', '-saved_search-', '-home-']);

/** Characters Alfresco refuses in a node name (and a trailing dot or space). */
const ILLEGAL_NAME = /["*\\<>?/:|]|[. ]$/;

/** `name - 2.ext`, `name - 3.ext`, ...: the first free name in the folder. */
function freeName(siblings: Set<string>, name: string): string {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  for (let n = 2; ; n++) {
    const candidate = `${stem} - ${n}${ext}`;
    if (!siblings.has(candidate.toLowerCase())) return candidate;
  }
}

/** The first bytes of a blob (the virus check looks at the head only, like a signature scanner on EICAR). */
async function head(blobs: BlobStore, blob: string, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of blobs.read(blob) as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= bytes) break;
  }
  return Buffer.concat(chunks).subarray(0, bytes);
}

/** `major.minor`: the first content is 1.0, each replacement adds a minor version. */
function nextVersion(current: string | null): string {
  if (!current) return '1.0';
  const [major, minor] = current.split('.').map(Number);
  return `${major ?? 1}.${(minor ?? 0) + 1}`;
}

export const repoHandlers: Record<string, Handler> = {
  'repo.validateSession': (ctx) => {
    const auth = authenticate(ctx.store, 'repo', ctx.headers);
    const base = {
      remoteAuthentications: null,
      ltiSession: null,
      currentScope: null,
      sessionTimeout: 3600,
    };
    if (auth.ok) {
      const user = auth.user;
      const home = findSpecialFolder(ctx.store, user, USER_HOME);
      const body = {
        ...base,
        isValidLogin: true,
        statusCode: 'OK',
        authorityName: user.name,
        isGuest: false,
        isAdmin: user.admin,
        toolPermissions: TOOL_PERMISSIONS,
        userHome: home?.id ?? null,
      };
      // A login by credentials opens a session; the cookie alone authenticates later calls.
      if (auth.via === 'session') return body;
      const { cookie } = openSession(ctx.store, user, ctx.now());
      return new Reply(200, body, { 'set-cookie': cookie });
    }
    // A credential-less request runs as the guest only when the guest is enabled (the server then sets
    // `isGuest`) and the request does not carry `DisableGuest: true`; wrong credentials never fall back to it.
    const guestDisabled = String(ctx.headers.disableguest ?? '').toLowerCase() === 'true';
    if (auth.reason === 'missing' && ctx.isGuest && !guestDisabled) {
      return {
        ...base,
        isValidLogin: true,
        statusCode: 'GUEST',
        authorityName: ctx.user.name,
        isGuest: true,
        isAdmin: false,
        toolPermissions: ['TOOLPERMISSION_SEARCH'],
        userHome: null,
      };
    }
    return {
      ...base,
      isValidLogin: false,
      statusCode: 'INVALID_CREDENTIALS',
      authorityName: null,
      isGuest: false,
      isAdmin: false,
      toolPermissions: [],
      userHome: null,
    };
  },

  'repo.createChild': (ctx) => {
    requireRepository(ctx);
    const parentId = ctx.params.parentNodeId as string;
    let parent: RepoNode | undefined;
    if (parentId === '-userhome-') parent = userHome(ctx);
    else if (parentId === '-inbox-') parent = userInbox(ctx);
    else parent = ctx.store.nodes.get(parentId);
    if (!parent) throw notFound(`Node "${parentId}" not found in repository ${HOME_REPOSITORY}`);
    if (!parent.isDirectory) {
      throw new ServiceError(400, `Node "${parent.name}" (${parent.id}) is not a folder: it cannot have children`, {
        field: 'parentNodeId',
      });
    }
    if (!canAccess(ctx.user, ctx.isGuest, parent)) {
      throw forbidden(`User ${ctx.user.name} may not add children to node ${parent.id}`);
    }
    const type = ctx.query.type as string;
    const kind = NODE_TYPES[type];
    if (!kind) {
      throw new ServiceError(
        400,
        `Unknown node type "${type}": expected one of ${Object.keys(NODE_TYPES).join(', ')}`,
        {
          field: 'type',
        },
      );
    }
    const props = ctx.body as Record<string, string[]>;
    const requested = props['cm:name']?.[0]?.trim();
    if (!requested) {
      // edu-sharing fails inside the repository layer here, hence a 500 rather than a validation error.
      throw new ServiceError(500, 'Property cm:name is missing or empty: expected {"cm:name": ["file.png"]}', {
        error: 'org.edu_sharing.restservices.DAOException',
      });
    }
    if (ILLEGAL_NAME.test(requested)) {
      throw new ServiceError(
        400,
        `Invalid cm:name "${requested}": a name may not contain " * \\ < > ? / : | nor end with a dot or a space`,
        { field: 'cm:name' },
      );
    }
    // Names are unique per folder, compared case-insensitively as Alfresco does.
    const siblings = new Set(ctx.store.nodes.filter((n) => n.parentId === parent.id).map((n) => n.name.toLowerCase()));
    let name = requested;
    if (siblings.has(name.toLowerCase())) {
      if (ctx.query.renameIfExists !== true) {
        throw new ServiceError(409, `A node named "${requested}" already exists in folder ${parent.id}`);
      }
      name = freeName(siblings, requested);
    }
    const extraAspects = [ctx.query.aspects ?? []]
      .flat()
      .join(',')
      .split(',')
      .map((a) => a.trim())
      .filter((a) => a !== '');
    const properties: Record<string, string[]> = {
      ...props,
      'cm:name': [name],
      'cm:creator': [ctx.user.name],
      'cm:modifier': [ctx.user.name],
    };
    if (ctx.query.versionComment) properties['ccm:versioncomment'] = [ctx.query.versionComment];
    const node = insertNode(ctx, {
      parentId: parent.id,
      name,
      type,
      isDirectory: kind.isDirectory,
      properties,
      aspects: [...new Set([...DEFAULT_ASPECTS, ...extraAspects])],
    });
    return { node: presentNode(ctx, node) };
  },

  'repo.uploadContent': async (ctx) => {
    requireRepository(ctx);
    const nodeId = ctx.params.nodeId as string;
    if (ALIASES.has(nodeId)) {
      throw notFound(`Node "${nodeId}" not found: the content endpoint takes a real node id, not an alias`);
    }
    const node = ctx.store.nodes.get(nodeId);
    if (!node) throw notFound(`Node "${nodeId}" not found in repository ${HOME_REPOSITORY}`);
    if (!canAccess(ctx.user, ctx.isGuest, node)) {
      throw forbidden(`User ${ctx.user.name} may not write the content of node ${node.id}`);
    }
    if (node.isDirectory) {
      throw new ServiceError(400, `Node "${node.name}" (${node.id}) is a folder: it cannot hold content`, {
        field: 'nodeId',
      });
    }
    const files = ctx.files.filter((f) => f.field === 'file');
    const file = files[0];
    if (!file || files.length > 1) {
      throw new ServiceError(400, `Expected exactly one multipart part named "file", got ${files.length}`, {
        field: 'file',
      });
    }
    const declared = String(ctx.query.mimetype);
    const mimetype = declared.split(';')[0]?.trim().toLowerCase() ?? '';
    if (!/^[a-z0-9][\w.+-]*\/[a-z0-9][\w.+-]*$/.test(mimetype)) {
      throw new ServiceError(415, `Invalid mimetype "${declared}": expected type/subtype, e.g. image/png`);
    }
    if (mimetype !== 'application/octet-stream') {
      for (const name of [node.name, file.fileName]) {
        const fits = EXTENSION_TYPES[extension(name)];
        if (fits && !fits.includes(mimetype)) {
          throw new ServiceError(
            415,
            `Mimetype ${mimetype} does not fit the file name "${name}": expected ${fits.join(' or ')}`,
          );
        }
      }
    }
    if ((await head(ctx.blobs, file.blob, 1024)).includes(EICAR)) {
      throw new ServiceError(422, `A virus was found in "${file.fileName}" (EICAR test signature)`);
    }
    const used = ctx.store.nodes
      .filter((n) => n.ownerId === node.ownerId && n.id !== node.id)
      .reduce((sum, n) => sum + (n.size ?? 0), 0);
    if (used + file.size > quotaBytes) {
      throw new ServiceError(
        503,
        `Storage quota exceeded: ${used} of ${quotaBytes} bytes used, the upload needs ${file.size} more`,
      );
    }
    const previousBlob = node.blob;
    node.blob = file.blob;
    node.size = file.size;
    node.sha256 = file.sha256;
    node.mimetype = mimetype;
    node.contentVersion = nextVersion(node.contentVersion);
    node.modifiedAt = ctx.now();
    node.properties = { ...node.properties, 'cm:modifier': [ctx.user.name] };
    if (ctx.query.versionComment) node.properties['ccm:versioncomment'] = [ctx.query.versionComment];
    ctx.store.nodes.update(node);
    if (previousBlob) void ctx.blobs.remove(previousBlob);
    return { node: presentNode(ctx, node) };
  },

  'repo.appAuth': (ctx) => {
    // The real endpoint trusts a signed application request; the emulator lets administrators stand in for it.
    if (ctx.isGuest || !ctx.user.admin) {
      throw forbidden(`User ${ctx.user.name} may not issue tickets: application authentication needs an administrator`);
    }
    const user = ctx.store.users.find((u) => u.name === ctx.params.userId);
    if (!user) throw notFound(`User "${ctx.params.userId}" not found`);
    const ticket = `TICKET_${randomBytes(20).toString('hex')}`;
    ctx.store.tickets.insert({ id: ticket, userId: user.id, createdAt: ctx.now() });
    return { ticket, userId: user.name };
  },
};
