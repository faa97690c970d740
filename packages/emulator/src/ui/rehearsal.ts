import type { RequestLogEntry } from '../kernel/emulator.js';
import type { Exchange } from '../kernel/exchange.js';
import { crossSite, readForm, refuseCrossSite } from './access.js';
import { href, html, type SafeHtml, when } from './html.js';
import { page, redirect, sendHtml } from './layout.js';
import type { View } from './view.js';
import { table } from './widgets.js';

/**
 * The emulator's own tools as pages: the request log (`/rehearsal/requests`) and reset (`/rehearsal/reset`); the
 * fault rules are in faults-page.ts. They do what the admin endpoints do, through the same emulator methods.
 */

const LIMITS = [50, 200, 1000, 10_000];

/** `status` filter: `2xx` .. `5xx`, `0` (connection dropped) or an exact status. */
function statusMatches(filter: string, status: number): boolean {
  const cls = /^([1-5])xx$/.exec(filter);
  if (cls) return Math.floor(status / 100) === Number(cls[1]);
  return String(status) === filter;
}

function select(id: string, name: string, label: string, options: [string, string][], value: string): SafeHtml {
  return html`<div class="field"><label for="${id}">${label}</label><select id="${id}" name="${name}">
    ${options.map(([v, text]) => html`<option value="${v}"${v === value ? html` selected` : ''}>${text}</option>`)}
  </select></div>`;
}

export function requestsPage(v: View, x: Exchange): void {
  const log = v.env.emu.requests();
  const status = v.query.get('status') ?? '';
  const op = v.query.get('op') ?? '';
  const limit = LIMITS.includes(Number(v.query.get('limit'))) ? Number(v.query.get('limit')) : 200;
  const statuses = [...new Set(log.map((e) => e.status))].sort((a, b) => a - b);
  const ops = [...new Set(log.map((e) => e.op ?? '-'))].sort();
  const matching: RequestLogEntry[] = [];
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i] as RequestLogEntry;
    if (status && !statusMatches(status, e.status)) continue;
    if (op && (e.op ?? '-') !== op) continue;
    matching.push(e);
  }
  const rows = matching.slice(0, limit).map(
    (e) => html`<tr>
      <th scope="row">${e.seq}</th><td>${when(e.at)}</td><td>${e.method}</td><td><code>${e.path}</code></td>
      <td>${e.service ?? ''}</td><td>${e.op ?? html`<span class="muted">—</span>`}</td>
      <td>${e.status === 0 ? 'dropped' : e.status}</td><td>${e.ms}</td><td>${e.user ?? ''}</td><td>${e.fault ?? ''}</td>
    </tr>`,
  );
  const main = html`<h1>Request log</h1>
    <p>Requests to the services, newest first (the emulator's own pages and <code>/__emulator/*</code> are not logged).
      The same log as <code>GET /__emulator/requests</code>.</p>
    <form method="get" action="/rehearsal/requests" class="panel">
      <div class="row">
        ${select(
          'filter-status',
          'status',
          'Status',
          [
            ['', 'Any status'],
            ['2xx', '2xx success'],
            ['4xx', '4xx client error'],
            ['5xx', '5xx server error'],
            ['0', 'dropped connection'],
            ...statuses.filter((s) => s !== 0).map((s): [string, string] => [String(s), String(s)]),
          ],
          status,
        )}
        ${select('filter-op', 'op', 'Operation', [['', 'Any operation'], ...ops.map((o): [string, string] => [o, o === '-' ? '(no operation)' : o])], op)}
        ${select(
          'filter-limit',
          'limit',
          'Show at most',
          LIMITS.map((n): [string, string] => [String(n), String(n)]),
          String(limit),
        )}
      </div>
      <p><button class="primary" type="submit">Filter</button> <a href="/rehearsal/requests">Clear the filter</a></p>
    </form>
    <p role="status">${matching.length} of ${log.length} logged requests match${matching.length > limit ? `; the newest ${limit} are shown` : ''}.</p>
    ${table(
      'Request log',
      ['#', 'At', 'Method', 'Path', 'Service', 'Operation', 'Status', 'ms', 'User', 'Fault'],
      rows,
      {
        wide: true,
        empty: 'No requests match.',
      },
    )}
    <form method="post" action="/rehearsal/requests"><button class="plain" type="submit" name="action" value="clear">Clear the log</button></form>`;
  sendHtml(
    x.res,
    x.method,
    200,
    page({ title: 'Request log', viewer: v.viewer, section: '/rehearsal/requests', main }),
  );
}

/** `POST /rehearsal/requests` with `action=clear`: empties the log, as `DELETE /__emulator/requests` does. */
export async function clearRequests(v: View, x: Exchange): Promise<void> {
  if (crossSite(x)) return refuseCrossSite(x.req, x.res, v.viewer);
  const form = await readForm(x.req);
  if (form?.get('action') === 'clear') v.env.emu.clearRequests();
  redirect(x.res, '/rehearsal/requests');
}

function resetForm(confirmStep: boolean): SafeHtml {
  if (!confirmStep) {
    return html`<form method="post" action="/rehearsal/reset"><button class="danger" type="submit">Reset the emulator…</button></form>`;
  }
  return html`<div class="panel" role="alert"><h2>Reset for real?</h2>
    <p>Every cycle, run, result, attachment and defect made since the start is discarded, and everyone is logged out.</p>
    <form method="post" action="/rehearsal/reset" class="inline">
      <input type="hidden" name="confirm" value="yes">
      <button class="danger" type="submit">Yes, reset now</button>
    </form> <a href="/rehearsal/reset">Cancel</a></div>`;
}

/**
 * `/rehearsal/reset`: GET explains, a POST without `confirm=yes` asks again (the confirm step needs no script), a
 * POST with it resets as `POST /__emulator/reset` does.
 */
export async function resetPage(v: View, x: Exchange): Promise<void> {
  let confirmStep = false;
  if (x.method === 'POST') {
    if (crossSite(x)) return refuseCrossSite(x.req, x.res, v.viewer);
    const form = await readForm(x.req);
    if (form?.get('confirm') === 'yes') {
      await v.env.emu.reset();
      return redirect(x.res, href('/rehearsal/reset', { done: 1 }));
    }
    confirmStep = true;
  } else x.req.resume();
  const done = v.query.get('done') && !confirmStep;
  const main = html`<h1>Reset</h1>
    ${done ? html`<p class="notice" role="status">The emulator is back to its seed state.</p>` : ''}
    <p>Back to the seed state: the data, the fault rules and the request log, as <code>POST /__emulator/reset</code>
      does${v.env.emu.options.dataDir ? ' (also on disk)' : ''}.</p>
    ${resetForm(confirmStep)}`;
  sendHtml(x.res, x.method, 200, page({ title: 'Reset', viewer: v.viewer, section: '/rehearsal/reset', main }));
}
