import { statusDef } from '../domain.js';
import type { Cycle, Issue } from '../store.js';
import { cycleUrl, href, html, orDash, type SafeHtml, when } from './html.js';
import { page } from './layout.js';
import { attachmentsIndex, countByStatus, runsOfCycle } from './model.js';
import { runCard } from './run.js';
import type { View } from './view.js';
import { facts, progress } from './widgets.js';

/**
 * The cycle page: `/browse/<PLAN-KEY>?cycle=<cycleId>`, a view of the plan's issue page as synapseRT shows a cycle
 * on its plan. `&status=Failed` filters the runs (plain links, no script needed); `#run-<runId>` points at one run.
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

/** Progress, filter and run cards: what changes while runs report. */
export function cycleFragment(v: View, plan: Issue, cycle: Cycle): SafeHtml {
  const { store } = v;
  const runs = runsOfCycle(store, cycle.id);
  const filter = statusFilter(v);
  const shown = filter.name ? runs.filter((r) => statusDef(store, r.status)?.name === filter.name) : runs;
  const index = attachmentsIndex(store);
  const counts = countByStatus(store, runs);
  const link = (label: string, status: string | undefined, n: number) => {
    const current = status === filter.name;
    return html`<li><a href="${cycleUrl(plan.key, cycle.id, { status })}"${current ? html` aria-current="true"` : ''}>${label} (${n})</a></li>`;
  };
  return html`<h2 id="progress-heading">Progress</h2>
    ${progress(store, runs, `Runs of ${cycle.name} by status`)}
    <h2 id="runs-heading">Runs${filter.name ? html`: ${filter.name}` : ''} <span class="muted">(${shown.length} of ${runs.length})</span></h2>
    <nav class="filter" aria-label="Filter runs by status"><ul>
      ${link('All', undefined, runs.length)}
      ${counts.map((c) => link(c.name, c.name, c.count))}
    </ul></nav>
    ${filter.unknown ? html`<p class="error">There is no run status "${filter.unknown}". Pick one of the filters above.</p>` : ''}
    ${
      shown.length
        ? html`<ol class="runs" aria-labelledby="runs-heading">${shown.map((r) => runCard(v, r, index))}</ol>`
        : html`<p class="muted">No runs${filter.name ? ` with status ${filter.name}` : ''} in this cycle.</p>`
    }`;
}

export function cyclePage(v: View, plan: Issue, cycle: Cycle): SafeHtml {
  const project = v.store.projects.get(plan.projectId);
  const status = statusFilter(v).name;
  const fragment = href('/ui/fragments/cycle', { cycle: cycle.id, status });
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
