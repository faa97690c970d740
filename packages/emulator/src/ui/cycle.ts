import { statusDef } from '../rules/domain.js';
import type { Cycle, Issue } from '../store/store.js';
import { cycleUrl, href, html, orDash, type SafeHtml, when } from './html.js';
import { page } from './layout.js';
import { attributeMatrix } from './matrix.js';
import { attachmentsIndex, countByStatus, runsOfCycle } from './model.js';
import { runCard } from './run.js';
import type { View } from './view.js';
import { facts, progress } from './widgets.js';

/**
 * The cycle page: `/browse/<PLAN-KEY>?cycle=<cycleId>`, a view of the plan's issue page as synapseRT shows a cycle
 * on its plan. `&status=Failed` filters the runs (plain links, no script needed); `#run-<runId>` points at one run.
 * An advanced cycle shows its runs as a matrix first (a row per case, a column per attribute set: matrix.ts).
 * A long cycle shows {@link PAGE_SIZE} runs a page (`&page=N`); `&run=<runId>` shows the page that holds that run,
 * which is how the reporter links a run (`?cycle=<id>&run=<runId>#run-<runId>`).
 *
 * The progress, the filter and the runs are one fragment, also served alone at `/ui/fragments/cycle?cycle=<id>`:
 * the live script fetches it again whenever `/ui/events?cycle=<id>` says the cycle's runs changed.
 */

/** The status filter as given, canonicalised (`failed` → `Failed`); `undefined` for all runs. */
export function statusFilter(v: View): { name: string | undefined; unknown: string | undefined } {
  const raw = v.query.get('status')?.trim();
  if (!raw) return { name: undefined, unknown: undefined };
  const def = statusDef(v.store, raw);
  return def ? { name: def.name, unknown: undefined } : { name: raw, unknown: raw };
}

/** Runs a page shows: a cycle of thousands stays a page a browser renders (and re-renders live) quickly. */
export const PAGE_SIZE = 100;

/** The page to show (1-based): the one holding `&run=`, else `&page=`, clamped to the pages there are. */
function pageOf(v: View, runIds: readonly number[]): number {
  const pages = Math.max(1, Math.ceil(runIds.length / PAGE_SIZE));
  const run = Number(v.query.get('run'));
  const at = Number.isInteger(run) ? runIds.indexOf(run) : -1;
  if (at >= 0) return Math.floor(at / PAGE_SIZE) + 1;
  const asked = Number(v.query.get('page'));
  return Number.isInteger(asked) ? Math.min(Math.max(asked, 1), pages) : 1;
}

/** Links to the other pages of a long cycle; nothing when it fits one page. */
function pager(plan: Issue, cycle: Cycle, status: string | undefined, page: number, total: number): SafeHtml {
  const pages = Math.ceil(total / PAGE_SIZE);
  if (pages <= 1) return html``;
  const link = (n: number, label: string) =>
    n === page
      ? html`<li><a href="${cycleUrl(plan.key, cycle.id, { status, page: n })}" aria-current="page">${label}</a></li>`
      : html`<li><a href="${cycleUrl(plan.key, cycle.id, { status, page: n })}">${label}</a></li>`;
  const numbers = Array.from({ length: pages }, (_, i) => i + 1).filter(
    (n) => n === 1 || n === pages || Math.abs(n - page) <= 2,
  );
  return html`<nav class="filter" aria-label="Pages of runs"><ul>
    ${page > 1 ? link(page - 1, 'Previous') : ''}
    ${numbers.map((n) => link(n, `Page ${n}`))}
    ${page < pages ? link(page + 1, 'Next') : ''}
  </ul></nav>`;
}

/** Progress, filter and run cards: what changes while runs report. */
export function cycleFragment(v: View, plan: Issue, cycle: Cycle): SafeHtml {
  const { store } = v;
  const runs = runsOfCycle(store, cycle.id);
  const filter = statusFilter(v);
  const matching = filter.name ? runs.filter((r) => statusDef(store, r.status)?.name === filter.name) : runs;
  const page = pageOf(
    v,
    matching.map((r) => r.id),
  );
  const shown = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const first = (page - 1) * PAGE_SIZE + 1;
  const range = matching.length > PAGE_SIZE ? html`, ${first}–${first + shown.length - 1} shown` : html``;
  const index = attachmentsIndex(store);
  const counts = countByStatus(store, runs);
  const link = (label: string, status: string | undefined, n: number) => {
    const current = status === filter.name;
    return html`<li><a href="${cycleUrl(plan.key, cycle.id, { status })}"${current ? html` aria-current="true"` : ''}>${label} (${n})</a></li>`;
  };
  return html`<h2 id="progress-heading">Progress</h2>
    ${progress(store, runs, `Runs of ${cycle.name} by status`)}
    ${attributeMatrix(store, plan, cycle, runs)}
    <h2 id="runs-heading">Runs${filter.name ? html`: ${filter.name}` : ''} <span class="muted">(${matching.length} of ${runs.length}${range})</span></h2>
    <nav class="filter" aria-label="Filter runs by status"><ul>
      ${link('All', undefined, runs.length)}
      ${counts.map((c) => link(c.name, c.name, c.count))}
    </ul></nav>
    ${filter.unknown ? html`<p class="error">There is no run status "${filter.unknown}". Pick one of the filters above.</p>` : ''}
    ${pager(plan, cycle, filter.name, page, matching.length)}
    ${
      shown.length
        ? html`<ol class="runs" aria-labelledby="runs-heading" start="${first}">${shown.map((r) => runCard(v, r, index))}</ol>`
        : html`<p class="muted">No runs${filter.name ? ` with status ${filter.name}` : ''} in this cycle.</p>`
    }
    ${pager(plan, cycle, filter.name, page, matching.length)}`;
}

export function cyclePage(v: View, plan: Issue, cycle: Cycle): SafeHtml {
  const project = v.store.projects.get(plan.projectId);
  const status = statusFilter(v).name;
  // The live fragment keeps the page that is shown (by the run asked for, or the page number).
  const fragment = href('/ui/fragments/cycle', {
    cycle: cycle.id,
    status,
    page: v.query.get('page') ?? undefined,
    run: v.query.get('run') ?? undefined,
  });
  const events = href('/ui/events', { cycle: cycle.id });
  const main = html`<h1>Test cycle: ${cycle.name}</h1>
    <p>In test plan <a href="/browse/${encodeURIComponent(plan.key)}">${plan.key}</a> ${plan.summary}</p>
    <section class="panel" aria-labelledby="cycle-facts">
      <h2 id="cycle-facts" class="visually-hidden">Cycle details</h2>
      ${facts([
        ['Cycle status', cycle.status],
        ['Environment', orDash(cycle.environment)],
        ['Build', orDash(cycle.build)],
        ['Planned start', orDash(cycle.plannedStartDate)],
        ['Planned end', orDash(cycle.plannedEndDate)],
        ['Started', when(cycle.startedAt)],
        [
          'Completed',
          cycle.status === 'Completed' || cycle.status === 'Aborted' ? when(cycle.completedAt) : orDash(''),
        ],
        ['Type', cycle.advanced ? 'Advanced' : 'Normal'],
      ])}
    </section>
    <p id="live-status" class="muted" role="status">This page shows new results by itself while runs report.</p>
    <div id="cycle-live" data-live-fragment="${fragment}" data-live-events="${events}">
      ${cycleFragment(v, plan, cycle)}
    </div>`;
  return page({
    title: `${cycle.name} (${plan.key})`,
    viewer: v.viewer,
    section: '/',
    live: true,
    crumbs: [
      { label: 'Projects', href: '/' },
      ...(project ? [{ label: `${project.name} (${project.key})`, href: `/#project-${project.key}` }] : []),
      { label: plan.key, href: `/browse/${encodeURIComponent(plan.key)}` },
      { label: cycle.name },
    ],
    main,
  });
}
