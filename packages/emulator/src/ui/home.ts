import { ISSUE_TYPES } from '../rules/domain.js';
import type { Issue } from '../store/store.js';
import { codeReviewPanel } from './code-review.js';
import { browseUrl, cycleUrl, html, type SafeHtml } from './html.js';
import { page } from './layout.js';
import { latestCycle, runsByCycle } from './model.js';
import { requirementsHref } from './requirements-page.js';
import type { View } from './view.js';
import { progress, table } from './widgets.js';

/**
 * The home page: every project with its test plans, each plan with its latest cycle's progress, a link to its
 * requirements' coverage, and the project's other issues one click away (folded, since a project may hold thousands
 * of test cases).
 */

/** Issues listed per type under "All issues"; past this a project shows the count and the first ones. */
const MAX_LISTED = 500;

const TYPE_ORDER = [ISSUE_TYPES.testPlan, ISSUE_TYPES.testCase, ISSUE_TYPES.requirement];

function otherIssues(issues: readonly Issue[]): SafeHtml {
  const byType = new Map<string, Issue[]>();
  for (const i of issues) {
    const list = byType.get(i.type);
    if (list) list.push(i);
    else byType.set(i.type, [i]);
  }
  const types = [...byType.keys()].sort((a, b) => {
    const ia = TYPE_ORDER.indexOf(a as (typeof TYPE_ORDER)[number]);
    const ib = TYPE_ORDER.indexOf(b as (typeof TYPE_ORDER)[number]);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
  });
  return html`${types.map((type) => {
    const list = byType.get(type) ?? [];
    return html`<h4>${type} (${list.length})</h4>
      <ul>${list.slice(0, MAX_LISTED).map((i) => html`<li><a href="${browseUrl(i.key)}">${i.key}</a> ${i.summary}</li>`)}</ul>
      ${list.length > MAX_LISTED ? html`<p class="muted">and ${list.length - MAX_LISTED} more.</p>` : ''}`;
  })}`;
}

export function homePage(v: View): SafeHtml {
  const { store } = v;
  const projects = store.projects.all().sort((a, b) => a.key.localeCompare(b.key));
  const runs = runsByCycle(store);
  const issuesByProject = new Map<number, Issue[]>();
  for (const i of store.issues.rows.values()) {
    const list = issuesByProject.get(i.projectId);
    if (list) list.push(i);
    else issuesByProject.set(i.projectId, [i]);
  }
  const sections = projects.map((p) => {
    const issues = (issuesByProject.get(p.id) ?? []).sort((a, b) => a.id - b.id);
    const plans = issues.filter((i) => i.type === ISSUE_TYPES.testPlan);
    const requirements = issues.filter((i) => i.type === ISSUE_TYPES.requirement).length;
    const rows = plans.map((plan) => {
      const cycle = latestCycle(store, plan.id);
      return html`<tr>
        <th scope="row"><a href="${browseUrl(plan.key)}">${plan.key}</a></th>
        <td>${plan.summary}</td>
        <td>${cycle ? html`<a href="${cycleUrl(plan.key, cycle.id)}">${cycle.name}</a> <span class="muted">(${cycle.status})</span>` : html`<span class="muted">No cycle yet</span>`}</td>
        <td>${cycle ? progress(store, runs.get(cycle.id) ?? [], `Runs of ${cycle.name} by status`) : ''}</td>
      </tr>`;
    });
    return html`<section aria-labelledby="project-${p.key}" class="panel">
      <h2 id="project-${p.key}">${p.name} <span class="muted">(${p.key})</span></h2>
      <h3>Test plans</h3>
      ${table(`Test plans of ${p.key}`, ['Test plan', 'Summary', 'Latest cycle', 'Progress'], rows, {
        wide: true,
        empty: 'No test plans in this project.',
      })}
      <h3>Requirements</h3>
      <p><a href="${requirementsHref(p)}">Requirements of ${p.key} and their coverage</a>
        <span class="muted">(${requirements} ${requirements === 1 ? 'requirement' : 'requirements'}, in the latest cycle)</span></p>
      <details><summary>All issues of ${p.key} (${issues.length})</summary>${otherIssues(issues)}</details>
    </section>`;
  });
  return page({
    title: 'Projects',
    viewer: v.viewer,
    section: '/',
    main: html`<h1>Projects and test plans</h1>
      ${sections.length ? sections : html`<p class="muted">No projects. Start the emulator with a seed that has some (--seed).</p>`}
      ${codeReviewPanel(store)}`,
  });
}
