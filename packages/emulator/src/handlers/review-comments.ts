import { commentsOf, githubRepo, gitlabProject } from '../rules/codehosts.js';
import { type Ctx, type Handler, Reply, ServiceError } from '../service/context.js';
import type { CodeRepo, ReviewComment, Store } from '../store/store.js';

/**
 * The conversation of a review: GitLab's merge-request notes and GitHub's pull-request (issue) comments. Both
 * create, list a page at a time and edit one in place, which is all a reporter needs to keep one comment of its
 * own up to date; each answers in its host's shapes, paging headers and errors.
 */

const userOf = (store: Store, name: string) => store.users.find((u) => u.name === name);

/** GitLab ISO timestamps carry milliseconds, GitHub's do not. */
const gitlabTime = (ms: number) => new Date(ms).toISOString();
const githubTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

// ---------------------------------------------------------------------------------------------------------------
// GitLab

function mergeRequest(ctx: Ctx): { repo: CodeRepo; iid: number } {
  const repo = gitlabProject(ctx.store, ctx.params.id as string);
  if (!repo) throw new ServiceError(404, '404 Project Not Found');
  const iid = ctx.params.merge_request_iid as number;
  if (!repo.reviews.includes(iid)) throw new ServiceError(404, '404 Not found');
  return { repo, iid };
}

function presentNote(ctx: Ctx, n: ReviewComment): Record<string, unknown> {
  const user = userOf(ctx.store, n.author);
  return {
    id: n.id,
    type: null,
    body: n.body,
    attachment: null,
    author: {
      id: user?.id ?? 0,
      username: n.author,
      name: user?.displayName ?? n.author,
      state: 'active',
      web_url: `${ctx.origin}/${encodeURIComponent(n.author)}`,
    },
    created_at: gitlabTime(n.createdAt),
    updated_at: gitlabTime(n.updatedAt),
    system: false,
    noteable_id: n.review,
    noteable_type: 'MergeRequest',
    noteable_iid: n.review,
    resolvable: false,
    confidential: false,
    internal: false,
  };
}

const createNote: Handler = (ctx) => {
  const { repo, iid } = mergeRequest(ctx);
  const now = ctx.now();
  const note = ctx.store.reviewComments.insert({
    repoId: repo.id,
    review: iid,
    body: (ctx.body as { body: string }).body,
    author: ctx.user.name,
    createdAt: now,
    updatedAt: now,
  });
  return new Reply(201, presentNote(ctx, note));
};

const listNotes: Handler = (ctx) => {
  const { repo, iid } = mergeRequest(ctx);
  const q = ctx.query as {
    sort?: 'asc' | 'desc';
    order_by?: 'created_at' | 'updated_at';
    page?: number;
    per_page?: number;
  };
  const by = q.order_by === 'updated_at' ? (n: ReviewComment) => n.updatedAt : (n: ReviewComment) => n.createdAt;
  const sign = q.sort === 'asc' ? 1 : -1;
  const all = commentsOf(ctx.store, repo, iid).sort((a, b) => sign * (by(a) - by(b) || a.id - b.id));
  const perPage = q.per_page ?? 20;
  const page = q.page ?? 1;
  const pages = Math.max(1, Math.ceil(all.length / perPage));
  const headers: Record<string, string> = {
    'x-total': String(all.length),
    'x-total-pages': String(pages),
    'x-page': String(page),
    'x-per-page': String(perPage),
    'x-next-page': page < pages ? String(page + 1) : '',
    'x-prev-page': page > 1 ? String(page - 1) : '',
  };
  const shown = all.slice((page - 1) * perPage, page * perPage).map((n) => presentNote(ctx, n));
  return new Reply(200, shown, headers);
};

const editNote: Handler = (ctx) => {
  const { repo, iid } = mergeRequest(ctx);
  const note = ctx.store.reviewComments.get(ctx.params.note_id as number);
  if (!note || note.repoId !== repo.id || note.review !== iid) throw new ServiceError(404, '404 Note Not Found');
  const updated = ctx.store.reviewComments.update({
    ...note,
    body: (ctx.body as { body: string }).body,
    updatedAt: ctx.now(),
  });
  return presentNote(ctx, updated);
};

const deleteNote: Handler = (ctx) => {
  const { repo, iid } = mergeRequest(ctx);
  const note = ctx.store.reviewComments.get(ctx.params.note_id as number);
  if (!note || note.repoId !== repo.id || note.review !== iid) throw new ServiceError(404, '404 Note Not Found');
  ctx.store.reviewComments.remove(note.id);
  return new Reply(204, undefined);
};

// ---------------------------------------------------------------------------------------------------------------
// GitHub

function repository(ctx: Ctx): CodeRepo {
  const repo = githubRepo(ctx.store, ctx.params.owner as string, ctx.params.repo as string);
  if (!repo) throw new ServiceError(404, 'Not Found');
  return repo;
}

function pullRequest(ctx: Ctx): { repo: CodeRepo; number: number } {
  const repo = repository(ctx);
  const number = ctx.params.issue_number as number;
  if (!repo.reviews.includes(number)) throw new ServiceError(404, 'Not Found');
  return { repo, number };
}

/** Where the API is reached (`/api/v3` on an Enterprise Server, nothing on api.github.com). */
const apiBase = (ctx: Ctx) => `${ctx.origin}${ctx.prefix}`;

function presentComment(ctx: Ctx, repo: CodeRepo, c: ReviewComment): Record<string, unknown> {
  const user = userOf(ctx.store, c.author);
  const issueUrl = `${apiBase(ctx)}/repos/${repo.path}/issues/${c.review}`;
  return {
    id: c.id,
    node_id: `IC_${Buffer.from(`IssueComment:${c.id}`).toString('base64url')}`,
    url: `${apiBase(ctx)}/repos/${repo.path}/issues/comments/${c.id}`,
    // The emulator's page of the pull request (src/ui/code-review.ts), as github.com's would be.
    html_url: `${ctx.origin}/${repo.path}/pull/${c.review}#issuecomment-${c.id}`,
    issue_url: issueUrl,
    body: c.body,
    user: { login: c.author, id: user?.id ?? 0, type: 'User' },
    created_at: githubTime(c.createdAt),
    updated_at: githubTime(c.updatedAt),
    author_association: 'OWNER',
  };
}

const createComment: Handler = (ctx) => {
  const { repo, number } = pullRequest(ctx);
  const now = ctx.now();
  const comment = ctx.store.reviewComments.insert({
    repoId: repo.id,
    review: number,
    body: (ctx.body as { body: string }).body,
    author: ctx.user.name,
    createdAt: now,
    updatedAt: now,
  });
  return new Reply(201, presentComment(ctx, repo, comment));
};

const listComments: Handler = (ctx) => {
  const { repo, number } = pullRequest(ctx);
  const q = ctx.query as { page?: number; per_page?: number; since?: string };
  const since = q.since ? Date.parse(q.since) : Number.NaN;
  const all = commentsOf(ctx.store, repo, number).filter((c) => Number.isNaN(since) || c.updatedAt >= since);
  const perPage = q.per_page ?? 30;
  const page = q.page ?? 1;
  const last = Math.max(1, Math.ceil(all.length / perPage));
  const link = (n: number, rel: string) => {
    const query = new URLSearchParams({
      per_page: String(perPage),
      page: String(n),
      ...(q.since ? { since: q.since } : {}),
    });
    return `<${apiBase(ctx)}/repos/${repo.path}/issues/${number}/comments?${query}>; rel="${rel}"`;
  };
  const links = [
    ...(page > 1 ? [link(page - 1, 'prev'), link(1, 'first')] : []),
    ...(page < last ? [link(page + 1, 'next'), link(last, 'last')] : []),
  ];
  const shown = all.slice((page - 1) * perPage, page * perPage).map((c) => presentComment(ctx, repo, c));
  return new Reply(200, shown, links.length ? { link: links.join(', ') } : {});
};

const editComment: Handler = (ctx) => {
  const repo = repository(ctx);
  const comment = ctx.store.reviewComments.get(ctx.params.comment_id as number);
  if (!comment || comment.repoId !== repo.id) throw new ServiceError(404, 'Not Found');
  const updated = ctx.store.reviewComments.update({
    ...comment,
    body: (ctx.body as { body: string }).body,
    updatedAt: ctx.now(),
  });
  return presentComment(ctx, repo, updated);
};

const deleteComment: Handler = (ctx) => {
  const repo = repository(ctx);
  const comment = ctx.store.reviewComments.get(ctx.params.comment_id as number);
  if (!comment || comment.repoId !== repo.id) throw new ServiceError(404, 'Not Found');
  ctx.store.reviewComments.remove(comment.id);
  return new Reply(204, undefined);
};

export const reviewCommentHandlers: Record<string, Handler> = {
  'gitlab.createNote': createNote,
  'gitlab.notes': listNotes,
  'gitlab.editNote': editNote,
  'gitlab.deleteNote': deleteNote,
  'github.createComment': createComment,
  'github.comments': listComments,
  'github.editComment': editComment,
  'github.deleteComment': deleteComment,
};
