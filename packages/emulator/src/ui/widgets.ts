import { statusDef } from '../rules/domain.js';
import type { Run, Store } from '../store/store.js';
import { type HtmlValue, html, type SafeHtml } from './html.js';
import { countByStatus, statusColour, textOn } from './model.js';

/** Pieces several pages share: a run status lozenge, a progress bar with counts, fact lists and wide tables. */

/** A run status: its colour AND its name (never colour alone). */
export function statusBadge(store: Store, status: string): SafeHtml {
  const colour = statusColour(store, status);
  const name = statusDef(store, status)?.name ?? status;
  return html`<span class="status" style="background:${colour};color:${textOn(colour)}">${name}</span>`;
}

/**
 * The runs' statuses as a stacked bar (hidden from assistive technology) with the counts as text beside it, so a
 * person who cannot tell the colours apart reads the same numbers.
 */
export function progress(store: Store, runs: readonly Run[], label: string): SafeHtml {
  const counts = countByStatus(store, runs);
  const total = runs.length;
  if (total === 0) return html`<span class="muted">No runs</span>`;
  const shown = counts.filter((c) => c.count > 0);
  return html`<div class="progress">
    <div class="bar" aria-hidden="true">${shown.map(
      (c) =>
        html`<span style="width:${((c.count / total) * 100).toFixed(2)}%;background:${statusColour(store, c.name)}"></span>`,
    )}</div>
    <ul class="counts" aria-label="${label}: ${total} runs">
      ${shown.map(
        (c) =>
          html`<li><span class="swatch" style="background:${statusColour(store, c.name)}" aria-hidden="true"></span>${c.name} ${c.count}</li>`,
      )}
    </ul>
  </div>`;
}

/** A definition list of facts; entries whose value is undefined are left out. */
export function facts(entries: [string, HtmlValue | undefined][]): SafeHtml {
  return html`<dl class="facts">${entries
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>`;
}

/**
 * A table in its own scroll container: the page never scrolls sideways, the table may. The container is
 * focusable and named, so a keyboard user can scroll it too.
 */
export function table(
  label: string,
  head: readonly string[],
  rows: readonly SafeHtml[],
  o: { wide?: boolean; empty?: string } = {},
): SafeHtml {
  if (rows.length === 0) return html`<p class="muted">${o.empty ?? 'None.'}</p>`;
  return html`<div class="table-wrap" role="region" aria-label="${label}" tabindex="0">
    <table class="${o.wide ? 'wide' : ''}"><caption class="visually-hidden">${label}</caption>
      <thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
      <tbody>${rows}</tbody>
    </table></div>`;
}

/** A list of links or items, or a note when there are none. */
export function list(items: readonly SafeHtml[], empty: string): SafeHtml {
  return items.length ? html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>` : html`<p class="muted">${empty}</p>`;
}
