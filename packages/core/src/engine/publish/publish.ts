import { readFileSync } from 'node:fs';
import type { ClientOptions } from '../../client/base.js';
import { CodeHostClient } from '../../client/codehost.js';
import { redact } from '../../client/secrets.js';
import type { TestManagementClient } from '../../client/tm.js';
import type { CasebridgeConfig } from '../config/schema.js';
import { commitOf, FULL_HASH } from './commit.js';
import { commentMarkdown, commentMarker, insights } from './render.js';
import { type CycleReport, cycleReport } from './report.js';

/** Where the report goes: each target is set when its configuration (or its CI's variables) names it whole. */
export interface Targets {
  bitbucket?: { url: string; token: string; project: string; slug: string; reportKey: string };
  gitlab?: { url: string; token: string; project: string; mergeRequest: number };
  github?: { url: string; token: string; owner: string; repo: string; pullRequest: number };
  /** The key of the report and of the comment's marker. */
  reportKey: string;
}

export type Host = 'bitbucket' | 'gitlab' | 'github';

/** What one target got: `ok`, and a line for the summary (where it went, or why not). */
export interface Posted {
  host: Host;
  ok: boolean;
  line: string;
  /** The comment's or the commit's address, when known. */
  url?: string;
}

/** The pull request's number in a GitHub Actions run: the event's `pull_request.number`, else `refs/pull/N/merge`. */
function githubPullRequest(env: NodeJS.ProcessEnv): number | undefined {
  if (env.GITHUB_EVENT_PATH) {
    try {
      const event = JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, 'utf8')) as {
        pull_request?: { number?: number };
        number?: number;
      };
      const n = event.pull_request?.number ?? event.number;
      if (typeof n === 'number' && n > 0) return n;
    } catch {
      // Not a pull request's event file: the ref may still say.
    }
  }
  const m = /^refs\/pull\/(\d+)\//.exec(env.GITHUB_REF ?? '');
  return m ? Number(m[1]) : undefined;
}

const positive = (v: string | undefined) => (v && /^\d+$/.test(v) && Number(v) > 0 ? Number(v) : undefined);

/** The targets the configuration and the CI's variables name; none when nothing is configured. */
export function targetsOf(
  config: Pick<CasebridgeConfig, 'bitbucket' | 'gitlab' | 'github'>,
  env: NodeJS.ProcessEnv,
): Targets {
  const reportKey = config.bitbucket?.reportKey ?? 'casebridge';
  const out: Targets = { reportKey };
  const b = config.bitbucket;
  if (b) {
    const [project = '', slug = ''] = b.repo.split('/');
    out.bitbucket = { url: b.url, token: b.token, project, slug, reportKey };
  }
  const gl = config.gitlab ?? {};
  const glUrl = gl.url ?? env.CI_SERVER_URL;
  const glProject = gl.project ?? env.CI_PROJECT_ID;
  const glMr = gl.mergeRequest ?? positive(env.CI_MERGE_REQUEST_IID);
  if (gl.token && glUrl && glProject && glMr) {
    out.gitlab = { url: glUrl, token: gl.token, project: glProject, mergeRequest: glMr };
  }
  const gh = config.github ?? {};
  const ghToken = gh.token ?? env.GITHUB_TOKEN;
  const ghUrl = gh.url ?? env.GITHUB_API_URL;
  const [owner, repo] = (gh.repo ?? env.GITHUB_REPOSITORY ?? '').split('/');
  const pr = gh.pullRequest ?? githubPullRequest(env);
  if (ghToken && ghUrl && owner && repo && pr) {
    out.github = { url: ghUrl, token: ghToken, owner, repo, pullRequest: pr };
  }
  return out;
}

/** Whether any target is set. */
export const anyTarget = (t: Targets) => !!(t.bitbucket || t.gitlab || t.github);

export interface PublishOptions {
  /** The commit the tests ran on (Bitbucket needs its full hash). */
  commit?: string | undefined;
  signal?: AbortSignal;
  /** Print what would be sent instead of sending it. */
  dryRun?: (line: string) => void;
  /** The client options besides the host and token (timeouts, proxy, CA, retries). */
  client?: Partial<ClientOptions>;
}

/** Posts the report to every target side by side; never throws: a failing target is a line of its own. */
export async function publishReport(rep: CycleReport, targets: Targets, o: PublishOptions = {}): Promise<Posted[]> {
  const jobs: Array<Promise<Posted>> = [];
  if (targets.bitbucket) jobs.push(guarded('bitbucket', () => toBitbucket(rep, targets, o)));
  if (targets.gitlab) jobs.push(guarded('gitlab', () => toGitlab(rep, targets, o)));
  if (targets.github) jobs.push(guarded('github', () => toGithub(rep, targets, o)));
  return Promise.all(jobs);
}

const NAMES: Record<Host, string> = { bitbucket: 'Bitbucket', gitlab: 'GitLab', github: 'GitHub' };

async function guarded(host: Host, post: () => Promise<Posted>, what = 'the report was not posted'): Promise<Posted> {
  try {
    return await post();
  } catch (err) {
    const why = redact(err instanceof Error ? err.message : String(err));
    return { host, ok: false, line: `${NAMES[host]}: ${what}: ${why}` };
  }
}

function clientFor(url: string, token: string, o: PublishOptions): CodeHostClient {
  return new CodeHostClient({
    ...o.client,
    baseUrl: url,
    auth: { type: 'bearer', token },
    retry: { retries: 2, ...o.client?.retry },
  } as ClientOptions);
}

async function withClient<T>(url: string, token: string, o: PublishOptions, use: (c: CodeHostClient) => Promise<T>) {
  const c = clientFor(url, token, o);
  try {
    return await use(c);
  } finally {
    await c.close();
  }
}

/**
 * Code Insights: the report replaced, its annotations deleted and posted anew (the service does not deduplicate
 * them), the build status. 3 requests, 4 with annotations.
 */
async function toBitbucket(rep: CycleReport, t: Targets, o: PublishOptions): Promise<Posted> {
  const b = t.bitbucket as NonNullable<Targets['bitbucket']>;
  const commit = o.commit;
  if (!commit || !FULL_HASH.test(commit)) {
    const got = commit ? `got "${commit}"` : 'none found';
    return {
      host: 'bitbucket',
      ok: false,
      line: `Bitbucket: the report was not posted: Code Insights needs the commit's full 40-character hash (${got}; set CASEBRIDGE_COMMIT, or run in a git checkout)`,
    };
  }
  const { report, annotations } = insights(rep);
  const where = { projectKey: b.project, repositorySlug: b.slug, commitId: commit, key: b.reportKey };
  const status = {
    state: rep.verdict.pass ? 'SUCCESSFUL' : 'FAILED',
    key: b.reportKey,
    name: b.reportKey,
    url: rep.cycle.url,
    description: report.details.slice(0, 255),
  } as const;
  const url = `${b.url.replace(/\/+$/, '')}/projects/${b.project}/repos/${b.slug}/commits/${commit}`;
  const line = `Bitbucket: report ${report.result} with ${annotations.length} annotation(s) and build status ${status.state} on ${commit.slice(0, 12)} (${url})`;
  if (o.dryRun) {
    o.dryRun(`PUT ${b.url} Code Insights report ${b.reportKey}: ${JSON.stringify(report)}`);
    o.dryRun(`DELETE the report's annotations, then POST ${annotations.length}: ${JSON.stringify(annotations)}`);
    o.dryRun(`POST build status: ${JSON.stringify(status)}`);
    return { host: 'bitbucket', ok: true, line: `(dry run) ${line}`, url };
  }
  await withClient(b.url, b.token, o, async (c) => {
    const call = o.signal ? { signal: o.signal } : undefined;
    await c.bitbucket.putReport({ ...where, ...report }, call);
    await c.bitbucket.deleteAnnotations(where, call);
    if (annotations.length > 0) await c.bitbucket.addAnnotations({ ...where, annotations }, call);
    await c.bitbucket.setBuildStatus({ commitId: commit, ...status }, call);
  });
  return { host: 'bitbucket', ok: true, line, url };
}

/** The pages of a list, read in turn until one comes back short (at most 50 pages of 100). */
async function* pages<T>(read: (page: number) => Promise<T[]>, per = 100): AsyncGenerator<T[]> {
  for (let page = 1; page <= 50; page += 1) {
    const items = await read(page);
    yield items;
    if (items.length < per) return;
  }
}

/**
 * One comment per pull request, found by its marker. Two shards may both add one: after adding, a newer one of
 * ours gives way to the oldest, which takes our body. 2 requests; 4 after a race.
 */
async function oneComment(
  marker: string,
  api: {
    list: (page: number) => Promise<Array<{ id: number; body?: string | null }>>;
    create: () => Promise<{ id: number }>;
    edit: (id: number) => Promise<unknown>;
    remove: (id: number) => Promise<unknown>;
  },
): Promise<'edited' | 'added'> {
  const mine = (x: { body?: string | null }) => (x.body ?? '').includes(marker);
  let found: { id: number } | undefined;
  for await (const items of pages(api.list)) {
    found = items.find(mine);
    if (found) break;
  }
  if (found) {
    await api.edit(found.id);
    return 'edited';
  }
  const made = await api.create();
  const ours: Array<{ id: number }> = [];
  for await (const items of pages(api.list)) ours.push(...items.filter(mine));
  const oldest = ours.sort((x, y) => x.id - y.id)[0];
  if (oldest && oldest.id !== made.id) {
    await api.remove(made.id);
    await api.edit(oldest.id);
    return 'edited';
  }
  return 'added';
}

/** One merge-request note, found by its marker and edited in place, else added. 2 requests (more on a long thread). */
async function toGitlab(rep: CycleReport, t: Targets, o: PublishOptions): Promise<Posted> {
  const g = t.gitlab as NonNullable<Targets['gitlab']>;
  const body = commentMarkdown(rep, t.reportKey);
  const mr = { id: g.project, merge_request_iid: g.mergeRequest };
  const what = `merge request !${g.mergeRequest} of project ${g.project}`;
  if (o.dryRun) {
    o.dryRun(`GitLab ${what}: the note (${body.length} characters):\n${body}`);
    return { host: 'gitlab', ok: true, line: `(dry run) GitLab: the note on ${what}` };
  }
  const call = o.signal ? { signal: o.signal } : undefined;
  const done = await withClient(g.url, g.token, o, (c) =>
    oneComment(commentMarker(t.reportKey), {
      list: (page) => c.gitlab.notes({ ...mr, per_page: 100, page, sort: 'asc', order_by: 'created_at' }, call),
      create: () => c.gitlab.createNote({ ...mr, body }, call),
      edit: (note_id) => c.gitlab.editNote({ ...mr, note_id, body }, call),
      remove: (note_id) => c.gitlab.deleteNote({ ...mr, note_id }, call),
    }),
  );
  return { host: 'gitlab', ok: true, line: `GitLab: the note on ${what} ${done}` };
}

/** One pull-request comment, found by its marker and edited in place, else added. 2 requests (more on a long thread). */
async function toGithub(rep: CycleReport, t: Targets, o: PublishOptions): Promise<Posted> {
  const g = t.github as NonNullable<Targets['github']>;
  const body = commentMarkdown(rep, t.reportKey);
  const where = { owner: g.owner, repo: g.repo };
  const what = `pull request #${g.pullRequest} of ${g.owner}/${g.repo}`;
  if (o.dryRun) {
    o.dryRun(`GitHub ${what}: the comment (${body.length} characters):\n${body}`);
    return { host: 'github', ok: true, line: `(dry run) GitHub: the comment on ${what}` };
  }
  const call = o.signal ? { signal: o.signal } : undefined;
  const issue = { ...where, issue_number: g.pullRequest };
  let url: string | undefined;
  const done = await withClient(g.url, g.token, o, (c) =>
    oneComment(commentMarker(t.reportKey), {
      list: (page) => c.github.comments({ ...issue, per_page: 100, page }, call),
      create: async () => {
        const made = await c.github.createComment({ ...issue, body }, call);
        url = made.html_url;
        return made;
      },
      edit: async (comment_id) => {
        url = (await c.github.editComment({ ...where, comment_id, body }, call)).html_url;
      },
      remove: (comment_id) => c.github.deleteComment({ ...where, comment_id }, call),
    }),
  );
  return {
    host: 'github',
    ok: true,
    line: `GitHub: the comment on ${what} ${done}${url ? ` (${url})` : ''}`,
    ...(url ? { url } : {}),
  };
}

/** `casebridge doctor`'s look at each target: one read that proves token, repository and pull request. Never throws. */
export async function probeTargets(targets: Targets, o: PublishOptions = {}): Promise<Posted[]> {
  // One read with the target's token; its line when the read answers.
  const probe = (host: Host, url: string, token: string, read: (c: CodeHostClient) => Promise<unknown>, line: string) =>
    guarded(
      host,
      async () => {
        await withClient(url, token, o, read);
        return { host, ok: true, line };
      },
      'cannot be read with the token',
    );
  const out: Array<Promise<Posted>> = [];
  const b = targets.bitbucket;
  if (b) {
    const commit = o.commit;
    const repo = `${b.project}/${b.slug}`;
    if (!commit || !FULL_HASH.test(commit)) {
      out.push(
        Promise.resolve({
          host: 'bitbucket',
          ok: false,
          line: `Bitbucket ${b.url} ${repo}: no full commit hash (${commit ? `got "${commit}"` : 'none found'}; set CASEBRIDGE_COMMIT or run in a git checkout)`,
        }),
      );
    } else {
      const where = { projectKey: b.project, repositorySlug: b.slug, commitId: commit };
      const line = `Bitbucket ${b.url} ${repo}: the token reads commit ${commit.slice(0, 12)}`;
      out.push(probe('bitbucket', b.url, b.token, (c) => c.bitbucket.reports({ ...where, limit: 1 }), line));
    }
  }
  const gl = targets.gitlab;
  if (gl) {
    const mr = { id: gl.project, merge_request_iid: gl.mergeRequest };
    const line = `GitLab ${gl.url}: the token reads merge request !${gl.mergeRequest} of ${gl.project}`;
    out.push(probe('gitlab', gl.url, gl.token, (c) => c.gitlab.notes({ ...mr, per_page: 1 }), line));
  }
  const gh = targets.github;
  if (gh) {
    const issue = { owner: gh.owner, repo: gh.repo, issue_number: gh.pullRequest };
    const line = `GitHub ${gh.url}: the token reads pull request #${gh.pullRequest} of ${gh.owner}/${gh.repo}`;
    out.push(probe('github', gh.url, gh.token, (c) => c.github.comments({ ...issue, per_page: 1 }), line));
  }
  return Promise.all(out);
}

/** What the end of a reporter's run publishes from. */
export interface AtEnd {
  config: CasebridgeConfig;
  tm: TestManagementClient;
  cycle: { id: number; plan: string } | undefined;
  dry: boolean;
  env: NodeJS.ProcessEnv;
  cwd: string;
  signal: AbortSignal;
  durationMs?: number;
}

/** At a run's end, once delivered: the cycle's report (all shards so far) to every target. Never throws. */
export async function publishAtEnd(a: AtEnd): Promise<Posted[]> {
  const targets = targetsOf(a.config, a.env);
  if (!anyTarget(targets)) return [];
  const hosts = (['bitbucket', 'gitlab', 'github'] as const).filter((h) => targets[h]);
  const none = (why: string) => hosts.map((host) => ({ host, ok: false, line: `${NAMES[host]}: ${why}` }));
  if (!a.cycle) return none('no report posted: the pull-request report is a cycle\'s (mode "cycle")');
  if (a.dry)
    return hosts.map((host) => ({ host, ok: true, line: `(dry run) ${NAMES[host]}: a report would be posted` }));
  try {
    const reader = { tm: a.tm, baseUrl: a.config.url, statusMap: a.config.statusMap, signal: a.signal };
    const rep = await cycleReport(reader, a.config, a.cycle.plan, `#${a.cycle.id}`, {
      ...(a.durationMs !== undefined ? { durationMs: a.durationMs } : {}),
    });
    return await publishReport(rep, targets, {
      commit: await commitOf(a.env, a.cwd),
      signal: a.signal,
      client: clientSettings(a.config),
    });
  } catch (err) {
    return none(
      `no report posted: reading the cycle failed: ${redact(err instanceof Error ? err.message : String(err))}`,
    );
  }
}

/** The configuration's proxy and CA for the code hosts too; shorter timeouts (a report must not hold the run's end). */
export function clientSettings(c: Pick<CasebridgeConfig, 'proxy' | 'caFile'>): Partial<ClientOptions> {
  return {
    ...(c.proxy ? { proxy: c.proxy } : {}),
    ...(c.caFile ? { caFile: c.caFile } : {}),
    timeouts: { connectMs: 5_000, headersMs: 15_000, bodyMs: 15_000 },
  } as Partial<ClientOptions>;
}
