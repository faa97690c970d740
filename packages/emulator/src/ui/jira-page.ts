import { type JiraBehaviourInput, PROFILES } from '../behaviour/profile.js';
import type { Exchange } from '../kernel/exchange.js';
import { crossSite, readForm, refuseCrossSite } from './access.js';
import { href, html, type SafeHtml } from './html.js';
import { page, redirect, sendHtml } from './layout.js';
import type { View } from './view.js';
import { table } from './widgets.js';

/**
 * `/rehearsal/jira`: how harsh the emulated Jira Data Center is (the knobs of src/behaviour/profile.ts, as `GET
 * /__emulator/jira` answers them), and a form that changes some of them while the emulator runs, with the same
 * checks as `PUT /__emulator/jira`. A reset puts the start options back.
 */

const KNOBS: [keyof typeof PROFILES.realistic, string, string][] = [
  ['nodes', 'Nodes', 'simulated nodes behind the ROUTEID load balancer'],
  ['indexLagMs', 'Index lag (ms)', 'one value, or one per node separated by commas'],
  ['searchMaxResults', 'Search page cap', 'largest maxResults a search answers'],
  ['resultWindow', 'Result window', 'startAt + maxResults limit; off for none'],
  ['resultWindowMode', 'Past the window', 'error (500) or empty (an empty page)'],
  ['textSearch', 'Text search (~)', 'tokenised (Jira) or substring'],
  ['patAsBasic', 'Token as Basic password', 'on or off'],
  ['captchaAfterFailedLogins', 'CAPTCHA after failed logins', 'a number, or off (the seed wins)'],
  ['bulkCreateMax', 'Bulk create cap', 'issues per POST /rest/api/2/issue/bulk; 0: no such route (404)'],
  ['createMs', 'Create time (ms)', 'time one issue create takes, each of a bulk too'],
];

const shown = (v: unknown): string =>
  v === null ? 'off' : typeof v === 'boolean' ? (v ? 'on' : 'off') : Array.isArray(v) ? v.join(', ') : String(v);

/** What the form asks to change: only the fields filled in, typed as the knobs want them. */
export function knobsFromForm(form: URLSearchParams): JiraBehaviourInput {
  const out: Record<string, unknown> = {};
  for (const [name] of KNOBS) {
    const raw = form.get(name)?.trim();
    if (!raw) continue;
    const number = (t: string) => (/^\d+$/.test(t.trim()) ? Number(t) : t);
    if (raw === 'off' && name !== 'resultWindowMode') out[name] = name === 'patAsBasic' ? false : null;
    else if (raw === 'on') out[name] = true;
    else if (name === 'indexLagMs' && raw.includes(',')) out[name] = raw.split(',').map(number);
    else out[name] = number(raw);
  }
  return out as JiraBehaviourInput;
}

function render(v: View, x: Exchange, status: number, notice?: SafeHtml, form?: URLSearchParams): void {
  const now = v.env.emu.jira as Record<string, unknown>;
  const rows = KNOBS.map(
    ([name, label, hint]) =>
      html`<tr><th scope="row">${label}</th><td><code>${name}</code></td><td>${shown(now[name])}</td><td>${shown(PROFILES.realistic[name])}</td><td>${shown(PROFILES.ideal[name])}</td><td>${hint}</td></tr>`,
  );
  const fields = KNOBS.map(([name, label]) => {
    const id = `jira-${name}`;
    return html`<div class="field"><label for="${id}">${label}</label>
      <input id="${id}" name="${name}" type="text" value="${form?.get(name) ?? ''}"></div>`;
  });
  const main = html`<h1>Jira behaviour</h1>
    ${notice ?? ''}
    <p>How harsh the emulated Jira Data Center is: the profile's knobs, as <code>GET /__emulator/jira</code> answers
      them. A reset puts back the options the emulator started with.</p>
    ${table('Jira knobs', ['Knob', 'Name', 'Now', 'Realistic', 'Ideal', 'Values'], rows, { wide: true })}
    <form method="post" action="/rehearsal/jira" class="stack panel" aria-labelledby="change-heading">
      <h2 id="change-heading">Change knobs</h2>
      <p class="muted">Fill in only what changes.</p>
      <div class="row">${fields}</div>
      <div><button class="primary" type="submit">Change</button></div>
    </form>`;
  sendHtml(
    x.res,
    x.method,
    status,
    page({ title: 'Jira behaviour', viewer: v.viewer, section: '/rehearsal/jira', main }),
  );
}

export async function jiraPage(v: View, x: Exchange): Promise<void> {
  if (x.method !== 'POST') {
    x.req.resume();
    const notice =
      v.query.get('done') === 'changed' ? html`<p class="notice" role="status">Knobs changed.</p>` : undefined;
    return render(v, x, 200, notice);
  }
  if (crossSite(x)) return refuseCrossSite(x.req, x.res, v.viewer);
  const form = await readForm(x.req);
  if (!form) return render(v, x, 413, html`<p class="error" role="alert">The form is larger than 64 KiB.</p>`);
  try {
    v.env.emu.setJira(knobsFromForm(form));
  } catch (err) {
    const message = (err as Error).message;
    return render(v, x, 400, html`<p class="error" role="alert">Nothing was changed. ${message}</p>`, form);
  }
  redirect(x.res, href('/rehearsal/jira', { done: 'changed' }));
}
