import { statusDef } from '../rules/domain.js';
import type { Cycle, Issue, Project } from '../store/store.js';
import {
  type CaseCoverage,
  type CaseVerdict,
  CoverageIndex,
  type CycleChoice,
  countStates,
  plansOf,
  type RequirementCoverage,
  type RequirementState,
  STATES,
} from './coverage.js';
import { browseUrl, cycleUrl, href, html, issueLink, type SafeHtml } from './html.js';
import { page } from './layout.js';
import { setLabel } from './matrix.js';
import { cyclesOfPlan, textOn } from './model.js';
import type { View } from './view.js';
import { statusBadge, table } from './widgets.js';

/**
 * Requirement coverage in the web UI: the project's page `/projects/<KEY>/requirements` (every requirement as a tree,
 * its linked cases with their status in a cycle, its state, and a count per state) and the coverage section of a
 * requirement's own page (`/browse/<KEY>`). Both take `?plan=<KEY>&cycle=<id>` (coverage.ts `chooseCycle`; by
 * default the project's latest cycle) and a form that picks another cycle. The rules are in coverage.ts.
 */

/** The project key of a requirements page path, or undefined for any other path. */
export function requirementsRoute(path: string): string | undefined {
  const m = /^\/projects\/([^/]+)\/requirements$/.exec(path);
  return m ? m[1] : undefined;
}

export const requirementsHref = (project: Project, cycle?: Cycle): string =>
  href(`/projects/${encodeURIComponent(project.key)}/requirements`, { cycle: cycle?.id });

/** A state: colour AND its name, as a run status is drawn. */
const STATE_COLOURS: Record<RequirementState, string> = {
  passing: '#14892c',
  failing: '#d04437',
  'not run': '#cccccc',
  'not covered': '#ffffff',
};

export function stateBadge(state: RequirementState): SafeHtml {
  const colour = STATE_COLOURS[state];
  return html`<span class="status" style="background:${colour};color:${textOn(colour)}">${state}</span>`;
}

const VERDICT_WORDS: Record<CaseVerdict, string> = {
  passed: 'passed',
  failed: 'failed',
  'not run': 'not run',
  'no run': 'no run in this cycle',
  other: 'no pass yet',
};

/** A case's runs in the cycle, each status linking to its card (an advanced cycle's run names its attribute set). */
function runBadges(v: View, plan: Issue | undefined, cycle: Cycle | undefined, c: CaseCoverage): SafeHtml {
  if (!plan || !cycle || c.runs.length === 0) return html`<span class="muted">${VERDICT_WORDS['no run']}</span>`;
  return html`${c.runs.map((r, i) => {
    const set = setLabel(r.attributes);
    const name = statusDef(v.store, r.status)?.name ?? r.status;
    return html`${i ? ' ' : ''}<a href="${cycleUrl(plan.key, cycle.id, { runId: r.id })}" aria-label="Run ${r.id} of ${c.tc.key}${set ? ` (${set})` : ''}: ${name}">${statusBadge(v.store, r.status)}</a>${set ? html` <span class="muted">${set}</span>` : ''}`;
  })}`;
}

/** A case's verdict in words; a result that is neither a pass nor a fail is named (`Blocked`, `NA`). */
function verdictWords(c: CaseCoverage): string {
  if (c.verdict !== 'other') return VERDICT_WORDS[c.verdict];
  return [...new Set(c.runs.map((r) => r.status))].join(', ');
}

function defectLinks(defects: readonly Issue[]): SafeHtml {
  if (defects.length === 0) return html`<span class="muted">no defect</span>`;
  return html`${defects.length === 1 ? 'defect' : 'defects'} ${defects.map(
    (d, i) => html`${i ? ', ' : ''}${issueLink(d, true)} (${d.status})`,
  )}`;
}

/** Why a requirement has its state, in words: the failed cases with their defects, or what has not passed yet. */
export function stateDetail(r: RequirementCoverage): SafeHtml {
  const via = (c: CaseCoverage) => {
    const child = r.via.get(c.tc.id);
    return child ? html` <span class="muted">(via ${issueLink(child)})</span>` : '';
  };
  const inherited = r.judged.length - r.own.length;
  const over =
    inherited > 0
      ? html`<p class="muted">Judged over ${r.judged.length} ${r.judged.length === 1 ? 'case' : 'cases'}, ${inherited} of them linked to child requirements.</p>`
      : '';
  switch (r.state) {
    case 'not covered':
      return html`<p>No test case is linked to it or to a child requirement.</p>`;
    case 'passing':
      return html`<p>${r.judged.length === 1 ? 'Its case passed.' : `All ${r.judged.length} cases passed.`}</p>${over}`;
    case 'failing': {
      const failed = r.judged.filter((c) => c.verdict === 'failed');
      return html`<p>Failed:</p><ul class="tree">${failed.map(
        (c) => html`<li>${issueLink(c.tc, true)}${via(c)}: ${defectLinks(c.defects)}</li>`,
      )}</ul>${over}`;
    }
    default: {
      const open = r.judged.filter((c) => c.verdict !== 'passed');
      return html`<p>No case failed; not passed yet:</p><ul class="tree">${open.map(
        (c) => html`<li>${issueLink(c.tc)}${via(c)}: ${verdictWords(c)}</li>`,
      )}</ul>${over}`;
    }
  }
}

/** The cycle picker: the project's cycles grouped by plan, newest first; nothing when the project has none. */
function cyclePicker(v: View, project: Project, choice: CycleChoice, action: string, id: string): SafeHtml {
  const groups = plansOf(v.store, project)
    .map((plan) => ({ plan, cycles: cyclesOfPlan(v.store, plan.id).reverse() }))
    .filter((g) => g.cycles.length > 0);
  if (groups.length === 0) return html``;
  return html`<form method="get" action="${action}" class="row" style="align-items:flex-end" aria-label="Choose the test cycle">
    <div class="field" style="max-width:30rem"><label for="${id}">Test cycle</label>
      <select id="${id}" name="cycle">${groups.map(
        (g) =>
          html`<optgroup label="${g.plan.key} ${g.plan.summary}">${g.cycles.map(
            (c) =>
              html`<option value="${c.id}"${c.id === choice.cycle?.id ? html` selected` : ''}>${c.name} (${c.status})</option>`,
          )}</optgroup>`,
      )}</select></div>
    <div><button type="submit" class="plain">Show coverage</button></div>
  </form>`;
}

/** Which cycle the coverage is read in, as a sentence with links. */
function inCycle(choice: CycleChoice, project: Project): SafeHtml {
  if (choice.plan && choice.cycle) {
    return html`Coverage in test cycle <a href="${cycleUrl(choice.plan.key, choice.cycle.id)}">${choice.cycle.name}</a>
      <span class="muted">(${choice.cycle.status})</span> of test plan ${issueLink(choice.plan, true)}.`;
  }
  if (choice.plan) {
    return html`Test plan ${issueLink(choice.plan, true)} has no test cycle yet: no case has a run to read.`;
  }
  return html`Project ${project.key} has no test plan yet: no case has a run to read.`;
}

const LEGEND = html`<details><summary>How a requirement's state is decided</summary>
  <dl class="facts">
    <div><dt>passing</dt><dd>every case linked to it, or to one of its child requirements, passed in this cycle</dd></div>
    <div><dt>failing</dt><dd>a case failed (it is named, with its defects)</dd></div>
    <div><dt>not run</dt><dd>no case failed, but not every case has passed: not run yet, blocked, or not in the cycle</dd></div>
    <div><dt>not covered</dt><dd>no test case is linked</dd></div>
  </dl></details>`;

function caseList(v: View, choice: CycleChoice, cases: readonly CaseCoverage[]): SafeHtml {
  if (cases.length === 0) return html`<span class="muted">No linked test case.</span>`;
  return html`<ul class="tree">${cases.map(
    (c) => html`<li>${issueLink(c.tc, true)}: ${runBadges(v, choice.plan, choice.cycle, c)}</li>`,
  )}</ul>`;
}

/** `/projects/<KEY>/requirements`: every requirement of the project with its coverage in the chosen cycle. */
export function requirementsPage(v: View, project: Project, choice: CycleChoice): SafeHtml {
  const index = new CoverageIndex(v.store, choice.cycle);
  const rows = index.tree(project);
  const counts = countStates(rows);
  const cycleName = choice.cycle?.name ?? 'no cycle';
  const body = rows.map(
    (r) => html`<tr>
      <th scope="row" style="padding-left:${(0.6 + r.depth * 1.5).toFixed(1)}rem">${
        r.parent && r.depth > 0 ? html`<span aria-hidden="true" class="muted">└ </span>` : ''
      }${issueLink(r.req)} ${r.req.summary}${
        r.parent && r.depth > 0 ? html`<span class="visually-hidden">, child of ${r.parent.key}</span>` : ''
      }</th>
      <td>${caseList(v, choice, r.own)}</td>
      <td>${stateBadge(r.state)}${stateDetail(r)}</td>
    </tr>`,
  );
  const main = html`<h1>Requirements of ${project.name} <span class="muted">(${project.key})</span></h1>
    <p>${inCycle(choice, project)}</p>
    ${cyclePicker(v, project, choice, requirementsHref(project), 'cycle-choice')}
    <section class="panel" aria-labelledby="coverage-counts">
      <h2 id="coverage-counts">Requirements by state</h2>
      <ul class="counts" aria-label="Requirements by state in ${cycleName}: ${rows.length} requirements">${STATES.map(
        (s) => html`<li>${counts[s]} ${stateBadge(s)}</li>`,
      )}</ul>
      ${LEGEND}
    </section>
    <h2 id="requirements-heading">Requirements <span class="muted">(${rows.length})</span></h2>
    ${table(
      `Requirements of ${project.key} with their test cases and state in ${cycleName}`,
      ['Requirement', `Test cases in ${cycleName}`, 'State'],
      body,
      {
        wide: true,
        empty: `Project ${project.key} has no requirements.`,
      },
    )}`;
  return page({
    title: `Requirements of ${project.key}`,
    viewer: v.viewer,
    section: '/',
    crumbs: [
      { label: 'Projects', href: '/' },
      { label: `${project.name} (${project.key})`, href: `/#project-${project.key}` },
      { label: 'Requirements' },
    ],
    main,
  });
}

/** The coverage section of a requirement's own page: its state, and every case it is judged over. */
export function coverageSection(v: View, req: Issue, choice: CycleChoice): SafeHtml {
  const project = v.store.projects.get(req.projectId);
  if (!project) return html``;
  const r = new CoverageIndex(v.store, choice.cycle).ofRequirement(req);
  const rows = r.judged.map((c) => {
    const child = r.via.get(c.tc.id);
    return html`<tr>
      <th scope="row">${issueLink(c.tc)}</th>
      <td>${c.tc.summary}</td>
      <td>${child ? issueLink(child) : 'this requirement'}</td>
      <td>${runBadges(v, choice.plan, choice.cycle, c)}</td>
      <td>${c.verdict === 'failed' ? defectLinks(c.defects) : html`<span class="muted">—</span>`}</td>
    </tr>`;
  });
  return html`<h2 id="coverage-heading">Coverage</h2>
    <p>${inCycle(choice, project)}</p>
    ${cyclePicker(v, project, choice, browseUrl(req.key), 'requirement-cycle-choice')}
    <p>State: ${stateBadge(r.state)}</p>
    ${stateDetail(r)}
    ${table('Test cases this requirement is judged over', ['Test case', 'Summary', 'Linked to', 'Status in the cycle', 'Defects'], rows, { wide: true, empty: 'No test case is linked to it or to a child requirement.' })}
    <p><a href="${requirementsHref(project, choice.cycle)}">All requirements of ${project.key} in this cycle</a></p>`;
}
