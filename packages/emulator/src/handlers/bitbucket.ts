import {
  annotationsOf,
  bitbucketPage,
  bitbucketRepo,
  buildStatusesOf,
  MAX_ANNOTATIONS,
  presentAnnotation,
  presentBuildStatus,
  presentReport,
  reportId,
  reportsOf,
} from '../rules/codehosts.js';
import { type Ctx, type Handler, Reply, ServiceError } from '../service/context.js';
import type { CodeRepo, InsightAnnotation, InsightReport } from '../store/store.js';

/**
 * Bitbucket Data Center's Code Insights (reports, their data fields and annotations) and build status. The
 * emulator holds no commits: any full hash of a held repository is a commit (the contract refuses a short one).
 */

const NO_CONTENT = new Reply(204, undefined);

function repository(ctx: Ctx): CodeRepo {
  const { projectKey, repositorySlug } = ctx.params as { projectKey: string; repositorySlug: string };
  const repo = bitbucketRepo(ctx.store, projectKey, repositorySlug);
  if (!repo) {
    throw new ServiceError(404, `Repository ${projectKey}/${repositorySlug} does not exist.`, {
      error: 'com.atlassian.bitbucket.repository.NoSuchRepositoryException',
    });
  }
  return repo;
}

function report(ctx: Ctx): InsightReport {
  const repo = repository(ctx);
  const { commitId, key } = ctx.params as { commitId: string; key: string };
  const found = ctx.store.insightReports.get(reportId(repo.id, commitId, key));
  if (!found) {
    throw new ServiceError(404, `No report with key '${key}' exists for commit ${commitId} in ${repo.path}.`, {
      error: 'com.atlassian.bitbucket.codeinsights.NoSuchReportException',
    });
  }
  return found;
}

const putReport: Handler = (ctx) => {
  const repo = repository(ctx);
  const { commitId, key } = ctx.params as { commitId: string; key: string };
  const b = ctx.body as Omit<InsightReport, 'id' | 'repoId' | 'commit' | 'key' | 'createdDate' | 'data'> & {
    data?: InsightReport['data'];
  };
  const id = reportId(repo.id, commitId, key);
  // A replacement is a new report (new date, no field of the old one left); its annotations stay.
  const row: InsightReport = {
    id,
    repoId: repo.id,
    commit: commitId.toLowerCase(),
    key,
    title: b.title,
    ...(b.details !== undefined ? { details: b.details } : {}),
    ...(b.result !== undefined ? { result: b.result } : {}),
    ...(b.reporter !== undefined ? { reporter: b.reporter } : {}),
    ...(b.link !== undefined ? { link: b.link } : {}),
    ...(b.logoUrl !== undefined ? { logoUrl: b.logoUrl } : {}),
    data: b.data ?? [],
    createdDate: ctx.now(),
  };
  if (ctx.store.insightReports.get(id)) ctx.store.insightReports.update(row);
  else ctx.store.insightReports.insert(row);
  return presentReport(row);
};

const getReport: Handler = (ctx) => presentReport(report(ctx));

const listReports: Handler = (ctx) => {
  const repo = repository(ctx);
  const { start, limit } = ctx.query as { start?: number; limit?: number };
  return bitbucketPage(reportsOf(ctx.store, repo.id, ctx.params.commitId).map(presentReport), start, limit);
};

const deleteReport: Handler = (ctx) => {
  const r = report(ctx);
  ctx.store.insightAnnotations.removeWhere((a) => a.reportId === r.id);
  ctx.store.insightReports.remove(r.id);
  return NO_CONTENT;
};

const addAnnotations: Handler = (ctx) => {
  const r = report(ctx);
  const added = (ctx.body as { annotations: Omit<InsightAnnotation, 'id' | 'reportId'>[] }).annotations;
  const held = ctx.store.insightAnnotations.filter((a) => a.reportId === r.id).length;
  // Refused whole: a reporter that sends the worst first still needs to know nothing of this request was kept.
  if (held + added.length > MAX_ANNOTATIONS) {
    throw new ServiceError(
      400,
      `Cannot add ${added.length} annotations to report '${r.key}': it holds ${held}, and a report holds at most ${MAX_ANNOTATIONS} annotations.`,
      { error: 'com.atlassian.bitbucket.codeinsights.AnnotationLimitExceededException' },
    );
  }
  for (const a of added) ctx.store.insightAnnotations.insert({ reportId: r.id, ...a });
  return NO_CONTENT;
};

const listAnnotations: Handler = (ctx) => {
  const r = report(ctx);
  const annotations = annotationsOf(ctx.store, r).map((a) => presentAnnotation(a, r.key));
  return { annotations, totalCount: annotations.length };
};

const deleteAnnotations: Handler = (ctx) => {
  const r = report(ctx);
  const raw = (ctx.query as { externalId?: string | string[] }).externalId;
  const ids = raw === undefined ? undefined : new Set([raw].flat());
  ctx.store.insightAnnotations.removeWhere(
    (a) => a.reportId === r.id && (!ids || (a.externalId !== undefined && ids.has(a.externalId))),
  );
  return NO_CONTENT;
};

const setBuildStatus: Handler = (ctx) => {
  const commit = (ctx.params.commitId as string).toLowerCase();
  const b = ctx.body as { state: 'SUCCESSFUL' | 'FAILED' | 'INPROGRESS'; key: string } & Record<string, string>;
  const row = {
    commit,
    key: b.key,
    state: b.state,
    url: b.url as string,
    ...(b.name !== undefined ? { name: b.name } : {}),
    ...(b.description !== undefined ? { description: b.description } : {}),
    dateAdded: ctx.now(),
  };
  // Replaced, not updated in place: a new row keeps the newest first even within one millisecond.
  ctx.store.buildStatuses.removeWhere((s) => s.commit === commit && s.key === b.key);
  ctx.store.buildStatuses.insert(row);
  return NO_CONTENT;
};

const listBuildStatuses: Handler = (ctx) => {
  const { start, limit } = ctx.query as { start?: number; limit?: number };
  return bitbucketPage(buildStatusesOf(ctx.store, ctx.params.commitId).map(presentBuildStatus), start, limit);
};

export const bitbucketHandlers: Record<string, Handler> = {
  'bitbucket.putReport': putReport,
  'bitbucket.report': getReport,
  'bitbucket.reports': listReports,
  'bitbucket.deleteReport': deleteReport,
  'bitbucket.addAnnotations': addAnnotations,
  'bitbucket.annotations': listAnnotations,
  'bitbucket.deleteAnnotations': deleteAnnotations,
  'bitbucket.setBuildStatus': setBuildStatus,
  'bitbucket.buildStatuses': listBuildStatuses,
};
