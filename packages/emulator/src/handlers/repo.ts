import { randomBytes, randomUUID } from 'node:crypto';
import { authenticate, openSession } from '../auth.js';
import type { BlobStore } from '../blobs.js';
import { type Ctx, forbidden, type Handler, notFound, Reply, ServiceError } from '../context.js';
import type { RepoNode, Store, User } from '../store.js';

/**
 * The content repository (edu-sharing): session validation, node creation, content upload and ticket issuance.
 *
 * Model: every user has a home folder (`-userhome-`) and an inbox (`-inbox-`, a folder inside the home), both
 * created lazily as folder nodes owned by the user and told apart by their `ccm:maptype` property. Only the owner of
 * a node and administrators may add children to it, write its content or download it; the guest may do neither.
 */

/** Id of the one (home) repository; `-home-` is its alias. */
export const HOME_REPOSITORY = 'local';

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

/** Map types that mark a user's special folders. */
const MAP_TYPE = 'ccm:maptype';
const USER_HOME = 'USERHOME';
const USER_INBOX = 'USER_INBOX';

const NODE_TYPES: Record<string, { isDirectory: boolean }> = {
  'ccm:io': { isDirectory: false },
  'cm:content': { isDirectory: false },
  'ccm:map': { isDirectory: true },
  'cm:folder': { isDirectory: true },
};

/** Every right a node grants (what its owner and administrators get). */
const NODE_ACCESS = ['ReadAll', 'Comment', 'AddChildren', 'ChangePermissions', 'Write', 'Delete', 'CCPublish'];

const DEFAULT_ASPECTS = ['cm:auditable', 'sys:referenceable', 'sys:localized', 'cm:titled'];

/** Extension → media types that fit it (`application/octet-stream` fits every file: "type unknown to the sender"). */
const EXTENSION_TYPES: Record<string, readonly string[]> = {
  png: ['image/png'],
  jpg: ['image/jpeg'],
  jpeg: ['image/jpeg'],
  gif: ['image/gif'],
  webp: ['image/webp'],
  svg: ['image/svg+xml'],
  pdf: ['application/pdf'],
  txt: ['text/plain'],
  log: ['text/plain'],
  md: ['text/markdown', 'text/plain'],
  csv: ['text/csv', 'text/plain'],
  html: ['text/html'],
  htm: ['text/html'],
  json: ['application/json', 'text/plain'],
  xml: ['application/xml', 'text/xml'],
  zip: ['application/zip', 'application/x-zip-compressed'],
  mp4: ['video/mp4'],
  webm: ['video/webm'],
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

/** The extension of a file name, lower case, without the dot; '' when it has none. */
function extension(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/** The media type a file of this name most likely has. */
function guessMimetype(name: string): string {
  return EXTENSION_TYPES[extension(name)]?.[0] ?? 'application/octet-stream';
}

/** edu-sharing's coarse category of a media type, as used in icon names. */
function mediatype(node: RepoNode, mimetype: string | null): string {
  if (node.isDirectory) return 'folder';
  const m = mimetype ?? '';
  if (m.startsWith('image/')) return 'file-image';
  if (m.startsWith('video/')) return 'file-video';
  if (m.startsWith('audio/')) return 'file-audio';
  if (m === 'application/pdf') return 'file-pdf';
  if (m.includes('zip')) return 'file-zip';
  if (m.startsWith('text/')) return 'file-txt';
  return 'file';
}

/** `2026-01-31T12:00:00Z`: the node timestamps carry seconds, no milliseconds. */
function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** `/edu-sharing` or `/repo`: the web application root the client reached the REST API under. */
export function appRoot(prefix: string): string {
  return prefix.replace(/\/rest$/, '');
}

/** The URL a node's content is downloaded from (served by nodeDownload.ts). */
export function downloadUrl(origin: string, prefix: string, nodeId: string): string {
  return `${origin}${appRoot(prefix)}/eduservlet/download?nodeId=${encodeURIComponent(nodeId)}`;
}

/** Owners and administrators may write a node and read its content; the guest owns nothing. */
export function canAccess(user: User, isGuest: boolean, node: RepoNode): boolean {
  return !isGuest && (user.admin || node.ownerId === user.id);
}

function requireRepository(ctx: Ctx): void {
  const repo = ctx.params.repository as string;
  if (repo !== '-home-' && repo !== HOME_REPOSITORY) {
    throw notFound(`Repository "${repo}" not found: expected -home- or ${HOME_REPOSITORY}`);
  }
}

function findSpecialFolder(store: Store, user: User, mapType: string): RepoNode | undefined {
  return store.nodes.find((n) => n.ownerId === user.id && n.properties[MAP_TYPE]?.[0] === mapType);
}

function newFolder(ctx: Ctx, parentId: string | null, name: string, type: string, mapType: string): RepoNode {
  const now = ctx.now();
  return ctx.store.nodes.insert({
    id: randomUUID(),
    parentId,
    name,
    type,
    isDirectory: true,
    ownerId: ctx.user.id,
    properties: {
      'cm:name': [name],
      [MAP_TYPE]: [mapType],
      'cm:creator': [ctx.user.name],
      'cm:modifier': [ctx.user.name],
    },
    aspects: [...DEFAULT_ASPECTS],
    mimetype: null,
    size: null,
    blob: null,
    sha256: null,
    createdAt: now,
    modifiedAt: now,
    contentVersion: null,
  });
}

/** The calling user's home folder, created on first use. */
function userHome(ctx: Ctx): RepoNode {
  if (ctx.isGuest) throw forbidden('The guest user has no home folder (-userhome-): authenticate first');
  return (
    findSpecialFolder(ctx.store, ctx.user, USER_HOME) ?? newFolder(ctx, null, ctx.user.name, 'cm:folder', USER_HOME)
  );
}

/** The calling user's inbox, a folder inside the home, created on first use. */
function userInbox(ctx: Ctx): RepoNode {
  const home = userHome(ctx);
  return findSpecialFolder(ctx.store, ctx.user, USER_INBOX) ?? newFolder(ctx, home.id, 'Inbox', 'ccm:map', USER_INBOX);
}

const ALIASES = new Set(['-userhome-', '-inbox-', '-root-', '-saved_search-', '-home-']);

function userByName(store: Store, name: string | undefined): User | undefined {
  return name === undefined ? undefined : store.users.find((u) => u.name === name);
}

/** edu-sharing's user object; `profile` is not modelled. */
function presentUser(user: User | undefined): Record<string, unknown> {
  const display = user?.displayName ?? 'Unknown';
  const space = display.indexOf(' ');
  return {
    profile: null,
    firstName: space < 0 ? display : display.slice(0, space),
    lastName: space < 0 ? '' : display.slice(space + 1),
    mailbox: user?.email ?? '',
  };
}

function ref(id: string): Record<string, unknown> {
  return { repo: HOME_REPOSITORY, id, archived: false, isHomeRepo: true };
}

/** A node as the spec's Node table lists it, with the caller's access rights. */
export function presentNode(ctx: Ctx, n: RepoNode): Record<string, unknown> {
  const root = `${ctx.origin}${appRoot(ctx.prefix)}`;
  const owner = ctx.store.users.get(n.ownerId);
  const mimetype = n.isDirectory ? null : (n.mimetype ?? guessMimetype(n.name));
  const media = mediatype(n, mimetype);
  const hasContent = n.blob !== null && n.size !== null;
  return {
    isDirectory: n.isDirectory,
    commentCount: 0,
    ref: ref(n.id),
    parent: n.parentId === null ? null : ref(n.parentId),
    type: n.type,
    aspects: n.aspects,
    name: n.name,
    title: n.properties['cm:title']?.[0] ?? null,
    description: n.properties['cm:description']?.[0] ?? null,
    metadataset: 'default',
    repositoryType: 'ALFRESCO',
    createdAt: isoSeconds(n.createdAt),
    modifiedAt: isoSeconds(n.modifiedAt),
    createdBy: presentUser(userByName(ctx.store, n.properties['cm:creator']?.[0]) ?? owner),
    modifiedBy: presentUser(userByName(ctx.store, n.properties['cm:modifier']?.[0]) ?? owner),
    owner: presentUser(owner),
    access: canAccess(ctx.user, ctx.isGuest, n) ? [...NODE_ACCESS] : ['ReadAll'],
    contentVersion: n.contentVersion,
    contentUrl: `${root}/components/render/${encodeURIComponent(n.id)}`,
    downloadUrl: hasContent ? downloadUrl(ctx.origin, ctx.prefix, n.id) : null,
    properties: {
      ...n.properties,
      'cm:name': [n.name],
      'sys:node-uuid': [n.id],
      'cm:created': [new Date(n.createdAt).toISOString()],
      'cm:modified': [new Date(n.modifiedAt).toISOString()],
      ...(n.contentVersion ? { 'cm:versionLabel': [n.contentVersion] } : {}),
    },
    mimetype,
    mediatype: media,
    size: hasContent ? String(n.size) : null,
    preview: {
      isIcon: !hasContent,
      isGenerated: false,
      url: `${root}/preview?nodeId=${encodeURIComponent(n.id)}&storeProtocol=workspace&storeId=SpacesStore&dontcache=${n.modifiedAt}`,
      width: null,
      height: null,
    },
    iconURL: `${root}/themes/default/images/common/mime-types/svg/${media}.svg`,
    licenseURL: `${root}/ccimages/licenses/none.svg`,
    collection: null,
  };
}

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
    const now = ctx.now();
    const properties: Record<string, string[]> = {
      ...props,
      'cm:name': [name],
      'cm:creator': [ctx.user.name],
      'cm:modifier': [ctx.user.name],
    };
    if (ctx.query.versionComment) properties['ccm:versioncomment'] = [ctx.query.versionComment];
    const node = ctx.store.nodes.insert({
      id: randomUUID(),
      parentId: parent.id,
      name,
      type,
      isDirectory: kind.isDirectory,
      ownerId: ctx.user.id,
      properties,
      aspects: [...new Set([...DEFAULT_ASPECTS, ...extraAspects])],
      mimetype: null,
      size: null,
      blob: null,
      sha256: null,
      createdAt: now,
      modifiedAt: now,
      contentVersion: null,
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
