import * as z from 'zod';
import { defineOperation, lazy, type OperationDef, obj, type SchemaMode } from '../define.js';
import { opt, positiveInt } from './shapes.js';

/**
 * GitLab (self-managed or .com): a merge request's notes, full paths under `/api/v4` (empty prefix, base URL
 * `CI_SERVER_URL`). `{id}` is the project's id or URL-encoded path; errors `{"message"}` or `{"error"}`.
 */

/** Characters a note's body may hold. */
export const MAX_NOTE_BODY = 1_000_000;

const mrPath = lazy(() => z.object({ id: z.string().min(1), merge_request_iid: positiveInt() }));
const noteBody = () =>
  z.object({ body: z.string().min(1).max(MAX_NOTE_BODY, `a note holds at most ${MAX_NOTE_BODY} characters`) });

/** A merge-request note as GitLab answers it. */
export const gitlabNote = (mode: SchemaMode) =>
  obj(mode, {
    id: z.number().int(),
    type: opt(mode, z.string().nullable()),
    body: z.string(),
    author: obj(mode, {
      id: z.number().int(),
      username: z.string(),
      name: opt(mode, z.string()),
      state: opt(mode, z.string()),
      web_url: opt(mode, z.string()),
    }),
    created_at: z.string(),
    updated_at: z.string(),
    system: z.boolean(),
    noteable_id: opt(mode, z.number().int()),
    noteable_type: z.string(),
    noteable_iid: opt(mode, z.number().int()),
    resolvable: opt(mode, z.boolean()),
    confidential: opt(mode, z.boolean()),
    internal: opt(mode, z.boolean()),
  });

const NOT_FOUND = { status: 404, when: 'the project ("404 Project Not Found") or the merge request is not found' };

export const gitlabCreateNote = defineOperation({
  id: 'gitlab.createNote',
  service: 'gitlab',
  group: 'gitlab',
  method: 'POST',
  path: '/api/v4/projects/{id}/merge_requests/{merge_request_iid}/notes',
  summary: 'Add a note to a merge request (answers 201 with the note)',
  params: mrPath,
  body: noteBody,
  response: gitlabNote,
  errors: [{ status: 400, when: 'the body is missing or over 1,000,000 characters' }, NOT_FOUND],
  creates: true,
});

export const gitlabNotes = defineOperation({
  id: 'gitlab.notes',
  service: 'gitlab',
  group: 'gitlab',
  method: 'GET',
  path: '/api/v4/projects/{id}/merge_requests/{merge_request_iid}/notes',
  summary:
    "A merge request's notes, a page at a time (newest first unless `sort=asc`); `X-Total`, `X-Page` and `X-Next-Page` say where the page is",
  params: mrPath,
  query: () =>
    z.object({
      sort: z.enum(['asc', 'desc']).optional(),
      order_by: z.enum(['created_at', 'updated_at']).optional(),
      page: positiveInt().optional(),
      per_page: positiveInt().max(100).optional(),
    }),
  response: (mode) => z.array(gitlabNote(mode)),
  errors: [NOT_FOUND],
});

export const gitlabEditNote = defineOperation({
  id: 'gitlab.editNote',
  service: 'gitlab',
  group: 'gitlab',
  method: 'PUT',
  path: '/api/v4/projects/{id}/merge_requests/{merge_request_iid}/notes/{note_id}',
  summary: "Replace a merge-request note's body (answers the note)",
  params: () => mrPath().extend({ note_id: positiveInt() }),
  body: noteBody,
  response: gitlabNote,
  errors: [
    { status: 400, when: 'the body is missing or over 1,000,000 characters' },
    { status: 404, when: 'the project, the merge request or the note is not found' },
  ],
});

export const gitlabDeleteNote = defineOperation({
  id: 'gitlab.deleteNote',
  service: 'gitlab',
  group: 'gitlab',
  method: 'DELETE',
  path: '/api/v4/projects/{id}/merge_requests/{merge_request_iid}/notes/{note_id}',
  summary: 'Delete a merge-request note (answers 204)',
  params: () => mrPath().extend({ note_id: positiveInt() }),
  errors: [{ status: 404, when: 'the project, the merge request or the note is not found' }],
});

export const gitlabOperations: OperationDef[] = [gitlabCreateNote, gitlabNotes, gitlabEditNote, gitlabDeleteNote];
