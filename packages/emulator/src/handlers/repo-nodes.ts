import { randomUUID } from 'node:crypto';
import { type Ctx, forbidden } from '../service/context.js';
import type { RepoNode, Store, User } from '../store/store.js';

/**
 * The content repository's nodes: how they are created, who may touch them, and how they are presented (the
 * spec's Node table). Every user has a home folder (`-userhome-`) and an inbox (`-inbox-`, a folder inside the
 * home), both created lazily as folder nodes owned by the user and told apart by their `ccm:maptype` property.
 */

/** Id of the one (home) repository; `-home-` is its alias. */
export const HOME_REPOSITORY = 'local';

/** Map types that mark a user's special folders. */
const MAP_TYPE = 'ccm:maptype';
export const USER_HOME = 'USERHOME';
const USER_INBOX = 'USER_INBOX';

/** Every right a node grants (what its owner and administrators get). */
const NODE_ACCESS = ['ReadAll', 'Comment', 'AddChildren', 'ChangePermissions', 'Write', 'Delete', 'CCPublish'];

export const DEFAULT_ASPECTS = ['cm:auditable', 'sys:referenceable', 'sys:localized', 'cm:titled'];

/** Extension → media types that fit it (`application/octet-stream` fits every file: "type unknown to the sender"). */
export const EXTENSION_TYPES: Record<string, readonly string[]> = {
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

/** The extension of a file name, lower case, without the dot; '' when it has none. */
export function extension(name: string): string {
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

/** The URL a node's content is downloaded from (served by node-download.ts). */
export function downloadUrl(origin: string, prefix: string, nodeId: string): string {
  return `${origin}${appRoot(prefix)}/eduservlet/download?nodeId=${encodeURIComponent(nodeId)}`;
}

/** Owners and administrators may write a node and read its content; the guest owns nothing. */
export function canAccess(user: User, isGuest: boolean, node: RepoNode): boolean {
  return !isGuest && (user.admin || node.ownerId === user.id);
}

/** Stores a new node owned by the caller, created and modified now, without content. */
export function insertNode(
  ctx: Ctx,
  node: Pick<RepoNode, 'parentId' | 'name' | 'type' | 'isDirectory' | 'properties' | 'aspects'>,
): RepoNode {
  const now = ctx.now();
  return ctx.store.nodes.insert({
    id: randomUUID(),
    parentId: node.parentId,
    name: node.name,
    type: node.type,
    isDirectory: node.isDirectory,
    ownerId: ctx.user.id,
    properties: node.properties,
    aspects: node.aspects,
    mimetype: null,
    size: null,
    blob: null,
    sha256: null,
    createdAt: now,
    modifiedAt: now,
    contentVersion: null,
  });
}

export function findSpecialFolder(store: Store, user: User, mapType: string): RepoNode | undefined {
  return store.nodes.find((n) => n.ownerId === user.id && n.properties[MAP_TYPE]?.[0] === mapType);
}

function newFolder(ctx: Ctx, parentId: string | null, name: string, type: string, mapType: string): RepoNode {
  return insertNode(ctx, {
    parentId,
    name,
    type,
    isDirectory: true,
    properties: {
      'cm:name': [name],
      [MAP_TYPE]: [mapType],
      'cm:creator': [ctx.user.name],
      'cm:modifier': [ctx.user.name],
    },
    aspects: [...DEFAULT_ASPECTS],
  });
}

/** The calling user's home folder, created on first use. */
export function userHome(ctx: Ctx): RepoNode {
  if (ctx.isGuest) throw forbidden('The guest user has no home folder (-userhome-): authenticate first');
  return (
    findSpecialFolder(ctx.store, ctx.user, USER_HOME) ?? newFolder(ctx, null, ctx.user.name, 'cm:folder', USER_HOME)
  );
}

/** The calling user's inbox, a folder inside the home, created on first use. */
export function userInbox(ctx: Ctx): RepoNode {
  const home = userHome(ctx);
  return findSpecialFolder(ctx.store, ctx.user, USER_INBOX) ?? newFolder(ctx, home.id, 'Inbox', 'ccm:map', USER_INBOX);
}

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
