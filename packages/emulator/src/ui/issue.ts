import type { Issue, Run, Store } from '../store/store.js';
import { browseUrl, cycleUrl, html, orDash, type SafeHtml, when } from './html.js';
import { page } from './layout.js';
import { planOf, userLabel } from './model.js';
import type { View } from './view.js';
import { facts } from './widgets.js';

/** What every issue page shares: breadcrumbs, the summary as heading, the issue's fields and its description. */

export function issuePage(v: View, issue: Issue, body: SafeHtml): SafeHtml {
  const project = v.store.projects.get(issue.projectId);
  const main = html`<p class="muted">${issue.type} <strong>${issue.key}</strong></p>
    <h1>${issue.summary}</h1>
    <section class="panel" aria-labelledby="issue-details">
      <h2 id="issue-details" class="visually-hidden">Details</h2>
      ${facts([
        ['Type', issue.type],
        ['Status', issue.status],
        ['Resolution', issue.resolution ?? 'Unresolved'],
        ['Reporter', orDash(userLabel(v.store, issue.reporter))],
        ['Labels', issue.labels.length ? issue.labels.join(', ') : undefined],
        ['Created', when(issue.created)],
        ['Updated', when(issue.updated)],
      ])}
      <h3>Description</h3>
      ${issue.description ? html`<p class="text">${issue.description}</p>` : html`<p class="muted">No description.</p>`}
    </section>
    ${body}`;
  return page({
    title: `${issue.key} ${issue.summary}`,
    viewer: v.viewer,
    section: '/',
    crumbs: [
      { label: 'Projects', href: '/' },
      ...(project ? [{ label: `${project.name} (${project.key})`, href: `/#project-${project.key}` }] : []),
      { label: issue.key },
    ],
    main,
  });
}

/**
 * Where a run is shown: its card on the cycle page of its plan, or, for an ad hoc run (the hidden per-case cycle),
 * its card on the test case's page.
 */
export function runHref(store: Store, run: Run): string {
  const cycle = store.cycles.get(run.cycleId);
  const plan = cycle ? planOf(store, cycle) : undefined;
  if (cycle && plan) return cycleUrl(plan.key, cycle.id, { runId: run.id });
  const tc = store.issues.get(run.tcId);
  return `${tc ? browseUrl(tc.key) : '/'}#run-${run.id}`;
}

/** The plan and cycle of a run as links, `Ad hoc` for an ad hoc run. */
export function runPlace(store: Store, run: Run): { plan: SafeHtml; cycle: SafeHtml } {
  const cycle = store.cycles.get(run.cycleId);
  const plan = cycle ? planOf(store, cycle) : undefined;
  if (!cycle || !plan) {
    return { plan: html`<span class="muted">—</span>`, cycle: html`<a href="${runHref(store, run)}">Ad hoc</a>` };
  }
  return {
    plan: html`<a href="${browseUrl(plan.key)}">${plan.key}</a>`,
    cycle: html`<a href="${cycleUrl(plan.key, cycle.id)}">${cycle.name}</a>`,
  };
}
