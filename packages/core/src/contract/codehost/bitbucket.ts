import * as z from 'zod';
import { defineOperation, lazy, type OperationDef, obj, type SchemaMode } from '../define.js';
import { opt, positiveInt } from './shapes.js';

/**
 * Bitbucket Data Center: Code Insights (a commit's report and annotations) and build status. Full paths (empty
 * prefix; the base URL is Bitbucket's, with its context path); a Bearer token; errors `{"errors": [{message}]}`.
 */

/** A report's or a build status's commit: the full hash; Bitbucket refuses a shortened one. */
const commitId = () =>
  z.string().regex(/^[0-9a-fA-F]{40}$/, 'expected the full 40-character commit hash (a shortened hash is refused)');

const repoPath = lazy(() =>
  z.object({ projectKey: z.string().min(1), repositorySlug: z.string().min(1), commitId: commitId() }),
);
const reportPath = lazy(() => repoPath().extend({ key: z.string().min(1).max(450) }));

/** Bitbucket's page: `start` is the offset of the first value, `nextPageStart` where the next page begins. */
const page = <T extends z.ZodType>(mode: SchemaMode, value: T) =>
  obj(mode, {
    values: z.array(value),
    size: z.number().int(),
    isLastPage: z.boolean(),
    start: z.number().int(),
    limit: z.number().int(),
    nextPageStart: opt(mode, z.number().int()),
  });

const pageQuery = () =>
  z.object({ start: z.coerce.number().int().nonnegative().optional(), limit: positiveInt().max(1000).optional() });

/** Result of a report. */
export const INSIGHT_RESULTS = ['PASS', 'FAIL'] as const;
/** Types of a report's data field, each with its value: LINK is `{linktext, href}`, DATE epoch ms, DURATION ms. */
export const INSIGHT_DATA_TYPES = ['BOOLEAN', 'DATE', 'DURATION', 'LINK', 'NUMBER', 'PERCENTAGE', 'TEXT'] as const;
export const ANNOTATION_SEVERITIES = ['LOW', 'MEDIUM', 'HIGH'] as const;
export const ANNOTATION_TYPES = ['VULNERABILITY', 'CODE_SMELL', 'BUG'] as const;
export const BUILD_STATES = ['SUCCESSFUL', 'FAILED', 'INPROGRESS'] as const;
/** Data fields a report holds at most. */
export const MAX_INSIGHT_DATA = 6;

/** One data field of a report as sent: its value's type follows `type`. */
const dataField = () => {
  const title = z.string().min(1);
  return z.discriminatedUnion('type', [
    z.object({ title, type: z.literal('BOOLEAN'), value: z.boolean() }),
    z.object({ title, type: z.literal('DATE'), value: z.number().int().describe('epoch milliseconds') }),
    z.object({ title, type: z.literal('DURATION'), value: z.number().int().nonnegative().describe('milliseconds') }),
    z.object({
      title,
      type: z.literal('LINK'),
      value: z.object({ linktext: z.string().optional(), href: z.url() }),
    }),
    z.object({ title, type: z.literal('NUMBER'), value: z.number() }),
    z.object({ title, type: z.literal('PERCENTAGE'), value: z.number().min(0).max(100) }),
    z.object({ title, type: z.literal('TEXT'), value: z.string() }),
  ]);
};

/** A report as Bitbucket answers it. */
export const insightReport = (mode: SchemaMode) =>
  obj(mode, {
    key: z.string(),
    title: z.string(),
    details: opt(mode, z.string()),
    result: opt(mode, mode === 'tolerant' ? z.string() : z.enum(INSIGHT_RESULTS)),
    reporter: opt(mode, z.string()),
    link: opt(mode, z.string()),
    logoUrl: opt(mode, z.string()),
    data: z.array(
      obj(mode, {
        title: z.string(),
        type: mode === 'tolerant' ? z.string() : z.enum(INSIGHT_DATA_TYPES),
        value: z.unknown(),
      }),
    ),
    createdDate: z.number().int(),
  });

/** An annotation as Bitbucket answers it. */
export const insightAnnotation = (mode: SchemaMode) =>
  obj(mode, {
    reportKey: z.string(),
    externalId: opt(mode, z.string()),
    path: opt(mode, z.string()),
    line: opt(mode, z.number().int()),
    message: z.string(),
    severity: mode === 'tolerant' ? z.string() : z.enum(ANNOTATION_SEVERITIES),
    type: opt(mode, mode === 'tolerant' ? z.string() : z.enum(ANNOTATION_TYPES)),
    link: opt(mode, z.string()),
  });

/** A build status as Bitbucket answers it. */
export const buildStatus = (mode: SchemaMode) =>
  obj(mode, {
    state: mode === 'tolerant' ? z.string() : z.enum(BUILD_STATES),
    key: z.string(),
    name: opt(mode, z.string()),
    url: z.string(),
    description: opt(mode, z.string()),
    dateAdded: z.number().int(),
  });

const REPOSITORY_404 = { status: 404, when: 'the repository is not found ("Repository DEMO/nope does not exist.")' };
const REPORT_404 = { status: 404, when: 'the commit has no report with that key' };

export const bitbucketPutReport = defineOperation({
  id: 'bitbucket.putReport',
  service: 'bitbucket',
  group: 'bitbucket',
  method: 'PUT',
  path: '/rest/insights/latest/projects/{projectKey}/repos/{repositorySlug}/commits/{commitId}/reports/{key}',
  summary: "Create or replace a commit's Code Insights report (its annotations are kept); answers the report",
  params: reportPath,
  body: () =>
    z.object({
      title: z.string().min(1).max(450),
      details: z.string().max(2000).optional(),
      result: z.enum(INSIGHT_RESULTS).optional(),
      reporter: z.string().max(450).optional(),
      link: z.url().optional(),
      logoUrl: z.url().optional(),
      data: z
        .array(dataField())
        .max(MAX_INSIGHT_DATA, `a report holds at most ${MAX_INSIGHT_DATA} data fields`)
        .optional(),
    }),
  response: insightReport,
  errors: [
    {
      status: 400,
      when: 'a short commit hash; title missing or over 450 characters, details over 2,000; a seventh data field; a value that does not fit its type',
    },
    REPOSITORY_404,
  ],
});

export const bitbucketReport = defineOperation({
  id: 'bitbucket.report',
  service: 'bitbucket',
  group: 'bitbucket',
  method: 'GET',
  path: '/rest/insights/latest/projects/{projectKey}/repos/{repositorySlug}/commits/{commitId}/reports/{key}',
  summary: "One of a commit's Code Insights reports",
  params: reportPath,
  response: insightReport,
  errors: [REPOSITORY_404, REPORT_404],
});

export const bitbucketReports = defineOperation({
  id: 'bitbucket.reports',
  service: 'bitbucket',
  group: 'bitbucket',
  method: 'GET',
  path: '/rest/insights/latest/projects/{projectKey}/repos/{repositorySlug}/commits/{commitId}/reports',
  summary:
    "A commit's Code Insights reports, a page at a time (Bitbucket's `{values, size, isLastPage, start, limit}`)",
  params: repoPath,
  query: pageQuery,
  response: (mode) => page(mode, insightReport(mode)),
  errors: [REPOSITORY_404],
});

export const bitbucketDeleteReport = defineOperation({
  id: 'bitbucket.deleteReport',
  service: 'bitbucket',
  group: 'bitbucket',
  method: 'DELETE',
  path: '/rest/insights/latest/projects/{projectKey}/repos/{repositorySlug}/commits/{commitId}/reports/{key}',
  summary: 'Delete a report and its annotations (answers 204)',
  params: reportPath,
  errors: [REPOSITORY_404, REPORT_404],
});

export const bitbucketAddAnnotations = defineOperation({
  id: 'bitbucket.addAnnotations',
  service: 'bitbucket',
  group: 'bitbucket',
  method: 'POST',
  path: '/rest/insights/latest/projects/{projectKey}/repos/{repositorySlug}/commits/{commitId}/reports/{key}/annotations',
  summary:
    'Add annotations to a report (answers 204); not deduplicated, so delete before posting again. At most 1,000 a report: a request that would pass it is refused whole',
  params: reportPath,
  body: () =>
    z.object({
      annotations: z
        .array(
          z.object({
            message: z.string().min(1).max(2000),
            severity: z.enum(ANNOTATION_SEVERITIES),
            /** From the repository's root; absent: an annotation of the whole commit. */
            path: z.string().min(1).optional(),
            /** 1-based; absent or 0: the whole file. */
            line: z.number().int().nonnegative().optional(),
            type: z.enum(ANNOTATION_TYPES).optional(),
            link: z.url().optional(),
            externalId: z.string().min(1).max(449, 'externalId must be shorter than 450 characters').optional(),
          }),
        )
        .min(1),
    }),
  errors: [
    {
      status: 400,
      when: 'a message missing or over 2,000 characters, a severity or type not known, or the report would hold more than 1,000 annotations (nothing is added)',
    },
    REPOSITORY_404,
    REPORT_404,
  ],
  creates: true,
});

export const bitbucketAnnotations = defineOperation({
  id: 'bitbucket.annotations',
  service: 'bitbucket',
  group: 'bitbucket',
  method: 'GET',
  path: '/rest/insights/latest/projects/{projectKey}/repos/{repositorySlug}/commits/{commitId}/reports/{key}/annotations',
  summary: "A report's annotations, all of them (`{annotations, totalCount}`)",
  params: reportPath,
  response: (mode) => obj(mode, { annotations: z.array(insightAnnotation(mode)), totalCount: z.number().int() }),
  errors: [REPOSITORY_404, REPORT_404],
});

export const bitbucketDeleteAnnotations = defineOperation({
  id: 'bitbucket.deleteAnnotations',
  service: 'bitbucket',
  group: 'bitbucket',
  method: 'DELETE',
  path: '/rest/insights/latest/projects/{projectKey}/repos/{repositorySlug}/commits/{commitId}/reports/{key}/annotations',
  summary: "Delete a report's annotations with these external ids (repeat `externalId`), or all of them (answers 204)",
  params: reportPath,
  query: () => z.object({ externalId: z.union([z.string(), z.array(z.string())]).optional() }),
  errors: [REPOSITORY_404, REPORT_404],
});

const buildPath = lazy(() => z.object({ commitId: commitId() }));

export const bitbucketSetBuildStatus = defineOperation({
  id: 'bitbucket.setBuildStatus',
  service: 'bitbucket',
  group: 'bitbucket',
  method: 'POST',
  path: '/rest/build-status/1.0/commits/{commitId}',
  summary: "Set a commit's build status for a key (answers 204); a later one with the same key replaces it",
  params: buildPath,
  body: () =>
    z.object({
      state: z.enum(BUILD_STATES),
      key: z.string().min(1).max(255),
      name: z.string().max(255).optional(),
      url: z.url().max(450),
      description: z.string().max(255).optional(),
    }),
  errors: [{ status: 400, when: 'a short commit hash, a state not known, or key or url missing' }],
});

export const bitbucketBuildStatuses = defineOperation({
  id: 'bitbucket.buildStatuses',
  service: 'bitbucket',
  group: 'bitbucket',
  method: 'GET',
  path: '/rest/build-status/1.0/commits/{commitId}',
  summary: "A commit's build statuses, one per key, newest first (a Bitbucket page)",
  params: buildPath,
  query: pageQuery,
  response: (mode) => page(mode, buildStatus(mode)),
  errors: [{ status: 400, when: 'a short commit hash' }],
});

export const bitbucketOperations: OperationDef[] = [
  bitbucketPutReport,
  bitbucketReport,
  bitbucketReports,
  bitbucketDeleteReport,
  bitbucketAddAnnotations,
  bitbucketAnnotations,
  bitbucketDeleteAnnotations,
  bitbucketSetBuildStatus,
  bitbucketBuildStatuses,
];
