import { byId, issuesByIds, linkedIssues } from '../rules/domain.js';
import type { Issue, RequirementSuite, Store } from '../store/store.js';
import type { CycleChoice } from './coverage.js';
import { browseUrl, html, type SafeHtml, when } from './html.js';
import { issuePage, runHref, runPlace } from './issue.js';
import { coverageSection } from './requirements-page.js';
import { suitePaths, type View } from './view.js';
import { list, statusBadge, table } from './widgets.js';

/**
 * The pages of a requirement (its tree, linked cases and coverage in a cycle) and of a defect (any other issue type:
 * its runs).
 */

function childrenOf(store: Store, id: number): Issue[] {
  return issuesByIds(
    store,
    store.requirementChildren.filter((e) => e.parentId === id).map((e) => e.childId),
  );
}

/** The requirement's descendants as nested lists; `seen` guards against a seed edited into a loop. */
function tree(store: Store, id: number, seen: Set<number>): SafeHtml {
  const children = childrenOf(store, id).filter((c) => !seen.has(c.id));
  if (children.length === 0) return html``;
  for (const c of children) seen.add(c.id);
  return html`<ul class="tree">${children.map(
    (c) => html`<li><a href="${browseUrl(c.key)}">${c.key}</a> ${c.summary}${tree(store, c.id, seen)}</li>`,
  )}</ul>`;
}

function suitePath(store: Store, suite: RequirementSuite): string {
  const names: string[] = [];
  let cur: RequirementSuite | undefined = suite;
  for (let guard = 0; cur && guard <= store.requirementSuites.size; guard++) {
    names.unshift(cur.name.replaceAll('/', '\\/'));
    cur = cur.parentId === 0 ? undefined : store.requirementSuites.get(cur.parentId);
  }
  return names.join('/');
}

export function requirementPage(v: View, req: Issue, choice: CycleChoice): SafeHtml {
  const { store } = v;
  const parentEdge = store.requirementChildren.find((e) => e.childId === req.id);
  const parent = parentEdge ? store.issues.get(parentEdge.parentId) : undefined;
  const cases = linkedIssues(store, (l) => (l.reqId === req.id ? l.tcId : undefined));
  const suites = suitePaths(
    store.requirementSuiteMembers.filter((m) => m.reqId === req.id),
    (m) => store.requirementSuites.get(m.suiteId),
    (s) => suitePath(store, s),
  );
  const children = tree(store, req.id, new Set([req.id]));
  const caseRows = cases.map(
    (c) =>
      html`<tr><th scope="row"><a href="${browseUrl(c.key)}">${c.key}</a></th><td>${c.summary}</td><td>${c.status}</td></tr>`,
  );
  return issuePage(
    v,
    req,
    html`<h2>Parent requirement</h2>
    ${parent ? html`<p><a href="${browseUrl(parent.key)}">${parent.key}</a> ${parent.summary}</p>` : html`<p class="muted">None: a top-level requirement.</p>`}
    <h2>Child requirements</h2>
    ${children.text ? children : html`<p class="muted">No child requirements.</p>`}
    <h2>Linked test cases</h2>
    ${table('Linked test cases', ['Test case', 'Summary', 'Status'], caseRows, { empty: 'No linked test cases.' })}
    ${coverageSection(v, req, choice)}
    <h2>Requirement suites</h2>
    ${list(
      suites.map((p) => html`${p}`),
      'In no requirement suite.',
    )}`,
  );
}

export function defectPage(v: View, bug: Issue): SafeHtml {
  const { store } = v;
  const links = store.bugLinks.filter((b) => b.issueId === bug.id).sort(byId);
  const rows = links.flatMap((link) => {
    const run = store.runs.get(link.runId);
    if (!run) return [];
    const tc = store.issues.get(run.tcId);
    const step = link.runStepId === null ? undefined : store.runSteps.get(link.runStepId);
    const place = runPlace(store, run);
    return [
      html`<tr>
        <th scope="row"><a href="${runHref(store, run)}">Run ${run.id}</a></th>
        <td>${tc ? html`<a href="${browseUrl(tc.key)}">${tc.key}</a> ${tc.summary}` : ''}</td>
        <td>${place.plan}</td>
        <td>${place.cycle}</td>
        <td>${step ? `Step ${step.seq}` : 'Run'}</td>
        <td>${statusBadge(store, run.status)}</td>
        <td>${when(run.executedAt)}</td>
      </tr>`,
    ];
  });
  return issuePage(
    v,
    bug,
    html`<h2>Test runs</h2>
    ${table(
      'Test runs this defect is linked to',
      ['Run', 'Test case', 'Test plan', 'Cycle', 'Linked to', 'Status', 'Executed at'],
      rows,
      {
        wide: true,
        empty: 'Not linked to any test run.',
      },
    )}`,
  );
}
