import {
  annotationsOf,
  bitbucketRepo,
  buildStatusesOf,
  commentsOf,
  githubRepo,
  gitlabProject,
  reportsOf,
} from '../rules/codehosts.js';
import type { CodeRepo, InsightAnnotation, InsightReport, ReviewComment, Store } from '../store/store.js';
import { type HtmlValue, html, orDash, type SafeHtml, when } from './html.js';
import { page } from './layout.js';
import { textOn, userLabel } from './model.js';
import type { View } from './view.js';
import { facts, table } from './widgets.js';

/**
 * What the code hosts show of a change, at the paths the real hosts use: a Bitbucket commit as its pull request
 * shows it (`/projects/<KEY>/repos/<slug>/commits/<hash>`: the build statuses, each Code Insights report with its
 * data fields, the annotations beside their file and line), a GitLab merge request's notes
 * (`/<group>/<name>/-/merge_requests/<iid>`) and a GitHub pull request's comments (`/<owner>/<name>/pull/<n>`, each
 * at `#issuecomment-<id>`, the `html_url` the API answers). The home page lists them (`codeReviewPanel`).
 */

/** The code-review page a path names, if any; `serve` answers it (or a 404). */
export type CodeReviewRoute =
  | { kind: 'commit'; projectKey: string; slug: string; commit: string }
  | { kind: 'mergeRequest'; path: string; iid: number }
  | { kind: 'pullRequest'; path: string; number: number };

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

export function codeReviewRoute(path: string): CodeReviewRoute | undefined {
  const commit = /^\/projects\/([^/]+)\/repos\/([^/]+)\/commits\/([^/]+)$/.exec(path);
  if (commit) {
    return { kind: 'commit', projectKey: decode(commit[1]!), slug: decode(commit[2]!), commit: decode(commit[3]!) };
  }
  const mr = /^\/(.+)\/-\/merge_requests\/(\d{1,9})$/.exec(path);
  if (mr) return { kind: 'mergeRequest', path: decode(mr[1]!), iid: Number(mr[2]) };
  const pr = /^\/([^/]+\/[^/]+)\/pull\/(\d{1,9})$/.exec(path);
  if (pr) return { kind: 'pullRequest', path: decode(pr[1]!), number: Number(pr[2]) };
  return undefined;
}

/** The page of a route, or undefined when the repository, the commit or the review is not there (a 404). */
export function codeReviewPage(v: View, route: CodeReviewRoute): SafeHtml | undefined {
  if (route.kind === 'commit') {
    const repo = bitbucketRepo(v.store, route.projectKey, route.slug);
    if (!repo || !/^[0-9a-f]{40}$/i.test(route.commit)) return undefined;
    return commitPage(v, repo, route.commit.toLowerCase());
  }
  if (route.kind === 'mergeRequest') {
    const repo = gitlabProject(v.store, route.path);
    if (!repo || /^\d+$/.test(route.path) || !repo.reviews.includes(route.iid)) return undefined;
    return conversationPage(v, repo, route.iid);
  }
  const [owner = '', name = ''] = route.path.split('/');
  const repo = githubRepo(v.store, owner, name);
  if (!repo?.reviews.includes(route.number)) return undefined;
  return conversationPage(v, repo, route.number);
}

// ---------------------------------------------------------------------------------------------------------------
// Addresses and small pieces.

const seg = encodeURIComponent;
const pathSegs = (path: string) => path.split('/').map(seg).join('/');

export function commitHref(repo: CodeRepo, commit: string): string {
  const [project = '', slug = ''] = repo.path.split('/');
  return `/projects/${seg(project)}/repos/${seg(slug)}/commits/${seg(commit)}`;
}

export function reviewHref(repo: CodeRepo, review: number): string {
  return repo.host === 'gitlab'
    ? `/${pathSegs(repo.path)}/-/merge_requests/${review}`
    : `/${pathSegs(repo.path)}/pull/${review}`;
}

/** A link the service was given: followed only over http(s), any other scheme (`javascript:`) shown as text. */
function external(url: string | undefined, text?: string): HtmlValue {
  if (!url) return undefined;
  let safe = false;
  try {
    safe = ['http:', 'https:'].includes(new URL(url).protocol);
  } catch {
    safe = false;
  }
  return safe ? html`<a href="${url}">${text || url}</a>` : html`${text ? `${text} ` : ''}<code>${url}</code>`;
}

/** A lozenge with its word and colour (never colour alone). */
function lozenge(text: string, colour: string): SafeHtml {
  return html`<span class="status" style="background:${colour};color:${textOn(colour)}">${text}</span>`;
}

const COLOURS: Record<string, string> = {
  PASS: '#00875a',
  SUCCESSFUL: '#00875a',
  FAIL: '#de350b',
  FAILED: '#de350b',
  INPROGRESS: '#0052cc',
  HIGH: '#de350b',
  MEDIUM: '#ff991f',
  LOW: '#dfe1e6',
};
const badge = (word: string) => lozenge(word, COLOURS[word] ?? '#dfe1e6');

/** Milliseconds for people: `850 ms`, `12.5 s`, `3 min 20 s`, `2 h 5 min`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
  const whole = Math.round(s);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const rest = whole % 60;
  if (h) return m ? `${h} h ${m} min` : `${h} h`;
  return rest ? `${m} min ${rest} s` : `${m} min`;
}

/** A data field's value as its type says. */
function dataValue(type: string, value: unknown): HtmlValue {
  switch (type) {
    case 'BOOLEAN':
      return value ? 'Yes' : 'No';
    case 'DATE':
      return typeof value === 'number' ? when(value) : String(value);
    case 'DURATION':
      return typeof value === 'number' ? duration(value) : String(value);
    case 'PERCENTAGE':
      return typeof value === 'number' ? `${Math.round(value * 10) / 10}%` : String(value);
    case 'NUMBER':
      return typeof value === 'number' ? value.toLocaleString('en') : String(value);
    case 'LINK': {
      const link = (value ?? {}) as { href?: string; linktext?: string };
      return external(link.href, link.linktext) ?? '';
    }
    default:
      return String(value ?? '');
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The Bitbucket commit.

function annotationsByFile(v: View, report: InsightReport, at: string): SafeHtml {
  const all = annotationsOf(v.store, report);
  if (!all.length) return html`<p class="muted">No annotations.</p>`;
  const byFile = new Map<string, InsightAnnotation[]>();
  for (const a of all) {
    const file = a.path ?? '';
    const list = byFile.get(file);
    if (list) list.push(a);
    else byFile.set(file, [a]);
  }
  const files = [...byFile.keys()].sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)));
  return html`${files.map((file) => {
    const rows = (byFile.get(file) ?? [])
      .sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || a.id - b.id)
      .map(
        (a) => html`<tr>
          <th scope="row">${a.line ? a.line : html`<span class="muted">file</span>`}</th>
          <td>${badge(a.severity)}</td>
          <td>${orDash(a.type)}</td>
          <td class="text">${a.message}</td>
          <td>${a.externalId ? a.externalId : html`<span class="muted">—</span>`}</td>
          <td>${external(a.link) ?? html`<span class="muted">—</span>`}</td>
        </tr>`,
      );
    const label = file || 'The whole commit';
    return html`<h5><code>${label}</code> <span class="muted">(${rows.length})</span></h5>
      ${table(`Annotations of ${report.key} on ${label}${at}`, ['Line', 'Severity', 'Type', 'Message', 'External id', 'Link'], rows, { wide: true })}`;
  })}`;
}

function reportSection(v: View, report: InsightReport, at: string): SafeHtml {
  const id = `report-${report.key.replace(/[^\w-]/g, '_')}`;
  const total = v.store.insightAnnotations.filter((a) => a.reportId === report.id).length;
  return html`<section class="panel" aria-labelledby="${id}">
    <h3 id="${id}">${report.title} ${report.result ? badge(report.result) : ''}</h3>
    ${facts([
      ['Key', report.key],
      ['Result', report.result ?? 'None'],
      ['Reporter', report.reporter],
      ['Reported', when(report.createdDate)],
      ['Link', external(report.link)],
    ])}
    ${report.details ? html`<p class="text">${report.details}</p>` : ''}
    ${
      report.data.length
        ? html`<h4>Data</h4>${facts(report.data.map((d): [string, HtmlValue] => [d.title, dataValue(d.type, d.value)]))}`
        : ''
    }
    <h4>Annotations <span class="muted">(${total})</span></h4>
    ${annotationsByFile(v, report, at)}
  </section>`;
}

function commitPage(v: View, repo: CodeRepo, commit: string): SafeHtml {
  const short = commit.slice(0, 11);
  const at = ` (commit ${short})`;
  const builds = buildStatusesOf(v.store, commit).map(
    (b) => html`<tr>
      <th scope="row">${b.name ? b.name : b.key}</th>
      <td>${badge(b.state)}</td>
      <td>${b.key}</td>
      <td class="text">${orDash(b.description)}</td>
      <td>${external(b.url) ?? ''}</td>
      <td>${when(b.dateAdded)}</td>
    </tr>`,
  );
  const reports = reportsOf(v.store, repo.id, commit);
  return page({
    title: `Commit ${short} of ${repo.path}`,
    viewer: v.viewer,
    section: '/',
    crumbs: [
      { label: 'Projects', href: '/' },
      { label: `Bitbucket ${repo.path}`, href: '/#code-review' },
      { label: short },
    ],
    main: html`<p class="muted">Bitbucket Data Center repository <strong>${repo.path}</strong></p>
      <h1>Commit <code>${short}</code></h1>
      <p>Full hash <code>${commit}</code></p>
      <h2 id="builds">Builds</h2>
      ${table(`Build statuses${at}`, ['Build', 'State', 'Key', 'Description', 'Link', 'Added'], builds, {
        wide: true,
        empty: 'No build status for this commit.',
      })}
      <h2 id="insights">Code Insights</h2>
      ${reports.length ? reports.map((r) => reportSection(v, r, at)) : html`<p class="muted">No Code Insights report for this commit.</p>`}`,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// GitLab merge requests and GitHub pull requests.

function conversationPage(v: View, repo: CodeRepo, review: number): SafeHtml {
  const gitlab = repo.host === 'gitlab';
  const name = gitlab ? `Merge request !${review}` : `Pull request #${review}`;
  const comments = commentsOf(v.store, repo, review);
  const item = (c: ReviewComment) => {
    const anchor = gitlab ? `note_${c.id}` : `issuecomment-${c.id}`;
    return html`<li><article class="run" id="${anchor}" aria-labelledby="${anchor}-head">
      <p class="run-head" id="${anchor}-head"><strong>${userLabel(v.store, c.author)}</strong>
        <span class="muted">${gitlab ? 'commented' : 'commented on'} ${when(c.createdAt)}${
          c.updatedAt !== c.createdAt ? html`, edited ${when(c.updatedAt)}` : ''
        }</span></p>
      <div class="text">${c.body}</div>
    </article></li>`;
  };
  return page({
    title: `${name} of ${repo.path}`,
    viewer: v.viewer,
    section: '/',
    crumbs: [
      { label: 'Projects', href: '/' },
      { label: `${gitlab ? 'GitLab' : 'GitHub'} ${repo.path}`, href: '/#code-review' },
      { label: name },
    ],
    main: html`<p class="muted">${gitlab ? 'GitLab project' : 'GitHub repository'} <strong>${repo.path}</strong></p>
      <h1>${name}</h1>
      <h2>${gitlab ? 'Notes' : 'Comments'} <span class="muted">(${comments.length})</span></h2>
      ${
        comments.length
          ? html`<ol class="runs">${comments.map(item)}</ol>`
          : html`<p class="muted">No ${gitlab ? 'notes' : 'comments'} yet.</p>`
      }`,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The home page's panel.

/** Commits listed on the home page at most. */
const RECENT_COMMITS = 20;

/**
 * The recent commits of the Bitbucket repositories (those with a report, newest first; a commit with build statuses
 * only is listed under each repository, as Bitbucket shows it wherever the commit is), and the merge and pull
 * requests with their comment counts.
 */
export function codeReviewPanel(store: Store): SafeHtml {
  const repos = store.codeRepos.all().sort((a, b) => a.host.localeCompare(b.host) || a.path.localeCompare(b.path));
  if (!repos.length) return html``;
  const bitbucket = repos.filter((r) => r.host === 'bitbucket');
  const latest = new Map<string, { repo: CodeRepo; commit: string; at: number }>();
  const touch = (repo: CodeRepo, commit: string, at: number) => {
    const key = `${repo.id}|${commit}`;
    const had = latest.get(key);
    if (!had || had.at < at) latest.set(key, { repo, commit, at });
  };
  for (const r of store.insightReports.rows.values()) {
    const repo = store.codeRepos.get(r.repoId);
    if (repo) touch(repo, r.commit, r.createdDate);
  }
  for (const b of store.buildStatuses.rows.values()) for (const repo of bitbucket) touch(repo, b.commit, b.dateAdded);
  const commits = [...latest.values()].sort((a, b) => b.at - a.at).slice(0, RECENT_COMMITS);
  const commitRows = commits.map(({ repo, commit, at }) => {
    const reports = reportsOf(store, repo.id, commit);
    const builds = buildStatusesOf(store, commit);
    return html`<tr>
      <th scope="row"><a href="${commitHref(repo, commit)}"><code>${commit.slice(0, 11)}</code></a></th>
      <td>${repo.path}</td>
      <td>${reports.length ? reports.map((r, i) => html`${i ? ', ' : ''}${r.key} ${r.result ? badge(r.result) : ''}`) : html`<span class="muted">—</span>`}</td>
      <td>${builds.length ? builds.map((b, i) => html`${i ? ', ' : ''}${b.key} ${badge(b.state)}`) : html`<span class="muted">—</span>`}</td>
      <td>${when(at)}</td>
    </tr>`;
  });
  const reviews = repos
    .filter((r) => r.host !== 'bitbucket')
    .flatMap((repo) =>
      repo.reviews.map((n) => {
        const label = repo.host === 'gitlab' ? `Merge request !${n}` : `Pull request #${n}`;
        return html`<tr>
          <th scope="row"><a href="${reviewHref(repo, n)}">${label}</a></th>
          <td>${repo.host === 'gitlab' ? 'GitLab' : 'GitHub'} ${repo.path}</td>
          <td>${commentsOf(store, repo, n).length}</td>
        </tr>`;
      }),
    );
  return html`<section aria-labelledby="code-review" class="panel">
    <h2 id="code-review">Code review</h2>
    <h3>Recent Bitbucket commits</h3>
    ${table(
      'Recent Bitbucket commits',
      ['Commit', 'Repository', 'Code Insights', 'Builds', 'Last change'],
      commitRows,
      {
        wide: true,
        empty: 'No report or build status posted yet.',
      },
    )}
    <h3>Merge and pull requests</h3>
    ${table('Merge and pull requests', ['Review', 'Repository', 'Comments'], reviews, { empty: 'None held.' })}
  </section>`;
}
