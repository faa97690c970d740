import type {
  BuildStatus,
  CodeHost,
  CodeRepo,
  InsightAnnotation,
  InsightReport,
  ReviewComment,
  Store,
} from '../store/store.js';

/**
 * Rules of the code hosts' data, shared by their handlers and the web UI: which repository a request names, the
 * rows of a commit or a review, and how Bitbucket presents a report, an annotation and a build status.
 */

/** Annotations a Code Insights report holds at most (Bitbucket's default instance setting). */
export const MAX_ANNOTATIONS = 1000;

/** A repository's row id: the three hosts find a repository whatever the case of its name. */
export const codeRepoId = (host: CodeHost, path: string): string => `${host}:${path.toLowerCase()}`;

/** The Bitbucket repository `PROJECT/slug`, when the emulator holds it. */
export function bitbucketRepo(store: Store, projectKey: string, slug: string): CodeRepo | undefined {
  return store.codeRepos.get(codeRepoId('bitbucket', `${projectKey}/${slug}`));
}

/** The GitLab project by numeric id or by path (`demo/shop`, decoded from `demo%2Fshop`). */
export function gitlabProject(store: Store, id: string): CodeRepo | undefined {
  if (/^\d+$/.test(id)) return store.codeRepos.find((r) => r.host === 'gitlab' && r.projectId === Number(id));
  return store.codeRepos.get(codeRepoId('gitlab', id));
}

/** The GitHub repository `owner/name`. */
export function githubRepo(store: Store, owner: string, name: string): CodeRepo | undefined {
  return store.codeRepos.get(codeRepoId('github', `${owner}/${name}`));
}

/** A report's row id; the commit is kept in lower case (Bitbucket takes either). */
export const reportId = (repoId: string, commit: string, key: string): string =>
  `${repoId}|${commit.toLowerCase()}|${key}`;

/** A commit's reports, oldest first. */
export function reportsOf(store: Store, repoId: string, commit: string): InsightReport[] {
  const c = commit.toLowerCase();
  return store.insightReports
    .filter((r) => r.repoId === repoId && r.commit === c)
    .sort((a, b) => a.createdDate - b.createdDate || a.key.localeCompare(b.key));
}

/** A report's annotations in the order they were added. */
export function annotationsOf(store: Store, report: InsightReport): InsightAnnotation[] {
  return store.insightAnnotations.filter((a) => a.reportId === report.id).sort((a, b) => a.id - b.id);
}

/** A commit's build statuses, newest first (Bitbucket's order). */
export function buildStatusesOf(store: Store, commit: string): BuildStatus[] {
  const c = commit.toLowerCase();
  return store.buildStatuses.filter((b) => b.commit === c).sort((a, b) => b.dateAdded - a.dateAdded || b.id - a.id);
}

/** The notes of a merge request or the comments of a pull request, oldest first. */
export function commentsOf(store: Store, repo: CodeRepo, review: number): ReviewComment[] {
  return store.reviewComments.filter((c) => c.repoId === repo.id && c.review === review).sort((a, b) => a.id - b.id);
}

/** Drops the fields a row leaves unset, as Bitbucket's JSON leaves them out. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** A report as Bitbucket answers it. */
export function presentReport(r: InsightReport): Record<string, unknown> {
  return defined({
    key: r.key,
    title: r.title,
    details: r.details,
    result: r.result,
    reporter: r.reporter,
    link: r.link,
    logoUrl: r.logoUrl,
    data: r.data,
    createdDate: r.createdDate,
  });
}

/** An annotation as Bitbucket answers it. */
export function presentAnnotation(a: InsightAnnotation, reportKey: string): Record<string, unknown> {
  return defined({
    reportKey,
    externalId: a.externalId,
    path: a.path,
    line: a.line,
    message: a.message,
    severity: a.severity,
    type: a.type,
    link: a.link,
  });
}

/** A build status as Bitbucket answers it. */
export function presentBuildStatus(b: BuildStatus): Record<string, unknown> {
  return defined({
    state: b.state,
    key: b.key,
    name: b.name,
    url: b.url,
    description: b.description,
    dateAdded: b.dateAdded,
  });
}

/** Bitbucket's page of `values` from offset `start`, `limit` at a time (25 by default). */
export function bitbucketPage<T>(values: readonly T[], start = 0, limit = 25): Record<string, unknown> {
  const shown = values.slice(start, start + limit);
  const isLastPage = start + shown.length >= values.length;
  return {
    size: shown.length,
    limit,
    isLastPage,
    values: shown,
    start,
    ...(isLastPage ? {} : { nextPageStart: start + shown.length }),
  };
}
