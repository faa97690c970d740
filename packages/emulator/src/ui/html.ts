/**
 * HTML building for the web UI: a tagged template that escapes every interpolated value unless it is already
 * HTML built by this module. Pages never concatenate strings into markup by hand, so a summary such as
 * `<script>alert(1)</script>` can only ever reach the page as text.
 */

/** Markup built by {@link html}; the only thing inserted without escaping. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** What a template accepts: text and numbers are escaped, markup is inserted, nothing renders as empty. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for element content and quoted attribute values alike. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false || value === true) return '';
  return esc(String(value));
}

/** `html\`<p>${text}</p>\``: the literal parts are trusted markup, every `${value}` is escaped (or inserted when SafeHtml). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** Markup that is known to be safe (a constant of this module's callers, never data). */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** A path with a query: parameters with an empty or undefined value are left out. */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** Jira's own issue URL. */
export const browseUrl = (key: string): string => `/browse/${encodeURIComponent(key)}`;

/** The cycle page: a view of the plan's issue page, optionally filtered by run status, optionally at one run. */
/**
 * A cycle page's address; with `runId`, the page of the cycle that holds that run (`&run=`), scrolled to it (`#run-`):
 * a long cycle is shown a page at a time, and the anchor alone would only work on the first page.
 */
export function cycleUrl(
  planKey: string,
  cycleId: number,
  o: { status?: string; runId?: number; page?: number } = {},
): string {
  const url = href(browseUrl(planKey), { cycle: cycleId, status: o.status, page: o.page, run: o.runId });
  return o.runId === undefined ? url : `${url}#run-${o.runId}`;
}

/** A link to an issue: its key, and the summary when asked. */
export function issueLink(issue: { key: string; summary: string }, withSummary = false): SafeHtml {
  return withSummary
    ? html`<a href="${browseUrl(issue.key)}">${issue.key}</a> ${issue.summary}`
    : html`<a href="${browseUrl(issue.key)}">${issue.key}</a>`;
}

/** Epoch ms as `2026-03-05 14:07 UTC` in a `<time>` element; an em dash when unknown. */
export function when(ms: number | null | undefined): SafeHtml {
  if (ms === null || ms === undefined) return html`<span class="muted">—</span>`;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

/** Text or an em dash when blank. */
export function orDash(text: string | null | undefined): HtmlValue {
  return text ? text : html`<span class="muted">—</span>`;
}

/** A byte count for people: `812 B`, `12.3 KB`, `4.0 MB`. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
