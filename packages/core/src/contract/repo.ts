import * as z from 'zod';
import { defineOperation, lazy, type OperationDef, obj, type SchemaMode } from './define.js';

/**
 * Content-repository (edu-sharing) operations: the spec plus edu-sharing's documented behaviour (the emulator's
 * README). No variants; `tolerant` keeps unknown keys and lets fields a client does not need be absent or null.
 */

/** In tolerant mode a field may also be null or absent (the client does not depend on it). */
function loose<T extends z.ZodType>(mode: SchemaMode, t: T): z.ZodType<z.output<T> | null | undefined> {
  return (mode === 'tolerant' ? t.nullable().optional() : t) as z.ZodType<z.output<T> | null | undefined>;
}

/** Node reference {repo, id, archived, isHomeRepo}. */
export const nodeRef = (mode: SchemaMode) =>
  obj(mode, {
    repo: z.string(),
    id: z.string().min(1),
    archived: loose(mode, z.boolean()),
    isHomeRepo: loose(mode, z.boolean()),
  });

/** User object of createdBy / modifiedBy / owner. */
export const repoUser = (mode: SchemaMode) =>
  obj(mode, {
    profile: loose(mode, z.record(z.string(), z.unknown()).nullable()),
    firstName: loose(mode, z.string()),
    lastName: loose(mode, z.string()),
    mailbox: loose(mode, z.string()),
  });

/** Node preview {isIcon, isGenerated, url, width, height}. */
export const nodePreview = (mode: SchemaMode) =>
  obj(mode, {
    isIcon: loose(mode, z.boolean()),
    isGenerated: loose(mode, z.boolean()),
    url: loose(mode, z.string()),
    width: loose(mode, z.number().int().nullable()),
    height: loose(mode, z.number().int().nullable()),
  });

/** ISO 8601 UTC with seconds precision, e.g. `2026-01-31T12:00:00Z` (tolerant: any ISO string). */
const isoSeconds = (mode: SchemaMode) =>
  mode === 'tolerant'
    ? z.string()
    : z
        .string()
        .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/, 'expected an ISO 8601 UTC timestamp, seconds precision');

/** The access rights a node can grant. */
export const NODE_ACCESS = ['ReadAll', 'Comment', 'AddChildren', 'ChangePermissions', 'Write', 'Delete', 'CCPublish'];

/** A node as the spec's Node table lists it. `size` is a byte count as a string (null until content exists). */
export const repoNode = (mode: SchemaMode) =>
  obj(mode, {
    isDirectory: loose(mode, z.boolean()),
    commentCount: loose(mode, z.number().int()),
    ref: nodeRef(mode),
    parent: loose(mode, nodeRef(mode).nullable()),
    type: loose(mode, z.string()),
    aspects: loose(mode, z.array(z.string())),
    name: z.string(),
    title: loose(mode, z.string().nullable()),
    description: loose(mode, z.string().nullable()),
    metadataset: loose(mode, z.string()),
    repositoryType: loose(mode, z.string()),
    createdAt: loose(mode, isoSeconds(mode)),
    modifiedAt: loose(mode, isoSeconds(mode)),
    createdBy: loose(mode, repoUser(mode)),
    modifiedBy: loose(mode, repoUser(mode)),
    owner: loose(mode, repoUser(mode)),
    access: loose(mode, z.array(mode === 'tolerant' ? z.string() : z.enum(NODE_ACCESS))),
    contentVersion: loose(mode, z.string().nullable()),
    contentUrl: loose(mode, z.string()),
    downloadUrl: loose(mode, z.string().nullable()),
    properties: loose(mode, z.record(z.string(), z.array(z.string()))),
    /** null for a folder. */
    mimetype: loose(mode, z.string().nullable()),
    mediatype: loose(mode, z.string()),
    size:
      mode === 'tolerant'
        ? z
            .union([z.string().regex(/^\d+$/), z.number().int().nonnegative()])
            .nullable()
            .optional()
            .transform((v) => (v === undefined || v === null ? null : String(v)))
        : z.string().regex(/^\d+$/, 'expected a byte count as a string').nullable(),
    preview: loose(mode, nodePreview(mode)),
    iconURL: loose(mode, z.string()),
    licenseURL: loose(mode, z.string()),
    collection: loose(mode, z.record(z.string(), z.unknown()).nullable()),
  });

/** The `{node: Node}` envelope of the node operations. */
export const nodeEnvelope = (mode: SchemaMode) => obj(mode, { node: repoNode(mode) });

const nodePath = lazy(() => z.object({ repository: z.string().min(1), parentNodeId: z.string().min(1) }));

export const repoValidateSession = defineOperation({
  id: 'repo.validateSession',
  service: 'repo',
  group: 'repo',
  method: 'GET',
  path: '/authentication/v1/validateSession',
  summary: 'Tell whether the supplied authentication succeeded (always 200; opens a JSESSIONID session on success)',
  response: (mode) =>
    obj(mode, {
      isValidLogin: z.boolean(),
      statusCode: mode === 'tolerant' ? z.string() : z.enum(['OK', 'INVALID_CREDENTIALS', 'GUEST']),
      authorityName: loose(mode, z.string().nullable()),
      isGuest: loose(mode, z.boolean()),
      isAdmin: loose(mode, z.boolean()),
      sessionTimeout: loose(mode, z.number().int()),
      toolPermissions: loose(mode, z.array(z.string())),
      userHome: loose(mode, z.string().nullable()),
      currentScope: loose(mode, z.string().nullable()),
      remoteAuthentications: loose(mode, z.record(z.string(), z.unknown()).nullable()),
      ltiSession: loose(mode, z.record(z.string(), z.unknown()).nullable()),
    }),
  errors: [],
});

export const repoCreateChild = defineOperation({
  id: 'repo.createChild',
  service: 'repo',
  group: 'repo',
  method: 'POST',
  path: '/node/v1/nodes/{repository}/{parentNodeId}/children',
  summary: 'Create a node (metadata only) in a folder; `-home-`, `-userhome-` and `-inbox-` aliases accepted',
  params: nodePath,
  query: () =>
    z.object({
      type: z.string().min(1, 'expected a node type such as ccm:io'),
      renameIfExists: z.stringbool().optional(),
      versionComment: z.string().optional(),
      /** Repeatable in the real API; comma-separated values are split too. */
      /** Repeatable (`aspects=a&aspects=b`); a comma-separated value is split too. */
      aspects: z.union([z.string(), z.array(z.string())]).optional(),
    }),
  body: () =>
    z.record(
      z.string().regex(/^[A-Za-z][\w-]*:[\w.-]+$/, 'expected a property name in prefix:name form, e.g. cm:name'),
      z.array(z.string()),
    ),
  response: nodeEnvelope,
  errors: [
    { status: 400, when: 'the type is missing or unknown, or a property name or value is malformed' },
    { status: 403, when: 'the caller may not add children to the folder (guest, or not the owner)' },
    { status: 404, when: 'the repository or the parent node is not found' },
    { status: 409, when: 'a node of that name exists in the folder and renameIfExists is not true' },
    { status: 500, when: 'the cm:name property is missing or empty' },
  ],
  creates: true,
});

export const repoUploadContent = defineOperation({
  id: 'repo.uploadContent',
  service: 'repo',
  group: 'repo',
  method: 'POST',
  path: '/node/v1/nodes/{repository}/{nodeId}/content',
  summary: "Upload a node's file content (multipart part `file`); the node gets size and downloadUrl",
  params: () => z.object({ repository: z.string().min(1), nodeId: z.string().min(1) }),
  query: () =>
    z.object({
      mimetype: z.string().min(1, 'expected the media type of the file, e.g. image/png'),
      versionComment: z.string().optional(),
    }),
  body: () => ({ kind: 'multipart', fileFields: ['file'] }),
  response: nodeEnvelope,
  errors: [
    { status: 400, when: 'no part named file, more than one, or the node is a folder' },
    { status: 403, when: 'the caller may not write the node' },
    { status: 404, when: 'the repository or the node is not found (aliases are not accepted here)' },
    { status: 415, when: "the mimetype does not fit the file name's extension" },
    { status: 422, when: 'a virus was found (the EICAR test signature)' },
    { status: 503, when: "the upload would exceed the user's storage quota" },
    { status: 500, when: 'the file is larger than the server accepts' },
  ],
});

export const repoAppAuth = defineOperation({
  id: 'repo.appAuth',
  service: 'repo',
  group: 'repo',
  method: 'POST',
  path: '/authentication/v1/appauth/{userId}',
  summary: 'Issue an EDU-TICKET for a user (application-based authentication; administrators only)',
  params: () => z.object({ userId: z.string().min(1) }),
  /** SSO data of the user (ignored by the emulator). */
  body: () => z.record(z.string(), z.string()).optional(),
  response: (mode) => obj(mode, { ticket: z.string().min(1), userId: z.string() }),
  errors: [
    { status: 403, when: 'the caller is not an administrator' },
    { status: 404, when: 'the user is not found' },
  ],
  creates: true,
});

export const repoOperations: OperationDef[] = [repoValidateSession, repoCreateChild, repoUploadContent, repoAppAuth];
