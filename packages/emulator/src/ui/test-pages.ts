import { allBugsOfRun, byId, issuesByIds, linkedIssues } from '../rules/domain.js';
import { suitePathOf } from '../rules/suite-path.js';
import type { Issue } from '../store/store.js';
import { browseUrl, cycleUrl, html, orDash, type SafeHtml, when } from './html.js';
import { issuePage, runHref, runPlace } from './issue.js';
import { attachmentsIndex, cyclesOfPlan, runsByCycle, userLabel } from './model.js';
import { runCard } from './run.js';
import { suitePaths, type View } from './view.js';
import { list, progress, statusBadge, table } from './widgets.js';

/** The pages of the two test issue types: a test plan (members and cycles) and a test case (steps and history). */

export function planPage(v: View, plan: Issue): SafeHtml {
  const { store } = v;
  const members = store.planMembers.filter((m) => m.tpId === plan.id).sort(byId);
  const cycles = cyclesOfPlan(store, plan.id);
  const runs = runsByCycle(store);
  const stepCounts = new Map<number, number>();
  for (const s of store.caseSteps.rows.values()) stepCounts.set(s.tcId, (stepCounts.get(s.tcId) ?? 0) + 1);
  const memberRows = members.map((m) => {
    const tc = store.issues.get(m.tcId);
    return html`<tr>
      <th scope="row">${tc ? html`<a href="${browseUrl(tc.key)}">${tc.key}</a>` : m.tcId}</th>
      <td>${tc?.summary ?? ''}</td>
      <td>${orDash(userLabel(store, m.tester))}</td>
      <td>${stepCounts.get(m.tcId) ?? 0}</td>
    </tr>`;
  });
  const cycleRows = cycles.map(
    (c) => html`<tr>
      <th scope="row"><a href="${cycleUrl(plan.key, c.id)}">${c.name}</a></th>
      <td>${c.status}</td>
      <td>${orDash(c.environment)}</td>
      <td>${orDash(c.build)}</td>
      <td>${orDash(c.plannedStartDate)} to ${orDash(c.plannedEndDate)}</td>
      <td>${when(c.startedAt)} to ${c.status === 'Completed' || c.status === 'Aborted' ? when(c.completedAt) : orDash('')}</td>
      <td>${progress(store, runs.get(c.id) ?? [], `Runs of ${c.name} by status`)}</td>
    </tr>`,
  );
  return issuePage(
    v,
    plan,
    html`<h2>Test cycles</h2>
    ${table('Test cycles', ['Cycle', 'Status', 'Environment', 'Build', 'Planned', 'Actual', 'Runs'], cycleRows, {
      wide: true,
      empty: 'No test cycles yet. A reporter creates one, or addCycle does.',
    })}
    <h2>Test cases</h2>
    ${table('Test cases of the plan', ['Test case', 'Summary', 'Tester', 'Steps'], memberRows, {
      empty: 'The plan has no test cases.',
    })}`,
  );
}

export function casePage(v: View, tc: Issue): SafeHtml {
  const { store } = v;
  const steps = store.caseSteps.filter((s) => s.tcId === tc.id).sort((a, b) => a.seq - b.seq);
  const requirements = linkedIssues(store, (l) => (l.tcId === tc.id ? l.reqId : undefined));
  const suites = suitePaths(
    store.testSuiteMembers.filter((m) => m.tcId === tc.id),
    (m) => store.testSuites.get(m.suiteId),
    (s) => suitePathOf(store, s),
  );
  const plans = issuesByIds(
    store,
    store.planMembers.filter((m) => m.tcId === tc.id).map((m) => m.tpId),
  );
  const runs = store.runs.filter((r) => r.tcId === tc.id).sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
  const adhoc = runs.filter((r) => store.cycles.get(r.cycleId)?.adhocTcId === tc.id);
  const stepRows = steps.map(
    (s) => html`<tr><th scope="row">${s.seq}</th><td class="text">${s.step}</td>
      <td class="text">${orDash(s.stepData)}</td><td class="text">${orDash(s.expectedResult)}</td></tr>`,
  );
  const historyRows = runs.map((r) => {
    const place = runPlace(store, r);
    const bugs = allBugsOfRun(store, r.id).sort(byId);
    return html`<tr>
      <th scope="row"><a href="${runHref(store, r)}">Run ${r.id}</a></th>
      <td>${place.plan}</td>
      <td>${place.cycle}</td>
      <td>${statusBadge(store, r.status)}</td>
      <td>${orDash(userLabel(store, r.executedBy))}</td>
      <td>${when(r.executedAt)}</td>
      <td>${bugs.length ? bugs.map((b, i) => html`${i ? ', ' : ''}<a href="${browseUrl(b.key)}">${b.key}</a>`) : orDash('')}</td>
    </tr>`;
  });
  const index = attachmentsIndex(store);
  return issuePage(
    v,
    tc,
    html`<h2>Steps</h2>
    ${table('Steps', ['#', 'Step', 'Test data', 'Expected result'], stepRows, { empty: 'This test case has no steps.' })}
    <h2>Requirements</h2>
    ${list(
      requirements.map((r) => html`<a href="${browseUrl(r.key)}">${r.key}</a> ${r.summary}`),
      'Not linked to a requirement.',
    )}
    <h2>Test suites</h2>
    ${list(
      suites.map((p) => html`${p}`),
      'In no test suite.',
    )}
    <h2>Test plans</h2>
    ${list(
      plans.map((p) => html`<a href="${browseUrl(p.key)}">${p.key}</a> ${p.summary}`),
      'In no test plan.',
    )}
    <h2>Execution history</h2>
    ${table(
      'Execution history',
      ['Run', 'Test plan', 'Cycle', 'Status', 'Executed by', 'Executed at', 'Defects'],
      historyRows,
      { wide: true, empty: 'Never run.' },
    )}
    ${
      adhoc.length
        ? html`<h2 id="adhoc-heading">Ad hoc runs</h2>
          <ol class="runs" aria-labelledby="adhoc-heading">${adhoc.map((r) => runCard(v, r, index))}</ol>`
        : ''
    }`,
  );
}
