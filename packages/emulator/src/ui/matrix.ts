import { statusDef } from '../rules/domain.js';
import type { Cycle, Issue, Run, Store } from '../store/store.js';
import { cycleUrl, html, type SafeHtml } from './html.js';
import { statusBadge } from './widgets.js';

/**
 * The attribute matrix of an advanced cycle, as synapseRT groups a case's runs by attribute set: a row per test case,
 * a column per attribute set (e.g. Browser: chromium, Browser: firefox), each cell the run's status linking to its
 * card. Which browser failed is read at a glance. Runs without attributes are under "No attributes".
 */

/** Cases a matrix shows: a cycle of thousands stays a table a browser renders (and re-renders live) quickly. */
export const MATRIX_ROWS = 200;

/** `Browser: firefox, OS: linux`; '' for a run without attributes. */
export function setLabel(attributes: Record<string, string> | null): string {
  const entries = Object.entries(attributes ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return entries.map(([k, v]) => `${k}: ${v}`).join(', ');
}

/** The matrix of the cycle's runs, or nothing when no run has attributes (a normal cycle looks as before). */
export function attributeMatrix(store: Store, plan: Issue, cycle: Cycle, runs: readonly Run[]): SafeHtml {
  if (!runs.some((r) => r.attributes && Object.keys(r.attributes).length > 0)) return html``;
  const columns = [...new Set(runs.map((r) => setLabel(r.attributes)))].sort((a, b) =>
    a === '' ? 1 : b === '' ? -1 : a.localeCompare(b),
  );
  // Rows in the cycle's run order: the first run of each case places it.
  const byCase = new Map<number, Map<string, Run[]>>();
  for (const run of runs) {
    const row = byCase.get(run.tcId) ?? new Map<string, Run[]>();
    const label = setLabel(run.attributes);
    row.set(label, [...(row.get(label) ?? []), run]);
    byCase.set(run.tcId, row);
  }
  const cases = [...byCase.entries()];
  const shown = cases.slice(0, MATRIX_ROWS);
  const cell = (list: Run[] | undefined) =>
    list?.length
      ? html`<td>${list.map(
          (r) =>
            html`<a href="${cycleUrl(plan.key, cycle.id, { runId: r.id })}" aria-label="Run ${r.id}: ${statusDef(store, r.status)?.name ?? r.status}">${statusBadge(store, r.status)}</a> `,
        )}</td>`
      : html`<td class="muted">no run</td>`;
  const rows = shown.map(([tcId, row]) => {
    const tc = store.issues.get(tcId);
    return html`<tr><th scope="row">${tc ? html`<a href="/browse/${encodeURIComponent(tc.key)}">${tc.key}</a> ${tc.summary}` : `case ${tcId}`}</th>${columns.map((c) => cell(row.get(c)))}</tr>`;
  });
  const more =
    cases.length > shown.length
      ? html`<p class="muted">${shown.length} of ${cases.length} test cases shown; the runs below list them all.</p>`
      : html``;
  return html`<h2 id="matrix-heading">Runs by attribute set</h2>
    <div class="table-wrap" role="region" aria-labelledby="matrix-heading" tabindex="0">
      <table class="wide matrix"><caption class="visually-hidden">Runs of ${cycle.name}: a row per test case, a column per attribute set</caption>
        <thead><tr><th scope="col">Test case</th>${columns.map((c) => html`<th scope="col">${c || 'No attributes'}</th>`)}</tr></thead>
        <tbody>${rows}</tbody>
      </table>
    </div>
    ${more}`;
}
