import * as z from 'zod';
import { defineOperation, lazy, type OperationDef, obj, type SchemaMode } from '../define.js';
import { opt, positiveInt } from './shapes.js';

/**
 * GitHub (.com or Enterprise Server): a pull request's comments, which are its issue's. Paths start at `/repos` under
 * `GITHUB_API_URL` (empty prefix); errors `{"message", "documentation_url"}`, a field refused 422 "Validation Failed".
 */

/** Characters a comment's body may hold. */
export const MAX_COMMENT_BODY = 65_536;

const commentBody = () =>
  z.object({
    body: z
      .string()
      .min(1, 'body cannot be blank')
      .max(MAX_COMMENT_BODY, `body is too long (maximum is ${MAX_COMMENT_BODY} characters)`),
  });

/** An issue comment as GitHub answers it. */
export const githubComment = (mode: SchemaMode) =>
  obj(mode, {
    id: z.number().int(),
    node_id: z.string(),
    url: opt(mode, z.string()),
    html_url: z.string(),
    issue_url: opt(mode, z.string()),
    body: z.string(),
    user: obj(mode, { login: z.string(), id: opt(mode, z.number().int()), type: opt(mode, z.string()) }),
    created_at: z.string(),
    updated_at: z.string(),
    author_association: opt(mode, z.string()),
  });

const issuePath = lazy(() =>
  z.object({ owner: z.string().min(1), repo: z.string().min(1), issue_number: positiveInt() }),
);
const NOT_FOUND = { status: 404, when: 'the repository or the pull request (issue) is not found' };

export const githubCreateComment = defineOperation({
  id: 'github.createComment',
  service: 'github',
  group: 'github',
  method: 'POST',
  path: '/repos/{owner}/{repo}/issues/{issue_number}/comments',
  summary: 'Comment on a pull request (its issue); answers 201 with the comment',
  params: issuePath,
  body: commentBody,
  response: githubComment,
  errors: [NOT_FOUND, { status: 422, when: 'the body is blank or longer than 65,536 characters' }],
  creates: true,
});

export const githubComments = defineOperation({
  id: 'github.comments',
  service: 'github',
  group: 'github',
  method: 'GET',
  path: '/repos/{owner}/{repo}/issues/{issue_number}/comments',
  summary:
    "A pull request's comments, oldest first, a page at a time (`per_page` up to 100, default 30); a `Link` header names the next page",
  params: issuePath,
  query: () =>
    z.object({
      page: positiveInt().optional(),
      per_page: positiveInt().max(100).optional(),
      since: z.string().optional(),
    }),
  response: (mode) => z.array(githubComment(mode)),
  errors: [NOT_FOUND],
});

export const githubEditComment = defineOperation({
  id: 'github.editComment',
  service: 'github',
  group: 'github',
  method: 'PATCH',
  path: '/repos/{owner}/{repo}/issues/comments/{comment_id}',
  summary: "Replace a comment's body (answers the comment)",
  params: () => z.object({ owner: z.string().min(1), repo: z.string().min(1), comment_id: positiveInt() }),
  body: commentBody,
  response: githubComment,
  errors: [
    { status: 404, when: 'the repository or the comment is not found' },
    { status: 422, when: 'the body is blank or longer than 65,536 characters' },
  ],
});

export const githubDeleteComment = defineOperation({
  id: 'github.deleteComment',
  service: 'github',
  group: 'github',
  method: 'DELETE',
  path: '/repos/{owner}/{repo}/issues/comments/{comment_id}',
  summary: 'Delete a comment (answers 204)',
  params: () => z.object({ owner: z.string().min(1), repo: z.string().min(1), comment_id: positiveInt() }),
  errors: [{ status: 404, when: 'the repository or the comment is not found' }],
});

export const githubOperations: OperationDef[] = [
  githubCreateComment,
  githubComments,
  githubEditComment,
  githubDeleteComment,
];
